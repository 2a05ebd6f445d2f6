import { spawn } from 'node:child_process';

/**
 * Variables that would point git at another repository, worktree, index or
 * object store than the overlay's (set, for instance, when rocm-ebuild runs
 * from a git hook). Everything else reaches git as the user set it:
 * GIT_AUTHOR_* / GIT_COMMITTER_* identities and dates, GIT_CONFIG_*, TZ.
 */
const LOCATION_VARIABLES = new Set([
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_QUARANTINE_PATH',
  'GIT_IMPLICIT_WORK_TREE',
]);

/** The environment git runs with: the user's, minus the variables that relocate the repository. */
export function gitEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!LOCATION_VARIABLES.has(k.toUpperCase())) env[k] = v;
  return { ...env, ...extra };
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (${exitCode ?? 'killed'}): ${stderr.trim() || 'no message'}`);
    this.name = 'GitError';
  }
}

/**
 * Run git in `cwd` and return its stdout; a non-zero exit is an error even
 * when git printed nothing (simple-git resolves those, which is how a
 * detached HEAD once read as a branch with an empty name).
 */
export async function runGit(cwd: string, args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return (await runGitFor(cwd, args, (code) => code === 0, options)).stdout;
}

/**
 * Run git in `cwd` where exit codes other than 0 carry an answer (`diff`
 * exits 1 when the texts differ, `merge-file` with the number of
 * conflicts): `ok` says which codes are answers; any other is a GitError.
 */
export function runGitFor(
  cwd: string,
  args: string[],
  ok: (code: number) => boolean,
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: gitEnvironment(options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== null && ok(code)) resolve({ code, stdout: Buffer.concat(out).toString() });
      else reject(new GitError(args, code, err));
    });
    child.stdin.on('error', () => undefined); // git may exit before reading its input; the exit code tells
    child.stdin.end(options.input ?? '');
  });
}
