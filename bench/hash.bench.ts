import os from 'node:os';
import { hashFiles, type ManifestEntry } from '../src/distfiles/index.js';
import { dataset, warm } from './dataset.js';
import type { BenchReport } from './report.js';
import { busiestNewThread } from './thread-cpu.js';
import { figure, interleaved, mib, rate, timeCommand, timeInProcess, type Stats, type Timing } from './timing.js';

const MiB = 1024 * 1024;
/** 1 GiB in 11 files, from a 256 MiB llvm-project-sized tarball down to small ones. */
const SIZES = [256, 192, 160, 128, 96, 64, 48, 32, 24, 16, 8].map((m) => m * MiB);
const RUNS = 5;

function digests(output: string): Map<string, string> {
  // openssl: "BLAKE2B-512(file)= hex"; coreutils: "hex  file"
  const map = new Map<string, string>();
  for (const line of output.trim().split('\n')) {
    const o = /^[\w-]+\((.+)\)= ([0-9a-f]+)$/.exec(line);
    if (o) map.set(o[1]!, o[2]!);
    const c = /^([0-9a-f]+) [ *](.+)$/.exec(line);
    if (c) map.set(c[2]!, c[1]!);
  }
  return map;
}

/**
 * Hashing 1 GiB of distfiles with a warm page cache: our engine (BLAKE2B and
 * SHA512 in one read per file, files spread over the cores) against the floor
 * set by OpenSSL itself, (openssl blake2b512 + openssl sha512) / cores.
 */
export async function run(): Promise<BenchReport> {
  const files = await dataset('hash', SIZES);
  const total = SIZES.reduce((a, b) => a + b, 0);
  await warm(files);
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  const loadBefore = os.loadavg()[0]!;

  let ours = new Map<string, ManifestEntry>();
  let blakeOut = '';
  let shaOut = '';
  const t = await interleaved(RUNS, {
    engine: () =>
      timeInProcess(async () => {
        ours = await hashFiles(files, { cacheFile: false });
      }),
    blake: async () => {
      const r = await timeCommand('openssl', ['dgst', '-blake2b512', ...files]);
      blakeOut = r.stdout;
      return r;
    },
    sha: async () => {
      const r = await timeCommand('openssl', ['dgst', '-sha512', ...files]);
      shaOut = r.stdout;
      return r;
    },
    // The floor made real: both openssl digests at once, one process each (two reads).
    opensslPair: () =>
      timeCommand('bash', ['-c', 'openssl dgst -blake2b512 "$@" > /dev/null & openssl dgst -sha512 "$@" > /dev/null; wait', 'bash', ...files]),
    oneThread: () => timeInProcess(() => hashFiles(files, { cacheFile: false, concurrency: 1 })),
    b2sum: () => timeCommand('b2sum', files),
    sha512sum: () => timeCommand('sha512sum', files),
  });

  // Sampling threads costs CPU of its own, so it gets runs of its own, not the timed ones.
  let critical = Infinity;
  for (let i = 0; i < RUNS; i++) {
    const busiest = await busiestNewThread(() => hashFiles(files, { cacheFile: false }));
    if (busiest !== undefined) critical = Math.min(critical, busiest);
  }

  // A fast wrong answer is worthless: the engine must agree with OpenSSL on every file.
  const b = digests(blakeOut);
  const s = digests(shaOut);
  for (const f of files) {
    const e = ours.get(f)!;
    if (e.blake2b !== b.get(f) || e.sha512 !== s.get(f)) throw new Error(`digest mismatch with openssl on ${f}`);
  }

  const floor = (t.blake.seconds + t.sha.seconds) / cores;
  const cpuFloor = (t.blake.cpuSeconds + t.sha.cpuSeconds) / cores;
  const criticalFigures = Number.isFinite(critical)
    ? {
        figures: [
          { label: 'engine: CPU of its busiest hashing thread', seconds: critical },
          { label: `CPU floor: (openssl blake2b + sha512 CPU) / ${cores}`, seconds: cpuFloor },
        ],
        ratios: [
          {
            label: 'busiest thread / CPU floor',
            value: critical / cpuFloor,
            note: 'engine / floor as it would be with a core per thread; robust to other load',
          },
        ],
      }
    : { figures: [], ratios: [] };
  const fig = (label: string, x: Stats) => figure(label, x, rate(total, x.seconds));
  return {
    title: `hashing ${mib(total)} in ${files.length} files (page cache warm, ${cores} cores, median of ${RUNS} interleaved runs)`,
    figures: [
      fig('rocm-ebuild engine (BLAKE2B+SHA512, one read)', t.engine),
      fig('same engine on one thread', t.oneThread),
      fig('openssl dgst -blake2b512', t.blake),
      fig('openssl dgst -sha512', t.sha),
      { label: `floor: (openssl blake2b + sha512) / ${cores}`, seconds: floor },
      fig('openssl blake2b and sha512 run in parallel', t.opensslPair),
      fig('b2sum', t.b2sum),
      fig('sha512sum', t.sha512sum),
      ...criticalFigures.figures,
    ],
    ratios: [
      { label: 'engine / floor', value: t.engine.seconds / floor, note: 'target ≤ 1.15' },
      ...criticalFigures.ratios,
      { label: 'engine / openssl pair in parallel', value: t.engine.seconds / t.opensslPair.seconds, note: 'same parallelism, measured' },
      { label: 'one thread / floor', value: t.oneThread.seconds / floor },
      { label: 'sha512sum alone / floor', value: t.sha512sum.seconds / floor },
      {
        label: 'engine CPU / openssl CPU (both digests)',
        value: t.engine.cpuSeconds / (t.blake.cpuSeconds + t.sha.cpuSeconds),
        note: 'work per byte, unmoved by other load',
      },
      { label: '(b2sum + sha512sum) / engine', value: (t.b2sum.seconds + t.sha512sum.seconds) / t.engine.seconds, note: 'speed-up over hashing twice with coreutils' },
    ],
    notes: [`load average before the run: ${loadBefore.toFixed(2)} (wall times need an otherwise idle machine)`],
  };
}
