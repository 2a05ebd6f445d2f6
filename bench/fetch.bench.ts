import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ensureDistfiles } from '../src/distfiles/index.js';
import { BENCH_ROOT, dataset, warm } from './dataset.js';
import type { BenchReport } from './report.js';
import { figure, interleaved, mib, rate, timeCommand, timeInProcess, type Stats, type Timing } from './timing.js';

const MiB = 1024 * 1024;
/** 50 files from 0.5 to 10 MiB, in a shuffled order of sizes. */
const SIZES = Array.from({ length: 50 }, (_, i) => Math.round((0.5 + ((i * 37) % 20) * 0.5) * MiB));
const RUNS = 3;

async function startServer(dir: string): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, [path.join(path.dirname(new URL(import.meta.url).pathname), 'static-server.js'), dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`static server exited with ${code}`)));
  });
  return { child, origin: `http://127.0.0.1:${port}` };
}

async function emptyDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(dir, { recursive: true });
}

/**
 * Fetching 50 distfiles from a server on 127.0.0.1 into an empty distdir,
 * hashes included (a new bump: no Manifest entries yet), against the way
 * Gentoo's tools do it: one wget at a time, then each file hashed twice.
 */
export async function run(): Promise<BenchReport> {
  const files = await dataset('fetch', SIZES);
  await warm(files);
  const total = SIZES.reduce((a, b) => a + b, 0);
  const { child, origin } = await startServer(path.dirname(files[0]!));
  const distdir = path.join(BENCH_ROOT, 'fetch-distdir');
  const names = files.map((f) => path.basename(f));
  const needs = names.map((name) => ({ name, urls: [`${origin}/${name}`], neededBy: [{ atom: 'bench/bench', ebuild: 'bench-1.ebuild' }] }));

  const engine = (jobs?: number) => async (): Promise<Timing> => {
    await emptyDir(distdir);
    return timeInProcess(async () => {
      const results = await ensureDistfiles(needs, { distdir, hashCacheFile: false, ...(jobs ? { jobs } : {}) });
      const bad = results.filter((r) => r.status !== 'fetched');
      if (bad.length > 0) throw new Error(`fetch bench: ${bad.length} files failed: ${bad[0]!.error}`);
    });
  };
  const sequential = (hash: boolean) => async (): Promise<Timing> => {
    await emptyDir(distdir);
    const start = process.hrtime.bigint();
    let cpu = 0;
    for (const name of names) {
      cpu += (await timeCommand('wget', ['-q', '-t', '3', '-T', '60', '-O', path.join(distdir, name), `${origin}/${name}`])).cpuSeconds;
    }
    if (hash) {
      const local = names.map((n) => path.join(distdir, n));
      cpu += (await timeCommand('b2sum', local)).cpuSeconds;
      cpu += (await timeCommand('sha512sum', local)).cpuSeconds;
    }
    return { seconds: Number(process.hrtime.bigint() - start) / 1e9, cpuSeconds: cpu };
  };

  try {
    const t = await interleaved(RUNS, {
      engine: engine(),
      engine1: engine(1),
      portage: sequential(true),
      wgetOnly: sequential(false),
    });
    const fig = (label: string, x: Stats) => figure(label, x, rate(total, x.seconds));
    return {
      title: `fetching 50 files (${mib(total)}) from 127.0.0.1 into an empty distdir, hashes included (median of ${RUNS} interleaved runs)`,
      figures: [
        fig('rocm-ebuild engine (default --jobs 4)', t.engine),
        fig('rocm-ebuild engine --jobs 1', t.engine1),
        fig('wget one at a time, then b2sum + sha512sum', t.portage),
        fig('wget one at a time, no hashing', t.wgetOnly),
      ],
      ratios: [
        { label: 'wget + b2sum + sha512sum / engine', value: t.portage.seconds / t.engine.seconds, note: 'speed-up over the Portage way' },
        { label: 'engine / wget alone', value: t.engine.seconds / t.wgetOnly.seconds, note: 'the engine also hashes and verifies' },
        { label: 'engine --jobs 1 / engine', value: t.engine1.seconds / t.engine.seconds },
      ],
      notes: ['CPU times of the wget rows are the children’s; the engine’s include its hashing threads, not the server.'],
    };
  } finally {
    child.kill();
    await fs.rm(distdir, { recursive: true, force: true });
  }
}
