import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Deadline } from '../../util/deadline.js';
import { execFile, gitEnv, lastLine } from './exec.js';
import { cacheName, gitDirAt, localPath } from './locations.js';
import { sortPaths, TreeError, type SourceTree } from './source-tree.js';

const git = (gitDir: string, args: string[], input?: string, timeoutMs?: number) =>
  execFile('git', [`--git-dir=${gitDir}`, ...args], { env: gitEnv(), ...(input !== undefined ? { input } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) });

/**
 * Which refs a name may denote: a release tag only (what every legacy
 * release is), or a tag or else a branch (TheRock prepares a release on
 * `release/therock-X.Y` before tagging it).
 */
export type RefKinds = 'tags' | 'tags-or-branches';

/** The full ref names a name may stand for, in the order they are tried: a tag wins over a branch of the same name. */
function refCandidates(name: string, kinds: RefKinds): string[] {
  return kinds === 'tags' ? [`refs/tags/${name}`] : [`refs/tags/${name}`, `refs/heads/${name}`, `refs/remotes/origin/${name}`];
}

/**
 * Whether a name can be asked for as a tag or branch: git's ref-name rules
 * (git-check-ref-format), checked here because the name goes into fetch
 * refspecs and rev-parse arguments. No leading "-" (an option), no "..",
 * no control characters, spaces or any of ~^:?*[\, no "@{", no component
 * starting with "." or ending in ".lock".
 */
