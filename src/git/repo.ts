import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { simpleGit, type SimpleGit } from 'simple-git';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';

const run = promisify(execFile);

export interface Identity {
  name: string;
  email: string;
}

/** The git side of an overlay: state checks that must pass before anything is written. */
export class OverlayRepo {
  readonly git: SimpleGit;

  constructor(readonly dir: string) {
    this.git = simpleGit({ baseDir: dir, config: ['core.quotepath=off'] });
  }

  /** Run git with stdin/stdout as strings (for plumbing simple-git has no verb for). */
  async raw(args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
    const { stdout } = await run('git', args, { cwd: this.dir, env: { ...process.env, ...env }, maxBuffer: 256 * 1024 * 1024 });
    return stdout;
  }

  async isRepository(): Promise<boolean> {
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

  /** Lines of `git status --porcelain`, untracked files included. */
  async dirt(): Promise<string[]> {
    const status = await this.raw(['status', '--porcelain', '--untracked-files=all']);
    return status.split('\n').filter(Boolean);
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

  /** The committer identity, as git would use it; a clear error when none is configured. */
  async identity(): Promise<Identity> {
    let ident: string;
    try {
      ident = (await this.raw(['var', 'GIT_COMMITTER_IDENT'])).trim();
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

  async config(key: string): Promise<string | undefined> {
    try {
      return (await this.raw(['config', '--get', key])).trim() || undefined;
    } catch {
      return undefined;
    }
  }
}
