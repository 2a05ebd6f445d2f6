import { existsSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { GitError, runGit } from './run.js';

export interface Person {
  name: string;
  email: string;
}

/** Who makes the commits: the committer signs off (as `git commit -s` does); the author may differ. */
export interface Identity extends Person {
  author: Person;
}

/** Read-only git commands must not refresh and rewrite the index of an overlay they may refuse. */
const READ_ONLY = { GIT_OPTIONAL_LOCKS: '0' };

/** The git side of an overlay: state checks that must pass before anything is written. */
export class OverlayRepo {
  constructor(readonly dir: string) {}

  /** Plumbing, in the overlay, with the user's environment. */
  async raw(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
    return runGit(this.dir, args, options);
  }

  async isRepository(): Promise<boolean> {
    if (!existsSync(this.dir)) return false;
    try {
      // One git for both answers: the top level, then the prefix (an empty line at the top).
      const [top = '', here = ''] = (await this.raw(['rev-parse', '--show-toplevel', '--show-prefix'])).split('\n');
      return top.trim().length > 0 && here.trim() === '';
    } catch {
      return false;
    }
  }

  async init(): Promise<void> {
    await this.raw(['init', '-q']);
  }

  /** This worktree's git directory (index, HEAD), absolute. */
  async gitDir(): Promise<string> {
    return path.resolve(this.dir, (await this.raw(['rev-parse', '--git-dir'])).trim());
  }

  /** The directory shared by all worktrees of the repository (objects, refs), absolute. */
  async commonDir(): Promise<string> {
    return path.resolve(this.dir, (await this.raw(['rev-parse', '--git-common-dir'])).trim());
  }

  /** gitDir() and commonDir() from one git process. */
  async dirs(): Promise<{ gitDir: string; commonDir: string }> {
    const [gitDir = '', commonDir = ''] = (await this.raw(['rev-parse', '--git-dir', '--git-common-dir'])).split('\n');
    return { gitDir: path.resolve(this.dir, gitDir.trim()), commonDir: path.resolve(this.dir, commonDir.trim()) };
  }

  /** The branch HEAD points to (also when it has no commit yet); refuses a detached HEAD. */
  async branch(): Promise<string> {
    try {
      const ref = (await this.raw(['symbolic-ref', '-q', 'HEAD'])).trim();
      if (ref.startsWith('refs/heads/')) return ref;
    } catch (err) {
      if (!(err instanceof GitError)) throw err;
    }
    throw new UserError(
      `${this.dir}: HEAD is detached; the commits need a branch to land on\n` +
        'hint: check out the branch the bump should land on (git switch <branch>), then run it again',
      ExitCode.overlayRefused,
    );
  }

  /** The commit `ref` (default HEAD) points to, or undefined when there is none (an unborn branch). */
  async head(ref = 'HEAD'): Promise<string | undefined> {
    try {
      return (await this.raw(['rev-parse', '-q', '--verify', `${ref}^{commit}`])).trim() || undefined;
    } catch (err) {
      if (err instanceof GitError && err.exitCode === 1) return undefined;
      throw err;
    }
  }

  /**
   * Refuse while another git holds the index (`index.lock`): whatever it is
   * doing, a bump would fail midway writing the index.
   */
  async requireUnlockedIndex(gitDir?: string): Promise<void> {
    const lock = path.join(gitDir ?? (await this.gitDir()), 'index.lock');
    if (!existsSync(lock)) return;
    throw new UserError(
      `${lock} exists: another git process is working in this repository, or one crashed\n` +
        `hint: wait for it to finish; if no git process is running, remove ${lock}`,
      ExitCode.overlayRefused,
    );
  }

  /** Paths with uncommitted changes, untracked files included, as `git status --porcelain` shows them. */
  async dirt(): Promise<string[]> {
    const out = await this.raw(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { env: READ_ONLY });
    const fields = out.split('\0');
    const lines: string[] = [];
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (f.length < 4) continue;
      lines.push(f);
      if (f[0] === 'R' || f[0] === 'C') i++; // the rename's source follows
    }
    return lines;
  }

  async requireClean(): Promise<void> {
    const dirt = await this.dirt();
    if (dirt.length > 0) {
      const shown = dirt.slice(0, 10).map((l) => `  ${l}`);
      if (dirt.length > 10) shown.push(`  … and ${dirt.length - 10} more`);
      throw new UserError(
        `the overlay ${this.dir} has uncommitted changes; refusing to touch it:\n${shown.join('\n')}\n` +
          'Commit or stash them (git stash --include-untracked), then run the command again.',
        ExitCode.overlayRefused,
        { dirty: dirt },
      );
    }
  }

  /**
   * Files present in the worktree but ignored (.gitignore, info/exclude,
   * core.excludesFile) among `paths`, each with the rule that ignores it as
   * `source:line:pattern`. `git status` does not show them, so a clean check
   * alone would miss them.
   */
  async ignoredPresent(paths: string[]): Promise<{ path: string; rule: string }[]> {
    if (paths.length === 0) return [];
    const listed = await this.raw(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--', ...paths], { env: READ_ONLY });
    const files = listed.split('\0').filter(Boolean);
    return this.ignoreRules(files);
  }

  /** For each of `paths` that the ignore rules match (whether or not it exists), the matching rule. */
  async ignoreRules(paths: string[]): Promise<{ path: string; rule: string }[]> {
    if (paths.length === 0) return [];
    let out: string;
    try {
      out = await this.raw(['check-ignore', '-z', '-v', '--no-index', '--stdin'], { input: `${paths.join('\0')}\0`, env: READ_ONLY });
    } catch (err) {
      if (err instanceof GitError && err.exitCode === 1) return []; // nothing is ignored
      throw err;
    }
    // -z -v: source, line, pattern, path, each NUL-terminated.
    const f = out.split('\0');
    const found: { path: string; rule: string }[] = [];
    for (let i = 0; i + 3 < f.length; i += 4) {
      if (!f[i + 2]) continue;
      found.push({ path: f[i + 3]!, rule: `${f[i]}:${f[i + 1]}:${f[i + 2]}` });
    }
    return found;
  }
}

/**
 * The identity git would use in `cwd`: GIT_AUTHOR_* / GIT_COMMITTER_*
 * variables (how CI and bots set it), else the configuration. A clear error
 * when there is none, since GLEP 76 requires a Signed-off-by line.
 */
export async function gitIdentity(cwd: string): Promise<Identity> {
  const [committer, author] = await Promise.all([readIdent(cwd, 'GIT_COMMITTER_IDENT'), readIdent(cwd, 'GIT_AUTHOR_IDENT')]);
  return { name: committer.name, email: committer.email, author: { name: author.name, email: author.email } };
}

/**
 * The author and committer lines of a commit made now in `cwd`, exactly as
 * git would write them: "Name <email> <epoch> <zone>", with the real time
 * and the user's time zone (TZ), or GIT_AUTHOR_DATE / GIT_COMMITTER_DATE.
 */
export async function gitSignatures(cwd: string): Promise<{ author: string; committer: string }> {
  const [committer, author] = await Promise.all([readIdent(cwd, 'GIT_COMMITTER_IDENT'), readIdent(cwd, 'GIT_AUTHOR_IDENT')]);
  return { author: author.line, committer: committer.line };
}

/** gitIdentity() and gitSignatures() of the same moment, from the same two git processes. */
export async function gitIdentityAndSignatures(cwd: string): Promise<{ identity: Identity; signatures: { author: string; committer: string } }> {
  const [committer, author] = await Promise.all([readIdent(cwd, 'GIT_COMMITTER_IDENT'), readIdent(cwd, 'GIT_AUTHOR_IDENT')]);
  return {
    identity: { name: committer.name, email: committer.email, author: { name: author.name, email: author.email } },
    signatures: { author: author.line, committer: committer.line },
  };
}

async function readIdent(cwd: string, variable: 'GIT_COMMITTER_IDENT' | 'GIT_AUTHOR_IDENT'): Promise<Person & { line: string }> {
  let line: string;
  try {
    line = (await runGit(cwd, ['var', variable])).trim();
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    throw new UserError(
      'no git identity is configured, so commits cannot carry a Signed-off-by line (GLEP 76).\n' +
        'Set one with: git config --global user.name "Your Name" && git config --global user.email you@example.org\n' +
        '(or GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL in the environment)',
      ExitCode.overlayRefused,
      { git: err.stderr.trim() },
    );
  }
  const m = /^(.*) <([^>]*)> (\d+ [+-]\d{4})$/.exec(line);
  if (!m || !m[1] || !m[2]) {
    throw new UserError(`cannot read the git identity from "${line}"`, ExitCode.overlayRefused);
  }
  return { name: m[1], email: m[2], line };
}
