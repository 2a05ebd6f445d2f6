import { execFile } from 'node:child_process';

export interface Timing {
  /** Wall clock. */
  seconds: number;
  /** User + system CPU time, all threads. */
  cpuSeconds: number;
}

/** Times work done in this process (worker threads included in the CPU time). */
export async function timeInProcess(fn: () => Promise<unknown>): Promise<Timing> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await fn();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/**
 * Times an external command through bash's `time`, which reports the child's
 * own CPU time; stdout is returned for checking its answer.
 */
export function timeCommand(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Timing & { stdout: string }> {
  // The command's stderr goes to a file, so bash's own timing line is the only thing on stdout.
  const script = 'TIMEFORMAT="%R %U %S"; { time "$@" > "$OUT" 2> "$OUT.err"; } 2>&1';
  const out = `/tmp/rocm-ebuild-bench-${process.pid}.out`;
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script, 'bash', command, ...args], { env: { ...(options.env ?? process.env), OUT: out }, cwd: options.cwd, maxBuffer: 1 << 20 }, async (err, stdout) => {
      if (err) {
        const { readFile } = await import('node:fs/promises');
        const detail = await readFile(`${out}.err`, 'utf8').catch(() => '');
        return reject(new Error(`${command} ${args.join(' ')} failed: ${detail.trim() || String(err)}`));
      }
      const m = /(\d+\.\d+) (\d+\.\d+) (\d+\.\d+)\s*$/.exec(stdout);
      if (!m) return reject(new Error(`cannot read timing of ${command}: ${stdout}`));
      const { readFile, rm } = await import('node:fs/promises');
      const text = await readFile(out, 'utf8');
      await rm(out, { force: true });
      await rm(`${out}.err`, { force: true });
      resolve({ seconds: Number(m[1]), cpuSeconds: Number(m[2]) + Number(m[3]), stdout: text });
    });
  });
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

export function rate(bytes: number, s: number): string {
  return `${(bytes / 1024 / 1024 / s).toFixed(0)} MiB/s`;
}

/** Median and range of a contender's runs: medians are what the reports quote, not best runs. */
export interface Stats extends Timing {
  /** Wall time, fastest and slowest run. */
  min: number;
  max: number;
  cpuMin: number;
  cpuMax: number;
  runs: Timing[];
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function stats(runs: Timing[]): Stats {
  const wall = runs.map((r) => r.seconds);
  const cpu = runs.map((r) => r.cpuSeconds);
  return { seconds: median(wall), cpuSeconds: median(cpu), min: Math.min(...wall), max: Math.max(...wall), cpuMin: Math.min(...cpu), cpuMax: Math.max(...cpu), runs };
}

/**
 * Runs each contender `rounds` times, alternating (A B C, A B C, …) so that
 * load from elsewhere on the machine falls on all of them alike, and keeps
 * every run: the median and the range are reported.
 */
export async function interleaved<K extends string>(rounds: number, contenders: Record<K, () => Promise<Timing>>): Promise<Record<K, Stats>> {
  const runs = {} as Record<K, Timing[]>;
  for (let i = 0; i < rounds; i++) {
    for (const key of Object.keys(contenders) as K[]) (runs[key] ??= []).push(await contenders[key]());
  }
  const out = {} as Record<K, Stats>;
  for (const key of Object.keys(runs) as K[]) out[key] = stats(runs[key]);
  return out;
}

/**
 * a / b from runs made side by side: the ratio of each round's pair, then
 * their median and range. A burst of load that slows one round moves one
 * pair, not the result.
 */
export function pairedRatio(a: Stats, b: Stats | ((round: number) => number), field: 'seconds' | 'cpuSeconds' = 'seconds'): { value: number; min: number; max: number } {
  const ratios = a.runs.map((r, i) => r[field] / (typeof b === 'function' ? b(i) : b.runs[i]![field]));
  return { value: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/** A figure for a report from a contender's statistics. */
export function figure(label: string, s: Stats, detail?: string): { label: string; seconds: number; min: number; max: number; cpuSeconds: number; detail?: string } {
  return { label, seconds: s.seconds, min: s.min, max: s.max, cpuSeconds: s.cpuSeconds, ...(detail ? { detail } : {}) };
}
