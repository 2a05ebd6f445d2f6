import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { TestServer } from '../helpers/http-server.js';
import { collectBuildFacts, isBuildFile } from '../../src/upstream/facts/build-facts.js';
import { diffFacts, type Change } from '../../src/upstream/facts/changes.js';
import { GitTree } from '../../src/upstream/trees/git-tree.js';
import type { DiffReport } from '../../src/upstream/facts/diff.js';
import { gitArchive, stackCopy, universe, type Universe } from './support.js';
import { GitHttpServer } from './git-http.js';

const line = (c: Change) => `${c.area} ${c.kind} ${c.subject}${c.from !== undefined ? ` ${c.from}` : ''}${c.to !== undefined ? ` -> ${c.to}` : ''}`;

describe('upstream diff', function () {
  this.timeout(180_000);
  let u: Universe;
  let stack: string;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    u = await universe();
    stack = stackCopy();
    dir = await tempDir('rocm-ebuild-diff-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
  });
  after(() => removeDir(dir));

  it('reads what matters to an ebuild from two trees and reports every kind of change', async () => {
    const gitDir = path.join(u.dir, 'git', 'ROCm', 'gpulib');
    const [a, b] = await Promise.all([GitTree.open(gitDir, 'rocm-6.2.2', 'ROCm/gpulib rocm-6.2.2'), GitTree.open(gitDir, 'rocm-6.3.3', 'ROCm/gpulib rocm-6.3.3')]);
    const [fa, fb] = await Promise.all([collectBuildFacts(a), collectBuildFacts(b)]);
    assert.deepEqual(fa.problems, []);
    // Documentation requirements and non-build files are not read; bracket comments and arguments hide nothing real.
    assert.ok(!fa.files.includes('docs/requirements.txt'));
    assert.ok(!fb.packages.some((p) => /ShouldNotAppear|NotThisEither/.test(p.name)));
    assert.ok(!fb.options.some((o) => o.name === 'NOT_AN_OPTION'));
    assert.deepEqual(fb.project, { name: 'gpulib', version: '1.3.0', languages: ['CXX', 'HIP'], where: { file: 'CMakeLists.txt', line: 3 } });
    assert.deepEqual(fa.sonames, [{ target: 'gpulib', version: '1.2.0', soversion: '1', where: { file: 'CMakeLists.txt', line: 39 } }]);
    assert.deepEqual(fa.packages.find((p) => p.name === 'rocm-cmake'), { name: 'rocm-cmake', via: 'find_package', versions: [], required: true, where: [{ file: 'CMakeLists.txt', line: 27 }] });

    const changes = diffFacts(fa, fb).map(line);
    assert.deepEqual(changes, [
      'cmake_minimum_required changed VERSION 3.16 -> 3.21...3.28',
      'project changed LANGUAGES CXX -> CXX HIP',
      'project changed VERSION 1.2.0 -> 1.3.0',
      'project changed rocm_setup_version 1.2.0 -> 1.3.0',
      'soname changed gpulib SOVERSION 1 -> 2',
      'soname changed gpulib VERSION 1.2.0 -> 1.3.0',
      'dependency removed Threads REQUIRED',
      'dependency changed GTest 1.11 -> 1.14',
      'dependency changed hip 5.7 -> 6.3',
      'dependency changed pkg-config libdrm 2.4.100 -> 2.4.120',
      'dependency added msgpack-cxx -> 6.0',
      'dependency added pkg-config libdrm_amdgpu -> REQUIRED',
      'bundled changed FetchContent googletest git https://github.com/google/googletest.git release-1.11.0 -> git https://github.com/google/googletest.git v1.14.0',
      'bundled added ExternalProject fmtlib -> url https://example.org/fmt-10.2.1.tar.gz',
      'option removed GPULIB_LEGACY_API ON',
      'option changed GPULIB_USE_HMM OFF -> ON',
      'option added BUILD_CLIENTS -> ON',
      'gpu-targets removed AMDGPU_TARGETS gfx803;gfx900;gfx906;gfx908;gfx90a;gfx1030',
      'gpu-targets changed DEFAULT_AMDGPU_TARGETS gfx803;gfx900;gfx906;gfx908;gfx90a;gfx1030 -> gfx900;gfx906;gfx908;gfx90a;gfx942;gfx1030;gfx1100;gfx1200',
      'gpu-targets added GPU_TARGETS -> gfx900;gfx906;gfx908;gfx90a;gfx942;gfx1030;gfx1100;gfx1200',
      'python changed numpy >=1.21 -> >=1.24',
      'python added joblib -> >= 1.3; python_version >= "3.9"',
      'python added numpy -> >=1.24',
      'python added setuptools -> >=64',
      'python added wheel -> any version',
    ]);
    const targets = diffFacts(fa, fb).find((c) => c.subject === 'DEFAULT_AMDGPU_TARGETS')!;
    assert.equal(targets.detail, '+gfx942 +gfx1100 +gfx1200 -gfx803');
    assert.deepEqual(diffFacts(fa, fa), []);
  });

  it('selects build files, not documentation or CI', () => {
    for (const f of ['CMakeLists.txt', 'cmake/x.cmake', 'a/b/requirements-dev.txt', 'pyproject.toml', 'tools/setup.py', 'setup.cfg']) assert.ok(isBuildFile(f), f);
    for (const f of ['docs/requirements.txt', 'doc/sphinx/CMakeLists.txt', '.github/x.cmake', 'CMakeLists.txt.in', 'src/a.cpp']) assert.ok(!isBuildFile(f), f);
  });

  it('prints text by component and source, skips pinned sources, and reports a missing tag in place (exit 5)', async () => {
    const r = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', '--manifest', stack, '--base-url', u.baseUrl], { env });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stdout, /^gpulib \(sci-libs\/gpulib\) 6\.2\.2 → 6\.3\.3\n {2}ROCm\/gpulib rocm-6\.2\.2 → rocm-6\.3\.3 \(7 → 7 build files\)\n/m);
    assert.match(r.stdout, /^ {4}gpu-targets ~ DEFAULT_AMDGPU_TARGETS: .* \(\+gfx942 \+gfx1100 \+gfx1200 -gfx803\) +CMakeLists\.txt:25$/m);
    assert.match(r.stdout, /^ {4}dependency \+ msgpack-cxx 6\.0 +CMakeLists\.txt:35$/m);
    assert.match(r.stdout, /^ {2}ROCm\/gpulib-data rocm-6\.2\.2 → rocm-6\.3\.3 \(1 → 1 build files\)\n {4}nothing that matters to an ebuild changed$/m);
    assert.doesNotMatch(r.stdout, /googletest v1\.14\.0/); // the pinned source is the same in both
    assert.match(r.stdout, /^ {2}ROCm\/thunk: not compared: no tag rocm-6\.3\.3 in ROCm\/thunk$/m);
    assert.match(r.stdout, /^ {4}dependency \+ pkg-config libdrm REQUIRED +libthunk\/CMakeLists\.txt:3$/m);
    assert.match(r.stdout, /^3 components, 3 sources compared, 1 could not be read$/m);
  });

  it('gives JSON with the same exit code, and Markdown for a pull request', async () => {
    const j = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'runtime', 'sci-libs/gpulib', '--json', '--manifest', stack, '--base-url', u.template], { env });
    assert.equal(j.code, 0, j.stderr);
    const report = JSON.parse(j.stdout) as DiffReport;
    assert.deepEqual(report.components.map((c) => c.component), ['gpulib', 'runtime']);
    assert.deepEqual(report.components[0]!.sources.map((s) => [s.source, s.status]), [
      ['ROCm/gpulib', 'compared'],
      ['ROCm/gpulib-data', 'compared'],
      ['google/googletest', 'pinned'],
    ]);
    assert.equal(report.failures, 0);
    const md = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'gpulib', '--format', 'markdown', '--manifest', stack, '--base-url', u.template], { env });
    assert.equal(md.code, 0, md.stderr);
    assert.match(md.stdout, /^### Upstream build changes 6\.2\.2 → 6\.3\.3\n\n#### gpulib \(`sci-libs\/gpulib`\)\n\n/);
    assert.match(md.stdout, /^- dependency `hip`: `5\.7` → `6\.3` — `CMakeLists\.txt:31` \(`ROCm\/gpulib`\)$/m);
    assert.match(md.stdout, /^- option `BUILD_CLIENTS`: added `ON` — `CMakeLists\.txt:7` \(`ROCm\/gpulib`\)$/m);
  });

  it('reads release tarballs through the distfiles engine: from a mirror, then offline from the distdir', async () => {
    const gitDir = (repo: string) => path.join(u.dir, 'git', 'ROCm', repo);
    const served = path.join(dir, 'served');
    for (const v of ['6.2.2', '6.3.3']) {
      await gitArchive(gitDir('gpulib'), `rocm-${v}`, `gpulib-rocm-${v}`, path.join(served, `gpulib-${v}.tar.gz`));
      await gitArchive(gitDir('gpulib-data'), `rocm-${v}`, `gpulib-data-rocm-${v}`, path.join(served, `gpulib-data-${v}.tar.gz`));
    }
    const server = await TestServer.start();
    for (const f of ['gpulib-6.2.2.tar.gz', 'gpulib-6.3.3.tar.gz', 'gpulib-data-6.2.2.tar.gz', 'gpulib-data-6.3.3.tar.gz']) {
      server.route(`/mirror/${f}`, { body: await readFile(path.join(served, f)) });
    }
    const distdir = path.join(dir, 'distfiles');
    try {
      const r = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'gpulib', '--json', '--manifest', stack, '--distdir', distdir, '--mirror', server.url('/mirror')], { env });
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as DiffReport;
      const viaGit = JSON.parse((await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'gpulib', '--json', '--manifest', stack, '--base-url', u.baseUrl], { env })).stdout) as DiffReport;
      // Same facts from the tarballs as from the tags; the labels name the same tags.
      assert.deepEqual(report.components[0]!.sources[0]!.changes, viaGit.components[0]!.sources[0]!.changes);
      assert.ok(existsSync(path.join(distdir, 'gpulib-6.3.3.tar.gz')));
    } finally {
      await server.close();
    }
    // A tarball that cannot be fetched is said once, not "cannot fetch X: could not fetch X".
    // (A server with no routes answers 404.)
    const refused = await TestServer.start();
    try {
      const failed = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'runtime', '--manifest', stack, '--distdir', path.join(dir, 'distfiles-empty'), '--mirror', refused.url('/mirror'), '--timeout', '5'], { env });
      assert.equal(failed.code, 5, failed.stderr);
      assert.match(failed.stdout, /^ {2}ROCm\/runtime: not compared: (could not fetch|no release archive) /m);
      assert.doesNotMatch(failed.stdout, /cannot fetch [^:\n]+: could not fetch/);
    } finally {
      await refused.close();
    }
    // Offline: what is in the distdir is enough; a missing file is reported, not fatal.
    const off = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'gpulib', 'runtime', '--manifest', stack, '--distdir', distdir, '--offline'], { env });
    assert.equal(off.code, 5, off.stderr);
    assert.match(off.stdout, /ROCm\/gpulib rocm-6\.2\.2 → rocm-6\.3\.3 \(7 → 7 build files\)/);
    assert.match(off.stdout, /^ {2}ROCm\/runtime: not compared: runtime-6\.\d\.\d\.tar\.gz is not in the distdir \(--offline\)$/m);
  });

  it('fetches tags from a network git remote once, into the cache', async () => {
    const server = await new GitHttpServer(path.join(u.dir, 'git')).start();
    const cacheEnv = { XDG_CACHE_HOME: path.join(dir, 'cache-http') };
    try {
      const first = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'runtime', '--json', '--manifest', stack, '--base-url', server.url], { env: cacheEnv });
      assert.equal(first.code, 0, first.stderr);
      const fetches = server.requests.filter((q) => q.startsWith('POST')).length;
      assert.ok(fetches >= 2, server.requests.join('\n'));
      const again = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'runtime', '--json', '--manifest', stack, '--base-url', server.url], { env: cacheEnv });
      assert.equal(again.code, 0);
      assert.equal(server.requests.filter((q) => q.startsWith('POST')).length, fetches, 'the second run reads the cache');
      assert.deepEqual(JSON.parse(again.stdout), JSON.parse(first.stdout));
      // Two runs filling one fresh cache at once: both succeed with the same answer.
      const racing = { XDG_CACHE_HOME: path.join(dir, 'cache-race') };
      const both = await Promise.all([1, 2].map(() => runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'runtime', 'gpulib', '--json', '--manifest', stack, '--base-url', server.url], { env: racing })));
      for (const r of both) assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.deepEqual(JSON.parse(both[0]!.stdout), JSON.parse(both[1]!.stdout));
    } finally {
      await server.close();
    }
  });

  it('refuses what is not a version and names unknown components (exit 2)', async () => {
    const bad = await runCli(['upstream', 'diff', '6.2.2', 'latest', '--manifest', stack], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /release "latest" is not a release version such as 6\.3\.3/);
    const unknown = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'rocprim', '--manifest', stack], { env });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no component rocprim/);
  });
});
