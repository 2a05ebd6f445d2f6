import { strict as assert } from 'node:assert';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import type { EvidenceReport } from '../../src/upstream/evidence/check.js';
import { addEvidenceRecord, RecordError, type TagRecord } from '../../src/upstream/evidence/record.js';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, root, runCli, tempDir, writeTree } from '../helpers/project.js';
import { GitHttpServer } from './git-http.js';
import { bareRepo } from './support.js';

const STACK = `name: Evidence test stack
repo_name: evidence-test
defaults:
  tag: rocm-\${PV}
releases:
  "6.2.2": { llvm_slot: 18 }
  "6.3.3": { llvm_slot: 19 }
  "7.2.0": { llvm_slot: 22 }
python:
  compat: python3_{11..14}
  current: [python3_11, python3_12, python3_13, python3_14]
  default: [python3_13]
targets: targets.yaml
external:
  - external.yaml
components:
  - components/*.yaml
`;

/** Its facts hold at rocm-6.2.2; at rocm-6.3.3 an option, a package it no longer finds and the fix-up's text are gone. */
const ALPHA = `name: alpha
atom: sci-libs/alpha
description: A library whose facts hold at 6.2.2 and not at 6.3.3
homepage: https://github.com/ROCm/alpha
license: MIT
sources:
  - github: ROCm/alpha
build: cmake
compiler: hipcc
targets:
  mode: full
  cmake_vars: [GPU_TARGETS]
cmake:
  defines:
    BUILD_TEST: "OFF"
    ALPHA_USE_HMM: "ON"
    CMAKE_SKIP_RPATH: "ON"
    CMAKE_DISABLE_FIND_PACKAGE_Git: "ON"
    msgpack_DIR: /usr/lib64/cmake/msgpack
    ROCM_SYMLINK_LIBS: "OFF"
prepare:
  - replace: { files: [src/config.h], from: /opt/rocm, to: "\${EPREFIX}/usr" }
`;

/** Written by hand: comments, flow maps, quoting and a record already there, all of which --record keeps. */
const BETA = `# beta: written by hand, with comments the record must keep.
name: beta   # a trailing comment
atom: dev-libs/beta
description: "A library written with comments and odd spacing"
homepage: https://github.com/ROCm/beta
license: MIT
sources:
  - github: ROCm/beta
build: cmake
cmake:
  defines: { BETA_WERROR: "OFF", BETA_PREFIX: /usr }
prepare:
  - delete_lines: { files: [CMakeLists.txt], matching: "^add_compile_options(-Werror)" }

# Evidence, oldest first.
evidence:
  - releases: ["6.2.2"]
    kind: peer            # a packager's recipe
    source: "::gentoo dev-libs/beta/beta-6.2.2.ebuild"
    facts: [sources, deps]
# (end of evidence)
notes: kept after the evidence
`;

/** From its own repository until 7.1.x, then the rocm-libraries monorepo's release asset. */
const GAMMA = `name: gamma
atom: sci-libs/gamma
description: A library that moved into the monorepo at 7.2.0
homepage: https://github.com/ROCm/gamma
license: MIT
releases: { from: "6.3.0" }
sources:
  - github: ROCm/gamma
    releases: { until: "7.2.0" }
  - release_asset: ROCm/rocm-libraries
    file: gamma.tar.gz
    releases: { from: "7.2.0" }
build: cmake
cmake:
  defines:
    GAMMA_ENABLE_MARKER: "OFF"
`;

/** The stack's CMake modules: a name only they read reaches every project that finds them. */
const ROCM_CMAKE = `name: rocm-cmake
atom: dev-build/rocm-cmake
description: CMake modules the test stack's projects load
homepage: https://github.com/ROCm/rocm-cmake
license: MIT
sources:
  - github: ROCm/rocm-cmake
build: cmake
`;

