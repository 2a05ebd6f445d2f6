import { promises as fs } from 'node:fs';
import os from 'node:os';

/**
 * An exclusive claim on one distfile's download, so two runs sharing a
 * distdir (a `bump` and a `manifest` in two terminals) never write the same
 * `.partial` at once. The lock file holds "pid host"; a lock whose process is
 * gone on this host is stale and taken over.
 */
export type LockResult = { acquired: true; release(): Promise<void> } | { acquired: false; holder: string };

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

export async function acquireLock(file: string): Promise<LockResult> {
  const host = os.hostname();
  for (let tries = 0; tries < 2; tries++) {
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
    const stale = text === '' || (holderHost === host && Number.isInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid));
    if (!stale) return { acquired: false, holder: `process ${pidText} on ${holderHost ?? 'unknown host'}` };
    await fs.rm(file, { force: true });
  }
  return { acquired: false, holder: 'another process (the lock keeps reappearing)' };
}
