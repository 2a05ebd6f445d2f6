import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/**
 * CPU time of each thread this process starts while a measurement runs, read
 * from /proc/self/task (Linux). On a machine shared with other work, wall time
 * says little about parallel code; the CPU time of the busiest new thread is
 * what the wall time would be with a core to itself. Threads are sampled
 * every 10 ms because a terminated worker's entry disappears.
 */
const TICK_SECONDS = 1 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);

function threadTimes(): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, (Number(fields[11]) + Number(fields[12])) * TICK_SECONDS);
    } catch {
      // The thread ended between readdir and read.
    }
  }
  return out;
}

export async function busiestNewThread(fn: () => Promise<unknown>): Promise<number | undefined> {
  const before = new Set(threadTimes().keys());
  const seen = new Map<string, number>();
  const sample = () => {
    for (const [tid, s] of threadTimes()) if (!before.has(tid)) seen.set(tid, Math.max(seen.get(tid) ?? 0, s));
  };
  const timer = setInterval(sample, 10);
  try {
    await fn();
  } finally {
    clearInterval(timer);
    sample();
  }
  return seen.size > 0 ? Math.max(...seen.values()) : undefined;
}
