import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DiffReport } from '../../src/upstream/facts/diff.js';
import type { ProjectsReport } from '../../src/upstream/releases/projects.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { GitHttpServer } from './git-http.js';
import { bareRepo } from './support.js';

/** gpulib built from its own repository until 7.1.x, from rocm-libraries' release asset from 7.2.0 (as AMD moved the math libraries). */
const MOVED = BASE_FILES['components/gpulib.yaml']!.replace(
  'sources:\n  - github: ROCm/gpulib\n',
  `sources:
  - github: ROCm/gpulib
    releases: { until: "7.2.0" }
  - release_asset: ROCm/rocm-libraries
    file: gpulib.tar.gz
    releases: { from: "7.2.0" }
`,
);

const CMAKE_711 = `cmake_minimum_required(VERSION 3.16)
project(gpulib VERSION 3.1.0 LANGUAGES CXX)
find_package(hip REQUIRED)
option(BUILD_CLIENTS_TESTS "tests" OFF)
`;
const CMAKE_720 = `cmake_minimum_required(VERSION 3.25)
project(gpulib VERSION 3.2.0 LANGUAGES CXX HIP)
find_package(hip REQUIRED)
find_package(hipblaslt 1.0 REQUIRED)
option(BUILD_CLIENTS_TESTS "tests" OFF)
option(GPULIB_ENABLE_MARKER "roctx markers" OFF)
`;

/**
 * A monorepo shaped like ROCm/rocm-libraries (projects/…, shared/…, a release
 * tag) and the project's own repository it replaced, served by real git over
 * HTTP on 127.0.0.1: reading one project must not cost the whole tag.
 */
describe('upstream: monorepo sources', function () {
  this.timeout(180_000);
  let dir: string;
  let server: GitHttpServer;
  let manifest: string;
  const big = 4 * 1024 * 1024;

  before(async () => {
    dir = await tempDir('rocm-ebuild-monorepo-');
    const trees = path.join(dir, 'trees');
    const own = path.join(trees, 'gpulib-7.1.1');
    await mkdir(own, { recursive: true });
    await writeFile(path.join(own, 'CMakeLists.txt'), CMAKE_711);
    const mono = path.join(trees, 'rocm-libraries-7.2.0');
    for (const d of ['projects/gpulib', 'projects/hipblaslt/library', 'shared/tensile']) await mkdir(path.join(mono, d), { recursive: true });
    await writeFile(path.join(mono, 'projects/gpulib/CMakeLists.txt'), CMAKE_720);
    await writeFile(path.join(mono, 'projects/hipblaslt/CMakeLists.txt'), 'project(hipblaslt VERSION 1.2.0)\n');
    // What the project's reading must never download: incompressible bytes in another project.
    await writeFile(path.join(mono, 'projects/hipblaslt/library/kernels.co'), randomBytes(big));
    await writeFile(path.join(mono, 'shared/tensile/setup.py'), 'print("tensile")\n');
    const root = path.join(dir, 'git');
    await bareRepo(path.join(root, 'ROCm', 'gpulib'), [{ tag: 'rocm-7.1.1', tree: own }]);
    const monoGit = path.join(root, 'ROCm', 'rocm-libraries');
    await bareRepo(monoGit, [{ tag: 'rocm-7.2.0', tree: mono }]);
    // What GitHub allows: partial clones and fetching their missing objects.
    for (const [k, v] of [['uploadpack.allowFilter', 'true'], ['uploadpack.allowAnySHA1InWant', 'true']]) execFileSync('git', ['--git-dir', monoGit, 'config', k!, v!]);
    server = await new GitHttpServer(root).start();
    // hipblaslt is excluded by name; shared/tensile is nobody's yet.
    const stack = BASE_FILES['stack.yaml']! + 'excluded:\n  - project: hipBLASLt\n    reason: builds for too few targets to be useful here\n';
    manifest = await fixtureManifest({ 'components/gpulib.yaml': MOVED, 'stack.yaml': stack });
  });
  after(async () => {
    await server.close();
    await removeDir(dir);
  });

  const diff = (extra: string[] = []) =>
    runCli(['upstream', 'diff', '7.1.1', '7.2.0', 'gpulib', '--manifest', manifest, '--base-url', server.url, ...extra], {
      env: { XDG_CACHE_HOME: path.join(dir, 'cache') },
    });

  it('compares a project across its move into the monorepo, reading only its directory, and says what that cost', async () => {
    const before = server.bytesSent;
    const r = await diff(['--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as DiffReport;
    const s = report.components[0]!.sources[0]!;
    assert.equal(s.status, 'compared', JSON.stringify(s));
    assert.equal(s.from, 'ROCm/gpulib rocm-7.1.1');
    assert.equal(s.to, 'ROCm/rocm-libraries rocm-7.2.0:projects/gpulib');
    const changes = s.changes.map((c) => `${c.area} ${c.kind} ${c.subject}`);
    assert.ok(changes.includes('dependency added hipblaslt'), changes.join('\n'));
    assert.ok(changes.some((c) => c.startsWith('option added GPULIB_ENABLE_MARKER')), changes.join('\n'));
    const sent = server.bytesSent - before;
    assert.ok(s.bytes!.to > 0, 'the monorepo read is counted');
    assert.ok(sent < big / 4, `the server sent ${sent} bytes: the other project's ${big} were not read`);
    assert.ok(s.bytes!.to + s.bytes!.from <= sent, `reported ${JSON.stringify(s.bytes)} of the ${sent} bytes sent`);
  });

  it('prints the move with both repositories and the bytes fetched; a second run reads from the cache', async () => {
    const before = server.bytesSent;
    const r = await diff();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}ROCm\/gpulib rocm-7\.1\.1 → ROCm\/rocm-libraries rocm-7\.2\.0:projects\/gpulib \(1 → 1 build files\)$/m);
    assert.ok(server.bytesSent - before < 64 * 1024, `a cached read sent ${server.bytesSent - before} bytes`);
  });

  it("lists the monorepo's project directories against the manifest when AMD's release manifest cannot be read (exit 5)", async () => {
    const r = await runCli(['upstream', 'projects', '7.2.0', '--manifest', manifest, '--base-url', server.url], { env: { XDG_CACHE_HOME: path.join(dir, 'cache-projects') } });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stdout, /^AMD's ROCm 7\.2\.0 release manifest could not be read \(.*\); the monorepos' projects only:$/m);
    assert.match(r.stdout, /^ROCm\/rocm-libraries rocm-7\.2\.0 \(3 project directories; [0-9.]+ (B|KiB) of trees fetched\):$/m);
    assert.match(r.stdout, /^ {2}projects\/gpulib +packaged by sci-libs\/gpulib$/m);
    assert.match(r.stdout, /^ {2}projects\/hipblaslt +excluded: builds for too few targets/m);
    assert.match(r.stdout, /^ {2}shared\/tensile +neither packaged nor excluded: decide$/m);
    assert.match(r.stdout, /^3 monorepo projects in 7\.2\.0: 1 to decide$/m);
    const j = await runCli(['upstream', 'projects', '7.2.0', '--manifest', manifest, '--base-url', server.url, '--json'], { env: { XDG_CACHE_HOME: path.join(dir, 'cache-projects') } });
    assert.equal(j.code, 5);
    const report = JSON.parse(j.stdout) as ProjectsReport;
    assert.deepEqual(report.monorepos[0]!.projects.map((p) => [p.dir, p.accounted]), [['projects/gpulib', true], ['projects/hipblaslt', true], ['shared/tensile', false]]);
  });
});
