import { existsSync } from 'node:fs';
import { simpleGit, type SimpleGit } from 'simple-git';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

export interface Identity {
  name: string;
  email: string;
}

/** The git side of an overlay: state checks that must pass before anything is written. */
export class OverlayRepo {
  private client?: SimpleGit;

  constructor(readonly dir: string) {}

  /** simple-git needs an existing directory, and the overlay may not exist yet. */
  get git(): SimpleGit {
    this.client ??= simpleGit({ baseDir: this.dir, config: ['core.quotepath=off'], maxConcurrentProcesses: 4 });
    return this.client;
  }

  /** Plumbing commands simple-git has no verb for. */
  async raw(args: string[]): Promise<string> {
    return this.git.raw(args);
  }

  async isRepository(): Promise<boolean> {
    if (!existsSync(this.dir)) return false;
    try {
      const top = (await this.raw(['rev-parse', '--show-toplevel'])).trim();
      const here = (await this.raw(['rev-parse', '--show-prefix'])).trim();
      return top.length > 0 && here === '';
    } catch {
      return false;
    }
  }

  async init(): Promise<void> {
    await this.raw(['init', '-q']);
  }

  /** The branch HEAD points to; refuses a detached HEAD. */
  async branch(): Promise<string> {
    try {
      return (await this.raw(['symbolic-ref', '-q', 'HEAD'])).trim();
    } catch {
      throw new UserError(
        `${this.dir}: HEAD is detached`,
        ExitCode.overlayRefused,
        { hint: 'check out the branch the bump should land on (git switch <branch>)' },
      );
    }
  }

  /** The commit HEAD points to, or undefined on an unborn branch. */
  async head(): Promise<string | undefined> {
    try {
      return (await this.raw(['rev-parse', '-q', '--verify', 'HEAD^{commit}'])).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /** Paths with uncommitted changes, untracked files included. */
  async dirt(): Promise<string[]> {
    const status = await this.git.status(['--untracked-files=all']);
    return status.files.map((f) => `${f.index}${f.working_dir} ${f.path}`);
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


}

/** The committer identity git would use in `cwd`; a clear error when none is configured. */
export async function gitIdentity(cwd: string): Promise<Identity> {
  let ident: string;
  try {
    ident = (await simpleGit({ baseDir: cwd }).raw(['var', 'GIT_COMMITTER_IDENT'])).trim();
  } catch {
    throw new UserError(
      'no git identity is configured, so commits cannot carry a Signed-off-by line (GLEP 76).\n' +
        'Set one with: git config --global user.name "Your Name" && git config --global user.email you@example.org',
      ExitCode.overlayRefused,
    );
  }
  const m = /^(.*) <([^>]*)> \d+ [+-]\d{4}$/.exec(ident);
  if (!m || !m[1] || !m[2]) {
    throw new UserError(`cannot read the git identity from "${ident}"`, ExitCode.overlayRefused);
  }
  return { name: m[1], email: m[2] };
}
