import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { CommitInfo, PathChange, Person } from './types.js';

/**
 * Reading a repository for `pr`: raw bytes, no shell, one `git log` for every
 * commit of the range and one `git cat-file --batch` for every object, so a
 * 50-commit range costs two processes instead of hundreds.
 */

export interface GitRunOptions {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /** Exit codes that are not failures (e.g. 1 for `git config --get` of an unset key). */
  okCodes?: number[];
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed${code !== null ? ` (exit ${code})` : ''}: ${stderr.trim() || 'no message'}`);
    this.name = 'GitError';
  }
}

/** Environment for every git call: English messages we can match, no pager, no prompts for reading. */
function gitEnv(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...process.env, LC_ALL: 'C', GIT_PAGER: 'cat', ...extra };
}

export function runGit(dir: string, args: string[], options: GitRunOptions = {}): Promise<{ stdout: Buffer; code: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'core.quotepath=off', ...args], { cwd: dir, env: gitEnv(options.env) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new UserError(`cannot run git: ${e.message}`, ExitCode.invalidInput)));
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      if (code === 0 || (code !== null && options.okCodes?.includes(code))) resolve({ stdout, code: code ?? 0 });
      else reject(new GitError(args, code, Buffer.concat(err).toString('utf8')));
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

export async function gitText(dir: string, args: string[], options: GitRunOptions = {}): Promise<string> {
  return (await runGit(dir, args, options)).stdout.toString('utf8');
}

/** `git rev-parse --verify -q <rev>^{commit}`: the full id, or undefined when there is no such commit. */
export async function resolveCommit(dir: string, rev: string): Promise<string | undefined> {
  if (rev.startsWith('-')) return undefined;
  const r = await runGit(dir, ['rev-parse', '--verify', '-q', '--end-of-options', `${rev}^{commit}`], { okCodes: [1, 128] });
  const id = r.stdout.toString('utf8').trim();
  return r.code === 0 && id ? id : undefined;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

/** Text of a buffer, and whether it was valid UTF-8. */
export function decode(bytes: Buffer): { text: string; utf8: boolean } {
  try {
    return { text: decoder.decode(bytes), utf8: true };
  } catch {
    return { text: lenient.decode(bytes), utf8: false };
  }
}

// One commit: a marker, then fixed fields. The message is the last field; it
// cannot hold a NUL (git stops at one), so NUL separates safely.
const FORMAT = ['%x1e%H', '%P', '%an', '%ae', '%aI', '%cn', '%ce', '%cI', '%e', '%B'].join('%x00');
const RAW = /^\n?:(\d{6}) (\d{6}) ([0-9a-f]{40,64}) ([0-9a-f]{40,64}) ([AMDTRCUX])(\d*)$/;

/**
 * Every commit selected by `revArgs`, parents before children, with the
 * paths each changed (renames found, merges without a diff). Messages are
 * read as bytes: one that is not UTF-8 is kept (lossily) and flagged.
 */
export async function readCommits(dir: string, revArgs: string[]): Promise<CommitInfo[]> {
  const { stdout } = await runGit(dir, [
    '-c', 'i18n.logOutputEncoding=UTF-8',
    'log', '--topo-order', '--reverse', '--no-color', '--no-show-signature', '-z',
    `--format=${FORMAT}`, '--raw', '--no-abbrev', '-M', '--root',
    ...revArgs, '--',
  ]);
  const tokens = splitNul(stdout);
  const commits: CommitInfo[] = [];
  let i = 0;
  while (i < tokens.length) {
    const head = tokens[i]!.toString('utf8');
    if (head === '' && i === tokens.length - 1) break;
    const m = /^\n?\x1e([0-9a-f]{40,64})$/.exec(head);
    if (!m) throw new Error(`unexpected git log output near "${head.slice(0, 40)}"`);
    const field = (k: number) => tokens[i + k]!.toString('utf8');
    const sha = m[1]!;
    const parents = field(1).split(' ').filter(Boolean);
    const author: Person = { name: field(2), email: field(3), date: field(4) };
    const committer: Person = { name: field(5), email: field(6), date: field(7) };
    const encoding = field(8) || undefined;
    const { text, utf8 } = decode(tokens[i + 9]!);
    i += 10;
    const changes: PathChange[] = [];
    for (;;) {
      const raw = tokens[i] ? RAW.exec(tokens[i]!.toString('utf8')) : null;
      if (!raw) break;
      const status = raw[5] as PathChange['status'];
      const pair = status === 'R' || status === 'C';
      const first = tokens[i + 1]!.toString('utf8');
      const change: PathChange = {
        status,
        path: pair ? tokens[i + 2]!.toString('utf8') : first,
        oldMode: raw[1]!,
        newMode: raw[2]!,
        oldBlob: raw[3]!,
        newBlob: raw[4]!,
        ...(pair ? { oldPath: first } : {}),
      };
      changes.push(change);
      i += pair ? 3 : 2;
    }
    commits.push({
      sha,
      short: sha.slice(0, 12),
      parents,
      author,
      committer,
      message: text,
      utf8,
      ...(encoding ? { encoding } : {}),
      changes,
    });
  }
  return commits;
}

function splitNul(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let k = buf.indexOf(0, start); k !== -1; k = buf.indexOf(0, start)) {
    out.push(buf.subarray(start, k));
    start = k + 1;
  }
  out.push(buf.subarray(start));
  return out;
}

export interface TreeEntry {
  mode: string;
  name: string;
  id: string;
  type: 'blob' | 'tree' | 'commit';
}

interface Pending {
  resolve(value: { type: string; content: Buffer } | undefined): void;
  reject(err: Error): void;
}

/**
 * One `git cat-file --batch` serving every object read: blobs by id,
 * `<rev>:<path>` lookups and trees. Requests are answered in order, so they
 * may be issued concurrently; results are cached by request.
 */
export class ObjectReader {
  private child?: ChildProcessWithoutNullStreams;
  private buffer: Buffer = Buffer.alloc(0);
  private readonly queue: Pending[] = [];
  private readonly cache = new Map<string, Promise<{ type: string; content: Buffer } | undefined>>();
  private failed?: Error;
  private hashBytes = 20;

  constructor(private readonly dir: string) {}

  private start(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = spawn('git', ['cat-file', '--batch'], { cwd: this.dir, env: gitEnv() });
    child.stdout.on('data', (d: Buffer) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, d]) : d;
      this.drain();
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const fail = (err: Error) => {
      this.failed = err;
      for (const p of this.queue.splice(0)) p.reject(err);
    };
    child.on('error', fail);
    child.on('close', (code) => {
      if (this.queue.length) fail(new Error(`git cat-file --batch exited (${code}): ${stderr.trim()}`));
    });
    child.stdin.on('error', () => {});
    this.child = child;
    return child;
  }

  private drain(): void {
    for (;;) {
      const p = this.queue[0];
      if (!p) return;
      const nl = this.buffer.indexOf(10);
      if (nl === -1) return;
      const header = this.buffer.subarray(0, nl).toString('utf8');
      const m = /^([0-9a-f]{40,64}) (\S+) (\d+)$/.exec(header);
      if (!m) {
        // "<request> missing" or "<request> ambiguous": nothing follows.
        this.buffer = this.buffer.subarray(nl + 1);
        this.queue.shift();
        p.resolve(undefined);
        continue;
      }
      const size = Number(m[3]);
      if (this.buffer.length < nl + 1 + size + 1) return;
      this.hashBytes = m[1]!.length / 2;
      const content = Buffer.from(this.buffer.subarray(nl + 1, nl + 1 + size));
      this.buffer = this.buffer.subarray(nl + 1 + size + 1);
      this.queue.shift();
      p.resolve({ type: m[2]!, content });
    }
  }

  /** An object by id or `<rev>:<path>`; undefined when missing. */
  read(request: string): Promise<{ type: string; content: Buffer } | undefined> {
    // The batch protocol is line-based: a request with a newline cannot be asked.
    if (/[\n\r]/.test(request)) return Promise.resolve(undefined);
    let hit = this.cache.get(request);
    if (!hit) {
      if (this.failed) return Promise.reject(this.failed);
      const child = this.start();
      hit = new Promise((resolve, reject) => {
        this.queue.push({ resolve, reject });
        child.stdin.write(`${request}\n`);
      });
      this.cache.set(request, hit);
    }
    return hit;
  }

  async blob(request: string): Promise<Buffer | undefined> {
    const o = await this.read(request);
    return o && o.type === 'blob' ? o.content : undefined;
  }

  async text(request: string): Promise<string | undefined> {
    const b = await this.blob(request);
    return b === undefined ? undefined : b.toString('utf8');
  }

  /** A tree's entries (a directory at `<rev>:<path>`), undefined when it is not a directory there. */
  async tree(request: string): Promise<TreeEntry[] | undefined> {
    const o = await this.read(request);
    if (!o || o.type !== 'tree') return undefined;
    const entries: TreeEntry[] = [];
    const buf = o.content;
    let k = 0;
    while (k < buf.length) {
      const sp = buf.indexOf(32, k);
      const nul = buf.indexOf(0, sp);
      const mode = buf.subarray(k, sp).toString('utf8');
      const name = buf.subarray(sp + 1, nul).toString('utf8');
      const id = buf.subarray(nul + 1, nul + 1 + this.hashBytes).toString('hex');
      k = nul + 1 + this.hashBytes;
      entries.push({ mode, name, id, type: mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob' });
    }
    return entries;
  }

  close(): void {
    this.child?.stdin.end();
    this.child = undefined;
  }
}
