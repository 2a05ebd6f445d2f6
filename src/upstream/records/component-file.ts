import { randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { waitForLock } from '../../distfiles/lock.js';
import { MAX_FILE_BYTES } from '../../manifest/yaml-source.js';
import type { EvidenceFact } from '../../manifest/types.js';

/**
 * Writing evidence records into a component's YAML file, for every command
 * that records (`upstream evidence`, `upstream peer`): the record is spliced
 * in as text (the yaml Document API finds where), so every comment and every
 * other byte stays as the maintainer wrote it, and the result is parsed
 * again and compared with what was meant. The file is replaced by rename
 * under a lock beside it: a second process waits and then finds the record
 * there; kill -9 leaves the old file or the new one, never half.
 */

export class RecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordError';
  }
}

export const FACT_ORDER: readonly EvidenceFact[] = ['sources', 'deps', 'cmake', 'targets', 'use', 'fixups', 'offline', 'python', 'tests', 'install', 'license'];

/** A plain YAML scalar when it reads back as the same string, else double-quoted (JSON's escapes are YAML's). */
export function scalar(text: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9 ._/+@,;()-]*$/.test(text) && !/ $/.test(text) && !/^(true|false|null|yes|no|on|off|~)$/i.test(text) ? text : JSON.stringify(text);
}

export const flowList = (items: readonly string[]) => `[${items.join(', ')}]`;

export function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

export function lineEnd(text: string, offset: number): number {
  const nl = text.indexOf('\n', offset);
  return nl < 0 ? text.length : nl + 1;
}

/**
 * Refuses a component file that --record must not replace: a symbolic link
 * (renaming over it would cut the link, and it may point out of the
 * manifest), a file outside the manifest directory, anything but a regular
 * file, or one with other hard links (they would keep the old text).
 */
export async function checkRecordTarget(file: string, manifestDir: string): Promise<void> {
  const st = await fs.lstat(file).catch((err: NodeJS.ErrnoException) => {
    throw new RecordError(`${file}: cannot read it (${err.code ?? err.message})`);
  });
  if (st.isSymbolicLink()) {
    const to = await fs.readlink(file).catch(() => '?');
    throw new RecordError(`${file} is a symbolic link (to ${to}); --record writes only regular files in the manifest directory: record in the file itself`);
  }
  if (!st.isFile()) throw new RecordError(`${file} is not a regular file`);
  if (st.nlink > 1) throw new RecordError(`${file} has ${st.nlink - 1} other hard link(s); replacing it would leave them with the old text`);
  const [dir, root] = await Promise.all([fs.realpath(path.dirname(file)), fs.realpath(manifestDir)]);
  const rel = path.relative(root, dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new RecordError(`${file} is outside the manifest directory ${root} (through a linked directory); --record writes only there`);
  // The file is replaced by a new one renamed over it, with a lock beside it: both need the directory writable,
  // and an immutable file (chattr +i) cannot be replaced even by root. Asked before anything is fetched or read.
  for (const [what, target] of [['it', file], ['its directory', path.dirname(file)]] as const) {
    await fs.access(target, constants.W_OK).catch((err: NodeJS.ErrnoException) => {
      throw notWritable(file, what, err);
    });
  }
}

/** What the file system refuses a writer, as --record's refusal (a UserError), not an internal error. */
const REFUSED_WRITES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT']);

function notWritable(file: string, what: string, err: NodeJS.ErrnoException): RecordError {
  const why =
    err.code === 'EROFS' ? 'a read-only file system' : err.code === 'EPERM' ? 'immutable or append-only' : err.code === 'EACCES' ? 'read-only for you' : (err.code ?? err.message);
  return new RecordError(`${file}: cannot replace ${what} (${why}${err.code && why !== err.code ? `, ${err.code}` : ''}); make the file and its directory writable, or add the record by hand`);
}

/** Runs a write of rewriteComponentFile; the file system's refusals become RecordErrors naming the file. */
async function writing<T>(file: string, what: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (!(err instanceof RecordError) && e.code !== undefined && REFUSED_WRITES.has(e.code)) throw notWritable(file, what, e);
    throw err;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * What writers killed by kill -9 left beside the file, of pids that are gone:
 * ".<name>.<pid>.<random>.tmp" (before its rename) and the lock's own
 * ".<name>.lock.<pid>.<random>" (before it was linked into place).
 */
async function removeLeftovers(dir: string, base: string): Promise<void> {
  const prefix = `.${base}.`;
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    const m = name.startsWith(prefix) ? /^(?:lock\.)?(\d+)\.[0-9a-z]+(?:\.tmp)?$/.exec(name.slice(prefix.length)) : null;
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await fs.rm(path.join(dir, name), { force: true });
  }
}

/**
 * Rewrites a component file under its lock: `edit` gets the text read after
 * the lock is held and returns the new text, or undefined to leave the file
 * as it is ('unchanged').
 */
export async function rewriteComponentFile(file: string, manifestDir: string, edit: (text: string) => string | undefined, onWait?: (holder: string) => void): Promise<'written' | 'unchanged'> {
  await checkRecordTarget(file, manifestDir);
  const dir = path.dirname(file);
  const base = path.basename(file);
  const lock = await writing(file, 'its directory', () => waitForLock(path.join(dir, `.${base}.lock`), { ...(onWait ? { onWait } : {}) }));
  if (!lock.acquired) throw new RecordError(`${file} is being written by ${lock.holder}; nothing was written: run again when it is done`);
  try {
    await removeLeftovers(dir, base);
    // Read without following a link that replaced the file since it was checked.
    const handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
      throw new RecordError(`${file}: cannot read it (${err.code === 'ELOOP' ? 'it became a symbolic link' : (err.code ?? err.message)})`);
    });
    let text: string;
    let mode: number;
    try {
      const st = await handle.stat();
      if (!st.isFile() || st.size > MAX_FILE_BYTES) throw new RecordError(`${file} is not a regular manifest file`);
      mode = st.mode & 0o777;
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    const next = edit(text);
    if (next === undefined) return 'unchanged';
    const tmp = path.join(dir, `.${base}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writing(file, 'it', async () => {
        const out = await fs.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
        try {
          await out.writeFile(next);
          await out.sync();
        } finally {
          await out.close();
        }
        await fs.rename(tmp, file);
      });
    } finally {
      await fs.rm(tmp, { force: true });
    }
    return 'written';
  } finally {
    await lock.release();
  }
}
