import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { HashError, HashPool, prewarmHashWorkers } from '../../src/distfiles/hash-pool.js';
import { entryOf, payload, tempDir } from './support.js';

describe('distfiles: hash pool', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('pool');
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('starts waiting files largest first', async () => {
    const sizes = { first: 1000, small: 10, large: 300_000, medium: 5000 };
    for (const [name, size] of Object.entries(sizes)) await fs.writeFile(path.join(dir, name), payload(size));
    const pool = new HashPool(1);
    const order: string[] = [];
    const job = (name: keyof typeof sizes) => pool.hash(path.join(dir, name), sizes[name]).then(() => order.push(name));
    // `first` takes the only worker; the other three wait and are taken by size.
    await Promise.all([job('first'), job('small'), job('large'), job('medium')]);
    await pool.close();
    assert.deepEqual(order, ['first', 'large', 'medium', 'small']);
  });

  it('reports the stamp of the bytes it read', async () => {
    const body = payload(4321);
    const file = path.join(dir, 'f');
    await fs.writeFile(file, body);
    const pool = new HashPool(2);
    const out = await pool.hash(file);
    await pool.close();
    const st = await fs.stat(file, { bigint: true });
    assert.equal(out.size, 4321);
    assert.equal(out.blake2b, entryOf('f', body).blake2b);
    assert.deepEqual(out.stamp, {
      dev: st.dev.toString(),
      ino: st.ino.toString(),
      size: '4321',
      mtimeNs: st.mtimeNs.toString(),
      ctimeNs: st.ctimeNs.toString(),
    });
  });

  it('rejects a directory and a missing file, and keeps working', async () => {
    const pool = new HashPool(1);
    await assert.rejects(pool.hash(dir), (err: unknown) => err instanceof HashError && /not a regular file/.test(err.message));
    await assert.rejects(pool.hash(path.join(dir, 'nope')), (err: unknown) => err instanceof HashError && err.code === 'ENOENT');
    await fs.writeFile(path.join(dir, 'ok'), 'ok');
    assert.equal((await pool.hash(path.join(dir, 'ok'))).size, 2);
    await pool.close();
  });

  it('rejects work after close', async () => {
    const pool = new HashPool(1);
    await pool.close();
    await assert.rejects(pool.hash(path.join(dir, 'x')), /closed/);
  });

  it('adopts workers started ahead of need, and hashes the same with them', async () => {
    const body = payload(70_000);
    await fs.writeFile(path.join(dir, 'a'), body);
    prewarmHashWorkers(2);
    const pool = new HashPool(2);
    try {
      const [x, y] = await Promise.all([pool.hash(path.join(dir, 'a')), pool.hash(path.join(dir, 'a'))]);
      const want = entryOf('a', body);
      for (const r of [x!, y!]) assert.deepEqual({ blake2b: r.blake2b, sha512: r.sha512 }, { blake2b: want.blake2b, sha512: want.sha512 });
    } finally {
      await pool.close();
    }
  });

  it('parked workers never keep a process alive, used or not', async () => {
    // A command that prewarms and then fails before hashing must still exit.
    const module = JSON.stringify(new URL('../../src/distfiles/hash-pool.js', import.meta.url).href);
    const started = Date.now();
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', `const m = await import(${module}); m.prewarmHashWorkers(2); console.log('done');`], {
      timeout: 20_000,
    });
    assert.equal(stdout.trim(), 'done');
    assert.ok(Date.now() - started < 20_000);
  });
});
