import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bin, git, gitEnv, root, type CliResult } from '../helpers/project.js';

export interface Running {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr matches `re` (rejects if the process ends first). */
  waitFor(re: RegExp): Promise<void>;
  done: Promise<CliResult>;
}

/**
 * The real CLI as a child the test can signal. `detached` puts it in its own
 * process group, so `killGroup` reaches the git processes it started too, as
 * a power cut or the OOM killer would.
 */
export function startCli(
  args: string[],
  options: { home: string; cwd?: string; env?: NodeJS.ProcessEnv; detached?: boolean },
): Running {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: options.cwd ?? root,
    env: { ...process.env, NO_COLOR: '1', ...gitEnv(options.home), ...options.env },
    detached: options.detached ?? false,
  });
  let out = '';
  let err = '';
  const waiters: { re: RegExp; resolve: () => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.re.test(err)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    check();
  });
  const done = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`the process ended (${code ?? signal}) before stderr matched ${w.re}:\n${err}`));
      resolve({ code: code ?? -1, stdout: out, stderr: err });
    });
  });
  return {
    child,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    waitFor: (re) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ re, resolve, reject });
        check();
      }),
    done,
  };
}

/** SIGKILL a whole process group started with `detached: true`. */
export function killGroup(r: Running): void {
  try {
    process.kill(-r.pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * git configuration (as environment variables, for the CLI) whose
 * reference-transaction hook stops git the moment a branch has moved
 * (`committed`, refs/heads/*), or, with `prepared`, inside `git update-ref`
 * with the refs locked and the branch not yet moved: `marker` appears, and
 * git sleeps until the test kills it. `base` names the hook directory and the marker.
 */
export async function stopAtBranchMove(base: string, stage: 'prepared' | 'committed' = 'committed'): Promise<{ env: NodeJS.ProcessEnv; marker: string }> {
  const hooks = `${base}-hooks`;
  const marker = `${base}.moved`;
  await mkdir(hooks);
  await writeFile(
    path.join(hooks, 'reference-transaction'),
    `#!/bin/sh\n[ "$1" = ${stage} ] || exit 0\nwhile read -r old new ref; do case "$ref" in refs/heads/*) : > '${marker}'; sleep 600;; esac; done\nexit 0\n`,
    { mode: 0o755 },
  );
  return { env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: hooks }, marker };
}

/** Resolves once `file` exists; rejects if `running` ends first. */
export async function waitForFile(file: string, running: { done: Promise<unknown> }): Promise<void> {
  let ended = false;
  void running.done.then(() => (ended = true));
  while (!existsSync(file)) {
    if (ended) throw new Error(`the process ended before ${file} appeared`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * What `git commit -a` would record in `overlay` as it is ("M path", "D path";
 * none when there is nothing to commit), asked of a copy so the overlay stays
 * as a kill left it.
 */
export async function commitAllRecords(overlay: string, home: string): Promise<string[]> {
  const probe = `${overlay}.commit-a`;
  await cp(overlay, probe, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  try {
    const before = (await git(probe, ['rev-parse', 'HEAD'], home)).trim();
    // --allow-empty: the commit is made either way, and what it records is its diff.
    await git(probe, ['commit', '-q', '-a', '--allow-empty', '--no-verify', '-m', 'a commit made by hand'], home);
    const after = (await git(probe, ['rev-parse', 'HEAD'], home)).trim();
    return (await git(probe, ['diff', '--name-status', '--no-renames', before, after], home)).trim().split('\n').filter(Boolean);
  } finally {
    await rm(probe, { recursive: true, force: true });
  }
}

/**
 * A digest of everything under `dir`, .git included: every path, its type,
 * and the bytes of each file or the target of each link. Equal digests mean
 * a byte-identical tree (timestamps aside).
 */
export async function treeDigest(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(path.join(dir, rel))).sort();
    for (const name of names) {
      const p = path.join(rel, name);
      const st = await lstat(path.join(dir, p));
      if (st.isDirectory()) {
        hash.update(`d ${p}\n`);
        await walk(p);
      } else if (st.isSymbolicLink()) {
        hash.update(`l ${p} ${await readlink(path.join(dir, p))}\n`);
      } else {
        hash.update(`f ${p} ${st.mode & 0o777} ${createHash('sha256').update(await readFile(path.join(dir, p))).digest('hex')}\n`);
      }
    }
  };
  await walk('.');
  return hash.digest('hex');
}

export async function head(dir: string, home: string): Promise<string> {
  return (await git(dir, ['rev-parse', 'HEAD'], home)).trim();
}

/** What `git status` shows, untracked files included ('' when clean). */
export async function status(dir: string, home: string): Promise<string> {
  return (await git(dir, ['status', '--porcelain', '--untracked-files=all'], home)).trimEnd();
}

/** Subjects of the commits whose tree equals their first parent's. */
export async function emptyCommits(dir: string, home: string): Promise<string[]> {
  const lines = (await git(dir, ['log', '--format=%T %P%x09%s'], home)).trim().split('\n');
  const empty: string[] = [];
  for (const line of lines) {
    const [ids, subject] = line.split('\t');
    const [tree, parent] = ids!.split(' ');
    if (parent && (await git(dir, ['rev-parse', `${parent}^{tree}`], home)).trim() === tree) empty.push(subject!);
  }
  return empty;
}

/**
 * How this machine can make a directory read-only for the CLI: as a normal
 * user, file modes do it ('mode'); root ignores modes, so for root a
 * read-only bind mount in a private mount namespace ('mount', where the
 * container allows it); undefined when neither works.
 */
export async function readOnlyMethod(probe: string): Promise<'mode' | 'mount' | undefined> {
  if (process.getuid?.() !== 0) return 'mode';
  return new Promise((resolve) => {
    const script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && ! touch "$0/.probe" 2>/dev/null';
    const child = spawn('unshare', ['-m', 'sh', '-c', script, probe], { stdio: 'ignore' });
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? 'mount' : undefined));
  });
}

/** What makes `readOnly` unwritable, in the words the CLI reports. */
export const READ_ONLY_WHY = /read-only file system|permission denied/;

/**
 * The CLI run while each of `readOnly` cannot be written. 'mount': in a
 * private mount namespace where each is bind-mounted read-only onto itself,
 * so the test's view of the disk is unchanged and nothing needs unmounting.
 * 'mode': every file and directory under them loses its write bits, and gets
 * its exact mode back afterwards.
 */
export async function runCliReadOnly(
  args: string[],
  readOnly: string[],
  options: { home: string; method: 'mode' | 'mount'; cwd?: string },
): Promise<CliResult> {
  const modes = new Map<string, number>();
  if (options.method === 'mode') {
    const walk = async (p: string): Promise<void> => {
      const st = await lstat(p);
      if (st.isSymbolicLink()) return;
      modes.set(p, st.mode & 0o7777);
      if (st.isDirectory()) for (const name of await readdir(p)) await walk(path.join(p, name));
    };
    for (const d of readOnly) await walk(d);
    for (const [p, mode] of modes) await chmod(p, mode & ~0o222);
  }
  try {
    const mounts = options.method === 'mount' ? readOnly.map((d) => `mount --bind "${d}" "${d}" && mount -o remount,bind,ro "${d}" && `).join('') : '';
    const [cmd, argv] = options.method === 'mount' ? ['unshare', ['-m', 'sh', '-c', `${mounts}exec "$0" "$@"`, process.execPath, bin, ...args]] as const : [process.execPath, [bin, ...args]] as const;
    return await new Promise((resolve, reject) => {
      const child = spawn(cmd, argv, { cwd: options.cwd ?? root, env: { ...process.env, NO_COLOR: '1', ...gitEnv(options.home) } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  } finally {
    for (const [p, mode] of modes) await chmod(p, mode);
  }
}
