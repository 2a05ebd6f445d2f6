import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TheRockReport } from '../../src/upstream/therock/format.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { bin, gitEnv, removeDir, runCli, tempDir } from '../helpers/project.js';
import { GitHttpServer } from './git-http.js';
import { commitTree, GITMODULES, theRockFiles, theRockUniverse, type TheRockUniverse } from './therock-fixture.js';
import { HOSTILE_CMAKE } from './therock-hostile.js';

/** The manifest side: base (TheRock does not build it), gpulib (moved into rocm-libraries), app (the same place), comgr (llvm-project's subdirectory). */
const MANIFEST = {
  'components/app.yaml': `name: app
atom: sci-libs/app
description: An application linking the GPU library
homepage: https://github.com/ROCm/rocm-libraries
license: MIT
sources:
  - release_asset: ROCm/rocm-libraries
    file: app.tar.gz
build: cmake
deps:
  - atom: sci-libs/gpulib
    classes: [RDEPEND, DEPEND]
    gpu: false
`,
  'components/comgr.yaml': `name: comgr
atom: dev-libs/rocm-comgr
description: The code object manager, from AMD's LLVM tree
homepage: https://github.com/ROCm/llvm-project
license: MIT
sources:
  - github: ROCm/llvm-project
    subdir: amd/comgr
build: cmake
deps:
  - atom: sci-libs/gpulib
    classes: [DEPEND]
    gpu: false
`,
};

/** Every file under `dir` with its size and modification time, but those under `skip`. */
async function snapshot(dir: string, skip: string[] = []): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (skip.some((s) => p === s || p.startsWith(`${s}/`))) continue;
      const st = await stat(p);
      out.set(p, e.isDirectory() ? 'dir' : `${st.size} ${st.mtimeMs}`);
      if (e.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return out;
}

