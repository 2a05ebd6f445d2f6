import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_ROOT, fillRandom, warm } from './dataset.js';
import { PINNED_ENV } from './fingerprint.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, mib, pairedRatio, rate, timeCommand } from './timing.js';

/**
 * `rocm-ebuild manifest` over an overlay whose distfiles weigh 1 GiB, hash
 * cache empty, whole process (start-up, manifest, overlay, hashing, thin
 * Manifests), against the floor OpenSSL sets on this machine's cores:
 * (openssl blake2b512 + openssl sha512) / cores, measured in the same rounds.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const bin = path.join(root, 'bin', 'run.js');
const ROUNDS = Number(process.env.ROCM_EBUILD_BENCH_ROUNDS ?? 5);
const MiB = 1024 * 1024;
/** The largest distfiles get an llvm-project-like spread summing to 1 GiB; the rest are small. */
const BIG = [256, 192, 160, 128, 96, 64, 48, 32, 24, 16, 8].map((m) => m * MiB);
const SMALL = 64 * 1024;

export async function run(): Promise<BenchReport> {
  const dir = path.join(BENCH_ROOT, 'manifest');
  await fs.mkdir(dir, { recursive: true });
  const cache = path.join(dir, 'cache');
  const env = { ...process.env, ...PINNED_ENV, HOME: dir, XDG_CACHE_HOME: cache };
  const manifest = path.join(root, 'manifest', 'stack.yaml');
  const plan = JSON.parse(
    execFileSync(process.execPath, [bin, 'bump', '6.2.2', '--overlay', path.join(dir, 'none'), '--manifest', manifest, '--dry-run', '--json'], { env, maxBuffer: 64 << 20 }).toString(),
  ) as { packages: { distfiles: { name: string }[] }[] };
  const names = [...new Set(plan.packages.flatMap((p) => p.distfiles.map((d) => d.name)))].sort();
  const distdir = path.join(dir, 'distfiles');
  await fs.mkdir(distdir, { recursive: true });
  const files = names.map((n) => path.join(distdir, n));
  let total = 0;
  for (const [i, f] of files.entries()) {
    const size = BIG[i] ?? SMALL;
    total += size;
    await fillRandom(f, size);
  }
  // The overlay, bumped once with these distfiles: its Manifests name them.
  const overlay = path.join(dir, 'overlay');
  await fs.rm(overlay, { recursive: true, force: true });
  execFileSync(process.execPath, [bin, 'bump', '6.2.2', '--overlay', overlay, '--manifest', manifest, '--distdir', distdir, '--offline'], { env, stdio: 'ignore' });
  await warm(files);
  const hashCache = path.join(cache, 'rocm-ebuild', 'hash-cache.json');
  const cores = os.availableParallelism();
  const t = await interleaved(ROUNDS, {
    manifest: async () => {
      await fs.rm(hashCache, { force: true });
      return timeCommand(process.execPath, [bin, 'manifest', '--overlay', overlay, '--manifest', manifest, '--distdir', distdir, '--offline'], { env });
    },
    blake: () => timeCommand('openssl', ['dgst', '-blake2b512', ...files]),
    sha: () => timeCommand('openssl', ['dgst', '-sha512', ...files]),
    pair: () => timeCommand('bash', ['-c', 'openssl dgst -blake2b512 "$@" > /dev/null & openssl dgst -sha512 "$@" > /dev/null; wait', 'bash', ...files]),
  });
  const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: overlay, env }).toString().trim();
  if (dirty) throw new Error(`manifest bench: the Manifests changed, so it did not hash what the bump did:\n${dirty}`);
  const floor = (i: number) => (t.blake.runs[i]!.seconds + t.sha.runs[i]!.seconds) / cores;
  const floors = t.blake.runs.map((_, i) => floor(i)).sort((a, b) => a - b);
  return {
    title: `manifest over ${files.length} distfiles (${mib(total)}), hash cache empty, whole process, against the ${cores}-core openssl floor (median of ${ROUNDS} alternating runs [min–max])`,
    figures: [
      figure('rocm-ebuild manifest --offline', t.manifest, rate(total, t.manifest.seconds)),
      figure('openssl dgst -blake2b512', t.blake),
      figure('openssl dgst -sha512', t.sha),
      { label: `floor: (blake2b + sha512) / ${cores}`, seconds: floors[floors.length >> 1]!, min: floors[0]!, max: floors[floors.length - 1]! },
      figure('openssl blake2b and sha512 run in parallel', t.pair),
    ],
    ratios: [
      { label: 'manifest / floor', ...pairedRatio(t.manifest, floor), goal: 1.15 },
      { label: 'manifest / openssl pair in parallel', ...pairedRatio(t.manifest, t.pair) },
      { label: 'CPU: manifest / openssl (both digests)', ...pairedRatio(t.manifest, (i) => t.blake.runs[i]!.cpuSeconds + t.sha.runs[i]!.cpuSeconds, 'cpuSeconds') },
    ],
    notes: ['The page cache is warm (as after a download); the figure includes starting Node and loading the manifest and overlay.'],
  };
}
