import { randomFillSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const BENCH_ROOT = process.env.ROCM_EBUILD_BENCH_DIR ?? path.join(os.tmpdir(), 'rocm-ebuild-bench');

/**
 * Files of the given sizes (bytes) under BENCH_ROOT/<name>, filled with random
 * bytes (incompressible, like tarballs). Files already there at the right size
 * are reused, so repeated runs do not rewrite a gigabyte.
 */
/** Write `size` random bytes to `file`, unless it already has that size (kept between runs). */
export async function fillRandom(file: string, size: number): Promise<void> {
  const st = await fs.stat(file).catch(() => undefined);
  if (st?.size === size) return;
  const block = Buffer.allocUnsafe(1 << 20);
  const handle = await fs.open(file, 'w');
  try {
    for (let written = 0; written < size; ) {
      const n = Math.min(block.length, size - written);
      randomFillSync(block, 0, n);
      await handle.write(block, 0, n);
      written += n;
    }
  } finally {
    await handle.close();
  }
}

export async function dataset(name: string, sizes: number[]): Promise<string[]> {
  const dir = path.join(BENCH_ROOT, name);
  await fs.mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const [i, size] of sizes.entries()) {
    const file = path.join(dir, `file-${String(i).padStart(2, '0')}-${size}.tar.gz`);
    files.push(file);
    await fillRandom(file, size);
  }
  return files;
}

/** Reads every file once so timings see a warm page cache, as after a download. */
export async function warm(files: string[]): Promise<void> {
  const block = Buffer.allocUnsafe(1 << 20);
  for (const file of files) {
    const handle = await fs.open(file, 'r');
    try {
      while ((await handle.read(block, 0, block.length, null)).bytesRead > 0);
    } finally {
      await handle.close();
    }
  }
}

export function cleanup(): Promise<void> {
  if (process.env.BENCH_KEEP) return Promise.resolve();
  return fs.rm(BENCH_ROOT, { recursive: true, force: true });
}
