import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASE_FILES, fixtureManifest } from '../test/helpers/fixture-manifest.js';
import { GitHttpServer } from '../test/upstream/git-http.js';
import { bareRepo } from '../test/upstream/support.js';
import { BENCH_ROOT, fillRandom } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, mib, pairedRatio, timeCommand, type Timing } from './timing.js';

const MiB = 1024 * 1024;
/** A monorepo shaped like rocm-libraries: 20 projects of 8 MiB of incompressible code objects each. */
const PROJECTS = 20;
const PER_PROJECT = 8 * MiB;
const ROUNDS = 3;
const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'run.js');

async function packBytes(gitDir: string): Promise<number> {
  const dir = path.join(gitDir, 'objects', 'pack');
  let total = 0;
  for (const n of await fs.readdir(dir).catch(() => [] as string[])) if (n.endsWith('.pack')) total += (await fs.stat(path.join(dir, n))).size;
  return total;
}

/**
 * What `upstream diff` costs on the network for one project of a monorepo at
 * a release tag (a partial clone: trees, then the project's build files),
 * against fetching the tag whole (`git fetch --depth 1`, what reading it as a
 * plain repository would do), both from real git over HTTP on 127.0.0.1.
 */
export async function run(): Promise<BenchReport> {
  const root = path.join(BENCH_ROOT, 'monorepo');
  await fs.rm(root, { recursive: true, force: true });
  const own = path.join(root, 'trees', 'gpulib-7.1.1');
  const mono = path.join(root, 'trees', 'mono-7.2.0');
  await fs.mkdir(own, { recursive: true });
  await fs.writeFile(path.join(own, 'CMakeLists.txt'), 'project(gpulib VERSION 3.1.0)\nfind_package(hip REQUIRED)\n');
  for (let i = 0; i < PROJECTS; i++) {
    const name = i === 0 ? 'gpulib' : `lib${String(i).padStart(2, '0')}`;
    const dir = path.join(mono, 'projects', name);
    await fs.mkdir(path.join(dir, 'kernels'), { recursive: true });
    await fs.writeFile(path.join(dir, 'CMakeLists.txt'), `project(${name} VERSION 3.2.0)\nfind_package(hip REQUIRED)\nfind_package(hipblaslt REQUIRED)\n`);
    await fillRandom(path.join(dir, 'kernels', 'code.co'), PER_PROJECT);
  }
  const git = path.join(root, 'git');
  await bareRepo(path.join(git, 'ROCm', 'gpulib'), [{ tag: 'rocm-7.1.1', tree: own }]);
  const monoGit = path.join(git, 'ROCm', 'rocm-libraries');
  await bareRepo(monoGit, [{ tag: 'rocm-7.2.0', tree: mono }]);
  for (const [k, v] of [['uploadpack.allowFilter', 'true'], ['uploadpack.allowAnySHA1InWant', 'true']]) execFileSync('git', ['--git-dir', monoGit, 'config', k!, v!]);
  const manifest = await fixtureManifest({
    'components/gpulib.yaml': BASE_FILES['components/gpulib.yaml']!.replace(
      'sources:\n  - github: ROCm/gpulib\n',
      'sources:\n  - github: ROCm/gpulib\n    releases: { until: "7.2.0" }\n  - release_asset: ROCm/rocm-libraries\n    file: gpulib.tar.gz\n    releases: { from: "7.2.0" }\n',
    ),
  });
  const server = await new GitHttpServer(git).start();
  let partialBytes = 0;
  let wholeBytes = 0;
  let sentPartial = 0;
  try {
    let round = 0;
    const stats = await interleaved(ROUNDS, {
      // A fresh cache each round: the first read of a release, what a maintainer's machine does once.
      partial: async (): Promise<Timing> => {
        const cache = path.join(root, `cache-${round++}`);
        const before = server.bytesSent;
        const t = await timeCommand(process.execPath, [bin, 'upstream', 'diff', '7.1.1', '7.2.0', 'gpulib', '--manifest', manifest, '--base-url', server.url, '--json'], {
          env: { ...process.env, XDG_CACHE_HOME: cache },
        });
        const s = (JSON.parse(t.stdout) as { components: { sources: { bytes?: { from: number; to: number } }[] }[] }).components[0]!.sources[0]!;
        partialBytes = s.bytes!.to;
        sentPartial = server.bytesSent - before;
        return t;
      },
      whole: async (): Promise<Timing> => {
        const dir = path.join(root, `whole-${round}.git`);
        await fs.rm(dir, { recursive: true, force: true });
        execFileSync('git', ['init', '--bare', '--quiet', dir]);
        const t = await timeCommand('git', ['--git-dir', dir, '-c', 'fetch.unpackLimit=1', 'fetch', '--quiet', '--no-tags', '--depth', '1', `${server.url}/ROCm/rocm-libraries`, '+refs/tags/rocm-7.2.0:refs/tags/rocm-7.2.0']);
        wholeBytes = await packBytes(dir);
        return t;
      },
    });
    const seconds = pairedRatio(stats.partial, stats.whole);
    return {
      title: `upstream diff of one project across the move into a monorepo (${PROJECTS} projects, ${mib(PROJECTS * PER_PROJECT)} at the tag, git over HTTP on 127.0.0.1)`,
      figures: [
        figure('upstream diff 7.1.1 7.2.0 gpulib, empty cache', stats.partial, `${(partialBytes / 1024).toFixed(0)} KiB read from the monorepo (server sent ${(sentPartial / 1024).toFixed(0)} KiB in all)`),
        figure('git fetch --depth 1 of the whole tag', stats.whole, `${mib(wholeBytes)} fetched`),
      ],
      ratios: [
        { label: 'whole tag / bytes read (fewer bytes read)', value: wholeBytes / partialBytes, note: 'the partial clone reads trees and one project directory' },
        { label: 'upstream diff / whole-tag fetch (wall)', ...seconds, note: 'the diff also starts Node, reads the manifest and compares' },
      ],
    };
  } finally {
    await server.close();
  }
}