describe('upstream therock', function () {
  this.timeout(240_000);
  let dir: string;
  let u: TheRockUniverse;
  let manifest: string;
  let template: string;
  let server: GitHttpServer;

  before(async () => {
    dir = await tempDir('rocm-ebuild-therock-');
    u = await theRockUniverse(dir);
    template = `${u.gitRoot}/{owner}/{repo}`;
    manifest = await fixtureManifest(MANIFEST);
    for (const [k, v] of [['uploadpack.allowFilter', 'true'], ['uploadpack.allowAnySHA1InWant', 'true']]) execFileSync('git', ['--git-dir', u.therock, 'config', k!, v!]);
    server = await new GitHttpServer(u.gitRoot).start();
  });
  after(async () => {
    await server.close();
    await removeDir(dir);
  });

  const cli = (args: string[], cache = 'cache') => runCli(['upstream', 'therock', ...args, '--manifest', manifest], { env: { XDG_CACHE_HOME: path.join(dir, cache) } });

  it("reads a tag's composition: version, pinned repositories, components with their directories and dependencies, the topology", async () => {
    const r = await cli(['therock-10.0', '--base-url', template, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const { therock: t } = JSON.parse(r.stdout) as TheRockReport;
    assert.equal(t.version, '10.0.0');
    assert.equal(t.fullRef, 'refs/tags/therock-10.0');
    assert.deepEqual(t.submodules.map((s) => [s.name, s.path, s.github, s.commit]), [
      ['llvm-project', 'compiler/amd-llvm', 'ROCm/llvm-project', u.pins['compiler/amd-llvm']],
      ['rocm-libraries', 'rocm-libraries', 'ROCm/rocm-libraries', u.pins['rocm-libraries']],
      ['rocm-systems', 'rocm-systems', 'ROCm/rocm-systems', u.pins['rocm-systems']],
    ]);
    const by = new Map(t.subprojects.map((s) => [s.name, s]));
    assert.deepEqual([...by.keys()], ['amd-comgr', 'amd-dbgapi', 'amd-llvm', 'app', 'gpulib', 'hip-clr', 'mystery', 'newlib', 'therock-fmt']);
    // Relative directories, the monorepo variables, a variable set by therock_enable_external_source, the build tree.
    assert.deepEqual(by.get('amd-comgr')!.source, { kind: 'submodule', written: 'amd-llvm/amd/comgr', submodule: 'llvm-project', dir: 'amd/comgr' });
    assert.deepEqual([by.get('amd-llvm')!.source.submodule, by.get('amd-llvm')!.source.dir], ['llvm-project', '']);
    assert.deepEqual([by.get('gpulib')!.source.submodule, by.get('gpulib')!.source.dir], ['rocm-libraries', 'projects/gpulib']);
    assert.deepEqual([by.get('amd-dbgapi')!.source.submodule, by.get('amd-dbgapi')!.source.dir], ['rocm-systems', 'projects/rocdbgapi']);
    assert.equal(by.get('therock-fmt')!.source.kind, 'build');
    assert.equal(by.get('mystery')!.source.kind, 'unresolved');
    // Dependencies: keywords from TheRock's own cmake_parse_arguments (CMAKE_ARGS values are not deps),
    // a list set in the parent directory, the toolchain's subproject, a variable of the top directory.
    assert.deepEqual(by.get('gpulib')!.deps, [
      { name: 'rocm-cmake', kind: 'build' },
      { name: 'hip-clr', kind: 'runtime' },
      { name: 'amd-dbgapi', kind: 'runtime', via: '${optional_profiler_deps}' },
    ]);
    assert.deepEqual(by.get('app')!.deps.map((d) => `${d.name}/${d.kind}`), ['gpulib/runtime', 'amd-comgr/runtime', 'hip-clr/toolchain']);
    assert.deepEqual(by.get('amd-llvm')!.deps, [{ name: 'therock-fmt', kind: 'build', via: '${THEROCK_BUNDLED_FMT}' }]);
    assert.deepEqual(by.get('gpulib')!.artifacts, ['blas']);
    assert.deepEqual(t.topology!.groups.map((g) => [g.name, g.type, g.deps]), [['compiler', 'generic', []], ['math-libs', 'per-arch', ['compiler']]]);
    assert.deepEqual(t.topology!.artifacts.map((a) => [a.name, a.group, a.deps]), [['amd-llvm', 'compiler', []], ['blas', 'math-libs', ['amd-llvm']]]);
    assert.deepEqual(t.problems, []);
    assert.equal(t.unresolved.length, 2, t.unresolved.join('\n'));
    assert.match(t.unresolved.join('\n'), /cmake\/therock_subproject\.cmake:9: therock_cmake_subproject_declare inside function "therock_cmake_subproject_declare": its callers are not followed/);
    assert.match(t.unresolved.join('\n'), /core\/CMakeLists\.txt:10: mystery: EXTERNAL_SOURCE_DIR "\$\{SOMETHING_NOBODY_SETS\}\/mystery" needs \$\{SOMETHING_NOBODY_SETS\}/);
  });

  it('compares it with the manifest: matched by place then name, new, not built by TheRock, moved, dependencies either side lacks', async () => {
    const r = await cli(['therock-10.0', '--base-url', template]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^TheRock therock-10\.0 \(tag, commit [0-9a-f]{12}\): ROCm 10\.0\.0$/m);
    assert.match(r.stdout, /^ {2}rocm-libraries +ROCm\/rocm-libraries +[0-9a-f]{12} +rocm-libraries$/m);
    assert.match(r.stdout, /^Against the manifest's 6\.3\.0:$/m);
    assert.match(r.stdout, /^ {4}amd-comgr +dev-libs\/rocm-comgr +same place$/m);
    assert.match(r.stdout, /^ {4}app +sci-libs\/app +same place$/m);
    assert.match(r.stdout, /^ {4}gpulib +sci-libs\/gpulib +by name$/m);
    assert.match(r.stdout, /^ {4}newlib +ROCm\/rocm-libraries:projects\/newlib +[0-9a-f]{12} +decide: package or exclude$/m);
    assert.match(r.stdout, /^ {4}dev-libs\/rocm-base +its own repository's tags \(ROCm\/base, rocm-6\.3\.0 in 6\.3\.0\): TheRock pins no version of it$/m);
    assert.match(r.stdout, /^ {4}sci-libs\/gpulib +ROCm\/gpulib → ROCm\/rocm-libraries:projects\/gpulib @ [0-9a-f]{12}$/m);
    assert.match(r.stdout, /^ {4}sci-libs\/app → dev-libs\/rocm-comgr +app → amd-comgr \(runtime\)$/m);
    assert.match(r.stdout, /^ {4}dev-libs\/rocm-comgr → sci-libs\/gpulib +DEPEND$/m);
    assert.match(r.stdout, /^ {2}Bundled by TheRock \(1; Gentoo's own packages stand in\): therock-fmt$/m);
    assert.match(
      r.stdout,
      /^therock-10\.0: 3 repositories, 9 subprojects \(7 from them\), 13 dependencies; against 6\.3\.0: 3 packages matched, 3 new, 1 not built by TheRock, 1 moved, 1 dependencies only TheRock has, 1 only ours$/m,
    );
    const j = JSON.parse((await cli(['therock-10.0', '--base-url', template, '--json', '--release', '6.2.2'])).stdout) as TheRockReport;
    assert.equal(j.comparison.release, '6.2.2');
    assert.deepEqual(j.comparison.new.map((n) => n.subproject), ['amd-dbgapi', 'hip-clr', 'newlib']);
    assert.deepEqual(j.comparison.gone.map((g) => g.atom), ['dev-libs/rocm-base']);
  });

  it('reads a release branch over the network (a partial clone in the cache), and again after it moved', async () => {
    const first = await cli(['release/therock-10.1', '--base-url', server.url, '--json'], 'cache-net');
    assert.equal(first.code, 0, first.stderr);
    const a = JSON.parse(first.stdout) as TheRockReport;
    assert.equal(a.therock.version, '10.1.0');
    assert.equal(a.therock.fullRef, 'refs/heads/release/therock-10.1');
    assert.ok(a.therock.bytes > 0, 'the fetch is counted');
    assert.equal(a.therock.subprojects.length, 9);
    const parent = execFileSync('git', ['--git-dir', u.therock, 'rev-parse', 'release/therock-10.1']).toString().trim();
    const moved = await commitTree(u.therock, theRockFiles('10.1.1'), u.pins, path.join(dir, 'scratch'), { branch: 'release/therock-10.1', parent });
    const again = JSON.parse((await cli(['release/therock-10.1', '--base-url', server.url, '--json'], 'cache-net')).stdout) as TheRockReport;
    assert.equal(again.therock.version, '10.1.1');
    assert.equal(again.therock.commit, moved);
    // A tag is fetched once: the second read of therock-10.0 asks the server for nothing.
    assert.equal((await cli(['therock-10.0', '--base-url', server.url], 'cache-net')).code, 0);
    const before = server.requests.length;
    assert.equal((await cli(['therock-10.0', '--base-url', server.url], 'cache-net')).code, 0);
    assert.equal(server.requests.length, before);
  });

  it('exit codes: no such tag or branch, a ref name git would take as an option, an unknown release, an unreachable server', async () => {
    const missing = await cli(['therock-9.9', '--base-url', template]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /TheRock has no tag or branch therock-9\.9/);
    const dash = await cli(['--upload-pack=touch', '--base-url', template]);
    assert.notEqual(dash.code, 0);
    const dotted = await cli(['a..b', '--base-url', template]);
    assert.equal(dotted.code, 2);
    assert.match(dotted.stderr, /"a\.\.b" is not a valid tag or branch name/);
    const release = await cli(['therock-10.0', '--base-url', template, '--release', '9.9.9']);
    assert.equal(release.code, 2);
    assert.match(release.stderr, /--release 9\.9\.9 is not a release of/);
    const down = await cli(['therock-10.0', '--base-url', 'http://127.0.0.1:9', '--timeout', '20'], 'cache-down');
    assert.equal(down.code, 5);
    assert.match(down.stderr, /cannot read TheRock at therock-10\.0/);
  });

  describe('hostile TheRock trees', () => {
    let canary: string;
    let hostileRoot: string;
    let hostile: string;

    before(async () => {
      canary = path.join(dir, 'canary');
      // Every command a hostile tree could make git run leaves this file behind.
      const script = path.join(dir, 'touch-canary');
      await writeFile(script, `#!/bin/sh\ntouch '${canary}'\n`);
      await chmod(script, 0o755);
      hostileRoot = path.join(dir, 'hostile-git');
      hostile = path.join(hostileRoot, 'ROCm', 'TheRock');
      const scratch = path.join(dir, 'scratch');
      const pin = u.pins['rocm-libraries']!;
      const evilModules = `${GITMODULES}[submodule "ext"]
	path = evil/ext
	url = ext::sh -c ${script}
[submodule "dash"]
	path = evil/dash
	url = --upload-pack=${script}
[submodule "local"]
	path = evil/local
	url = file://${u.gitRoot}/ROCm/rocm-systems
[submodule "escape"]
	path = ../../escape
	url = https://github.com/ROCm/escape.git
[submodule "updater"]
	path = evil/update
	url = https://github.com/ROCm/updater.git
	update = !${script}
[submodule "../../name"]
	path = evil/name
	url = https://github.com/ROCm/name.git
`;
      const files = theRockFiles('10.0.0');
      const evil = {
        ...files,
        '.gitmodules': evilModules,
        'core/CMakeLists.txt': `${files['core/CMakeLists.txt']}therock_cmake_subproject_declare(outside
  EXTERNAL_SOURCE_DIR "\${THEROCK_SOURCE_DIR}/../../../etc"
)
therock_cmake_subproject_declare(rooted
  EXTERNAL_SOURCE_DIR "/etc/passwd"
)
therock_cmake_subproject_declare(painted
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_SYSTEMS_SOURCE_DIR}/projects/painted\x1b[2J"
  RUNTIME_DEPS "\${x\x1b[31my}" gpulib
)
`,
        // Unbalanced parentheses after a valid declaration: CMake stops there, so does the reader.
        'math-libs/BLAS/CMakeLists.txt': `therock_cmake_subproject_declare(gpulib
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_LIBRARIES_SOURCE_DIR}/projects/gpulib"
)
therock_cmake_subproject_declare(broken
  EXTERNAL_SOURCE_DIR "\${THEROCK_ROCM_LIBRARIES_SOURCE_DIR}/projects/broken"
  RUNTIME_DEPS (gpulib
`,
        'BUILD_TOPOLOGY.toml': '[artifacts.blas\nartifact_group = 3\n',
      };
      const links = { ...u.pins, 'evil/ext': pin, 'evil/dash': pin, 'evil/local': pin, 'evil/update': pin, 'evil/name': pin, 'evil/orphan': pin };
      await commitTree(hostile, evil, links, scratch, { tag: 'therock-evil' });
      await commitTree(hostile, { ...files, '.gitmodules': `# ${'x'.repeat(200 * 1024)}\n${GITMODULES}` }, u.pins, scratch, { tag: 'therock-huge' });
      await commitTree(hostile, { ...files, '.gitmodules': Buffer.concat([Buffer.from(GITMODULES), Buffer.from([0, 1, 2, 0xff, 0])]) as unknown as string }, u.pins, scratch, { tag: 'therock-binary' });
      // Line separators, bidirectional overrides and ESC in a submodule's name and path and in CMake names.
      const unicodeModules = `${GITMODULES}[submodule "lib\u202eevil"]\n\tpath = evil/line\u2028sep\n\turl = https://github.com/ROCm/evil.git\n`;
      const unicodeCMake = `${files['core/CMakeLists.txt']}therock_cmake_subproject_declare(\${na\u2066me\x1b[2J}\n  EXTERNAL_SOURCE_DIR "\${THEROCK_SOURCE_DIR}/rocm-libraries/projects/\u2028x"\n)\n`;
      await commitTree(hostile, { ...files, '.gitmodules': unicodeModules, 'core/CMakeLists.txt': unicodeCMake }, { ...u.pins, 'evil/line\u2028sep': pin, 'evil/\u202eorphan': pin }, scratch, { tag: 'therock-unicode' });
      // Large and hostile CMake: a 30,000-element list as one subproject's dependencies (a report of MiBs), a variable doubled 40 times (cut, exit 2).
      await commitTree(hostile, { ...files, 'heavy/CMakeLists.txt': HOSTILE_CMAKE.growingList(30_000), 'doubling/CMakeLists.txt': HOSTILE_CMAKE.doubling(40), 'deep/CMakeLists.txt': HOSTILE_CMAKE.deepNesting(50_000) }, u.pins, scratch, { tag: 'therock-heavy' });
      // The repository's own configuration asks git to run things too.
      for (const [k, v] of [['core.fsmonitor', script], ['core.hooksPath', path.dirname(script)], ['core.sshCommand', script]]) execFileSync('git', ['--git-dir', hostile, 'config', k!, v!]);
      await mkdir(path.join(dir, 'jail'), { recursive: true });
    });

    const jailed = (ref: string) =>
      runCli(['upstream', 'therock', ref, '--manifest', manifest, '--base-url', `${hostileRoot}/{owner}/{repo}`], {
        cwd: path.join(dir, 'jail'),
        env: { XDG_CACHE_HOME: path.join(dir, 'jail', 'cache'), HOME: path.join(dir, 'jail'), TMPDIR: path.join(dir, 'jail') },
      });

    it('refuses ext::, file:, option-like URLs, paths leaving the tree and update commands; runs nothing, writes nothing outside the cache', async () => {
      const before = await snapshot(dir, [path.join(dir, 'jail', 'cache'), path.join(dir, 'cache'), path.join(dir, 'cache-net'), path.join(dir, 'cache-down')]);
      const r = await jailed('therock-evil');
      assert.equal(r.code, 2, r.stderr);
      await assert.rejects(stat(canary), 'the canary was never run');
      const after = await snapshot(dir, [path.join(dir, 'jail', 'cache'), path.join(dir, 'cache'), path.join(dir, 'cache-net'), path.join(dir, 'cache-down')]);
      assert.deepEqual([...after].filter(([p, s]) => before.get(p) !== s), [], 'nothing outside the cache changed');
      const problems = r.stdout.slice(r.stdout.indexOf("Problems in TheRock's files"));
      assert.match(problems, /submodule "ext": url "ext::sh -c .*" names a git transport helper .*; refused/);
      assert.match(problems, /submodule "dash": url "--upload-pack=.*" starts with "-" \(an option to git\); refused/);
      assert.match(problems, /submodule "local": url "file:\/\/.*" is a local file: URL; refused/);
      assert.match(problems, /submodule "escape": path "\.\.\/\.\.\/escape" escapes the tree \(\.\.\).*; refused/);
      assert.match(problems, /submodule "updater": its update setting runs a command \("!…"\); refused/);
      assert.match(problems, /submodule "\.\.\/\.\.\/name": its name holds control characters or "\.\."; refused/);
      assert.match(problems, /gitlink "evil\/orphan" has no \.gitmodules entry/);
      assert.match(problems, /core\/CMakeLists\.txt:13: outside: EXTERNAL_SOURCE_DIR "\$\{THEROCK_SOURCE_DIR\}\/\.\.\/\.\.\/\.\.\/etc" escapes the tree/);
      assert.match(problems, /core\/CMakeLists\.txt:16: rooted: EXTERNAL_SOURCE_DIR "\/etc\/passwd" is an absolute path outside the tree/);
      assert.match(problems, /math-libs\/BLAS\/CMakeLists\.txt:4: unterminated therock_cmake_subproject_declare\( started here; the rest of the file is not read/);
      assert.match(problems, /BUILD_TOPOLOGY\.toml:1:\d+: .*; the topology is not read/);
      // The valid entries stand: three repositories, gpulib read before the broken declaration.
      assert.match(r.stdout, /^3 repositories pinned:$/m);
      assert.match(r.stdout, /^ {2}gpulib +ROCm\/rocm-libraries:projects\/gpulib/m);
      assert.doesNotMatch(r.stdout, /^ {2}broken /m);
      // Terminal escapes in TheRock's files reach the report escaped, never raw.
      assert.ok(!r.stdout.includes('\x1b'), 'no raw ESC in the report');
      assert.match(problems, /painted: EXTERNAL_SOURCE_DIR ".*\\u001b\[2J" resolves to .*, which holds control characters/);
    });

    it('prints line separators, bidirectional overrides and ESC from submodules, CMake and the ref escaped, never raw', async () => {
      const raw = /[\x1b\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
      const r = await jailed('therock-unicode');
      assert.equal(r.code, 2, r.stderr);
      assert.doesNotMatch(r.stdout, raw, 'a raw active character on standard output');
      assert.match(r.stdout, /submodule "lib\\u202eevil": its name holds control characters or "\.\."; path "evil\/line\\u2028sep" holds control characters; refused/);
      assert.match(r.stdout, /gitlink "evil\/\\u202eorphan" has no \.gitmodules entry/);
      assert.match(r.stdout, /therock_cmake_subproject_declare "\$\{na\\u2066me\\u001b\[2J\}": the name is not a literal subproject name/);
      const json = await runCli(['upstream', 'therock', 'therock-unicode', '--manifest', manifest, '--base-url', `${hostileRoot}/{owner}/{repo}`, '--json'], { env: { XDG_CACHE_HOME: path.join(dir, 'jail', 'cache') } });
      assert.equal(json.code, 2);
      assert.doesNotMatch(json.stdout, raw, 'JSON escapes them too (\\uXXXX, the same characters to a parser)');
      assert.ok((JSON.parse(json.stdout) as TheRockReport).therock.problems.some((p) => p.includes('lib\\u202eevil')));
      const ref = await jailed('therock-\x1b]0;owned\x07\u202e');
      assert.equal(ref.code, 2, ref.stderr);
      assert.doesNotMatch(ref.stderr, /[\x07\x1b\u202e]/, `the ref reached the terminal raw: ${JSON.stringify(ref.stderr)}`);
      assert.match(ref.stderr, /\\x1b\]0;owned\\x07\\u202e/);
    });

    it('reads huge and hostile CMake in bounded time and memory; the JSON report of MiBs arrives whole through a pipe', async () => {
      const out = path.join(dir, 'heavy.json');
      const script = '"$NODE" "$BIN" upstream therock therock-heavy --manifest "$MANIFEST" --base-url "$BASE" --json | { sleep 1; cat; } > "$OUT"; exit "${PIPESTATUS[0]}"';
      const res = spawnSync('bash', ['-c', script], {
        cwd: path.join(dir, 'jail'),
        env: { ...process.env, ...gitEnv(), NODE: process.execPath, BIN: bin, MANIFEST: manifest, BASE: `${hostileRoot}/{owner}/{repo}`, OUT: out, XDG_CACHE_HOME: path.join(dir, 'jail', 'cache') },
        encoding: 'utf8',
      });
      assert.equal(res.status, 2, res.stderr);
      const text = await readFile(out, 'utf8');
      assert.ok(text.length > 256 * 1024, `${text.length} bytes`);
      const report = JSON.parse(text) as TheRockReport;
      const grown = report.therock.subprojects.find((s) => s.name === 'grown')!;
      assert.equal(grown.deps.length, 30_000);
      assert.ok(report.therock.problems.some((p) => /^doubling\/CMakeLists\.txt:\d+: expanding its variables would produce more than \d+ characters, the most a file of its size may; the rest of the file is not read$/.test(p)), report.therock.problems.join('\n'));
      assert.ok(!report.therock.subprojects.some((s) => s.name === 'after-the-cut'));
    });

    it('refuses a huge or binary .gitmodules unread', async () => {
      const huge = await jailed('therock-huge');
      assert.equal(huge.code, 2);
      assert.match(huge.stdout, /^ {2}\.gitmodules: \d+ bytes, over the 65536 bytes a file of its kind may have; not read$/m);
      assert.match(huge.stdout, /^ {2}\.gitmodules is missing|^0 repositories pinned:$/m);
      const binary = await jailed('therock-binary');
      assert.equal(binary.code, 2);
      assert.match(binary.stdout, /^ {2}\.gitmodules: binary \(holds NUL bytes\); not read$/m);
      await assert.rejects(stat(canary));
    });
  });

  describe('bump --derive-from a TheRock release', () => {
    const derive = async (version: string, extra: string[]) => {
      const stack = await fixtureManifest(MANIFEST);
      const overlay = await tempDir('rocm-ebuild-therock-overlay-');
      const r = await runCli(['bump', version, '--derive-from', '6.3.0', '--manifest', stack, '--overlay', overlay, '--base-url', template, '--distdir', path.join(dir, 'distfiles'), '--offline', ...extra], {
        env: { XDG_CACHE_HOME: path.join(dir, 'cache-derive') },
      });
      return { r, stack: await readFile(path.join(stack, 'stack.yaml'), 'utf8') };
    };

    it('prints the composition against the release derived from and drafts the release in the therock stream', async () => {
      const dry = await derive('10.0.0', ['--therock', 'therock-10.0', '--dry-run']);
      assert.equal(dry.r.code, 0, dry.r.stderr);
      assert.match(dry.r.stdout, /^TheRock therock-10\.0 \(tag, commit [0-9a-f]{12}\): ROCm 10\.0\.0$/m);
      assert.match(dry.r.stdout, /^Against the manifest's 6\.3\.0:$/m);
      assert.match(dry.r.stdout, /^ {2}\+ {3}"10\.0\.0": \{ llvm_slot: 19, stream: therock \} {2}# draft derived from 6\.3\.0/m);
      assert.doesNotMatch(dry.stack, /10\.0\.0/, '--dry-run writes nothing');
      // Written, the draft validates; the bump then stops at the distfiles it may not download.
      const written = await derive('10.0.0', ['--therock', 'therock-10.0']);
      assert.match(written.stack, /^ {2}"10\.0\.0": \{ llvm_slot: 19, stream: therock \}/m);
      assert.match(written.r.stdout, /Draft release 10\.0\.0 written to .* \(derived from 6\.3\.0, therock stream; no evidence yet/);
      assert.equal(written.r.code, 3, written.r.stderr);
    });

    it('refuses a ref whose version.json is another release, and a ref that does not exist; writes nothing', async () => {
      const other = await derive('10.1.0', ['--therock', 'therock-10.0']);
      assert.equal(other.r.code, 2);
      assert.match(other.r.stderr, /TheRock at therock-10\.0 is ROCm 10\.0\.0, not 10\.1\.0; nothing was written/);
      assert.doesNotMatch(other.stack, /10\.1\.0/);
      const none = await derive('10.2.0', ['--therock', 'release/therock-10.2']);
      assert.equal(none.r.code, 2);
      assert.match(none.r.stderr, /TheRock has no tag or branch release\/therock-10\.2 for 10\.2\.0/);
    });
  });

  it('has --help with examples that run', async () => {
    const r = await runCli(['upstream', 'therock', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^EXAMPLES\n/m);
    assert.match(r.stdout, /Exit codes: 0 done, 2 invalid input/);
    // The examples, against the test's mirror instead of GitHub.
    for (const line of r.stdout.slice(r.stdout.indexOf('EXAMPLES')).split('\n').filter((l) => l.trim().startsWith('$ rocm-ebuild upstream therock'))) {
      const args = line.trim().replace(/^\$ rocm-ebuild upstream therock /, '').split(' ');
      const ref = args[0]!.replace('therock-7.14', 'therock-10.0').replace('release/therock-10.0', 'release/therock-10.1');
      const e = await cli([ref, '--base-url', template, ...(args.includes('--json') ? ['--json'] : [])]);
      assert.equal(e.code, 0, `${line}: ${e.stderr}`);
    }
  });
});

export { BASE_FILES };
