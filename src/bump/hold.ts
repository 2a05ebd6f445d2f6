import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { gitIdentity, type Identity, type OverlayRepo } from '../git/repo.js';
import { commitSigning, type CommitSigning } from '../git/signing.js';
import { CommitBuilder } from '../git/transaction.js';
import { OverlayLock } from '../git/lock.js';
import { recoverInterrupted } from '../git/worktree.js';
import { isScanned, scannedPathspecs } from '../overlay/scan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpInputs } from './inputs.js';
import type { BumpOptions } from './types.js';

/** The second stage: the overlay's git state, read-only, and the lock before the overlay is read. */
export interface Held {
  /** The git identity (not asked on a dry run). */
  identity: Identity | undefined;
  /** Undefined on a dry run, and for an overlay that does not exist yet (createOverlay opens it at the end). */
  session: Session | undefined;
  /** Whether the commits are signed, with which key, and why (checked with a test signature before the lock). */
  signing: CommitSigning;
}

export async function holdOverlay(o: BumpOptions, inputs: BumpInputs): Promise<Held> {
  const { dir, repo, isRepo } = inputs;
  let identity: Identity | undefined;
  let session: Session | undefined;
  if (!o.dryRun) {
    if (isRepo) await repo.branch(); // a detached HEAD is refused before anything is written
    identity = await gitIdentity(isRepo ? dir : await existingParent(dir));
  }
  // Signed as git is configured to sign, or as layout.conf requires; refused here, with a test signature, if it cannot be done.
  const signing = await commitSigning(dir, { repository: isRepo, commit: o.commit, dryRun: o.dryRun });
  if (!o.dryRun && isRepo) session = await Session.open(repo, o.warn);
  if (session) {
    try {
      await repo.requireUnlockedIndex(session.gitDir);
      await repo.requireClean();
      await refuseIgnoredInputs(repo, inputs.atoms);
    } catch (err) {
      await session.close();
      throw err;
    }
  }
  return { identity, session, signing };
}

/** A new overlay: created only now that everything that can fail has passed, and held as an existing one is. */
export async function createOverlay(o: BumpOptions, inputs: BumpInputs): Promise<Session> {
  await mkdir(inputs.dir, { recursive: true });
  const created = !(await inputs.repo.isRepository());
  if (created) await inputs.repo.init();
  return Session.open(inputs.repo, o.warn, { created });
}

/**
 * Until the Session holds the overlay (its lock, its own handler): a Ctrl-C
 * or SIGTERM ends the run at once with the documented code, nothing having
 * been written. Returns the way to stop listening.
 */
export function exitOnSignalUntilHeld(): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    // The Session, once open, listens too: its handler releases the lock before it exits.
    if (process.listenerCount(signal) > 1) return;
    process.stderr.write(`\nrocm-ebuild: interrupted by ${signal}; the overlay is unchanged\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/** After the branch moved: a Ctrl-C or SIGTERM that came meanwhile ends the process now, as it would have. */
export async function exitIfInterrupted(session: Session): Promise<void> {
  if (!session.interrupted) return;
  const signal = session.interrupted;
  await session.close();
  process.stderr.write(`rocm-ebuild: interrupted by ${signal} after the bump landed\n`);
  process.exit(signal === 'SIGINT' ? 130 : 143);
}

/** Refuse ignored files where bump reads: the plan would trust files the branch does not have. */
async function refuseIgnoredInputs(repo: OverlayRepo, atoms: string[]): Promise<void> {
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
