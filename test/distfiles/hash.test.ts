import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { hashFiles } from '../../src/distfiles/index.js';
import { Hasher } from '../../src/distfiles/hash.js';
import { RACY_MARGIN_MS } from '../../src/distfiles/hash-cache.js';
import { tempDir } from './support.js';

/** The coreutils tools' own answer: `<hex>  <file>` per line. */
function coreutils(tool: 'b2sum' | 'sha512sum', files: string[]): Map<string, string> {
  const out = execFileSync(tool, files, { encoding: 'utf8' });
  return new Map(out.trim().split('\n').map((l) => {
    const [hex, file] = l.split(/\s+\*?/, 2);
    return [file!, hex!] as const;
  }));
}

async function ageFile(file: string, ms: number): Promise<void> {
  const t = new Date(Date.now() - ms);
  await fs.utimes(file, t, t);
}

describe('distfiles: hashing', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('hash');
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('matches b2sum and sha512sum on files of mixed sizes, block edges included', async () => {
    const sizes = [0, 1, 127, 128, 129, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 * (1 << 20) + 12345, 9_000_001];
    const files = await Promise.all(
      sizes.map(async (size, i) => {
        const file = path.join(dir, `f${i}-${size}.bin`);
        await fs.writeFile(file, randomBytes(size));
        return file;
      }),
    );
    const ours = await hashFiles(files, { cacheFile: false, concurrency: 3 });
    const b2 = coreutils('b2sum', files);
    const sha = coreutils('sha512sum', files);
    for (const [i, file] of files.entries()) {
      const e = ours.get(file)!;
      assert.equal(e.name, path.basename(file));
      assert.equal(e.size, sizes[i]);
      assert.equal(e.blake2b, b2.get(file), `BLAKE2B of ${file}`);
      assert.equal(e.sha512, sha.get(file), `SHA512 of ${file}`);
    }
  });

  it('rejects when a file cannot be read, naming it', async () => {
    await assert.rejects(hashFiles([path.join(dir, 'absent')], { cacheFile: false }), /absent/);
  });

  describe('hash cache', () => {
    it('answers a settled file from the cache and sees a change in content', async () => {
      const file = path.join(dir, 'settled.tar.gz');
      const cacheFile = path.join(dir, 'cache.json');
      await fs.writeFile(file, randomBytes(5000));
      await ageFile(file, 60_000);

      let h = await Hasher.open({ cacheFile });
      const first = await h.hash(file);
      await h.close();
      assert.equal(first.cached, false);

      h = await Hasher.open({ cacheFile });
      const second = await h.hash(file);
      assert.equal(second.cached, true);
      assert.deepEqual(second.entry, first.entry);
      await h.close();

      // Same size, new bytes, mtime put back by hand: ctime still tells.
      const st = await fs.stat(file);
      await fs.writeFile(file, randomBytes(5000));
      await fs.utimes(file, st.atime, st.mtime);
      h = await Hasher.open({ cacheFile });
      const third = await h.hash(file);
      await h.close();
      assert.equal(third.cached, false);
      assert.notEqual(third.entry.blake2b, first.entry.blake2b);
      assert.equal(third.entry.blake2b, coreutils('b2sum', [file]).get(file));
    });

    it('does not keep racy entries (mtime within the timestamp margin of the read)', async () => {
      const file = path.join(dir, 'fresh.tar.gz');
      const cacheFile = path.join(dir, 'cache.json');
      await fs.writeFile(file, randomBytes(100));
      let h = await Hasher.open({ cacheFile });
      await h.hash(file);
      await h.close();
      h = await Hasher.open({ cacheFile });
      assert.equal((await h.hash(file)).cached, false, 'a file written just now is read again');
      await h.close();
      await ageFile(file, 2 * RACY_MARGIN_MS);
      h = await Hasher.open({ cacheFile });
      await h.hash(file);
      await h.close();
      h = await Hasher.open({ cacheFile });
      assert.equal((await h.hash(file)).cached, true);
      await h.close();
    });

    it('survives a corrupt cache file and rewrites it', async () => {
      const file = path.join(dir, 'a.bin');
      const cacheFile = path.join(dir, 'cache.json');
      await fs.writeFile(file, 'hello');
      await ageFile(file, 60_000);
      await fs.writeFile(cacheFile, '{ not json');
      const map = await hashFiles([file], { cacheFile });
      assert.equal(map.get(file)!.blake2b, coreutils('b2sum', [file]).get(file));
      const saved = JSON.parse(await fs.readFile(cacheFile, 'utf8')) as { version: number; entries: object };
      assert.equal(saved.version, 1);
      assert.ok(Object.keys(saved.entries).includes(path.resolve(file)));
    });

    it('ignores a tampered entry without discarding the others', async () => {
      const a = path.join(dir, 'a.bin');
      const b = path.join(dir, 'b.bin');
      const cacheFile = path.join(dir, 'cache.json');
      await fs.writeFile(a, 'aaa');
      await fs.writeFile(b, 'bbb');
      await ageFile(a, 60_000);
      await ageFile(b, 60_000);
      await hashFiles([a, b], { cacheFile });
      const data = JSON.parse(await fs.readFile(cacheFile, 'utf8')) as { entries: { [k: string]: { blake2b: string } } };
      data.entries[path.resolve(a)]!.blake2b = 'not hex';
      await fs.writeFile(cacheFile, JSON.stringify(data));
      const h = await Hasher.open({ cacheFile });
      assert.equal((await h.hash(a)).cached, false);
      assert.equal((await h.hash(b)).cached, true);
      await h.close();
    });

    it('merges with entries another run saved meanwhile', async () => {
      const a = path.join(dir, 'a.bin');
      const b = path.join(dir, 'b.bin');
      const cacheFile = path.join(dir, 'cache.json');
      for (const f of [a, b]) {
        await fs.writeFile(f, f);
        await ageFile(f, 60_000);
      }
      const one = await Hasher.open({ cacheFile });
      const two = await Hasher.open({ cacheFile });
      await one.hash(a);
      await two.hash(b);
      await one.close();
      await two.close();
      const saved = JSON.parse(await fs.readFile(cacheFile, 'utf8')) as { entries: object };
      assert.deepEqual(Object.keys(saved.entries).sort(), [path.resolve(a), path.resolve(b)].sort());
    });
  });
});
