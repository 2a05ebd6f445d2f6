import { promises as fs } from 'node:fs';
import path from 'node:path';
import { readBounded } from '../../util/bounded-read.js';

/**
 * A directory on this machine that someone else filled — a ::gentoo checkout,
 * a spack-packages clone — read without trusting it: every path stays inside
 * the tree (a symbolic link that leads out of it is refused, not followed),
 * only regular files are read (a FIFO, a device or a socket is refused before
 * it can block), each file is bounded in size, and text must be UTF-8. A
 * refusal is a LocalDirError naming the file (and, for bad UTF-8, the line
 * and column of the first bad byte), so the command can stop before it writes
 * anything.
 */

export class LocalDirError extends Error {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message);
    this.name = 'LocalDirError';
  }
}

/** Recipes and patches are small; a file larger than this is not one. */
export const MAX_PEER_FILE_BYTES = 4 * 1024 * 1024;
/** Entries read from one directory at most (a package directory holds a few dozen). */
const MAX_ENTRIES = 20_000;

export interface DirEntry {
  name: string;
  kind: 'file' | 'dir' | 'other';
}

/** Where the first byte that is not UTF-8 sits, as 1-based line and column (in characters before it), or undefined. */
export function firstBadUtf8(data: Buffer): { offset: number; line: number; column: number } | undefined {
  let i = 0;
  let line = 1;
  let column = 1;
  while (i < data.length) {
    const b = data[i]!;
    let need = 0;
    let min = 0;
    if (b >= 0xc2 && b <= 0xdf) [need, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [need, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [need, min] = [3, 0x10000];
    else if (b >= 0x80) return { offset: i, line, column };
    let cp = need === 0 ? b : b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = data[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return { offset: i, line, column };
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return { offset: i, line, column };
    if (b === 0x0a) {
      line++;
      column = 1;
    } else column++;
    i += need + 1;
  }
  return undefined;
}

export class LocalDir {
  private constructor(
    /** The tree's root, its symbolic links resolved. */
    readonly root: string,
    /** The root as the user named it, for messages. */
    readonly label: string,
  ) {}

  /** Opens a directory tree; throws LocalDirError when it is not a readable directory. */
  static async open(dir: string): Promise<LocalDir> {
    const real = await fs.realpath(dir).catch((err: NodeJS.ErrnoException) => {
      throw new LocalDirError(`${dir}: cannot read it (${err.code ?? err.message})`, dir);
    });
    const st = await fs.stat(real);
    if (!st.isDirectory()) throw new LocalDirError(`${dir} is not a directory`, dir);
    return new LocalDir(real, dir);
  }

  /** The path a message names: the label joined with the relative path. */
  display(rel: string): string {
    return path.join(this.label, rel);
  }

  /** The real path of `rel`, refused when it leaves the tree; undefined when nothing is there. */
  private async inside(rel: string): Promise<string | undefined> {
    if (path.isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) throw new LocalDirError(`${rel} is not a path inside ${this.label}`, this.display(rel));
    const joined = path.join(this.root, rel);
    let real: string;
    try {
      real = await fs.realpath(joined);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOENT') {
        // A dangling link is named as a link, not as a missing file.
        const link = await fs.lstat(joined).catch(() => undefined);
        if (link?.isSymbolicLink()) {
          const to = await fs.readlink(joined).catch(() => '?');
          throw new LocalDirError(`${this.display(rel)} is a symbolic link to ${to}, which does not exist; a peer tree is read only inside itself`, this.display(rel));
        }
        return undefined;
      }
      if (e.code === 'ENOTDIR') return undefined;
      throw new LocalDirError(`${this.display(rel)}: cannot read it (${e.code === 'ELOOP' ? 'a symbolic link loop' : (e.code ?? e.message)})`, this.display(rel));
    }
    const back = path.relative(this.root, real);
    if (back.startsWith('..') || path.isAbsolute(back)) {
      const to = await fs.readlink(joined).catch(() => real);
      throw new LocalDirError(`${this.display(rel)} leads out of the tree (a symbolic link to ${to}); a peer tree is read only inside itself: remove the link or copy the file in`, this.display(rel));
    }
    return real;
  }

  /** The entries of a directory, sorted by name; undefined when it is not a directory of the tree. */
  async list(rel: string): Promise<DirEntry[] | undefined> {
    const real = await this.inside(rel);
    if (real === undefined) return undefined;
    const st = await fs.stat(real);
    if (!st.isDirectory()) return undefined;
    const dir = await fs.opendir(real);
    const out: DirEntry[] = [];
    for await (const e of dir) {
      if (out.length >= MAX_ENTRIES) throw new LocalDirError(`${this.display(rel)} holds more than ${MAX_ENTRIES} entries; it is not a package directory`, this.display(rel));
      out.push({ name: e.name, kind: e.isFile() ? 'file' : e.isDirectory() ? 'dir' : e.isSymbolicLink() ? await this.kindThroughLink(path.join(rel, e.name)) : 'other' });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private async kindThroughLink(rel: string): Promise<DirEntry['kind']> {
    const real = await this.inside(rel);
    if (real === undefined) return 'other';
    const st = await fs.stat(real);
    return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
  }

  /** Whether a regular file (or a directory) is at `rel`. */
  async exists(rel: string): Promise<boolean> {
    return (await this.inside(rel)) !== undefined;
  }

  /** A file's text: a regular file inside the tree, at most `maxBytes`, valid UTF-8. */
  async readText(rel: string, maxBytes = MAX_PEER_FILE_BYTES): Promise<string> {
    const shown = this.display(rel);
    const real = await this.inside(rel);
    if (real === undefined) throw new LocalDirError(`${shown}: no such file`, shown);
    const r = await readBounded(real, maxBytes);
    if (!r.ok) throw new LocalDirError(`${shown}: cannot read it (${r.reason}); a peer tree holds recipes and patches, regular files of at most ${maxBytes} bytes`, shown);
    const bad = firstBadUtf8(r.data);
    if (bad) {
      throw new LocalDirError(`${shown}:${bad.line}:${bad.column}: not UTF-8 (byte 0x${r.data[bad.offset]!.toString(16).padStart(2, '0')} at offset ${bad.offset}); recipes are read as UTF-8 text`, shown);
    }
    return r.data.toString('utf8');
  }
}
