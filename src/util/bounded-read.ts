import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';

/**
 * Reading a file someone else put there — a sysfs tree, a test report, a
 * manifest — without trusting what it is: opened with O_NONBLOCK (a FIFO with
 * no writer must not hold the open), refused unless fstat says it is a
 * regular file (/dev/zero never ends, a FIFO may never answer), and read up
 * to a bound (sysfs and procfs files report sizes that are not their
 * length, so the bound is on what is read, not on what stat says).
 */

export type BoundedRead = { ok: true; data: Buffer } | { ok: false; reason: string; code?: string };

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refusal(st: Stats, maxBytes: number): BoundedRead | undefined {
  if (!st.isFile()) return { ok: false, reason: `${kindOf(st)}, not a regular file` };
  if (st.size > maxBytes) return { ok: false, reason: `larger than ${maxBytes} bytes` };
  return undefined;
}

const failure = (err: unknown): BoundedRead => {
  const e = err as NodeJS.ErrnoException;
  return { ok: false, reason: e.code === 'ENOENT' ? 'no such file' : e.code === 'ELOOP' ? 'a symbolic link loop' : (e.code ?? e.message), ...(e.code ? { code: e.code } : {}) };
};

/** The bytes of a regular file of at most `maxBytes`, read synchronously (a few small sysfs files). */
export function readBoundedSync(file: string, maxBytes: number): BoundedRead {
  let fd: number;
  try {
    fd = openSync(file, FLAGS);
  } catch (err) {
    return failure(err);
  }
  try {
    const refused = refusal(fstatSync(fd), maxBytes);
    if (refused) return refused;
    const buf = Buffer.alloc(Math.min(maxBytes + 1, 64 * 1024));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) return { ok: false, reason: `larger than ${maxBytes} bytes` };
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
    return { ok: true, data: Buffer.concat(chunks, total) };
  } catch (err) {
    return failure(err);
  } finally {
    closeSync(fd);
  }
}

/** The bytes of a regular file of at most `maxBytes` (a report, a manifest file). */
export async function readBounded(file: string, maxBytes: number): Promise<BoundedRead> {
  let handle;
  try {
    handle = await open(file, FLAGS);
  } catch (err) {
    return failure(err);
  }
  try {
    const refused = refusal(await handle.stat(), maxBytes);
    if (refused) return refused;
    const buf = Buffer.alloc(Math.min(maxBytes + 1, 1024 * 1024));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > maxBytes) return { ok: false, reason: `larger than ${maxBytes} bytes` };
      chunks.push(Buffer.from(buf.subarray(0, bytesRead)));
    }
    return { ok: true, data: Buffer.concat(chunks, total) };
  } catch (err) {
    return failure(err);
  } finally {
    await handle.close();
  }
}
