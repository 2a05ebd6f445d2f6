import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { execFile, gitEnv, lastLine } from './exec.js';
import { cacheName, gitDirAt, localPath } from './locations.js';
import { sortPaths, TreeError, type SourceTree } from './source-tree.js';

const git = (gitDir: string, args: string[], input?: string, timeoutMs?: number) =>
  execFile('git', [`--git-dir=${gitDir}`, ...args], { env: gitEnv(), ...(input !== undefined ? { input } : {}), ...(timeoutMs ? { timeoutMs } : {}) });

/** A tag's tree in a git repository, read with ls-tree and one `cat-file --batch`. */
export class GitTree implements SourceTree {
  private listing?: Promise<string[]>;

  private constructor(
    readonly label: string,
    private readonly gitDir: string,
    /** The tree object of the root (the tag's tree, or its subdirectory). */
    private readonly tree: string,
  ) {}

  /** The tree of `refs/tags/<tag>` (or its `subdir`); TreeError 'missing' when the repository lacks either. */
  static async open(gitDir: string, tag: string, label: string, subdir?: string): Promise<GitTree> {
    const spec = `refs/tags/${tag}^{tree}`;
    const r = await git(gitDir, ['rev-parse', '--verify', '--quiet', '--end-of-options', spec]);
    if (r.code !== 0) throw new TreeError(`no tag ${tag} in ${label.split(' ')[0]}`, 'missing');
    let tree = r.stdout.toString().trim();
    if (subdir) {
      const sub = await git(gitDir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${tree}:${subdir}`]);
      const type = sub.code === 0 ? (await git(gitDir, ['cat-file', '-t', sub.stdout.toString().trim()])).stdout.toString().trim() : '';
      if (type !== 'tree') throw new TreeError(`${label} has no directory ${subdir}`, 'missing');
      tree = sub.stdout.toString().trim();
    }
    return new GitTree(subdir ? `${label}:${subdir}` : label, gitDir, tree);
  }

  files(): Promise<string[]> {
    this.listing ??= (async () => {
      const r = await git(this.gitDir, ['ls-tree', '-r', '-z', '--name-only', this.tree]);
      if (r.code !== 0) throw new TreeError(`cannot list ${this.label}: ${lastLine(r.stderr)}`, 'unreachable');
      return sortPaths(r.stdout.toString('utf8').split('\0').filter((p) => p !== ''));
    })();
    return this.listing;
  }

  async read(paths: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    // cat-file reads one object name per line: a path with a newline cannot be asked for.
    const wanted = [...new Set(paths)].filter((p) => p !== '' && !p.includes('\n'));
    if (wanted.length === 0) return out;
    const r = await git(this.gitDir, ['cat-file', '--batch'], wanted.map((p) => `${this.tree}:${p}\n`).join(''));
    if (r.code !== 0) throw new TreeError(`cannot read ${this.label}: ${lastLine(r.stderr)}`, 'unreachable');
    const buf = r.stdout;
    let at = 0;
    for (const p of wanted) {
      const nl = buf.indexOf(0x0a, at);
      if (nl < 0) break;
      const header = buf.subarray(at, nl).toString();
      at = nl + 1;
      const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
      if (!m) continue; // "<name> missing"
      const size = Number(m[2]);
      if (m[1] === 'blob') out.set(p, Buffer.from(buf.subarray(at, at + size)));
      at += size + 1;
    }
    return out;
  }
}

/** Tag names as `git ls-remote --tags --refs` reports them, with the commit or tag object each points at. */
export async function listRemoteTags(url: string, timeoutMs: number): Promise<{ tags: string[] } | { error: string }> {
  const r = await execFile('git', ['ls-remote', '--tags', '--refs', '--', url], { env: gitEnv(), timeoutMs });
  if (r.timedOut) return { error: `no answer within ${Math.round(timeoutMs / 1000)} s` };
  if (r.code !== 0) return { error: lastLine(r.stderr) || `git ls-remote exited with ${r.code}` };
  const tags = r.stdout
    .toString()
    .split('\n')
    .map((l) => /^[0-9a-f]+\trefs\/tags\/(.+)$/.exec(l)?.[1])
    .filter((t): t is string => t !== undefined);
  return { tags };
}

export interface GitAccess {
  /** Where tags fetched from network remotes are kept. */
  cacheDir: string;
  /** Abandon one ls-remote or fetch after this long. */
  timeoutMs: number;
}

const fetching = new Map<string, Promise<void>>();

/**
 * Create the cache's bare repository whole or not at all: `git init` into a
 * private name, then one rename. Two processes initialising the same path in
 * place fail on each other's template files ("File exists"); here the loser of
 * the rename drops its copy and uses the winner's.
 */
async function createBare(dir: string): Promise<void> {
  const isRepo = () => stat(path.join(dir, 'HEAD')).then(() => true, () => false);
  if (await isRepo()) return;
  await mkdir(path.dirname(dir), { recursive: true });
  const tmp = `${dir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const init = await execFile('git', ['init', '--bare', '--quiet', tmp], { env: gitEnv() });
  if (init.code !== 0) {
    await rm(tmp, { recursive: true, force: true });
    throw new TreeError(`cannot create ${dir}: ${lastLine(init.stderr)}`, 'unreachable');
  }
  try {
    await rename(tmp, dir);
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    if (!(await isRepo())) throw new TreeError(`cannot create ${dir}: ${(e as Error).message}`, 'unreachable');
  }
}

async function fetchTag(dir: string, url: string, tag: string, access: GitAccess): Promise<void> {
  const ref = `refs/tags/${tag}`;
  const have = async () => (await git(dir, ['rev-parse', '--verify', '--quiet', `${ref}^{tree}`]).catch(() => undefined))?.code === 0;
  if (await have()) return;
  await createBare(dir);
  for (let attempt = 1; ; attempt++) {
    const f = await git(dir, ['fetch', '--quiet', '--no-tags', '--depth', '1', '--', url, `+${ref}:${ref}`], undefined, access.timeoutMs);
    if (f.code === 0 || (await have())) return;
    // Another process fetching into the same cache holds a lock or rewrote `shallow`.
    if (attempt < 4 && /shallow file has changed|cannot lock ref|Unable to create .*\.lock/i.test(f.stderr)) continue;
    const why = f.timedOut ? `no answer within ${Math.round(access.timeoutMs / 1000)} s` : lastLine(f.stderr);
    const missing = /couldn't find remote ref|not our ref/i.test(f.stderr);
    throw new TreeError(missing ? `no tag ${tag} in ${url}` : `cannot fetch ${tag} from ${url}: ${why}`, missing ? 'missing' : 'unreachable');
  }
}

/**
 * The tree of a tag in the repository at `url`: read in place when the URL is
 * a local git directory (a mirror), otherwise fetched once (depth 1, only that
 * tag) into a bare repository under the cache and read from there.
 */
export async function gitTreeAt(url: string, tag: string, label: string, access: GitAccess, subdir?: string): Promise<GitTree> {
  const local = localPath(url);
  if (local !== undefined) {
    const dir = await gitDirAt(local);
    if (!dir) throw new TreeError(`${label.split(' ')[0]}: no git repository at ${local}`, 'unreachable');
    return GitTree.open(dir, tag, label, subdir);
  }
  const dir = path.join(access.cacheDir, 'git', `${cacheName(url)}.git`);
  // One fetch at a time into a cache repository: concurrent shallow fetches
  // trip over each other's `shallow` file. Other processes are retried.
  const previous = fetching.get(dir) ?? Promise.resolve();
  const mine = previous.then(() => fetchTag(dir, url, tag, access));
  fetching.set(dir, mine.catch(() => {}));
  await mine;
  return GitTree.open(dir, tag, label, subdir);
}