const ALPHA_CMAKE_622 = `cmake_minimum_required(VERSION 3.21)
project(alpha VERSION 1.0.0 LANGUAGES CXX)
option(BUILD_TEST "Build the tests" OFF)
option(ALPHA_USE_HMM "Use host-mapped memory" OFF)
find_package(Git QUIET)
find_package(msgpack 6 REQUIRED)
find_package(ROCM 0.7 CONFIG REQUIRED)
if(NOT DEFINED GPU_TARGETS)
  set(GPU_TARGETS "gfx90a;gfx1100" CACHE STRING "GPU targets")
endif()
`;
const ALPHA_CMAKE_633 = `cmake_minimum_required(VERSION 3.21)
project(alpha VERSION 1.1.0 LANGUAGES CXX)
option(BUILD_TEST "Build the tests" OFF)
find_package(msgpack 6 REQUIRED)
find_package(ROCM 0.7 CONFIG REQUIRED)
set(GPU_TARGETS "gfx90a;gfx1100" CACHE STRING "GPU targets")
`;
const BETA_CMAKE = `cmake_minimum_required(VERSION 3.21)
project(beta LANGUAGES C)
add_compile_options(-Werror)
if(BETA_WERROR)
  message(STATUS "werror")
endif()
install(FILES beta.h DESTINATION \${BETA_PREFIX}/include)
`;

