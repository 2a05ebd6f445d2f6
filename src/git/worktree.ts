import { copyFile, lstat, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { RECORD_REF } from './generated-record.js';
import type { OverlayRepo } from './repo.js';
import { GitError } from './run.js';

/**
 * What a run is doing to the index and worktree, written to the git directory
 * before it starts and removed when it is done. A run killed in between
 * (kill -9, a power cut) leaves it behind, and the next run, holding the
 * overlay lock, finishes or undoes exactly that change.
 */
export interface Journal {
  pid: number;
  /** commit: the branch moves to `new`, then the worktree follows; worktree: --no-commit, the branch stays. */
  mode: 'commit' | 'worktree';
  branch: string;
  old: string | null;
  new: string;
}

const JOURNAL = 'rocm-ebuild.landing';
/** The index a landing prepares before the branch moves (IndexUpdate). */
const STAGED_INDEX = 'rocm-ebuild.index';

export async function writeJournal(gitDir: string, journal: Journal): Promise<void> {
  const file = path.join(gitDir, JOURNAL);
  await writeFile(`${file}.tmp`, `${JSON.stringify(journal)}\n`);
  await rename(`${file}.tmp`, file);
}

export async function clearJournal(gitDir: string): Promise<void> {
  await rm(path.join(gitDir, JOURNAL), { force: true });
}

async function readJournal(gitDir: string): Promise<{ journal: Journal; written: number } | undefined> {
  const file = path.join(gitDir, JOURNAL);
  try {
    const [text, st] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    return { journal: JSON.parse(text) as Journal, written: st.mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof SyntaxError) {
      // Killed while writing it: the change had not started.
      await rm(file, { force: true });
      return undefined;
    }
    throw err;
  }
}

/**
 * Finish or undo what an interrupted run left in the index and worktree.
 * Call it holding the overlay lock, before anything reads the overlay.
 * Returns a message for the user when there was something to do.
 */
export async function recoverInterrupted(repo: OverlayRepo, gitDir: string): Promise<string[]> {
  const found = await readJournal(gitDir);
  if (!found) return [];
  const { journal, written } = found;
  const branch = journal.branch.replace(/^refs\/heads\//, '');
  // The index the run was preparing: never installed, or already renamed into place.
  await discardStagedIndex(gitDir);
  const messages: string[] = [];
  if (journal.mode === 'commit') await removeRefLocksOf(repo, journal, written);
  let toward: 'old' | 'new' | undefined;
  if (journal.mode === 'commit') {
    const tip = await repo.head(journal.branch);
    if (tip === journal.new) toward = 'new';
    else if (tip === (journal.old ?? undefined)) toward = 'old';
  } else if ((await repo.head()) === (journal.old ?? undefined)) {
    toward = 'old';
  }
  if (!toward) {
    messages.push(`an interrupted run (pid ${journal.pid}) was updating the worktree, but ${branch} has moved since; its files are left as they are`);
  } else {
    const foreign = await settleWorktree(repo, gitDir, journal, toward, { since: written });
    if (journal.mode === 'commit' && toward === 'new') {
      messages.push(`finished updating the worktree of the bump pid ${journal.pid} left midway (its commits were on ${branch} already)`);
    } else if (journal.mode === 'commit') {
      messages.push(`undid the worktree update of the bump pid ${journal.pid}, stopped before ${branch} moved; the overlay is as it was`);
    } else if (journal.mode === 'worktree') {
      messages.push(`rolled back the --no-commit changes the run pid ${journal.pid} left midway`);
    }
    if (foreign.length > 0) {
      messages.push(
        `the interrupted run (pid ${journal.pid}) left these files neither as they were nor as it meant to write them; they are kept for you to check:\n` +
          foreign.map((f) => `  ${f}`).join('\n'),
      );
    }
  }
  await clearJournal(gitDir);
  return messages;
}

/**
 * A run killed inside `git update-ref` leaves git's lock beside each ref of
 * the swap (refs/heads/main.lock, the record's, and HEAD.lock for the
 * branch HEAD names): every later update of the branch would then fail, and
 * read as "main moved". A lock newer than the journal is the interrupted
 * run's (the next run holds the overlay lock), and goes, as settleWorktree
 * does with its index.lock.
 */
async function removeRefLocksOf(repo: OverlayRepo, journal: Journal, since: number): Promise<void> {
  const { gitDir, commonDir } = await repo.dirs();
  for (const lock of [path.join(gitDir, 'HEAD.lock'), path.join(commonDir, `${journal.branch}.lock`), path.join(commonDir, `${RECORD_REF}.lock`)]) {
    const st = await stat(lock).catch(() => undefined);
    // Allow for file systems that keep whole seconds.
    if (st && st.mtimeMs >= since - 2000) await rm(lock, { force: true });
  }
}

interface Entry {
  path: string;
  old: string | null;
  new: string | null;
}

/**
 * Bring the index to `toward` (the commit before or after a change) and the
 * worktree files that the change touches along with it, file by file: a file
 * holding either side's content is ours to set; a file holding anything else
 * (the user's) is left alone and returned. `since`: the journal's time; a
 * `.git/index.lock` newer than it was left by the interrupted git and goes.
 */
export async function settleWorktree(
  repo: OverlayRepo,
  gitDir: string,
  change: { old: string | null; new: string },
  toward: 'old' | 'new',
  options: { since?: number } = {},
): Promise<string[]> {
  if (options.since !== undefined) {
    const lock = path.join(gitDir, 'index.lock');
    // Allow for file systems that keep whole seconds.
    const st = await stat(lock).catch(() => undefined);
    if (st && st.mtimeMs >= options.since - 2000) await rm(lock, { force: true });
  }
  await repo.requireUnlockedIndex(gitDir);
  const emptyTree = (await repo.raw(['hash-object', '-t', 'tree', '--stdin'])).trim();
  const entries = await changedPaths(repo, change.old ?? emptyTree, change.new);
  const target = toward === 'old' ? (change.old ?? null) : change.new;
  // --reset: the index is set even where its stat data is stale; same entries keep theirs.
  await repo.raw(target ? ['read-tree', '--reset', target] : ['read-tree', '--empty']);

  const present: string[] = [];
  for (const e of entries) {
    const st = await lstat(path.join(repo.dir, e.path)).catch(() => undefined);
    if (st?.isFile()) present.push(e.path);
  }
  const hashes = present.length
    ? (await repo.raw(['hash-object', '--stdin-paths'], { input: `${present.join('\n')}\n` })).trim().split('\n')
    : [];
  const current = new Map(present.map((p, i) => [p, hashes[i]!]));
  const restore: string[] = [];
  const remove: string[] = [];
  const foreign: string[] = [];
  for (const e of entries) {
    const want = toward === 'old' ? e.old : e.new;
    const other = toward === 'old' ? e.new : e.old;
    const now = current.get(e.path) ?? null;
    if (now === want) continue;
    if (now === null || now === other) (want ? restore : remove).push(e.path);
    else foreign.push(e.path);
  }
  if (restore.length) await repo.raw(['checkout-index', '-f', '-z', '--stdin'], { input: `${restore.join('\0')}\0` });
  for (const p of remove) {
    await rm(path.join(repo.dir, p), { force: true });
    // Directories the change created and left empty.
    for (let dir = path.dirname(p); dir !== '.'; dir = path.dirname(dir)) {
      if (!(await rmdir(path.join(repo.dir, dir)).then(() => true, () => false))) break;
    }
  }
  await repo.raw(['update-index', '-q', '--refresh']).catch((err: unknown) => {
    if (!(err instanceof GitError)) throw err; // exit 1: files that differ (the foreign ones)
  });
  return foreign;
}

/** The files that differ between two trees, with their blob ids (null: absent on that side). */
async function changedPaths(repo: OverlayRepo, from: string, to: string): Promise<Entry[]> {
  const out = await repo.raw(['diff-tree', '-r', '-z', '--no-renames', from, to]);
  const f = out.split('\0');
  const entries: Entry[] = [];
  const absent = (oid: string) => (/^0+$/.test(oid) ? null : oid);
  for (let i = 0; i + 1 < f.length; i += 2) {
    const m = /^:\d+ \d+ ([0-9a-f]+) ([0-9a-f]+) [A-Z]/.exec(f[i]!);
    if (!m) break;
    entries.push({ path: f[i + 1]!, old: absent(m[1]!), new: absent(m[2]!) });
  }
  return entries;
}

/**
 * Brings the worktree to a new commit through a private copy of the index,
 * holding git's own `index.lock` throughout, so that the index git reads
 * changes once, by a rename, and no other git writes it meanwhile. The
 * landing installs the new index before it moves the branch: a run killed
 * after the branch moved leaves index, worktree and branch agreeing (a
 * `git commit` in between finds nothing to record), and one killed before
 * leaves the changes staged, never staged as deleted.
 */
export class IndexUpdate {
  private held = true;
  /** Whether the worktree may have been written (a checkout began). */
  touched = false;

  private constructor(
    private readonly repo: OverlayRepo,
    private readonly gitDir: string,
  ) {}

  /** Take git's index lock (refused when another git holds it) and copy the index, stat data included. */
  static async begin(repo: OverlayRepo, gitDir: string): Promise<IndexUpdate> {
    const lock = path.join(gitDir, 'index.lock');
    try {
      await writeFile(lock, '', { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      throw new UserError(
        `${lock} exists: another git process is working in this repository, or one crashed\n` +
          `hint: wait for it to finish; if no git process is running, remove ${lock}`,
        ExitCode.overlayRefused,
      );
    }
    const update = new IndexUpdate(repo, gitDir);
    try {
      await discardStagedIndex(gitDir);
      await copyFile(path.join(gitDir, 'index'), update.staged).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err; // no index yet (a new repository): git starts from an empty one
      });
    } catch (err) {
      await update.discard();
      throw err;
    }
    return update;
  }

  private get staged(): string {
    return path.join(this.gitDir, STAGED_INDEX);
  }

  /** Two-tree read-tree into the private index: the worktree files follow; the user's index does not yet. */
  async checkout(from: string | undefined, to: string): Promise<void> {
    this.touched = true;
    await this.repo.raw(from ? ['read-tree', '-m', '-u', from, to] : ['read-tree', '-m', '-u', to], { env: { GIT_INDEX_FILE: this.staged } });
  }

  /** The private index becomes the index as git installs one: written as index.lock, renamed over index (which releases the lock). */
  async install(): Promise<void> {
    await rename(this.staged, path.join(this.gitDir, 'index.lock'));
    await rename(path.join(this.gitDir, 'index.lock'), path.join(this.gitDir, 'index'));
    this.held = false;
  }

  /** Drop the private index and release the lock; the index is as it was. */
  async discard(): Promise<void> {
    await discardStagedIndex(this.gitDir);
    if (this.held) await rm(path.join(this.gitDir, 'index.lock'), { force: true });
    this.held = false;
  }
}

async function discardStagedIndex(gitDir: string): Promise<void> {
  await rm(path.join(gitDir, STAGED_INDEX), { force: true });
  await rm(path.join(gitDir, `${STAGED_INDEX}.lock`), { force: true });
}
