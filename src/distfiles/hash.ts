import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HashCache, type Digests } from './hash-cache.js';
import { HashPool } from './hash-pool.js';
import type { FileStamp } from './hash-protocol.js';
import { stampOf } from './file-stamp.js';
import { defaultHashCacheFile } from './locations.js';
import type { ManifestEntry } from './types.js';

export interface Hashed {
  entry: ManifestEntry;
  /** The stamp of the bytes the digests describe. */
  stamp: FileStamp;
  /** Set when the file was actually read (not answered from the cache). */
  readStartMs?: number;
  cached: boolean;
}

export interface HasherOptions {
  cacheFile?: string | false;
  concurrency?: number;
}

/** The hash pool and the hash cache together: the one way files get hashed. */
export class Hasher {
  private constructor(
    private readonly pool: HashPool,
    readonly cache: HashCache,
  ) {}

  static async open(options: HasherOptions = {}): Promise<Hasher> {
    const cacheFile = options.cacheFile === undefined ? defaultHashCacheFile() : options.cacheFile;
    return new Hasher(new HashPool(options.concurrency), await HashCache.load(cacheFile));
  }

  /**
   * Digests of `filePath`, named `name` in the entry. `useCache: false` always
   * reads (a download still under its .partial name, a re-check after a
   * mismatch) and records nothing; `refresh: true` always reads and records
   * what it read (a forced re-check of a distfile).
   */
  async hash(filePath: string, options: { name?: string; useCache?: boolean; refresh?: boolean } = {}): Promise<Hashed> {
    const st = await fs.stat(filePath, { bigint: true });
    return this.hashStated(filePath, stampOf(st), options);
  }

  /**
   * Several files at once. All are stat'ed before any is queued, so the pool
   * sees the whole set and can start the largest first.
   */
  async hashMany(filePaths: string[]): Promise<Hashed[]> {
    const stamps = await Promise.all(filePaths.map(async (p) => stampOf(await fs.stat(p, { bigint: true }))));
    const order = filePaths.map((_, i) => i).sort((a, b) => Number(BigInt(stamps[b]!.size) - BigInt(stamps[a]!.size)));
    const results: Promise<Hashed>[] = new Array(filePaths.length);
    for (const i of order) results[i] = this.hashStated(filePaths[i]!, stamps[i]!, {});
    return Promise.all(results);
  }

  private async hashStated(
    filePath: string,
    stamp: FileStamp,
    options: { name?: string; useCache?: boolean; refresh?: boolean },
  ): Promise<Hashed> {
    const name = options.name ?? path.basename(filePath);
    const useCache = options.useCache ?? true;
    if (useCache && !options.refresh) {
      const cached = this.cache.get(filePath, stamp);
      if (cached) return { entry: { name, size: Number(stamp.size), ...cached }, stamp, cached: true };
    }
    const out = await this.pool.hash(filePath, Number(stamp.size));
    if (useCache) this.cache.set(filePath, out.stamp, out, out.readStartMs);
    return {
      entry: { name, size: out.size, blake2b: out.blake2b, sha512: out.sha512 },
      stamp: out.stamp,
      readStartMs: out.readStartMs,
      cached: false,
    };
  }

  record(filePath: string, stamp: FileStamp, digests: Digests, readStartMs: number): void {
    this.cache.set(filePath, stamp, digests, readStartMs);
  }

  forget(filePath: string): void {
    this.cache.forget(filePath);
  }

  async close(): Promise<void> {
    try {
      await this.cache.save();
    } finally {
      await this.pool.close();
    }
  }
}

/**
 * BLAKE2B and SHA512 of each file, one read per file, files spread over the
 * cores. Keys of the result are the paths as given; an unreadable file rejects
 * the whole call (callers that need per-file outcomes use ensureDistfiles).
 */
export async function hashFiles(
  paths: string[],
  options: { cacheFile?: string | false; concurrency?: number } = {},
): Promise<Map<string, ManifestEntry>> {
  const hasher = await Hasher.open(options);
  try {
    const unique = [...new Set(paths)];
    const results = await hasher.hashMany(unique);
    return new Map(unique.map((p, i) => [p, results[i]!.entry]));
  } finally {
    await hasher.close();
  }
}
