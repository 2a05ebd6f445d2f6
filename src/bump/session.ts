import { existsSync } from 'node:fs';
import path from 'node:path';
import { type OverlayRepo } from '../git/repo.js';
import { CommitBuilder } from '../git/transaction.js';
import { OverlayLock } from '../git/lock.js';
import { recoverInterrupted } from '../git/worktree.js';
import { isScanned, scannedPathspecs } from '../overlay/scan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/** Refuse ignored files where bump reads: the plan would trust files the branch does not have. */
export async function refuseIgnoredInputs(repo: OverlayRepo, atoms: string[]): Promise<void> {
  const wanted = new Set(atoms);
  const ignored = (await repo.ignoredPresent(scannedPathspecs(atoms))).filter((f) => isScanned(f.path, wanted));
  if (ignored.length === 0) return;
  throw new UserError(
    `the overlay holds files that git ignores where bump reads and writes; the branch does not have them, so a bump would plan from files it cannot commit:\n` +
      ignored.map((f) => `  ${f.path} is ignored (${f.rule})`).join('\n') +
      '\nhint: commit them (git add -f), or move them out of the overlay, then run the bump again',
    ExitCode.overlayRefused,
    { ignored },
  );
}

/**
 * Holds the overlay for one run: the lock, taken before the overlay is read
 * and kept until the branch has moved, and Ctrl-C / SIGTERM handling. A run
 * interrupted before it lands leaves the overlay unchanged; once the branch
 * is moving (milliseconds) it finishes, and exits afterwards.
 */
export class Session {
  landing = false;
  interrupted?: NodeJS.Signals;
  builder?: CommitBuilder;
  private readonly onSignal = (signal: NodeJS.Signals) => {
    this.interrupted = signal;
    if (this.landing) return;
    this.builder?.abortSync();
    this.lock.releaseSync();
    process.stderr.write(`\nrocm-ebuild: interrupted by ${signal}; the overlay is unchanged\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };

  private constructor(
    readonly lock: OverlayLock,
    readonly gitDir: string,
  ) {
    process.on('SIGINT', this.onSignal);
    process.on('SIGTERM', this.onSignal);
  }

  /** Take the lock, then finish or undo what an interrupted run left: private refs, index, worktree. */
  static async open(repo: OverlayRepo, warn: (m: string) => void, options: { created?: boolean } = {}): Promise<Session> {
    const { gitDir, commonDir } = await repo.dirs();
    const lock = await OverlayLock.take(commonDir, warn);
    const session = new Session(lock, gitDir);
    try {
      for (const m of await recoverInterrupted(repo, session.gitDir)) warn(m);
      session.builder = new CommitBuilder(repo, session.gitDir);
      // A repository this run has just created holds no private refs of a killed run.
      if (!options.created) await session.builder.clearStaleRefs();
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }

  async close(): Promise<void> {
    await this.builder?.end();
    await this.lock.release();
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
  }
}

/** The nearest directory on the way up that exists: where git is asked for an identity before the overlay is created. */
export async function existingParent(dir: string): Promise<string> {
  let cur = dir;
  while (!existsSync(cur)) cur = path.dirname(cur);
  return cur;
}
