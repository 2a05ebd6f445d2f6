import { strict as assert } from 'node:assert';
import { execFile, spawn } from 'node:child_process';
import { symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { formatIssue, type ManifestIssue } from '../../src/manifest/issues.js';
import { validateManifest } from '../../src/stack-check/index.js';
import { loadPolicies } from '../../src/model/targets.js';
import { releaseModel, resolveStack } from '../../src/model/resolve.js';
import { renderEbuild } from '../../src/render/index.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { bin, removeDir, runCli } from '../helpers/project.js';

const run = promisify(execFile);
const dirs: string[] = [];

async function fixture(overrides: Record<string, string | null>): Promise<string> {
  const dir = await fixtureManifest(overrides);
  dirs.push(dir);
  return dir;
}

/** The issues of a fixture with some files replaced, as users read them (temp directory removed). */
async function problems(dir: string): Promise<string[]> {
  const { issues } = await validateManifest(dir);
  return issues.map((i) => formatIssue(i, dir));
}

function edit(file: string, from: string, to: string): Record<string, string> {
  const text = BASE_FILES[file]!;
  assert.ok(text.includes(from), `fixture ${file} lacks ${from}`);
  return { [file]: text.replace(from, to) };
}

/** Every issue is located (file:line:column, or a whole file that cannot be read) and has a hint. */
function assertLocatedWithHints(issues: ManifestIssue[]): void {
  assert.ok(issues.length > 0, 'expected the manifest to be refused');
  for (const i of issues) {
    assert.ok(i.hint, `no hint: ${formatIssue(i)}`);
    assert.ok(i.line > 0 || i.path === '$', `not located: ${formatIssue(i)}`);
  }
}

async function refused(dir: string, base = dir): Promise<string[]> {
  const { issues } = await validateManifest(dir);
  assertLocatedWithHints(issues);
  return issues.map((i) => formatIssue(i, base));
}

describe('malformed manifests: each a located error with a hint (exit 2)', function () {
  this.timeout(120_000);
  after(async () => {
    for (const d of dirs) await removeDir(d);
  });

  it('a dependency on the package itself', async () => {
    const dir = await fixture(edit('components/base.yaml', 'build: cmake\n', 'build: cmake\ndeps:\n  - atom: dev-libs/rocm-base\n    classes: [RDEPEND]\n'));
    assert.deepEqual(await refused(dir), [
      'components/base.yaml:10:11: $.deps[0].atom: dev-libs/rocm-base depends on itself\n    hint: remove this dependency: a package cannot need itself to build or run',
    ]);
  });

  it('a stack component also listed as an external package', async () => {
    const dir = await fixture({ 'external.yaml': `${BASE_FILES['external.yaml']}  sci-libs/gpulib: { subslot: false }\n` });
    assert.deepEqual(await refused(dir), [
      'external.yaml:5:3: $.packages["sci-libs/gpulib"]: sci-libs/gpulib is a stack component (components/gpulib.yaml) and also listed as an external package\n    hint: remove it from the external list: stack packages are generated, not taken from ::gentoo',
    ]);
  });

  it('two components claiming one AMD project', async () => {
    const dir = await fixture(edit('components/app.yaml', 'atom: sci-libs/app\n', 'projects: [gpulib]\natom: sci-libs/app\n'));
    assert.deepEqual(await refused(dir), [
      'components/app.yaml:2:12: $.projects[0]: AMD project gpulib is packaged by components/gpulib.yaml, which builds from it; this component does not fetch gpulib\n    hint: list under `projects:` only the projects this package is built from',
    ]);
  });

  it('a project split into packages that each fetch it is fine (llvm-project, clr)', async () => {
    const dir = await fixture(edit('components/app.yaml', 'atom: sci-libs/app\n', 'projects: [gpulib]\natom: sci-libs/app\n'));
    const fixed = edit('components/app.yaml', 'sources:\n  - github: ROCm/app\n', 'sources:\n  - github: ROCm/gpulib\n    subdir: app\n');
    const dir2 = await fixture({ ...fixed, 'components/app.yaml': fixed['components/app.yaml']!.replace('atom: sci-libs/app\n', 'projects: [gpulib]\natom: sci-libs/app\n') });
    assert.notDeepEqual(await problems(dir), []);
    assert.deepEqual(await problems(dir2), []);
  });

  it('a component file that is a dangling symlink or a symlink loop is reported, not skipped', async () => {
    const dir = await fixture({});
    await symlink('nowhere.yaml', path.join(dir, 'components', 'dangling.yaml'));
    await symlink('loop-b.yaml', path.join(dir, 'components', 'loop-a.yaml'));
    await symlink('loop-a.yaml', path.join(dir, 'components', 'loop-b.yaml'));
    assert.deepEqual(await refused(dir), [
      'components/dangling.yaml: $: the file is a dangling symbolic link (to nowhere.yaml)\n    hint: point the link at an existing file, or remove it',
      'components/loop-a.yaml: $: the file is a symbolic link loop\n    hint: point the link at a real file, or remove it',
      'components/loop-b.yaml: $: the file is a symbolic link loop\n    hint: point the link at a real file, or remove it',
    ]);
  });

  it('a symlink loop, as a component file or as stack.yaml, is a located error from every command (exit 2), not exit 1', async () => {
    const dir = await fixture({});
    await symlink('loop-b.yaml', path.join(dir, 'components', 'loop-a.yaml'));
    await symlink('loop-a.yaml', path.join(dir, 'components', 'loop-b.yaml'));
    for (const args of [['validate', dir], ['graph', '--version', '6.2.2', '--manifest', dir], ['render', 'gpulib', '--version', '6.2.2', '--manifest', dir]]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /components\/loop-a\.yaml: \$: the file is a symbolic link loop\n {4}hint: point the link at a real file, or remove it/, args[0]);
      assert.doesNotMatch(r.stderr, /ELOOP|Error:/);
    }
    const whole = await fixture({});
    await unlink(path.join(whole, 'stack.yaml'));
    await symlink('stack.yaml', path.join(whole, 'stack.yaml'));
    const r = await runCli(['validate', path.join(whole, 'stack.yaml')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /stack\.yaml: \$: the file is a symbolic link loop/);
  });

  it('a license of 200,000 characters is checked in linear time: validate and render finish', async () => {
    // Twice the length that took 103 s: a quadratic check would need minutes, a linear one needs about a second.
    const long = `MIT ${'A'.repeat(200_000)} benchmark? ( GPL-2 )`;
    const dir = await fixture(edit('components/gpulib.yaml', 'license: MIT\n', `license: ${long}\n`));
    const v = await runCli(['validate', dir], { killAfterMs: 60_000 });
    assert.equal(v.code, 0, v.stderr.slice(0, 500));
    const r = await runCli(['render', 'gpulib', '--version', '6.2.2', '--manifest', dir], { killAfterMs: 60_000 });
    assert.equal(r.code, 0, r.stderr.slice(0, 500));
    assert.ok(r.stdout.includes(`LICENSE="${long}"`));
  });

  it('an unquoted release key 6.10, which YAML reads as the number 6.1', async () => {
    const dir = await fixture(edit('stack.yaml', '  "6.3.0": {', '  6.10: { llvm_slot: 19, python_compat: "python3_{10..13}" }\n  "6.3.0": {'));
    assert.deepEqual(await refused(dir), [
      'stack.yaml:5:3: $.releases["6.1"]: YAML reads the key 6.10 as the number 6.1\n    hint: quote it so it stays the text you wrote: "6.10":',
    ]);
  });

  it('a version value 6.10 gets the hint to quote "6.10", not "6.1"', async () => {
    const dir = await fixture(edit('components/gpulib.yaml', 'versions: { from: "6.3.0" }', 'versions: { from: 6.10 }'));
    const shown = await refused(dir);
    assert.match(shown[0]!, /expected string, got number 6\.1\n {4}hint: quote the value so YAML keeps it a string: "6\.10"$/);
  });

  it('sources.dir and distfile may not be . or ..', async () => {
    for (const [key, value] of [['dir', '..'], ['dir', '.'], ['distfile', '..'], ['distfile', '.']]) {
      const dir = await fixture(edit('components/base.yaml', '  - github: ROCm/base\n', `  - github: ROCm/base\n    ${key}: "${value}"\n`));
      const shown = await refused(dir);
      assert.equal(shown.length, 1, shown.join('\n'));
      assert.match(shown[0]!, new RegExp(`^components/base\\.yaml:8:\\d+: \\$\\.sources\\[0\\]\\.${key}: "\\.{1,2}" is not of the expected form\\n {4}hint: .*not \\. or \\.\\.`));
    }
  });

  it('two components with the same distfile name and different URLs', async () => {
    const dir = await fixture(edit('components/app.yaml', '  - github: ROCm/app\n', '  - github: ROCm/app\n    distfile: gpulib-${PV}.tar.gz\n'));
    assert.deepEqual(await refused(dir), [
      'components/app.yaml:8:15: $.sources[0].distfile: distfile gpulib-6.2.2.tar.gz is also fetched by components/gpulib.yaml, from https://github.com/ROCm/gpulib/archive/rocm-6.2.2.tar.gz instead of https://github.com/ROCm/app/archive/rocm-6.2.2.tar.gz (in 6.2.2)\n    hint: give this source its own `distfile:` name (e.g. with ${PN} in it), or fetch the same URL',
      'components/app.yaml:8:15: $.sources[0].distfile: distfile gpulib-6.3.0.tar.gz is also fetched by components/gpulib.yaml, from https://github.com/ROCm/gpulib/archive/rocm-6.3.0.tar.gz instead of https://github.com/ROCm/app/archive/rocm-6.3.0.tar.gz (in 6.3.0)\n    hint: give this source its own `distfile:` name (e.g. with ${PN} in it), or fetch the same URL',
    ]);
  });

  it('NUL, ESC and CR in a description, a USE description or a maintainer name (escaped or raw)', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [edit('components/base.yaml', 'description: Host library', 'description: "Host\\0 library'), /^components\/base\.yaml:3:14: \$\.description: the value holds NUL \(U\+0000\) at character 5/],
      [edit('components/base.yaml', 'description: Host library', 'description: Host\u0000 library'), /^components\/base\.yaml:3:14: \$\.description: the value holds NUL \(U\+0000\) at character 5/],
      [edit('components/gpulib.yaml', 'description: Build the benchmark program', 'description: "Build the \\e[31mbenchmark"'), /^components\/gpulib\.yaml:\d+:18: \$\.use\.benchmark\.description: the value holds ESC \(U\+001B\)/],
      [edit('stack.yaml', 'repo_name: test\n', 'repo_name: test\ndefaults:\n  maintainers: [{ type: person, email: a@b.org, name: "A\\rB" }]\n'), /^stack\.yaml:4:\d+: \$\.defaults\.maintainers\[0\]\.name: the value holds CR/],
    ];
    for (const [files, expected] of cases) {
      const fixed = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.replace('"Host\\0 library', '"Host\\0 library every other test component builds on"').replace(/description: "Host\\0 library every other test component builds on" every other test component builds on/, 'description: "Host\\0 library every other test component builds on"')]));
      const dir = await fixture(fixed);
      const shown = await refused(dir);
      assert.ok(shown.some((s) => expected.test(s)), `${expected}: ${shown.join('\n')}`);
    }
  });

  it("a maintainer email whose domain has no dot is refused, as metadata.xsd refuses it in every metadata.xml", async () => {
    const dir = await fixture(edit('stack.yaml', 'repo_name: test\n', 'repo_name: test\ndefaults:\n  maintainers: [{ type: person, email: qa@localhost, name: QA }]\n'));
    const shown = await refused(dir);
    assert.ok(shown.some((s) => /^stack\.yaml:4:\d+: \$\.defaults\.maintainers\[0\]\.email/.test(s)), shown.join('\n'));
  });

  it('tests.skip values are quoted: a|b and globs pass bash -n and stay literal; shell syntax is refused', async () => {
    const dir = await fixture(edit('components/gpulib.yaml', 'tests:\n  gpu: true\n', 'tests:\n  gpu: true\n  skip: ["a|b", "/etc/pass*", "x.*y"]\n'));
    const { manifest, issues } = await validateManifest(dir);
    assert.deepEqual(issues, []);
    const policies = await loadPolicies(manifest!);
    if ('issues' in policies) throw new Error('policies');
    const model = resolveStack(manifest!, releaseModel(manifest!, '6.2.2', policies.byRelease.get('6.2.2')!)!);
    const text = renderEbuild(model.byAtom.get('sci-libs/gpulib')!, model, { year: 2026 });
    assert.match(text, /\tlocal CMAKE_SKIP_TESTS=\(\n\t\t'a\|b'\n\t\t'\/etc\/pass\*'\n\t\t'x\.\*y'\n\t\)\n/);
    const syntax = await run('bash', ['-n', '-c', text]);
    assert.equal(syntax.stderr, '');
    // Run in /etc, where /etc/pass* would match: the values reach cmake.eclass as written.
    const stubs = 'inherit() { :; }; ver_cut() { :; }; check_amdgpu() { :; }; cmake_src_test() { printf "%s\\n" "${CMAKE_SKIP_TESTS[@]}"; }';
    const ran = await run('bash', ['-c', `${stubs}\n${text}\ncd /etc && src_test`]);
    assert.equal(ran.stdout, 'a|b\n/etc/pass*\nx.*y\n');
    for (const bad of ['a b', "a'b", 'a;b', '$(x)']) {
      const d = await fixture(edit('components/gpulib.yaml', 'tests:\n  gpu: true\n', `tests:\n  gpu: true\n  skip: [${JSON.stringify(bad)}]\n`));
      const shown = await refused(d);
      assert.match(shown[0]!, /\$\.tests\.skip\[0\]: .* is not of the expected form/);
    }
  });

  it('an alias to an undefined anchor, an alias bomb, and too many aliases', async () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]'].join('\n');
    const many = `x: &x ON\nl: [${Array(101).fill('*x').join(', ')}]`;
    const cases: [string, RegExp][] = [
      [`${BASE_FILES['components/base.yaml']}notes: *nowhere\n`, /^components\/base\.yaml:9:8: \$\.notes: alias \*nowhere refers to no anchor\n {4}hint: define &nowhere before this alias, or fix its name$/],
      [`${BASE_FILES['components/base.yaml']}${bomb}\n`, /^components\/base\.yaml:10:\d+: \$: YAML aliases expand too far/],
      [`${BASE_FILES['components/base.yaml']}${many}\n`, /^components\/base\.yaml:10:\d+: \$\.l\[100\]: more than 100 YAML aliases in one file/],
    ];
    for (const [text, expected] of cases) {
      const dir = await fixture({ 'components/base.yaml': text });
      const shown = await refused(dir);
      assert.ok(shown.some((s) => expected.test(s)), `${expected}: ${shown.join('\n')}`);
    }
  });

  it('an empty component file, and one holding only comments', async () => {
    const empty = await fixture({ 'components/base.yaml': '' });
    assert.deepEqual(await refused(empty), [
      'components/base.yaml:1:1: $: the file is empty\n    hint: write the YAML mapping this file is for (see docs/manifest.md), or remove the file',
    ]);
    const comments = await fixture({ 'components/base.yaml': '# nothing yet\n# still nothing\n' });
    assert.deepEqual(await refused(comments), [
      'components/base.yaml:1:1: $: the file holds only comments\n    hint: write the YAML mapping this file is for (see docs/manifest.md), or remove the file',
    ]);
  });

  it('a FIFO given as stack.yaml is refused at once (exit 2), without reading it', async () => {
    const dir = await fixture({});
    const fifo = path.join(dir, 'fifo.yaml');
    await run('mkfifo', [fifo]);
    assert.deepEqual(await refused(fifo, dir), [
      'fifo.yaml: $: this is a FIFO (named pipe), not a YAML file\n    hint: check the path given with --manifest or listed under `components:`',
    ]);
    // The real CLI: no writer ever opens the FIFO, so a blocking open would hang until the timeout kills it.
    const child = spawn(process.execPath, [bin, 'validate', fifo], { env: { ...process.env, NO_COLOR: '1' } });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /this is a FIFO \(named pipe\), not a YAML file/);
    // A FIFO among the component files is reported as well, not skipped.
    await unlink(fifo);
    await run('mkfifo', [path.join(dir, 'components', 'pipe.yaml')]);
    assert.deepEqual(await refused(dir), [
      'components/pipe.yaml: $: this is a FIFO (named pipe), not a YAML file\n    hint: check the path given with --manifest or listed under `components:`',
    ]);
  });

  it('component globs may not leave the manifest directory', async () => {
    for (const pattern of ['/etc/pass*', '../*.yaml', 'components/../../x.yaml']) {
      const dir = await fixture(edit('stack.yaml', '  - components/*.yaml\n', `  - ${JSON.stringify(pattern)}\n`));
      const shown = await refused(dir);
      assert.equal(shown.length, 1, shown.join('\n'));
      assert.match(shown[0]!, /^stack\.yaml:14:5: \$\.components\[0\]: .* is not of the expected form\n {4}hint: .*inside its directory/);
    }
  });

  it('tests.env allows test-harness variables only, and paths inside the build', async () => {
    const env = (vars: string) => edit('components/gpulib.yaml', 'tests:\n  gpu: true\n', `tests:\n  gpu: true\n  env: { ${vars} }\n`);
    assert.deepEqual(await problems(await fixture(env('LD_LIBRARY_PATH: "${BUILD_DIR}/lib", GPULIB_USE_HMM: 1, HIP_VISIBLE_DEVICES: 0, GTEST_BRIEF: 1'))), []);
    for (const name of ['PATH', 'LD_PRELOAD', 'BASH_ENV', 'IFS', 'PYTHONPATH', 'HSA_TOOLS_LIB', 'SOMETHING_ELSE']) {
      const shown = await refused(await fixture(env(`${name}: x`)));
      assert.equal(shown.length, 1, shown.join('\n'));
      assert.match(shown[0]!, new RegExp(`^components/gpulib\\.yaml:\\d+:\\d+: \\$\\.tests\\.env\\.${name}: tests may not set ${name}\\n {4}hint: allowed: test-harness variables`));
    }
    const smoke = await refused(await fixture(edit('components/gpulib.yaml', 'tests:\n  gpu: true\n', 'tests:\n  gpu: true\n  smoke: { env: { LD_PRELOAD: /tmp/x.so } }\n')));
    assert.match(smoke[0]!, /\$\.tests\.smoke\.env\.LD_PRELOAD: tests may not set LD_PRELOAD/);
    const outside = await refused(await fixture(env('LD_LIBRARY_PATH: "/tmp/evil:${BUILD_DIR}/lib"')));
    assert.match(outside[0]!, /LD_LIBRARY_PATH entry "\/tmp\/evil" is outside the build and the installed prefix/);
  });

  it('phase code that would end its function early is refused', async () => {
    const dir = await fixture(edit('components/base.yaml', 'build: cmake\n', 'build: cmake\nphases:\n  src_install:\n    after: |\n      }\n      touch /tmp/pwned\n      _x() {\n'));
    const shown = await refused(dir);
    assert.ok(shown.some((s) => /^components\/base\.yaml:\d+:\d+: \$\.phases\.src_install\.after: phase code is not complete bash on its own/.test(s)), shown.join('\n'));
  });
});

