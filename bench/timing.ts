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
export function timeCommand(command: string, args: string[]): Promise<Timing & { stdout: string }> {
  const script = 'TIMEFORMAT="%R %U %S"; { time "$@" > "$OUT"; } 2>&1';
  const out = `/tmp/rocm-ebuild-bench-${process.pid}.out`;
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script, 'bash', command, ...args], { env: { ...process.env, OUT: out }, maxBuffer: 1 << 20 }, async (err, stdout) => {
      if (err) return reject(err);
      const m = /(\d+\.\d+) (\d+\.\d+) (\d+\.\d+)\s*$/.exec(stdout);
      if (!m) return reject(new Error(`cannot read timing of ${command}: ${stdout}`));
      const { readFile, rm } = await import('node:fs/promises');
      const text = await readFile(out, 'utf8');
      await rm(out, { force: true });
      resolve({ seconds: Number(m[1]), cpuSeconds: Number(m[2]) + Number(m[3]), stdout: text });
    });
  });
}

/**
 * Runs each contender `rounds` times, interleaved (A B C, A B C, …) so that
 * load from elsewhere on the machine falls on all of them alike, and keeps
 * each one's fastest run: the one least disturbed.
 */
export async function bestInterleaved<K extends string>(
  rounds: number,
  contenders: Record<K, () => Promise<Timing>>,
): Promise<Record<K, Timing>> {
  const bestOf = {} as Record<K, Timing>;
  for (let i = 0; i < rounds; i++) {
    for (const key of Object.keys(contenders) as K[]) {
      const t = await contenders[key]();
      if (!bestOf[key] || t.seconds < bestOf[key].seconds) bestOf[key] = t;
    }
  }
  return bestOf;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
}

export function rate(bytes: number, s: number): string {
  return `${(bytes / 1024 / 1024 / s).toFixed(0)} MiB/s`;
}