describe('upstream evidence', function () {
  this.timeout(180_000);
  let dir: string;
  let server: GitHttpServer;
  let stack: string;
  const big = 4 * 1024 * 1024;

  before(async () => {
    dir = await tempDir('rocm-ebuild-evidence-');
    const trees = path.join(dir, 'trees');
    await writeTree(trees, {
      'alpha-6.2.2/CMakeLists.txt': ALPHA_CMAKE_622,
      'alpha-6.2.2/src/config.h': '#define ROCM_PATH "/opt/rocm"\n',
      'alpha-6.3.3/CMakeLists.txt': ALPHA_CMAKE_633,
      'alpha-6.3.3/src/config.h': '#define ROCM_PATH ROCM_INSTALL_PREFIX\n',
      'rocm-cmake/CMakeLists.txt': 'project(rocm-cmake)\ninstall(DIRECTORY share DESTINATION .)\n',
      'rocm-cmake/share/rocmcmakebuildtools/cmake/ROCMInstallSymlinks.cmake': 'function(rocm_install_symlinks)\n  if(ROCM_SYMLINK_LIBS)\n    message(STATUS "links")\n  endif()\nendfunction()\n',
      'beta/CMakeLists.txt': BETA_CMAKE,
      'beta/beta.h': '\n',
      'gamma-6.3.3/CMakeLists.txt': 'project(gamma)\noption(GAMMA_ENABLE_MARKER "markers" ON)\n',
      'mono/projects/gamma/CMakeLists.txt': 'project(gamma)\noption(GAMMA_ENABLE_MARKER "roctx markers" ON)\n',
      'mono/projects/other/CMakeLists.txt': 'project(other)\n',
      'mono/shared/tensile/setup.py': 'print("tensile")\n',
    });
    // What reading gamma must never download: incompressible bytes in another project.
    await writeFile(path.join(trees, 'mono/projects/other/kernels.co'), randomBytes(big));
    const git = path.join(dir, 'git', 'ROCm');
    await bareRepo(path.join(git, 'alpha'), [
      { tag: 'rocm-6.2.2', tree: path.join(trees, 'alpha-6.2.2') },
      { tag: 'rocm-6.3.3', tree: path.join(trees, 'alpha-6.3.3') },
    ]);
    await bareRepo(path.join(git, 'beta'), [
      { tag: 'rocm-6.2.2', tree: path.join(trees, 'beta') },
      { tag: 'rocm-6.3.3', tree: path.join(trees, 'beta') },
    ]);
    await bareRepo(path.join(git, 'rocm-cmake'), [
      { tag: 'rocm-6.2.2', tree: path.join(trees, 'rocm-cmake') },
      { tag: 'rocm-6.3.3', tree: path.join(trees, 'rocm-cmake') },
    ]);
    await bareRepo(path.join(git, 'gamma'), [{ tag: 'rocm-6.3.3', tree: path.join(trees, 'gamma-6.3.3') }]);
    const mono = path.join(git, 'rocm-libraries');
    await bareRepo(mono, [{ tag: 'rocm-7.2.0', tree: path.join(trees, 'mono') }]);
    for (const [k, v] of [['uploadpack.allowFilter', 'true'], ['uploadpack.allowAnySHA1InWant', 'true']]) execFileSync('git', ['--git-dir', mono, 'config', k!, v!]);
    server = await new GitHttpServer(path.join(dir, 'git')).start();
    stack = await manifest();
  });
  after(async () => {
    await server.close();
    await removeDir(dir);
  });

  /** A fresh copy of the test stack, with files replaced as given. */
  const manifest = (files: Record<string, string | null> = {}) =>
    fixtureManifest({
      'stack.yaml': STACK,
      'components/base.yaml': null,
      'components/gpulib.yaml': null,
      'components/app.yaml': null,
      'components/alpha.yaml': ALPHA,
      'components/beta.yaml': BETA,
      'components/gamma.yaml': GAMMA,
      'components/rocm-cmake.yaml': ROCM_CMAKE,
      ...files,
    });
  const ev = (m: string, args: string[]) =>
    runCli(['upstream', 'evidence', ...args, '--manifest', m, '--base-url', server.url], { env: { XDG_CACHE_HOME: path.join(dir, 'cache') } });
  const json = (stdout: string) => JSON.parse(stdout) as EvidenceReport;
  const read = (m: string, name: string) => readFile(path.join(m, 'components', `${name}.yaml`), 'utf8');

  it('says per component which facts held and which failed, with the reason (exit 6)', async () => {
    const r = await ev(stack, ['6.3.3', 'alpha', 'beta']);
    assert.equal(r.code, 6, r.stderr);
    assert.equal(r.stderr, '', 'no progress when stderr is not a terminal');
    assert.match(r.stdout, /^alpha \(sci-libs\/alpha\) 6\.3\.3: ROCm\/alpha at rocm-6\.3\.3$/m);
    assert.match(r.stdout, /^ {2}sources +held +S \(ROCm\/alpha rocm-6\.3\.3\) holds CMakeLists\.txt$/m);
    assert.match(r.stdout, /^ {2}cmake +failed +ALPHA_USE_HMM: passed by cmake\.defines, but neither defined nor read by the CMake file of S or the CMake modules of dev-build\/rocm-cmake, nor CMake's own \(and 1 more\)$/m);
    assert.match(r.stdout, /^ {11}failed +CMAKE_DISABLE_FIND_PACKAGE_Git: passed by cmake\.defines/m);
    assert.match(r.stdout, /^ {2}fixups +failed +prepare\[0\] src\/config\.h: replace "\/opt\/rocm": no match$/m);
    assert.match(r.stdout, /^ {2}record +none: cmake failed, fixups failed$/m);
    assert.match(r.stdout, /^beta \(dev-libs\/beta\) 6\.3\.3: ROCm\/beta at rocm-6\.3\.3\n {2}sources +held .*\n {2}cmake +held +2 -D names, each defined or read by the project or CMake's own\n {2}fixups +held +1 fix-up applies\n {2}offline +held +no FetchContent, ExternalProject, CPM, file\(DOWNLOAD\) or git clone is reached with the options the ebuild passes; 1 CMake file followed\n {2}record +would write tag \(sources, cmake, fixups, offline\) \(with --record\)$/m);
    assert.match(r.stdout, /^2 components: 6 facts held, 2 failed, 0 not checked; 1 record to write with --record$/m);

    const j = await ev(stack, ['6.3.3', 'alpha', 'beta', '--json']);
    assert.equal(j.code, 6);
    const report = json(j.stdout);
    const alpha = report.components.find((c) => c.component === 'alpha')!;
    assert.deepEqual(alpha.facts.map((f) => [f.fact, f.status]), [['sources', 'held'], ['cmake', 'failed'], ['fixups', 'failed'], ['offline', 'held']]);
    assert.equal(alpha.record, undefined);
    const cmake = alpha.facts.find((f) => f.fact === 'cmake')!;
    assert.deepEqual(
      Object.fromEntries(cmake.details.map((d) => [d.subject, d.status])),
      { ALPHA_USE_HMM: 'failed', BUILD_TEST: 'held', CMAKE_DISABLE_FIND_PACKAGE_Git: 'failed', CMAKE_SKIP_RPATH: 'held', GPU_TARGETS: 'held', msgpack_DIR: 'held', ROCM_SYMLINK_LIBS: 'held' },
    );
    assert.equal(
      cmake.details.find((d) => d.subject === 'ROCM_SYMLINK_LIBS')!.reason,
      "if() in dev-build/rocm-cmake's CMake modules (ROCm/rocm-cmake rocm-6.3.3, share/rocmcmakebuildtools/cmake/ROCMInstallSymlinks.cmake:2), which the project loads with find_package",
    );
    assert.match(cmake.details.find((d) => d.subject === 'msgpack_DIR')!.reason, /find_package\(msgpack\)/);
    assert.deepEqual(report.components.find((c) => c.component === 'beta')!.record, { releases: ['6.3.3'], kind: 'tag', source: 'ROCm/beta at rocm-6.3.3', facts: ['sources', 'cmake', 'fixups', 'offline'] });
  });

  it('--record writes what held, keeping every other byte; never a record for a component with a failed fact; a second run changes nothing', async () => {
    const m = await manifest();
    const alphaBefore = await read(m, 'alpha');
    const r = await ev(m, ['6.3.3', 'alpha', 'beta', '--record']);
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stdout, /^ {2}record +written: tag \(sources, cmake, fixups, offline\)$/m);
    assert.equal(await read(m, 'alpha'), alphaBefore, 'no record for a component whose facts failed');
    const record = '  - releases: ["6.3.3"]\n    kind: tag\n    source: ROCm/beta at rocm-6.3.3\n    facts: [sources, cmake, fixups, offline]\n';
    const at = BETA.indexOf('# (end of evidence)');
    assert.equal(await read(m, 'beta'), BETA.slice(0, at) + record + BETA.slice(at));

    const again = await ev(m, ['6.3.3', 'beta', '--record']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^ {2}record +already recorded: tag \(sources, cmake, fixups, offline\)$/m);
    assert.match(again.stdout, /0 records written, 1 already there$/m);
    assert.equal(await read(m, 'beta'), BETA.slice(0, at) + record + BETA.slice(at));
    assert.deepEqual((await readdir(path.join(m, 'components'))).sort(), ['alpha.yaml', 'beta.yaml', 'gamma.yaml', 'rocm-cmake.yaml'], 'no lock or temporary file left');
  });

  it('adds a record at the end of a file without evidence, and extends a one-release record of the same source in place', async () => {
    const seeded = BETA.replace('# (end of evidence)\n', '  - releases: ["6.2.2"]\n    kind: tag\n    source: ROCm/beta at rocm-6.2.2\n    facts: [sources]   # checked by hand\n# (end of evidence)\n');
    const m = await manifest({ 'components/beta.yaml': seeded });
    const r = await ev(m, ['6.2.2', 'alpha', 'beta', '--record']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await read(m, 'beta'), seeded.replace('facts: [sources]   # checked', 'facts: [sources, cmake, fixups, offline]   # checked'));
    assert.equal(await read(m, 'alpha'), `${ALPHA}evidence:\n  - releases: ["6.2.2"]\n    kind: tag\n    source: ROCm/alpha at rocm-6.2.2\n    facts: [sources, cmake, fixups, offline]\n`);
    const v = await runCli(['validate', m]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    const render = await runCli(['render', 'alpha', '--version', '6.2.2', '--manifest', m]);
    assert.match(render.stderr, /tag: ROCm\/alpha at rocm-6\.2\.2 \(sources, cmake, fixups, offline\)/);
  });

  it("reads a monorepo project's directory through a partial clone over HTTP, and names the asset's directory in the record", async () => {
    const m = await manifest();
    const before = server.bytesSent;
    const r = await ev(m, ['7.2.0', 'gamma', '--record', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const g = json(r.stdout).components[0]!;
    assert.deepEqual(g.facts.map((f) => [f.fact, f.status]), [['sources', 'held'], ['cmake', 'held'], ['offline', 'held']]);
    assert.equal(g.recorded, 'written');
    assert.match(await read(m, 'gamma'), /\n {4}source: ROCm\/rocm-libraries at rocm-7\.2\.0 \(projects\/gamma\)\n {4}facts: \[sources, cmake, offline\]\n$/);
    const sent = server.bytesSent - before;
    assert.ok(sent < big / 4, `the server sent ${sent} bytes: the other project's ${big} were not read`);
  });

  it('a component not in the release is said so; a release the manifest lacks is an input error', async () => {
    const r = await ev(stack, ['6.2.2', 'gamma']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^gamma \(sci-libs\/gamma\) 6\.2\.2\n {2}not part of 6\.2\.2 \(releases: in the component's data\)\n/);
    const none = await ev(stack, ['6.4.0']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /release 6\.4\.0 is not in .*stack\.yaml/);
  });

  describe('hostile input', () => {
    it('a tag that reads as an option never reaches git as one: refused by the schema with "=", by the ref-name check without', async () => {
      const withValue = ALPHA.replace('  - github: ROCm/alpha\n', '  - github: ROCm/alpha\n    tag: "--upload-pack=touch${PV}"\n');
      const m = await manifest({ 'components/alpha.yaml': withValue });
      const r = await ev(m, ['6.2.2', 'alpha', '--record']);
      assert.equal(r.code, 2, r.stdout);
      assert.equal(await read(m, 'alpha'), withValue);

      const bare = ALPHA.replace('  - github: ROCm/alpha\n', '  - github: ROCm/alpha\n    tag: --upload-pack\n');
      const m2 = await manifest({ 'components/alpha.yaml': bare });
      const requests = server.requests.length;
      const b = await ev(m2, ['6.2.2', 'alpha', '--record']);
      assert.equal(b.code, 6, b.stderr);
      assert.match(b.stdout, /^ {2}sources +failed +ROCm\/alpha --upload-pack: "--upload-pack" is not a valid tag name$/m);
      assert.match(b.stdout, /^ {2}cmake +unchecked +S could not be read/m);
      assert.match(b.stdout, /^ {2}record +none: sources failed$/m);
      assert.equal(server.requests.length, requests, 'nothing was asked of the server');
      assert.equal(await read(m2, 'alpha'), bare);
    });

    it('refuses to record into a component file that is a symbolic link out of the manifest, before reading anything', async () => {
      const outside = await tempDir('rocm-ebuild-outside-');
      await writeFile(path.join(outside, 'beta.yaml'), BETA);
      const m = await manifest({ 'components/beta.yaml': null });
      await symlink(path.join(outside, 'beta.yaml'), path.join(m, 'components', 'beta.yaml'));
      const requests = server.requests.length;
      const r = await ev(m, ['6.3.3', 'beta', '--record']);
      assert.equal(r.code, 2, r.stdout);
      assert.match(r.stderr, /beta\.yaml is a symbolic link \(to .*outside.*beta\.yaml\); --record writes only regular files in the manifest directory.*nothing was checked or written/);
      assert.equal(server.requests.length, requests);
      assert.equal(await readFile(path.join(outside, 'beta.yaml'), 'utf8'), BETA);
      // A directory of the manifest linked elsewhere is refused the same way.
      const m2 = await manifest({ 'components/beta.yaml': null });
      await mkdir(path.join(m2, 'more'));
      await symlink(outside, path.join(m2, 'more', 'linked'));
      await writeFile(path.join(m2, 'stack.yaml'), STACK.replace('  - components/*.yaml\n', '  - components/*.yaml\n  - more/linked/*.yaml\n'));
      const d = await ev(m2, ['6.3.3', 'beta', '--record']);
      assert.equal(d.code, 2, d.stdout);
      assert.match(d.stderr, /is outside the manifest directory/);
      assert.equal(await readFile(path.join(outside, 'beta.yaml'), 'utf8'), BETA);
      await removeDir(outside);
    });
  });

  describe('a component file that cannot be replaced', () => {
    /**
     * Makes a path unwritable the way it is on a real system: immutable
     * (chattr +i), which binds root too, where the test runs as root (as CI
     * does) and the file system has the flag; read-only permissions otherwise.
     * Returns the undo.
     */
    function lockDown(target: string, isDir: boolean): () => void {
      if (process.getuid?.() === 0 && spawnSync('chattr', ['+i', target]).status === 0) return () => void spawnSync('chattr', ['-i', target]);
      chmodSync(target, isDir ? 0o555 : 0o444);
      return () => chmodSync(target, isDir ? 0o755 : 0o644);
    }

    for (const [label, isDir] of [['the file', false], ['its directory', true]] as const) {
      it(`${label} immutable or read-only: --record is refused with the usual error (exit 2) before anything is fetched, and nothing changes`, async () => {
        const m = await manifest({});
        const file = path.join(m, 'components', 'beta.yaml');
        const before = await readFile(file, 'utf8');
        const undo = lockDown(isDir ? path.dirname(file) : file, isDir);
        try {
          const requests = server.requests.length;
          const r = await ev(m, ['6.3.3', 'beta', '--record']);
          assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
          assert.match(r.stderr, new RegExp(`^rocm-ebuild: \\S+beta\\.yaml: cannot replace ${isDir ? 'its directory' : 'it'} \\((immutable or append-only, EPERM|read-only for you, EACCES)\\); make the file and its directory writable, or add the record by hand; nothing was checked or written\\n$`));
          assert.doesNotMatch(r.stderr, /internal error|at .*\.js:\d+/);
          assert.equal(server.requests.length, requests, 'nothing was fetched');
          const json = await ev(m, ['6.3.3', 'beta', '--record', '--json']);
          assert.equal(json.code, 2);
          assert.equal((JSON.parse(json.stdout) as { error: { exitCode: number } }).error.exitCode, 2);
        } finally {
          undo();
        }
        assert.equal(await readFile(file, 'utf8'), before);
        assert.deepEqual((await readdir(path.dirname(file))).filter((n) => n.startsWith('.beta.yaml')), [], 'no lock or temporary file left');
      });
    }
  });

  describe('a second process and kill -9', () => {
    /** A child process adding records for the given releases to one file, one after another. */
    const writer = (file: string, manifestDir: string, versions: string[]) => {
      const code = `
        const { recordEvidence } = await import(${JSON.stringify(path.join(root, 'dist/src/upstream/evidence/record.js'))});
        const [file, dir, ...versions] = process.argv.slice(1);
        for (const v of versions) await recordEvidence(file, dir, { releases: [v], kind: 'tag', source: 'ROCm/beta at rocm-' + v, facts: ['sources'] });
      `;
      return spawn(process.execPath, ['--input-type=module', '-e', code, file, manifestDir, ...versions], { stdio: ['ignore', 'inherit', 'inherit'] });
    };
    const exited = (child: ReturnType<typeof spawn>) => new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    const versions = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}.${i}`);

    it('four processes recording into one file at once lose none of each other\'s records', async () => {
      const m = await manifest();
      const file = path.join(m, 'components', 'beta.yaml');
      const groups = ['1.1', '1.2', '1.3', '1.4'].map((p) => versions(p, 8));
      const codes = await Promise.all(groups.map((g) => exited(writer(file, m, g))));
      assert.deepEqual(codes, [0, 0, 0, 0]);
      const evidence = (parse(await readFile(file, 'utf8')) as { evidence: { releases: string[] }[] }).evidence;
      const recorded = evidence.map((e) => e.releases[0]).filter((v) => v !== '6.2.2').sort();
      assert.deepEqual(recorded, groups.flat().sort());
    });

    it('the CLI run twice at once writes the record once', async () => {
      const m = await manifest();
      const [a, b] = await Promise.all([ev(m, ['6.3.3', 'beta', '--record']), ev(m, ['6.3.3', 'beta', '--record'])]);
      assert.deepEqual([a.code, b.code], [0, 0], a.stderr + b.stderr);
      const text = await read(m, 'beta');
      assert.equal(text.split('source: ROCm/beta at rocm-6.3.3').length, 2, text);
      assert.match(a.stdout + b.stdout, /record +written/);
      assert.match(a.stdout + b.stdout, /record +already recorded/);
    });

    it('a writer killed with SIGKILL at any moment leaves the old file or the new one, and the next run takes over its lock', async () => {
      // A file of a megabyte (comments), so that writing it takes several system calls: a file written in
      // place would be seen, and left by kill -9, half-written.
      const padding = Array.from({ length: 16_384 }, (_, i) => `# ${String(i).padStart(5, '0')} ${'-'.repeat(54)}\n`).join('');
      const m = await manifest({ 'components/beta.yaml': padding + BETA });
      const file = path.join(m, 'components', 'beta.yaml');
      let reads = 0;
      let last = 0;
      let reading = true;
      // Reads the file as fast as it can while writers are killed: every read is whole, and records never disappear.
      const reader = (async () => {
        while (reading) {
          const text = await readFile(file, 'utf8');
          assert.ok(text.startsWith(padding) && text.endsWith('notes: kept after the evidence\n'), `a read saw a broken file of ${text.length} characters`);
          const count = text.split('\n  - releases: ').length - 1;
          assert.ok(count >= last, 'a record disappeared');
          last = count;
          if (reads % 16 === 0) assert.equal((parse(text) as { name: string }).name, 'beta');
          reads++;
          await new Promise((r) => setImmediate(r));
        }
      })();
      for (let round = 0; round < 4; round++) {
        const child = writer(file, m, versions(`2.${round}`, 200));
        const done = exited(child);
        // Killed once it has started writing, at a moment that differs from round to round.
        const start = last;
        for (let waited = 0; last === start && waited < 30_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 40)));
        child.kill('SIGKILL');
        await done;
      }
      reading = false;
      await reader;
      assert.ok(reads > 20, `only ${reads} reads`);
      assert.ok(last > 1, 'the killed writers wrote something before they were killed');
      // The next writer is not stopped by the lock or the temporary file a killed one left behind, and cleans them up.
      const next = await exited(writer(file, m, ['3.0']));
      assert.equal(next, 0);
      assert.deepEqual((await readdir(path.join(m, 'components'))).sort(), ['alpha.yaml', 'beta.yaml', 'gamma.yaml', 'rocm-cmake.yaml']);
      assert.match(await readFile(file, 'utf8'), /source: ROCm\/beta at rocm-3\.0\n/);
    });
  });

  describe('splicing a record into the text', () => {
    const record: TagRecord = { releases: ['6.3.3'], kind: 'tag', source: 'ROCm/x at rocm-6.3.3', facts: ['sources'] };
    it('follows the list\'s own indentation, and quotes a source YAML would read otherwise', () => {
      const text = 'name: x\nevidence:\n- releases: ["6.2.2"]\n  kind: peer\n  source: Spack x\nnotes: n\n';
      assert.equal(addEvidenceRecord(text, record), 'name: x\nevidence:\n- releases: ["6.2.2"]\n  kind: peer\n  source: Spack x\n- releases: ["6.3.3"]\n  kind: tag\n  source: ROCm/x at rocm-6.3.3\n  facts: [sources]\nnotes: n\n');
      const odd = addEvidenceRecord('name: x', { ...record, source: 'ROCm/x at rocm-6.3.3: #1' })!;
      assert.equal(odd, 'name: x\nevidence:\n  - releases: ["6.3.3"]\n    kind: tag\n    source: "ROCm/x at rocm-6.3.3: #1"\n    facts: [sources]\n');
      assert.equal((parse(odd) as { evidence: TagRecord[] }).evidence[0]!.source, 'ROCm/x at rocm-6.3.3: #1');
    });
    it('refuses a layout it cannot extend without rewriting it, changing nothing', () => {
      for (const text of ['name: x\nevidence: []\n', 'name: x\nevidence: [{ releases: ["6.2.2"], kind: peer, source: s }]\n', 'name: x\nevidence:\n', '- a\n- b\n']) {
        assert.throws(() => addEvidenceRecord(text, record), RecordError, text);
      }
    });
    it('a record of the same source covering the release by a range, with the facts, is already there', () => {
      const text = 'name: x\nevidence:\n  - releases: { from: "6.3.0" }\n    kind: tag\n    source: ROCm/x at rocm-6.3.3\n    facts: [sources, deps]\n';
      assert.equal(addEvidenceRecord(text, record), undefined);
    });
  });

  it('has --help with examples that run', async () => {
    const r = await runCli(['upstream', 'evidence', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^EXAMPLES\n/m);
    assert.match(r.stdout, /Exit codes: 0 every checked fact held, 2 invalid input/);
    // oclif wraps a long example with a trailing backslash: joined back into one command line.
    const examples = r.stdout
      .slice(r.stdout.indexOf('EXAMPLES'))
      .replace(/ *\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => l.trim().startsWith('$ rocm-ebuild upstream evidence'));
    assert.equal(examples.length, 3);
    const m = await manifest();
    const names: Record<string, string> = { rocPRIM: 'beta', hipcub: 'alpha', rocBLAS: 'gamma' };
    for (const line of examples) {
      // The examples, against the test's server instead of GitHub and on the test stack.
      const words = line.trim().replace(/^\$ rocm-ebuild upstream evidence /, '').replace(/ --base-url '[^']*'/, '').split(' ');
      const e = await ev(m, words.map((w) => names[w] ?? w));
      assert.ok([0, 6].includes(e.code), `${line}: exit ${e.code}: ${e.stderr}`);
      if (words.includes('--json')) assert.equal(json(e.stdout).version, words[0]);
    }
    assert.ok(existsSync(path.join(m, 'components', 'beta.yaml')));
    assert.match(await read(m, 'beta'), /source: ROCm\/beta at rocm-6\.3\.3/, 'the --record example recorded');
  });
});
