import { strict as assert } from 'node:assert';
import path from 'node:path';
import { loadManifest } from '../../src/stack-check/index.js';
import { formatIssue, ManifestError, type ManifestIssue } from '../../src/manifest/issues.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, runCli, shippedManifest } from '../helpers/project.js';

const dirs: string[] = [];

/** Load a fixture with some files replaced; return the issues it is rejected with. */
async function issuesFor(overrides: Record<string, string | null>): Promise<{ dir: string; issues: ManifestIssue[] }> {
  const dir = await fixtureManifest(overrides);
  dirs.push(dir);
  try {
    await loadManifest(dir);
  } catch (err) {
    if (err instanceof ManifestError) return { dir, issues: err.issues };
    throw err;
  }
  return { dir, issues: [] };
}

/** The line users see, with the temp directory removed. */
function shown(dir: string, issues: ManifestIssue[]): string[] {
  return issues.map((i) => formatIssue(i, dir));
}

function edit(file: string, from: string, to: string): Record<string, string> {
  const text = BASE_FILES[file]!;
  assert.ok(text.includes(from), `fixture ${file} lacks ${from}`);
  return { [file]: text.replace(from, to) };
}

describe('manifest validation', () => {
  after(async () => {
    for (const d of dirs) await removeDir(d);
  });

  it('accepts the fixture stack', async () => {
    const { issues } = await issuesFor({});
    assert.deepEqual(issues, []);
  });

  it('accepts the manifest shipped with rocm-ebuild', async () => {
    const m = await loadManifest(shippedManifest);
    assert.ok(m.components.length >= 45, `${m.components.length} components`);
  });

  it('names an unknown key with file:line:column, JSON path and the key it probably meant', async () => {
    const { dir, issues } = await issuesFor(edit('components/app.yaml', 'deps:\n', 'dep:\n'));
    assert.deepEqual(shown(dir, issues), ['components/app.yaml:13:1: $.dep: unknown key `dep`\n    hint: did you mean `deps`?']);
  });

  it('suggests the closest value of an enum', async () => {
    const { dir, issues } = await issuesFor(edit('components/base.yaml', 'build: cmake', 'build: cmak'));
    assert.deepEqual(shown(dir, issues), ['components/base.yaml:8:8: $.build: "cmak" is not one of cmake, python, none\n    hint: did you mean `cmake`?']);
  });

  it('asks to quote a version YAML read as a number', async () => {
    const { dir, issues } = await issuesFor(edit('components/gpulib.yaml', 'versions: { from: "6.3.0" }', 'versions: { from: 6.3 }'));
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.path, '$.overrides[0].versions.from');
    assert.match(shown(dir, issues)[0]!, /^components\/gpulib\.yaml:28:23: \$\.overrides\[0\]\.versions\.from: expected string, got number 6\.3\n {4}hint: quote the value so YAML keeps it a string: "6\.3"$/);
  });

  it('reports a missing required key at the mapping that lacks it, with what to add', async () => {
    const { dir, issues } = await issuesFor(edit('components/base.yaml', 'license: MIT\n', ''));
    assert.deepEqual(shown(dir, issues), [
      'components/base.yaml:1:1: $: missing required key `license`\n    hint: Gentoo license names separated by spaces, with USE conditionals if needed, e.g. "MIT" or "MIT esmi? ( GPL-2 )"',
    ]);
  });

  it('refuses a value that would run a command in the ebuild', async () => {
    const { dir, issues } = await issuesFor(edit('components/gpulib.yaml', 'BUILD_BENCHMARK: { use: benchmark }', 'BUILD_BENCHMARK: "$(rm -rf /)"'));
    assert.deepEqual(shown(dir, issues), [
      'components/gpulib.yaml:24:22: $.cmake.defines.BUILD_BENCHMARK: $(rm …) is not a helper values may call\n    hint: use one of ffmpeg_compat_get_prefix, get_amdgpu_flags, get_libdir, get_llvm_prefix, makeopts_jobs, python_get_sitedir, usex, ver_cut, or move the logic into phase code',
    ]);
  });

  it('refuses quotes and backticks in values at the schema level', async () => {
    const { issues } = await issuesFor(edit('components/gpulib.yaml', 'BUILD_BENCHMARK: { use: benchmark }', 'BUILD_BENCHMARK: "ON`id`"'));
    assert.equal(issues.length, 1);
    assert.equal(issues[0]!.path, '$.cmake.defines.BUILD_BENCHMARK');
    assert.match(issues[0]!.message, /matches none of the accepted forms/);
    assert.match(issues[0]!.hint ?? '', /ON, OFF|usex/);
  });

  it('reports a dependency that exists nowhere, suggesting the nearest atom (NonexistentDeps)', async () => {
    const { dir, issues } = await issuesFor(edit('components/app.yaml', 'atom: sci-libs/gpulib\n', 'atom: sci-libs/gpulb\n'));
    assert.deepEqual(shown(dir, issues), [
      'components/app.yaml:14:11: $.deps[0].atom: NonexistentDeps: sci-libs/gpulb is neither a stack component nor listed in the external package list\n    hint: did you mean sci-libs/gpulib?',
    ]);
  });

  it("reports a component's other problems beside a schema error in one of its sections", async () => {
    const text = BASE_FILES['components/app.yaml']!.replace('atom: sci-libs/gpulib\n', 'atom: sci-libs/gpulb\n');
    const { dir, issues } = await issuesFor({ 'components/app.yaml': `${text}restrict: { x: 1 }\n` });
    const lines = shown(dir, issues);
    assert.ok(lines.some((l) => /^components\/app\.yaml:\d+:\d+: \$\.restrict: /.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /^components\/app\.yaml:14:11: \$\.deps\[0\]\.atom: NonexistentDeps: sci-libs\/gpulb /.test(l)), lines.join('\n'));
  });

  it('names its MANIFEST argument, not --manifest, in the hint for a path that is not there', async () => {
    const r = await runCli(['validate', '/nonexistent/rocm-manifest']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /hint: check the MANIFEST path given to validate/);
    assert.doesNotMatch(r.stderr, /--manifest/);
  });

  it('lets a release block a package that left the stack, but not depend on it', async () => {
    const gone = edit('components/base.yaml', 'license: MIT\n', 'license: MIT\nreleases: { until: "6.3.0" }\n');
    const blocks = (dep: string) =>
      edit('components/gpulib.yaml', '      targets: { cmake_vars: [GPU_TARGETS] }\n', `      targets: { cmake_vars: [GPU_TARGETS] }\n      deps:\n${dep}`);
    const blocker = await issuesFor({ ...gone, ...blocks('        - { atom: dev-libs/rocm-base, classes: [RDEPEND], blocker: weak }\n') });
    assert.deepEqual(shown(blocker.dir, blocker.issues), []);
    const dependency = await issuesFor({ ...gone, ...blocks('        - { atom: dev-libs/rocm-base, classes: [RDEPEND, DEPEND] }\n') });
    assert.deepEqual(shown(dependency.dir, dependency.issues), [
      'components/gpulib.yaml:32:19: $.overrides[0].set.deps[0].atom: dev-libs/rocm-base is not part of the stack in 6.3.0 (in 6.3.0)\n    hint: limit this dependency to the releases that have it with `overrides`',
    ]);
  });

  it('reports a sub-slotted dependency without := (MissingSlotDep)', async () => {
    const { dir, issues } = await issuesFor(edit('components/gpulib.yaml', '    slot: "="\n', ''));
    assert.deepEqual(shown(dir, issues), [
      'components/gpulib.yaml:19:11: $.deps[1].atom: MissingSlotDep: dev-libs/boost has sub-slots; a library linked against it must rebuild when it changes\n    hint: add `slot: "="`',
    ]);
  });

  it('demands an explicit choice on target coherence for GPU-library dependencies', async () => {
    const { dir, issues } = await issuesFor(edit('components/app.yaml', '    gpu: true\n', ''));
    assert.deepEqual(shown(dir, issues), [
      'components/app.yaml:14:11: $.deps[0].atom: target coherence: sci-libs/gpulib holds device code for selected GPU targets\n    hint: add `gpu: true` so the dependency is built for the same targets, or `gpu: false` when no device code is linked',
    ]);
  });

  it('reports USE flags used but never declared', async () => {
    const { dir, issues } = await issuesFor(edit('components/gpulib.yaml', 'BUILD_BENCHMARK: { use: benchmark }', 'BUILD_BENCHMARK: { use: benchmarks }'));
    assert.deepEqual(shown(dir, issues), [
      'components/gpulib.yaml:24:29: $.cmake.defines.BUILD_BENCHMARK.use: USE flag "benchmarks" is not declared\n    hint: did you mean "benchmark"?',
    ]);
  });

  it('points errors inside an override at the override, naming the releases concerned', async () => {
    const { dir, issues } = await issuesFor(edit('components/gpulib.yaml', 'targets: { cmake_vars: [GPU_TARGETS] }', 'use: { extra: { description: Something optional } }\n      tests: { gpu: true, env: { HIP_X: "$(id)" } }'));
    assert.deepEqual(shown(dir, issues), [
      'components/gpulib.yaml:31:41: $.overrides[0].set.tests.env.HIP_X: $(id …) is not a helper values may call (in 6.3.0)\n    hint: use one of ffmpeg_compat_get_prefix, get_amdgpu_flags, get_libdir, get_llvm_prefix, makeopts_jobs, python_get_sitedir, usex, ver_cut, or move the logic into phase code',
    ]);
  });

  it('reports YAML syntax errors with their position', async () => {
    const { dir, issues } = await issuesFor({ 'components/base.yaml': 'name: base\natom: [unclosed\n' });
    assert.equal(issues.length, 1);
    assert.match(shown(dir, issues)[0]!, /^components\/base\.yaml:\d+:\d+: \$: YAML syntax: /);
  });

  it('reports every problem of every file in one run', async () => {
    const { dir, issues } = await issuesFor({
      ...edit('components/base.yaml', 'build: cmake', 'build: cmak'),
      ...edit('components/app.yaml', 'deps:\n', 'dep:\n'),
    });
    assert.deepEqual(
      issues.map((i) => `${path.relative(dir, i.file)} ${i.path}`),
      ['components/app.yaml $.dep', 'components/base.yaml $.build'],
    );
  });

  it('validate exits 2 and prints each issue; --json carries them structured', async () => {
    const { dir } = await issuesFor(edit('components/base.yaml', 'build: cmake', 'build: cmak'));
    const text = await runCli(['validate', dir], { cwd: dir });
    assert.equal(text.code, 2);
    assert.match(text.stderr, /^rocm-ebuild: 1 problem in the manifest:\ncomponents\/base\.yaml:8:8: \$\.build: "cmak" is not one of cmake, python, none\n {4}hint: did you mean `cmake`\?\n$/);
    const json = await runCli(['validate', dir, '--json'], { cwd: dir });
    assert.equal(json.code, 2);
    const parsed = JSON.parse(json.stdout) as { error: { exitCode: number; details: { issues: ManifestIssue[] } } };
    assert.equal(parsed.error.exitCode, 2);
    assert.deepEqual(
      parsed.error.details.issues.map((i) => [path.relative(dir, i.file), i.line, i.column, i.path, i.hint]),
      [['components/base.yaml', 8, 8, '$.build', 'did you mean `cmake`?']],
    );
  });

  it('validate accepts a good manifest with exit 0', async () => {
    const { dir } = await issuesFor({});
    const r = await runCli(['validate', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /valid \(3 components, releases 6\.2\.2, 6\.3\.0\)/);
  });
});
