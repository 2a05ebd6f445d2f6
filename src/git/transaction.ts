import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { OverlayRepo } from './repo.js';
import { gitEnvironment } from './run.js';
import { signedCommit } from './signing.js';
import { clearJournal, IndexUpdate, settleWorktree, writeJournal } from './worktree.js';

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

/** A commit on the record of generated texts (generated-record.ts), built with the branch's commits. */
export interface RecordSpec {
  /** The record's current commit, or undefined for the first. */
  parent: string | undefined;
  message: string;
  /** The texts bump generated, by path. */
  files: { path: string; content: string }[];
}

/** Author and committer lines as git writes them: "Name <email> <epoch> <zone>". */
export interface Signatures {
  author: string;
  committer: string;
}

const STAGING_PREFIX = 'refs/rocm-ebuild/';

/**
 * Builds a series of commits without touching the user's branch, index or
 * worktree: `git fast-import` writes the objects and a private ref, and only
 * `land()` moves the branch, with a compare-and-swap against the commit the
 * plan was made from. Killed at any point before that, the branch is exactly
 * as it was; what fast-import wrote is unreferenced and git's gc drops it.
 * The caller holds the overlay lock (OverlayLock) throughout.
 */
export class CommitBuilder {
  private readonly stagingRef: string;
  private child?: ReturnType<typeof spawn>;
  private started = false;

  constructor(
    private readonly repo: OverlayRepo,
    /** This worktree's git directory, where the landing journal lives. */
    private readonly gitDir: string,
  ) {
    this.stagingRef = `${STAGING_PREFIX}bump-${process.pid}`;
  }

  /** Delete the private refs of runs that were killed (under the lock, no other run is building). */
  async clearStaleRefs(): Promise<void> {
    const stale = (await this.repo.raw(['for-each-ref', '--format=%(refname)', STAGING_PREFIX])).split('\n').filter(Boolean);
    for (const ref of stale) await this.repo.raw(['update-ref', '-d', ref]);
  }

  /**
   * Stop building at once (Ctrl-C, SIGTERM): fast-import dies before it is
   * told `done`, so it writes no ref. Synchronous, for a signal handler.
   */
  abortSync(): void {
    this.child?.kill('SIGKILL');
  }

  /** Drop this run's private ref (only if it built one: even a no-op update-ref creates directories in .git). */
  async end(): Promise<void> {
    if (!this.started) return;
    await this.repo.raw(['update-ref', '-d', this.stagingRef]).catch(() => undefined);
    if (this.recordStaged) await this.repo.raw(['update-ref', '-d', `${this.stagingRef}-record`]).catch(() => undefined);
  }

  /** The record commit the last build() made, if it was given one. */
  recordTip?: string;
  private recordStaged = false;