export function isRefName(name: string): boolean {
  if (name === '' || name === '@' || name.length > 255 || name.startsWith('-') || name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{|\/\//.test(name)) return false;
  return name.split('/').every((c) => c !== '' && !c.startsWith('.') && !c.endsWith('.lock'));
}

/** What one `ls-tree -r` says about a tree: files with their blobs, and gitlinks (submodule commits). */
interface Listing {
  files: Map<string, string>;
  gitlinks: Map<string, string>;
}

/** A tag's (or a branch's) tree in a git repository, read with ls-tree and one `cat-file --batch`. */
export class GitTree implements SourceTree {
  private listing?: Promise<Listing>;

  private constructor(
    readonly label: string,
    private readonly gitDir: string,
    /** The tree object of the root (the tag's tree, or its subdirectory). */
    private readonly tree: string,
    /** For a partial clone: fetches the blobs a read needs, in one request. */
    private readonly blobs?: PartialBlobs,
    /** The full ref the tree was found at ("refs/tags/rocm-6.3.3", "refs/heads/release/therock-10.0"). */
    readonly ref = '',
  ) {}

  /**
   * The tree of `refs/tags/<tag>` (or its `subdir`); with `kinds`
   * 'tags-or-branches' a branch of that name is taken when no tag has it.
   * TreeError 'missing' when the repository lacks the ref or the directory.
   */
  static async open(gitDir: string, tag: string, label: string, subdir?: string, blobs?: PartialBlobs, kinds: RefKinds = 'tags'): Promise<GitTree> {
    const what = kinds === 'tags' ? 'tag' : 'tag or branch';
    if (!isRefName(tag)) throw new TreeError(`${JSON.stringify(tag)} is not a valid ${what} name`, 'missing');
    let tree = '';
    let ref = '';
    for (const candidate of refCandidates(tag, kinds)) {
      const r = await git(gitDir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${candidate}^{tree}`]);
      if (r.code === 0) {
        tree = r.stdout.toString().trim();
        ref = candidate;
        break;
      }
    }
    if (!ref) throw new TreeError(`no ${what} ${tag} in ${label.split(' ')[0]}`, 'missing');
    if (subdir) {
      // ls-tree of the parent names the entry's type without reading it (a blob of a partial clone is not fetched).
      const parent = path.posix.dirname(subdir);
      const ls = await git(gitDir, ['ls-tree', '-z', '--end-of-options', parent === '.' ? tree : `${tree}:${parent}`, '--', path.posix.basename(subdir)]);
      const m = /^\d+ (\w+) ([0-9a-f]+)\t/.exec(ls.stdout.toString('utf8'));
      if (ls.code !== 0 || m?.[1] !== 'tree') throw new TreeError(`${label} has no directory ${subdir}`, 'missing');
      tree = m[2]!;
    }
    return new GitTree(subdir ? `${label}:${subdir}` : label, gitDir, tree, blobs, ref);
  }

  /** The commit the ref points at (a tag peeled to its commit). */
  async commit(): Promise<string> {
    const r = await git(this.gitDir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${this.ref}^{commit}`]);
    if (r.code !== 0) throw new TreeError(`${this.label} is not a commit`, 'missing');
    return r.stdout.toString().trim();
  }

  /** Every file with its blob's name, and every gitlink with its commit, from the trees alone. */
  private list(): Promise<Listing> {
    this.listing ??= (async () => {
      const r = await git(this.gitDir, ['ls-tree', '-r', '-z', this.tree]);
      if (r.code !== 0) throw new TreeError(`cannot list ${this.label}: ${lastLine(r.stderr)}`, 'unreachable');
      const files = new Map<string, string>();
      const gitlinks = new Map<string, string>();
      for (const line of r.stdout.toString('utf8').split('\0')) {
        const m = /^(\d+) (\w+) ([0-9a-f]+)\t([\s\S]+)$/.exec(line);
        if (!m) continue;
        // A gitlink names a commit of another repository: listed as before, but never a blob to fetch or read.
        if (m[2] === 'commit') gitlinks.set(m[4]!, m[3]!);
        files.set(m[4]!, m[3]!);
      }
      return { files, gitlinks };
    })();
    return this.listing;
  }

  private async entries(): Promise<Map<string, string>> {
    return (await this.list()).files;
  }

  async files(): Promise<string[]> {
    return sortPaths([...(await this.entries()).keys()]);
  }

  /** The submodule commits the tree pins (mode 160000 entries), by path. */
  async gitlinks(): Promise<Map<string, string>> {
    return new Map((await this.list()).gitlinks);
  }

  /**
   * The size in bytes of each of these files, without reading them (for a
   * partial clone their blobs are fetched first, in one request): what a
   * reader checks before it lets a file of unknown origin into memory.
   */
  async sizes(paths: string[]): Promise<Map<string, number>> {
    const { files, gitlinks } = await this.list();
    const wanted = [...new Set(paths)].filter((p) => files.has(p) && !gitlinks.has(p));
    const out = new Map<string, number>();
    if (wanted.length === 0) return out;
    if (this.blobs) await this.blobs.ensure(wanted.map((p) => files.get(p)!));
    const r = await git(this.gitDir, ['cat-file', '--batch-check=%(objecttype) %(objectsize)'], wanted.map((p) => `${files.get(p)!}\n`).join(''));
    if (r.code !== 0) throw new TreeError(`cannot read ${this.label}: ${lastLine(r.stderr)}`, 'unreachable');
    const lines = r.stdout.toString().split('\n');
    wanted.forEach((p, i) => {
      const m = /^blob (\d+)$/.exec(lines[i] ?? '');
      if (m) out.set(p, Number(m[1]));
    });
    return out;
  }

  /**
   * A file of the tree read as git configuration (`git config --blob`), never
   * written anywhere and with include directives ignored: how .gitmodules is
   * read without `git submodule`, which would act on what it says. Entries as
   * git reports them (`--null`: key, newline, value), or the reason git gave.
   */
  async configOf(file: string): Promise<{ entries: [string, string][] } | { error: string }> {
    const { files, gitlinks } = await this.list();
    const oid = files.get(file);
    if (oid === undefined || gitlinks.has(file)) return { error: `${file} is not a file of ${this.label}` };
    if (this.blobs) await this.blobs.ensure([oid]);
    const r = await git(this.gitDir, ['config', '--no-includes', '--null', '--list', '--blob', oid]);
    if (r.code !== 0) return { error: lastLine(r.stderr) || `git config exited with ${r.code}` };
    const entries: [string, string][] = [];
    for (const item of r.stdout.toString('utf8').split('\0')) {
      if (item === '') continue;
      const nl = item.indexOf('\n');
      entries.push(nl < 0 ? [item, ''] : [item.slice(0, nl), item.slice(nl + 1)]);
    }
    return { entries };
  }

  /** Bytes this tree's reads fetched from the network (packs of a partial clone); 0 when read in place. */
  transferred(): number {
    return this.blobs?.bytes ?? 0;
  }

  async read(paths: string[]): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    // cat-file reads one object name per line: a path with a newline cannot be asked for.
    const wanted = [...new Set(paths)].filter((p) => p !== '' && !p.includes('\n'));
    if (wanted.length === 0) return out;
    if (this.blobs) {
      const { files, gitlinks } = await this.list();
      await this.blobs.ensure(wanted.filter((p) => !gitlinks.has(p)).map((p) => files.get(p)).filter((o): o is string => o !== undefined));
    }
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

/** The size of the packs a repository holds: what the fetches into it transferred (fetch.unpackLimit=1 keeps every fetch a pack). */
async function packBytes(gitDir: string): Promise<number> {
  const dir = path.join(gitDir, 'objects', 'pack');
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('.pack'));
  const sizes = await Promise.all(names.map((n) => stat(path.join(dir, n)).then((s) => s.size, () => 0)));
  return sizes.reduce((a, b) => a + b, 0);
}

const PROMISOR = 'origin';

/**
 * The blobs of a partial clone (trees fetched, blobs left on the server):
 * what a read needs is fetched in one request, never one object at a time,
 * and never twice. A monorepo's project is read this way: a few build files
 * of one directory, not the hundreds of megabytes of the whole tag.
 */
export class PartialBlobs {
  /** Bytes fetched for blobs, by this object. */
  bytes = 0;
  private present?: Promise<Set<string>>;

  constructor(
    private readonly gitDir: string,
    private readonly access: GitAccess,
    /** Bytes the tag's trees took, counted once per process. */
    treeBytes: number,
  ) {
    this.bytes = treeBytes;
  }

  async ensure(oids: string[]): Promise<void> {
    // Listing the objects at hand never fetches (asking for one object of a promisor repository would).
    this.present ??= git(this.gitDir, ['cat-file', '--batch-all-objects', '--batch-check=%(objectname)']).then(
      (r) => new Set(r.stdout.toString().split('\n').filter(Boolean)),
    );
    const present = await this.present;
    const missing = [...new Set(oids)].filter((o) => !present.has(o));
    if (missing.length === 0) return;
    const before = await packBytes(this.gitDir);
    const f = await execFile(
      'git',
      [`--git-dir=${this.gitDir}`, '-c', 'fetch.negotiationAlgorithm=noop', '-c', 'fetch.unpackLimit=1',
        'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', '--filter=blob:none', '--stdin', PROMISOR],
      { env: gitEnv(), input: `${missing.join('\n')}\n`, timeoutMs: this.access.deadline.callMs() },
    );
    if (f.code !== 0) {
      const why = f.timedOut ? this.access.deadline.reason() : lastLine(f.stderr);
      throw new TreeError(`cannot fetch ${missing.length} file${missing.length === 1 ? '' : 's'} of ${this.gitDir}: ${why}`, 'unreachable');
    }
    this.bytes += (await packBytes(this.gitDir)) - before;
    for (const o of missing) present.add(o);
  }
}

/** Tag names as `git ls-remote --tags --refs` reports them, with the commit or tag object each points at. */
export async function listRemoteTags(url: string, deadline: Deadline): Promise<{ tags: string[]; commits: Map<string, string> } | { error: string }> {
  const r = await execFile('git', ['ls-remote', '--tags', '--', url], { env: gitEnv(), timeoutMs: deadline.callMs() });
  if (r.timedOut) return { error: deadline.reason() };
  if (r.code !== 0) return { error: lastLine(r.stderr) || `git ls-remote exited with ${r.code}` };
  // Each tag with the commit it points at: an annotated tag's peeled line (tag^{}) names the commit, after the tag object's.
  const commits = new Map<string, string>();
  for (const l of r.stdout.toString().split('\n')) {
    const m = /^([0-9a-f]{40,64})\trefs\/tags\/(.+?)(\^\{\})?$/.exec(l);
    if (!m) continue;
    if (m[3] || !commits.has(m[2]!)) commits.set(m[2]!, m[1]!);
  }
  return { tags: [...commits.keys()], commits };
}

export interface GitAccess {
  /** Where tags fetched from network remotes are kept. */
  cacheDir: string;
  /** What each ls-remote or fetch may take: what is left of the operation's --timeout. */
  deadline: Deadline;
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
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw new TreeError(`cannot create ${dir}: ${lastLine(init.stderr)}`, 'unreachable');
  }
  try {
    await rename(tmp, dir);
  } catch (e) {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    if (!(await isRepo())) throw new TreeError(`cannot create ${dir}: ${(e as Error).message}`, 'unreachable');
  }
}

/**
 * Make the cache repository a partial clone of `url`: git fetches with a
 * filter only from the remote `extensions.partialclone` names, and keeps what
 * it left out fetchable from there.
 */
async function makePartial(dir: string, url: string): Promise<void> {
  for (const [key, value] of [
    ['core.repositoryformatversion', '1'],
    [`remote.${PROMISOR}.url`, url],
    [`remote.${PROMISOR}.promisor`, 'true'],
    [`remote.${PROMISOR}.partialclonefilter`, 'blob:none'],
    ['extensions.partialclone', PROMISOR],
  ] as const) {
    const r = await git(dir, ['config', '--', key, value]);
    if (r.code !== 0) throw new TreeError(`cannot set up ${dir}: ${lastLine(r.stderr)}`, 'unreachable');
  }
}

/** The exit of one shallow fetch of a ref into the cache. */
type FetchOutcome = { ok: true; bytes: number } | { ok: false; missing: boolean; why: string };

/** One shallow fetch of `ref` (depth 1) into the cache, retried while another process holds the cache's locks. */
async function fetchOne(dir: string, url: string, ref: string, access: GitAccess, partial: boolean, have: () => Promise<boolean>): Promise<FetchOutcome> {
  const before = await packBytes(dir);
  const from = partial ? ['--filter=blob:none', '--', PROMISOR] : ['--', url];
  for (let attempt = 1; ; attempt++) {
    const f = await git(dir, ['-c', 'fetch.unpackLimit=1', 'fetch', '--quiet', '--no-tags', '--depth', '1', ...from, `+${ref}:${ref}`], undefined, access.deadline.callMs());
    if (f.code === 0 || (await have())) return { ok: true, bytes: (await packBytes(dir)) - before };
    // Another process fetching into the same cache holds a lock or rewrote `shallow`.
    if (attempt < 4 && /shallow file has changed|cannot lock ref|Unable to create .*\.lock/i.test(f.stderr)) continue;
    const why = f.timedOut ? access.deadline.reason() : lastLine(f.stderr);
    return { ok: false, missing: /couldn't find remote ref|not our ref/i.test(f.stderr), why };
  }
}

/**
 * Fetch one tag (depth 1) into the cache; `partial`: its trees only. With
 * `kinds` 'tags-or-branches', a name no tag has is fetched as a branch, and
 * fetched again on every call (a branch moves; a tag is fetched once).
 * Returns the bytes the fetch transferred.
 */
async function fetchTag(dir: string, url: string, tag: string, access: GitAccess, partial = false, kinds: RefKinds = 'tags'): Promise<number> {
  const exists = (ref: string) => async () => (await git(dir, ['rev-parse', '--verify', '--quiet', `${ref}^{tree}`]).catch(() => undefined))?.code === 0;
  const tagRef = `refs/tags/${tag}`;
  if (await exists(tagRef)()) return 0;
  await createBare(dir);
  if (partial) await makePartial(dir, url);
  const viaTag = await fetchOne(dir, url, tagRef, access, partial, exists(tagRef));
  if (viaTag.ok) return viaTag.bytes;
  if (viaTag.missing && kinds === 'tags-or-branches') {
    const branchRef = `refs/heads/${tag}`;
    // A stale copy of the branch must not pass for what the remote has now.
    const viaBranch = await fetchOne(dir, url, branchRef, access, partial, async () => false);
    if (viaBranch.ok) return viaBranch.bytes;
    if (viaBranch.missing) throw new TreeError(`no tag or branch ${tag} in ${url}`, 'missing');
    throw new TreeError(`cannot fetch ${tag} from ${url}: ${viaBranch.why}`, 'unreachable');
  }
  throw new TreeError(viaTag.missing ? `no tag ${tag} in ${url}` : `cannot fetch ${tag} from ${url}: ${viaTag.why}`, viaTag.missing ? 'missing' : 'unreachable');
}

/**
 * The tree of a tag in the repository at `url`: read in place when the URL is
 * a local git directory (a mirror), otherwise fetched once (depth 1, only that
 * tag) into a bare repository under the cache and read from there. With
 * `kinds` 'tags-or-branches' the name may also be a branch (fetched anew on
 * each call, since it moves).
 */
export async function gitTreeAt(
  url: string,
  tag: string,
  label: string,
  access: GitAccess,
  subdir?: string,
  options: { partial?: boolean; kinds?: RefKinds } = {},
): Promise<GitTree> {
  const kinds = options.kinds ?? 'tags';
  if (!isRefName(tag)) throw new TreeError(`${JSON.stringify(tag)} is not a valid ${kinds === 'tags' ? 'tag' : 'tag or branch'} name`, 'missing');
  const local = localPath(url);
  if (local !== undefined) {
    const dir = await gitDirAt(local);
    if (!dir) throw new TreeError(`${label.split(' ')[0]}: no git repository at ${local}`, 'unreachable');
    return GitTree.open(dir, tag, label, subdir, undefined, kinds);
  }
  const dir = path.join(access.cacheDir, 'git', `${cacheName(url)}.git`);
  // One fetch at a time into a cache repository: concurrent shallow fetches
  // trip over each other's `shallow` file. Other processes are retried.
  const previous = fetching.get(dir) ?? Promise.resolve();
  const partial = options.partial === true;
  const mine = previous.then(() => fetchTag(dir, url, tag, access, partial, kinds));
  fetching.set(dir, mine.then(() => {}, () => {}));
  const treeBytes = await mine;
  return GitTree.open(dir, tag, label, subdir, partial ? new PartialBlobs(dir, access, treeBytes) : undefined, kinds);
}
