import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { Identity, OverlayRepo } from './repo.js';

export interface FileChange {
  /** Path relative to the repository root, with forward slashes. */
  path: string;
  /** New content, or null to delete the file. */
  content: string | Buffer | null;
}

export interface CommitSpec {
  message: string;
  changes: FileChange[];
}

const STAGING_PREFIX = 'refs/rocm-ebuild/';

/**
 * Builds a series of commits without touching the user's branch, index or
 * worktree: `git fast-import` writes the objects and a private ref, and only
 * `land()` moves the branch, with a compare-and-swap on its old value. Killed
 * at any point before that, the branch is exactly as it was; what fast-import
 * wrote is unreferenced and git's gc drops it.
 */
export class CommitBuilder {
  private readonly stagingRef: string;
  private lockFile?: string;
  private child?: ReturnType<typeof spawn>;

  constructor(private readonly repo: OverlayRepo) {
    this.stagingRef = `${STAGING_PREFIX}bump-${process.pid}`;
  }

  /** Take the overlay lock and clear what killed runs left behind. */
  async begin(): Promise<void> {
    const gitDir = path.resolve(this.repo.dir, (await this.repo.raw(['rev-parse', '--git-dir'])).trim());
    this.lockFile = path.join(gitDir, 'rocm-ebuild.lock');
    await takeLock(this.lockFile);
    const stale = (await this.repo.raw(['for-each-ref', '--format=%(refname)', STAGING_PREFIX])).split('\n').filter(Boolean);
    for (const ref of stale) await this.repo.raw(['update-ref', '-d', ref]);
  }

  /**
   * Stop building at once (Ctrl-C, SIGTERM): fast-import dies before it is
   * told `done`, so it writes no ref, and the lock is released. Synchronous,
   * so a signal handler can call it right before exiting.
   */
  abortSync(): void {
    this.child?.kill('SIGKILL');
    if (this.lockFile) rmSync(this.lockFile, { force: true });
    this.lockFile = undefined;
  }

  async end(): Promise<void> {
    await this.repo.raw(['update-ref', '-d', this.stagingRef]).catch(() => undefined);
    if (this.lockFile) await rm(this.lockFile, { force: true });
    this.lockFile = undefined;
  }

  /**
   * Create `commits` on top of `parent` (undefined for a new repository) and
   * return the new tip. `onCommit` fires as git confirms each one.
   */
  async build(
    parent: string | undefined,
    commits: CommitSpec[],
    identity: Identity,
    options: { date?: Date; onCommit?: (done: number, total: number) => void } = {},
  ): Promise<string> {
    const when = Math.floor((options.date ?? commitDate()).getTime() / 1000);
    const child = spawn('git', ['fast-import', '--quiet', '--done'], {
      cwd: this.repo.dir,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let buffered = '';
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        const m = /^progress commit (\d+)$/.exec(line);
        if (m) options.onCommit?.(Number(m[1]), commits.length);
      }
    });
    const exited = new Promise<number>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(code ?? 1));
    });
    const write = (chunk: string | Buffer) =>
      new Promise<void>((resolve, reject) => {
        if (child.stdin.write(chunk)) resolve();
        else child.stdin.once('drain', resolve);
        child.stdin.once('error', reject);
      });
    const data = async (payload: string | Buffer) => {
      const buf = typeof payload === 'string' ? Buffer.from(payload) : payload;
      await write(`data ${buf.length}\n`);
      await write(buf);
      await write('\n');
    };
    const who = `${identity.name} <${identity.email}> ${when} +0000`;
    await write('feature done\n');
    for (const [i, c] of commits.entries()) {
      await write(`commit ${this.stagingRef}\nmark :${i + 1}\nauthor ${who}\ncommitter ${who}\n`);
      await data(c.message);
      if (i === 0 && parent) await write(`from ${parent}\n`);
      for (const change of c.changes) {
        if (change.content === null) await write(`D ${quotePath(change.path)}\n`);
        else {
          await write(`M 100644 inline ${quotePath(change.path)}\n`);
          await data(change.content);
        }
      }
      await write(`progress commit ${i + 1}\n`);
    }
    await write('done\n');
    child.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`git fast-import failed (${code}): ${stderr.trim()}`);
    return (await this.repo.raw(['rev-parse', '--verify', `${this.stagingRef}^{commit}`])).trim();
  }

  /**
   * Move `branchRef` from `oldTip` to `newTip` and bring the worktree along.
   * The worktree is updated first by a two-tree merge (it is clean, so this
   * cannot lose work), then the branch moves in one compare-and-swap.
   */
  async land(branchRef: string, oldTip: string | undefined, newTip: string): Promise<void> {
    await this.repo.raw(oldTip ? ['read-tree', '-m', '-u', oldTip, newTip] : ['read-tree', '-m', '-u', newTip]);
    try {
      await this.repo.raw(['update-ref', '-m', 'rocm-ebuild: bump', branchRef, newTip, oldTip ?? '']);
    } catch (err) {
      // Someone moved the branch meanwhile: put the worktree back and say so.
      await this.repo.raw(oldTip ? ['read-tree', '-m', '-u', newTip, oldTip] : ['rm', '-r', '-q', '--cached', '.']).catch(() => undefined);
      throw new UserError(`${branchRef} moved while the bump ran; nothing was changed. Run it again.`, ExitCode.overlayRefused, {
        cause: String(err),
      });
    }
  }

  /** Leave the changes of `newTip` in the worktree, uncommitted (--no-commit). */
  async applyToWorktree(oldTip: string | undefined, newTip: string): Promise<void> {
    await this.repo.raw(oldTip ? ['read-tree', '-m', '-u', oldTip, newTip] : ['read-tree', '-m', '-u', newTip]);
    // Unstage: the index goes back to HEAD, the files stay.
    if (oldTip) await this.repo.raw(['read-tree', oldTip]);
    else await this.repo.raw(['read-tree', '--empty']);
  }
}

/** Paths in fast-import commands: quote when they contain spaces or quotes. */
function quotePath(p: string): string {
  return /[\s"\\]/.test(p) ? JSON.stringify(p) : p;
}

function commitDate(): Date {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  return epoch && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : new Date();
}

/** An exclusive lock file holding our pid; a lock whose process is gone is taken over. */
async function takeLock(file: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      if (pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new UserError(
          `another rocm-ebuild (pid ${pid}) is working on this overlay`,
          ExitCode.overlayRefused,
          { hint: `wait for it to finish, or remove ${file} if it is gone` },
        );
      }
      await rm(file, { force: true });
    }
  }
  throw new UserError(`cannot take the overlay lock ${file}`, ExitCode.overlayRefused);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
