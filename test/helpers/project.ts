import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (tests run from dist/test/…). */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const bin = path.join(root, 'bin', 'run.js');
export const shippedManifest = path.join(root, 'manifest', 'stack.yaml');

/** A temporary directory removed after the current test file. */
export async function tempDir(prefix = 'rocm-ebuild-'): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Write files given as { 'relative/path': text } under `dir`. */
export async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The real CLI in a child process, with a private git identity and no
 * inherited GIT_* variables, so tests neither read nor write the user's config.
 */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; home?: string; bin?: string; input?: string; killAfterMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...gitEnv(options.home), ...options.env };
    const child = spawn(process.execPath, [options.bin ?? bin, ...args], { cwd: options.cwd ?? root, env });
    let stdout = '';
    let stderr = '';
    // A hostile-input test whose command would hang: killed, and reported as such, instead of outliving the test.
    const killer = options.killAfterMs === undefined ? undefined : setTimeout(() => {
      stderr += `\n[killed by the test after ${options.killAfterMs} ms]`;
      child.kill('SIGKILL');
    }, options.killAfterMs);
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (killer) clearTimeout(killer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    // Standard input is a pipe: given text, written and closed.
    if (options.input !== undefined) child.stdin.end(options.input);
  });
}

/** Environment for git in tests: an isolated HOME (config set by `gitHome`). */
export function gitEnv(home?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { GIT_CONFIG_NOSYSTEM: '1' };
  for (const k of ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE']) env[k] = undefined;
  if (home) {
    env.HOME = home;
    env.XDG_CONFIG_HOME = path.join(home, '.config');
    env.XDG_CACHE_HOME = path.join(home, '.cache');
  }
  return env;
}

/** A HOME whose git config has an identity (or none, and no guessing). */
export async function gitHome(identity: { name: string; email: string } | null): Promise<string> {
  const home = await tempDir('rocm-ebuild-home-');
  const lines = ['[user]', '\tuseConfigOnly = true'];
  if (identity) lines.push(`\tname = ${identity.name}`, `\temail = ${identity.email}`);
  lines.push('[init]', '\tdefaultBranch = main', '[commit]', '\tgpgsign = false');
  await writeFile(path.join(home, '.gitconfig'), `${lines.join('\n')}\n`);
  return home;
}

export function git(cwd: string, args: string[], home?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: { ...process.env, ...gitEnv(home) } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`git ${args.join(' ')}: ${err}`))));
  });
}
