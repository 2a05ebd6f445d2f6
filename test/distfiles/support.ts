import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ManifestEntry } from '../../src/distfiles/index.js';

export async function tempDir(prefix = 'distfiles'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), `rocm-ebuild-${prefix}-`));
}

export function entryOf(name: string, body: Buffer): ManifestEntry {
  return {
    name,
    size: body.length,
    blake2b: createHash('blake2b512').update(body).digest('hex'),
    sha512: createHash('sha512').update(body).digest('hex'),
  };
}

/** Deterministic-looking but distinct content of a given size. */
export function payload(size: number): Buffer {
  return randomBytes(size);
}

/** Everything in the directory, so tests can assert that nothing half-done was left behind. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).sort();
  } catch {
    return [];
  }
}

export const need = (name: string, urls: string[], expected?: ManifestEntry) => ({
  name,
  urls,
  neededBy: [{ atom: 'sci-libs/rocFoo', ebuild: 'rocFoo-6.2.2.ebuild' }],
  ...(expected ? { expected } : {}),
});