  /**
   * Create `commits` on top of `parent` (undefined for a new repository) and
   * return the new tip. `onCommit` fires as git confirms each one. A commit
   * that would change nothing is a bug in the plan: refused, never landed.
   */
  async build(
    parent: string | undefined,
    commits: CommitSpec[],
    signatures: Signatures,
    options: { onCommit?: (done: number, total: number) => void; record?: RecordSpec; sign?: boolean } = {},
  ): Promise<string> {
    this.started = true;
    const record = options.record && options.record.files.length > 0 ? options.record : undefined;
    this.recordStaged = record !== undefined;
    const tips: string[] = [];
    const child = spawn('git', ['fast-import', '--quiet', '--done'], {
      cwd: this.repo.dir,
      env: gitEnvironment(),
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
        else if (/^[0-9a-f]{40,64}$/.test(line)) tips.push(line);
      }
    });
    const exited = new Promise<number>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) => resolve(code ?? 1));
    });
    // One listener for the whole stream (a listener per write piles up: MaxListenersExceededWarning).
    let failure: Error | undefined;
    child.stdin.on('error', (err) => (failure ??= err));
    const write = async (chunks: (string | Buffer)[]) => {
      if (failure) throw failure;
      if (!child.stdin.write(Buffer.concat(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))))) {
        await once(child.stdin, 'drain');
      }
    };
    const data = (payload: string | Buffer): Buffer[] => {
      const buf = typeof payload === 'string' ? Buffer.from(payload) : payload;
      return [Buffer.from(`data ${buf.length}\n`), buf, Buffer.from('\n')];
    };
    try {
      await write(['feature done\n']);
      for (const [i, c] of commits.entries()) {
        const chunks: (string | Buffer)[] = [
          `commit ${this.stagingRef}\nmark :${i + 1}\nauthor ${signatures.author}\ncommitter ${signatures.committer}\n`,
          ...data(c.message),
        ];
        if (i === 0 && parent) chunks.push(`from ${parent}\n`);
        for (const change of c.changes) {
          if (change.content === null) chunks.push(`D ${quotePath(change.path)}\n`);
          else chunks.push(`M 100644 inline ${quotePath(change.path)}\n`, ...data(change.content));
        }
        chunks.push(`progress commit ${i + 1}\n`);
        await write(chunks);
      }
      if (record) {
        const chunks: (string | Buffer)[] = [
          `commit ${this.stagingRef}-record\nmark :${commits.length + 1}\nauthor ${signatures.author}\ncommitter ${signatures.committer}\n`,
          ...data(record.message),
        ];
        if (record.parent) chunks.push(`from ${record.parent}\n`);
        for (const f of record.files) chunks.push(`M 100644 inline ${quotePath(f.path)}\n`, ...data(f.content));
        await write(chunks);
      }
      // The tips' ids on stdout: no rev-parse of the private refs afterwards.
      await write([`get-mark :${commits.length}\n`, ...(record ? [`get-mark :${commits.length + 1}\n`] : []), 'done\n']);
      child.stdin.end();
    } catch (err) {
      child.kill('SIGKILL');
      await exited.catch(() => undefined);
      throw new Error(`git fast-import stopped reading: ${stderr.trim() || String(err)}`);
    }
    const code = await exited;
    if (code !== 0) throw new Error(`git fast-import failed (${code}): ${stderr.trim()}`);
    const tip = tips[0];
    if (!tip || (record && !tips[1])) throw new Error(`git fast-import did not report the commits it made: ${stderr.trim()}`);
    this.recordTip = record ? tips[1] : undefined;
    await this.refuseEmptyCommits(parent, tip);
    return options.sign ? this.signAll(parent, tip, commits, signatures, record) : tip;
  }

  /**
   * fast-import cannot sign: the same commits again, each on the signed one
   * before it, signed by `git commit-tree -S` (signing.ts), with the trees
   * fast-import built and the same messages, authors and dates. The
   * unsigned ones stay unreferenced, for git's gc. Returns the signed tip.
   */
  private async signAll(parent: string | undefined, tip: string, commits: CommitSpec[], signatures: Signatures, record: RecordSpec | undefined): Promise<string> {
    const range = parent ? [tip, '--not', parent] : [tip];
    const trees = (await this.repo.raw(['log', '--reverse', '--format=%T', ...range])).trim().split('\n');
    if (trees.length !== commits.length) throw new Error(`fast-import made ${trees.length} commits for ${commits.length}`);
    let signed = parent;
    for (const [i, c] of commits.entries()) {
      signed = await signedCommit(this.repo, { tree: trees[i]!, parent: signed, message: c.message, ...signatures });
    }
    if (record && this.recordTip) {
      const tree = (await this.repo.raw(['rev-parse', `${this.recordTip}^{tree}`])).trim();
      this.recordTip = await signedCommit(this.repo, { tree, parent: record.parent, message: record.message, ...signatures });
    }
    return signed!;
  }

  /** Every new commit must change its parent's tree. */
  private async refuseEmptyCommits(parent: string | undefined, tip: string): Promise<void> {
    // The new commits and `parent` itself (whose tree the first one must differ from), in one git.
    const range = parent ? [tip, '--not', `${parent}^@`] : [tip];
    const lines = (await this.repo.raw(['log', '--format=%H %T %P%x09%s', ...range])).trim().split('\n').filter(Boolean);
    const trees = new Map<string, string>();
    for (const line of lines) {
      const [id, tree] = line.split('\t')[0]!.split(' ');
      trees.set(id!, tree!);
    }
    for (const line of lines) {
      const [ids, subject] = line.split('\t');
      const [id, tree, first] = ids!.split(' ');
      if (id === parent) continue;
      if (first && trees.get(first) === tree) {
        throw new Error(`refusing to create a commit that changes nothing ("${subject}"): the plan does not match the overlay`);
      }
    }
  }

  /**
   * Move `branchRef` from `oldTip` (undefined: the branch must not exist yet)
   * to `newTip`, with the index and worktree. The index and worktree go
   * first, through a private index under git's own index lock (IndexUpdate),
   * and only then does the branch move, in one compare-and-swap: a run killed
   * at any step leaves the three agreeing, or the bump's changes staged on
   * the old branch, never the new files staged as deleted. If anything else
   * moved the branch since the plan was made, nothing is touched (or, moved
   * in the milliseconds of the swap, everything is put back). A journal in
   * the git directory records the landing until it is done, so a run killed
   * midway is completed or undone by the next (`recoverInterrupted`).
   */
  async land(branchRef: string, oldTip: string | undefined, newTip: string, record?: { ref: string; old: string | undefined }): Promise<void> {
    await writeJournal(this.gitDir, { pid: process.pid, mode: 'commit', branch: branchRef, old: oldTip ?? null, new: newTip });
    const moved = (cause: unknown) =>
      new UserError(`${branchRef.replace(/^refs\/heads\//, '')} moved while the bump ran; nothing was changed. Run it again.`, ExitCode.overlayRefused, { cause: String(cause) });
    await this.updateWorktree(oldTip, newTip, 'the worktree could not be updated, so the bump was undone; nothing was changed', async (update) => {
      if ((await this.repo.head(branchRef)) !== oldTip) throw moved(`${branchRef} is no longer at ${oldTip ?? 'no commit'}`);
      await update.checkout(oldTip, newTip);
      await update.install();
    });
    try {
      if (record && this.recordTip) {
        // One ref transaction: the record moves with the branch or not at all.
        const zero = '0'.repeat(newTip.length);
        await this.repo.raw(['update-ref', '-m', 'rocm-ebuild: bump', '--stdin'], {
          input: `update ${branchRef} ${newTip} ${oldTip ?? zero}\nupdate ${record.ref} ${this.recordTip} ${record.old ?? zero}\n`,
        });
      } else {
        await this.repo.raw(['update-ref', '-m', 'rocm-ebuild: bump', branchRef, newTip, oldTip ?? '']);
      }
    } catch (err) {
      // The branch moved between the check and the swap: the index and worktree go back to where they were.
      await settleWorktree(this.repo, this.gitDir, { old: oldTip ?? null, new: newTip }, 'old');
      await clearJournal(this.gitDir);
      throw moved(err);
    }
    await clearJournal(this.gitDir);
  }

  /** Leave the changes of `newTip` in the worktree, uncommitted (--no-commit); the branch and index stay at `oldTip`. */
  async applyToWorktree(branchRef: string, oldTip: string | undefined, newTip: string, record?: { ref: string; old: string | undefined }): Promise<void> {
    await writeJournal(this.gitDir, { pid: process.pid, mode: 'worktree', branch: branchRef, old: oldTip ?? null, new: newTip });
    // The private index takes the new files and is dropped: the user's index never holds them (nothing staged).
    await this.updateWorktree(oldTip, newTip, 'the worktree could not be updated; nothing was changed', async (update) => {
      await update.checkout(oldTip, newTip);
      await update.discard();
    });
    // The texts are in the worktree, generated as recorded: a later bump compares the user's commit of them with this.
    if (record && this.recordTip) await this.repo.raw(['update-ref', record.ref, this.recordTip, record.old ?? '']);
    await clearJournal(this.gitDir);
  }

  /**
   * Run `steps` on an IndexUpdate; when one fails (a directory turned
   * read-only, a full disk, the branch moved), the index and worktree are
   * put back at `oldTip`, the journal goes, and the error is the user's.
   */
  private async updateWorktree(oldTip: string | undefined, newTip: string, failed: string, steps: (update: IndexUpdate) => Promise<void>): Promise<void> {
    let update: IndexUpdate | undefined;
    try {
      // read-tree trusts the index's stat data; the copy must carry fresh data.
      await refreshIndex(this.repo);
      update = await IndexUpdate.begin(this.repo, this.gitDir);
      await steps(update);
    } catch (err) {
      await update?.discard();
      if (update?.touched) await settleWorktree(this.repo, this.gitDir, { old: oldTip ?? null, new: newTip }, 'old');
      await clearJournal(this.gitDir);
      if (err instanceof UserError) throw err;
      throw new UserError(`${failed}:\n${gitMessage(err)}`, ExitCode.overlayRefused);
    }
  }
}

/**
 * read-tree trusts the index's stat data: files whose stat changed while their
 * content did not (a copied or restored overlay; the clean check never writes
 * the index) would read as modified. Refresh it first.
 */
async function refreshIndex(repo: OverlayRepo): Promise<void> {
  await repo.raw(['update-index', '-q', '--refresh']);
}

function gitMessage(err: unknown): string {
  const text = (err as { stderr?: string }).stderr?.trim() || String(err);
  return text.replace(/^/gm, '  ');
}

/** Paths in fast-import commands: quote when they contain spaces or quotes. */
function quotePath(p: string): string {
  return /[\s"\\]/.test(p) ? JSON.stringify(p) : p;
}