describe('validate reports every problem at once', function () {
  this.timeout(120_000);
  after(async () => {
    for (const d of dirs) await removeDir(d);
  });

  it('schema errors and the cross-reference problems that do not depend on them, in one run', async () => {
    const dir = await fixture({
      ...edit('components/base.yaml', 'build: cmake', 'build: cmak'),
      ...edit('components/app.yaml', 'atom: sci-libs/gpulib\n', 'atom: sci-libs/gpulb\n'),
    });
    assert.deepEqual(await refused(dir), [
      'components/app.yaml:14:11: $.deps[0].atom: NonexistentDeps: sci-libs/gpulb is neither a stack component nor listed in the external package list\n    hint: did you mean sci-libs/gpulib?',
      'components/base.yaml:8:8: $.build: "cmak" is not one of cmake, python, none\n    hint: did you mean `cmake`?',
    ]);
  });

  it('skips only what depends on the broken part: a dependency on a broken component is not called nonexistent', async () => {
    const dir = await fixture(edit('components/base.yaml', 'build: cmake', 'build: cmak'));
    assert.deepEqual(await refused(dir), ['components/base.yaml:8:8: $.build: "cmak" is not one of cmake, python, none\n    hint: did you mean `cmake`?']);
    // A component whose atom cannot be read: no NonexistentDeps at all, but other checks still run.
    const unreadable = await fixture({
      'components/base.yaml': 'name: base\natom: [unclosed\n',
      ...edit('components/app.yaml', '    gpu: true\n', ''),
    });
    const shown = await refused(unreadable);
    assert.equal(shown.length, 2, shown.join('\n'));
    assert.match(shown[0]!, /^components\/app\.yaml:14:11: \$\.deps\[0\]\.atom: target coherence/);
    assert.match(shown[1]!, /^components\/base\.yaml:\d+:\d+: \$: YAML syntax/);
  });

  it('a broken stack.yaml key does not stop the component checks', async () => {
    const dir = await fixture({
      ...edit('stack.yaml', 'repo_name: test', 'repo_name: "te st"'),
      ...edit('components/app.yaml', 'atom: sci-libs/gpulib\n', 'atom: sci-libs/gpulb\n'),
    });
    const shown = await refused(dir);
    assert.equal(shown.length, 2, shown.join('\n'));
    assert.match(shown[0]!, /^components\/app\.yaml:14:11: .*NonexistentDeps/);
    assert.match(shown[1]!, /^stack\.yaml:2:12: \$\.repo_name: /);
  });

  it('a broken target table still lets every other check run', async () => {
    const dir = await fixture({
      ...edit('stack.yaml', 'targets: targets.yaml', 'targets: broken-targets.yaml'),
      'broken-targets.yaml': 'targets: []\n',
      ...edit('components/app.yaml', 'atom: sci-libs/gpulib\n', 'atom: sci-libs/gpulb\n'),
    });
    const shown = await refused(dir);
    assert.ok(shown.some((s) => /^broken-targets\.yaml:/.test(s)), shown.join('\n'));
    assert.ok(shown.some((s) => /^components\/app\.yaml:14:11: .*NonexistentDeps/.test(s)), shown.join('\n'));
  });

  it('the CLI prints both kinds and exits 2', async () => {
    const dir = await fixture({
      ...edit('components/base.yaml', 'build: cmake', 'build: cmak'),
      ...edit('components/app.yaml', 'atom: sci-libs/gpulib\n', 'atom: sci-libs/gpulb\n'),
    });
    const r = await runCli(['validate', dir], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^rocm-ebuild: 2 problems in the manifest:\n/);
    assert.match(r.stderr, /NonexistentDeps/);
    assert.match(r.stderr, /"cmak" is not one of/);
  });
});
