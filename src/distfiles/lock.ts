import { promises as fs } from 'node:fs';
import os from 'node:os';
import { sleep } from './sleep.js';

/**
 * An exclusive claim on one distfile's download, so two runs sharing a
 * distdir (a `bump` and a `manifest` in two terminals) never write the same
 * `.partial` at once. The lock file holds "pid host"; a lock whose process is
 * gone on this host is stale and taken over.
 */
export type LockResult =
  | { acquired: true; release(): Promise<void> }
  /** `live`: the holder is a running process on this host, so waiting for it ends. */
  | { acquired: false; holder: string; live: boolean };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function linkOrCreate(tmp: string, file: string, host: string): Promise<void> {
  try {
    await fs.link(tmp, file);
  } catch (err) {
    // File systems without hard links (FAT, some FUSE): exclusive create, with its tiny empty-file window.
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    await fs.writeFile(file, `${process.pid} ${host}\n`, { flag: 'wx' });
  }
}

/**
 * Removes a stale lock only if it is still the one judged stale. Two runs can
 * find the same dead holder at once: without this, the slower one would delete
 * the lock the faster one had just taken, and both would write one `.partial`.
 * The lock is renamed aside (atomic: one run gets it) and read again; a fresh
 * lock caught by mistake is linked back (it keeps its owner's inode and text).
 */
export async function removeStaleLock(file: string, staleText: string): Promise<void> {
  const aside = `${file}.stale.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    await fs.rename(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = await fs.readFile(aside, 'utf8').catch(() => '');
  if (moved !== staleText) await fs.link(aside, file).catch(() => undefined);
  await fs.rm(aside, { force: true });
}

export async function acquireLock(file: string): Promise<LockResult> {
  const host = os.hostname();
  for (let tries = 0; tries < 3; tries++) {
    // Written aside and hard-linked into place, so the lock never exists without its owner in it.
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    await fs.writeFile(tmp, `${process.pid} ${host}\n`);
    try {
      await linkOrCreate(tmp, file, host);
      return { acquired: true, release: () => fs.rm(file, { force: true }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await fs.rm(tmp, { force: true });
    }
    const text = await fs.readFile(file, 'utf8').catch(() => '');
    const [pidText, holderHost] = text.trim().split(/\s+/);
    const pid = Number(pidText);
    const local = holderHost === host && Number.isInteger(pid) && pid > 0 && pid !== process.pid;
    const stale = text === '' || (local && !alive(pid));
    if (!stale) return { acquired: false, holder: `process ${pidText} on ${holderHost ?? 'unknown host'}`, live: local };
    await removeStaleLock(file, text);
  }
  return { acquired: false, holder: 'another process (the lock keeps reappearing)', live: false };
}

/**
 * acquireLock, waiting while the holder is a live process on this host: a
 * second run sharing the distdir waits for the first to finish the file
 * (then finds it installed) instead of failing it. A lock held from another
 * host (a distdir on NFS) cannot be checked, so it is not waited for.
 * `onWait` is called once, when the wait begins; an abort ends the wait
 * (the result is then not acquired).
 */
export async function waitForLock(
  file: string,
  options: { signal?: AbortSignal; onWait?: (holder: string) => void; pollMs?: number } = {},
): Promise<LockResult> {
  let told = false;
  for (;;) {
    const lock = await acquireLock(file);
    if (lock.acquired || !lock.live || options.signal?.aborted) return lock;
    if (!told) {
      told = true;
      options.onWait?.(lock.holder);
    }
    await sleep(options.pollMs ?? 250, options.signal);
  }
}
