import { parentPort } from 'node:worker_threads';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { HashJob, HashOutcome, HashReply } from './hash-protocol.js';
import { stampOf } from './file-stamp.js';

/*
 * Runs in a worker thread: reads a file once and feeds each block to both
 * digests, so one pass over the page cache serves BLAKE2B and SHA512. Reads
 * are synchronous on purpose: this thread has nothing else to do, and it keeps
 * the read and the hashing on one core instead of bouncing through libuv.
 */

// 1 MiB: large enough that syscall overhead vanishes, small enough to stay in L2/L3.
const BLOCK = 1 << 20;
const buffer = Buffer.allocUnsafe(BLOCK);

function hashFile(file: string): HashOutcome {
  const readStartMs = Date.now();
  const fd = openSync(file, 'r');
  try {
    const before = fstatSync(fd, { bigint: true });
    if (!before.isFile()) throw new Error(`${file} is not a regular file`);
    const blake2b = createHash('blake2b512');
    const sha512 = createHash('sha512');
    let total = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, BLOCK, null);
      if (n === 0) break;
      const block = n === BLOCK ? buffer : buffer.subarray(0, n);
      blake2b.update(block);
      sha512.update(block);
      total += n;
    }
    const after = fstatSync(fd, { bigint: true });
    const a = stampOf(before);
    const b = stampOf(after);
    if (a.size !== b.size || a.mtimeNs !== b.mtimeNs || a.ctimeNs !== b.ctimeNs || BigInt(total) !== after.size) {
      throw new Error(`${file} changed while it was being hashed`);
    }
    return { size: total, blake2b: blake2b.digest('hex'), sha512: sha512.digest('hex'), stamp: b, readStartMs };
  } finally {
    closeSync(fd);
  }
}

parentPort!.on('message', (job: HashJob) => {
  let reply: HashReply;
  try {
    reply = { id: job.id, ok: true, ...hashFile(job.path) };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    reply = { id: job.id, ok: false, message: e.message, ...(e.code ? { code: e.code } : {}) };
  }
  parentPort!.postMessage(reply);
});
