import { readFileSync, rmSync } from 'node:fs';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/** errno codes that mean "this file system or directory cannot be written here". */
const NOT_WRITABLE: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted (immutable?)',
};

/** The words for an errno that says a place cannot be written, or undefined for any other error. */
export function notWritable(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code ? NOT_WRITABLE[code] : undefined;
}

interface Holder {
  pid: number;
  host: string;
  /** The process's start time (Linux /proc), to tell a reused pid from the holder. */
  started?: string;
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot. */
function startTime(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * One rocm-ebuild run at a time per repository: an exclusive file in the git
 * directory holding the owner's pid and host. It is taken before the overlay
 * is read, so a run plans from a state no other run can change under it. A
 * lock whose process is gone (kill -9, power cut) is taken over, with a
 * message, by the next run.
 */
export class OverlayLock {
  private held = true;

  private constructor(readonly file: string) {}

  static async take(gitDir: string, warn: (message: string) => void): Promise<OverlayLock> {
    const file = path.join(gitDir, 'rocm-ebuild.lock');
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await create(file)) return new OverlayLock(file);
      const holder = await readHolder(file);
      if (holder === 'gone') continue; // released meanwhile: try again
      if (holder && !isDead(holder)) {
        const where = holder.host !== os.hostname() ? ` on ${holder.host}` : '';
        throw new UserError(
          `another rocm-ebuild (pid ${holder.pid}${where}) is working on this overlay\nhint: wait for it to finish; if it is gone, remove ${file}`,
          ExitCode.overlayRefused,
        );
      }
      await takeOver(file, holder, warn);
    }
    throw new UserError(`cannot take the overlay lock ${file}: other runs keep taking it`, ExitCode.overlayRefused);
  }

  /** Synchronous, so a signal handler can call it right before exiting. */
  releaseSync(): void {
    if (this.held) rmSync(this.file, { force: true });
    this.held = false;
  }

  async release(): Promise<void> {
    if (this.held) await rm(this.file, { force: true });
    this.held = false;
  }
}

/**
 * Create the lock file exclusively, already holding its content (written
 * aside, then hard-linked into place), so no run ever reads a half-written
 * lock; false when it exists. Unwritable places are the user's to fix (exit 4).
 */
async function create(file: string): Promise<boolean> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(tmp, `${process.pid} ${os.hostname()} ${startTime('self') ?? '-'}\n`);
    await link(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    const why = notWritable(err);
    if (why) {
      throw new UserError(
        `cannot write to ${path.dirname(file)}: ${why}; rocm-ebuild needs write access to the overlay and its .git\n` +
          'hint: remount it read-write, or run as a user who may write it',
        ExitCode.overlayRefused,
      );
    }
    throw err;
  } finally {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}

/** The lock's owner; undefined when the file cannot be read as one (a crash while writing it), 'gone' when it was removed. */
async function readHolder(file: string): Promise<Holder | undefined | 'gone'> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  const m = /^(\d+)(?: (\S+))?(?: (\S+))?\s*$/.exec(text);
  if (!m) return undefined;
  return { pid: Number(m[1]), host: m[2] ?? os.hostname(), ...(m[3] && m[3] !== '-' ? { started: m[3] } : {}) };
}

/**
 * A holder is dead when it ran on this host and its process is gone: no such
 * pid, or the pid now belongs to a process started at another time (pids are
 * reused quickly in containers). Another host's holder cannot be checked.
 */
function isDead(holder: Holder): boolean {
  if (holder.host !== os.hostname()) return false;
  if (holder.pid === process.pid) return true; // an earlier process with our pid: we hold no lock yet
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const started = holder.started ? startTime(holder.pid) : undefined;
  return started !== undefined && started !== holder.started;
}

/**
 * Remove a dead run's lock. Two runs may find the same dead lock at once: a
 * second exclusive file decides which one removes it, so the other cannot
 * remove the lock the first has just taken.
 */
async function takeOver(file: string, holder: Holder | undefined, warn: (message: string) => void): Promise<void> {
  const claim = `${file}.takeover`;
  if (!(await create(claim))) {
    const other = await readHolder(claim);
    if (other === 'gone') return;
    if (other && !isDead(other)) {
      throw new UserError(
        `another rocm-ebuild (pid ${other.pid}) is taking over a stale lock of this overlay\nhint: run the command again once it is done`,
        ExitCode.overlayRefused,
      );
    }
    await rm(claim, { force: true });
    return;
  }
  try {
    const now = await readHolder(file);
    const same = now === undefined ? holder === undefined : now !== 'gone' && holder !== undefined && now.pid === holder.pid && now.host === holder.host;
    if (same) {
      warn(
        holder
          ? `taking over the lock of rocm-ebuild pid ${holder.pid}, which is no longer running`
          : `taking over the unreadable lock ${file}, left by an interrupted run`,
      );
      await rm(file, { force: true });
    }
  } finally {
    await rm(claim, { force: true });
  }
}
