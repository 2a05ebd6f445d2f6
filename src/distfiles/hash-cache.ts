import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { FileStamp } from './hash-protocol.js';

/**
 * Digests of files already read, so a second run over a distdir of several
 * gigabytes does not read it again.
 *
 * An entry is trusted only when the file's (dev, inode, size, mtime, ctime)
 * are exactly those recorded and the entry is not "racy": its mtime must be
 * older than the moment the read began by more than any filesystem's timestamp
 * granularity. Then any later write necessarily moves mtime, and rewriting
 * mtime by hand (utimes) moves ctime. A file modified within a timestamp tick of
 * being hashed could otherwise keep its stamp with new content; such entries
 * are not stored, and the file is simply read again next time (git's
 * racy-clean rule). Downloads get an mtime in the past for this reason.
 */
export const RACY_MARGIN_MS = 3000;

const VERSION = 1;
const MAX_ENTRIES = 20000;

export interface Digests {
  blake2b: string;
  sha512: string;
}

interface Record extends FileStamp, Digests {
  /** When the read began; also orders entries for pruning. */
  readStartMs: number;
}

interface CacheFile {
  version: number;
  entries: { [path: string]: Record };
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

export function isRacy(stamp: FileStamp, readStartMs: number): boolean {
  return BigInt(stamp.mtimeNs) >= BigInt(readStartMs - RACY_MARGIN_MS) * 1_000_000n;
}

function isRecord(value: unknown): value is Record {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as { [k: string]: unknown };
  return (
    ['dev', 'ino', 'size', 'mtimeNs', 'ctimeNs'].every((k) => typeof r[k] === 'string' && /^\d+$/.test(r[k] as string)) &&
    typeof r.blake2b === 'string' &&
    /^[0-9a-f]{128}$/.test(r.blake2b) &&
    typeof r.sha512 === 'string' &&
    /^[0-9a-f]{128}$/.test(r.sha512) &&
    typeof r.readStartMs === 'number'
  );
}

async function readCacheFile(file: string): Promise<Map<string, Record>> {
  const entries = new Map<string, Record>();
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return entries;
  }
  try {
    const data = JSON.parse(text) as Partial<CacheFile>;
    if (data.version !== VERSION || typeof data.entries !== 'object' || data.entries === null) return entries;
    // A damaged or hand-edited entry is dropped on its own; the rest stay useful.
    for (const [p, r] of Object.entries(data.entries)) if (isRecord(r)) entries.set(p, r);
  } catch {
    // A corrupt cache only costs a re-read: start empty and overwrite it on save.
  }
  return entries;
}

export class HashCache {
  private readonly changes = new Map<string, Record | null>();

  private constructor(
    readonly file: string | false,
    private readonly entries: Map<string, Record>,
  ) {}

  static async load(file: string | false): Promise<HashCache> {
    return new HashCache(file, file ? await readCacheFile(file) : new Map());
  }

  get(filePath: string, stamp: FileStamp): Digests | undefined {
    const key = path.resolve(filePath);
    const r = this.entries.get(key);
    if (!r) return undefined;
    if (!sameStamp(r, stamp) || isRacy(r, r.readStartMs)) {
      this.forget(key);
      return undefined;
    }
    return { blake2b: r.blake2b, sha512: r.sha512 };
  }

  /** Remember digests read from `stamp`; racy ones are not kept (see above). */
  set(filePath: string, stamp: FileStamp, digests: Digests, readStartMs: number): void {
    const key = path.resolve(filePath);
    if (isRacy(stamp, readStartMs)) {
      this.forget(key);
      return;
    }
    const record: Record = { ...stamp, blake2b: digests.blake2b, sha512: digests.sha512, readStartMs };
    this.entries.set(key, record);
    this.changes.set(key, record);
  }

  forget(filePath: string): void {
    const key = path.resolve(filePath);
    if (this.entries.delete(key)) this.changes.set(key, null);
  }

  /**
   * Writes our changes over what is on disk now, so two runs sharing the cache
   * lose nothing but each other's races on the same file; write-and-rename
   * keeps a crash from leaving half a cache.
   */
  async save(): Promise<void> {
    if (!this.file || this.changes.size === 0) return;
    const merged = await readCacheFile(this.file);
    for (const [key, record] of this.changes) {
      if (record) merged.set(key, record);
      else merged.delete(key);
    }
    let list = [...merged.entries()];
    if (list.length > MAX_ENTRIES) {
      list = list.sort((a, b) => b[1].readStartMs - a[1].readStartMs).slice(0, MAX_ENTRIES);
    }
    const data: CacheFile = { version: VERSION, entries: Object.fromEntries(list) };
    await fs.mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, `${JSON.stringify(data)}\n`);
    await fs.rename(tmp, this.file);
    this.changes.clear();
  }
}
