import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gitEnv, gitHome, runCli, tempDir, type CliResult } from '../helpers/project.js';
import { synthesizeDistfiles } from '../helpers/stack-distfiles.js';

/**
 * The world `pr` works in, built once for every pr test: an "upstream"
 * repository (gentoo/gentoo) and a fork (ada/gentoo), both bare repositories
 * in a temp dir that git reaches through url.<dir>.insteadOf =
 * https://github.com/ (so remotes carry real GitHub URLs and the code under
 * test reads them as users have them), and a clone of upstream where a real
 * `rocm-ebuild bump 6.2.2` committed the stack on branch rocm-6.2.2. Tests
 * that add commits work in their own clones; the fixture stays as built.
 */

export const IDENTITY = { name: 'Ada Tester', email: 'ada@example.org' };
export const SIGN_OFF = `Signed-off-by: ${IDENTITY.name} <${IDENTITY.email}>`;
/** What the fixture's bump is given, so the golden body shows the Bugs section. */
export const BUMP_BUGS = ['--bug', '940123', '--closes', 'sci-libs/rocBLAS=940200', '--closes', 'https://bugs.gentoo.org/940300'];

export interface PrFixture {
  work: string;
  home: string;
  distdir: string;
  /** Bare repositories, reached as https://github.com/<owner>/<repo>.git. */
  upstream: string;
  fork: string;
  /** The bumped clone: branch rocm-6.2.2, origin = gentoo/gentoo, fork = ada/gentoo. */
  overlay: string;
  /** origin/master, where the branch starts. */
  base: string;
  /** The branch tip after the bump. */
  tip: string;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a program with the fixture's HOME (git config, identity) and no inherited GIT_* variables. */
export function sh(cwd: string, cmd: string, args: string[], options: { home?: string; env?: NodeJS.ProcessEnv; input?: string | Buffer } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...gitEnv(options.home), ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

export async function git(cwd: string, args: string[], home: string, options: { env?: NodeJS.ProcessEnv; input?: string | Buffer } = {}): Promise<string> {
  const r = await sh(cwd, 'git', args, { home, ...options });
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} (in ${cwd}): ${r.stderr}`);
  return r.stdout;
}

export interface Who {
  name: string;
  email: string;
}

/** Stage everything and commit `message` exactly as given (no sign-off added, nothing cleaned up). */
export async function commitAll(
  dir: string,
  home: string,
  message: string,
  options: { author?: Who; committer?: Who; date?: string } = {},
): Promise<string> {
  const author = options.author ?? IDENTITY;
  const committer = options.committer ?? author;
  const env: NodeJS.ProcessEnv = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
    ...(options.date ? { GIT_AUTHOR_DATE: options.date, GIT_COMMITTER_DATE: options.date } : {}),
  };
  await git(dir, ['add', '-A'], home);
  await git(dir, ['commit', '-q', '--allow-empty', '--cleanup=verbatim', '--no-verify', '-F', '-'], home, { env, input: message });
  return (await git(dir, ['rev-parse', 'HEAD'], home)).trim();
}

/** A signed-off message: summary, optional body, blank line, sign-off. */
export function signed(summary: string, body?: string, trailers: string[] = []): string {
  return `${summary}\n\n${body ? `${body}\n\n` : ''}${[...trailers, SIGN_OFF].join('\n')}\n`;
}

/** An executable on a PATH directory of its own: a stub for a tool that cannot run here. */
export async function stub(binDir: string, name: string, script: string): Promise<string> {
  await mkdir(binDir, { recursive: true });
  const file = path.join(binDir, name);
  await writeFile(file, `#!/bin/bash\n${script}\n`);
  await chmod(file, 0o755);
  return file;
}

/**
 * A PATH holding only the programs `pr` runs (git, bash, sh, shellcheck and
 * their helpers), so whatever pkgcheck or gh the developer has installed
 * stays out of tests that expect them absent.
 */
export async function bareBin(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const r = await sh(dir, 'bash', ['-c', 'for t in git bash sh shellcheck env cat sed grep mkdir dirname basename; do p=$(command -v "$t") && ln -sf "$p" "$0/$t"; done', dir]);
  assert.equal(r.code, 0, r.stderr);
  return dir;
}

let fixture: Promise<PrFixture> | undefined;
let built: PrFixture | undefined;

async function build(): Promise<PrFixture> {
  const work = await tempDir('rocm-ebuild-pr-');
  const home = await gitHome(IDENTITY);
  const remotes = path.join(work, 'github');
  // Every https://github.com/ URL resolves to a bare repository under `remotes`.
  await writeFile(path.join(home, '.gitconfig'), `[url "file://${remotes}/"]\n\tinsteadOf = https://github.com/\n`, { flag: 'a' });
  const distdir = path.join(work, 'distfiles');
  await synthesizeDistfiles('6.2.2', distdir, home);

  const upstream = path.join(remotes, 'gentoo', 'gentoo.git');
  const fork = path.join(remotes, 'ada', 'gentoo.git');
  for (const bare of [upstream, fork]) {
    await mkdir(bare, { recursive: true });
    await git(bare, ['init', '-q', '--bare', '--initial-branch=master'], home);
  }
  const seed = path.join(work, 'seed');
  await mkdir(seed);
  await git(seed, ['init', '-q', '--initial-branch=master'], home);
  await writeFile(path.join(seed, 'README.md'), 'An ebuild repository.\n');
  await commitAll(seed, home, signed('README.md: describe the repository'));
  await git(seed, ['push', '-q', 'https://github.com/gentoo/gentoo.git', 'master'], home);

  const overlay = path.join(work, 'gentoo');
  await git(work, ['clone', '-q', 'https://github.com/gentoo/gentoo.git', overlay], home);
  await git(overlay, ['remote', 'add', 'fork', 'https://github.com/ada/gentoo.git'], home);
  await git(overlay, ['switch', '-q', '-c', 'rocm-6.2.2'], home);
  const base = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
  const r = await runCli(['bump', '6.2.2', '--overlay', overlay, '--distdir', distdir, '--offline', ...BUMP_BUGS], { home, cwd: work });
  assert.equal(r.code, 0, r.stderr);
  const tip = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
  built = { work, home, distdir, upstream, fork, overlay, base, tip };
  return built;
}

export function prFixture(): Promise<PrFixture> {
  fixture ??= build();
  return fixture;
}

/** A clone of the bumped overlay to add commits to (remotes as in the fixture). */
export async function workClone(f: PrFixture, name: string): Promise<string> {
  const dir = path.join(f.work, name);
  await git(f.work, ['clone', '-q', '--no-local', f.overlay, dir], f.home);
  await git(dir, ['remote', 'set-url', 'origin', 'https://github.com/gentoo/gentoo.git'], f.home);
  await git(dir, ['fetch', '-q', '--prune', 'origin'], f.home);
  await git(dir, ['remote', 'set-head', 'origin', 'master'], f.home);
  await git(dir, ['remote', 'add', 'fork', 'https://github.com/ada/gentoo.git'], f.home);
  await git(dir, ['switch', '-q', '-C', 'rocm-6.2.2', f.tip], f.home);
  await git(dir, ['branch', '-q', '--unset-upstream'], f.home).catch(() => '');
  return dir;
}

export function prCli(f: PrFixture, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return runCli(['pr', ...args], { home: f.home, cwd: options.cwd ?? f.work, ...(options.env ? { env: options.env } : {}) });
}

// The fixture is shared by every pr test file a process runs: remove it when the process ends.
// (Not in a root `after` hook: in a parallel run each file is its own root suite, and the
// fixture would go after the first file while later ones in the same worker still use it.)
process.once('exit', () => {
  if (built) {
    rmSync(built.work, { recursive: true, force: true });
    rmSync(built.home, { recursive: true, force: true });
  }
});
