import { strict as assert } from 'node:assert';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { cp, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { memoDir, memoOnContent, memoOnContentSync } from '../../src/util/content-memo.js';
import { fakeHost } from '../gpu/fake-host.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

describe('util: results memoised on file content (gpu list)', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let calls: number;
  beforeEach(async () => {
    dir = await tempDir('rocm-ebuild-memo-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    calls = 0;
  });
  afterEach(() => removeDir(dir));

  const lengthOf = (file: string) => async () => {
    calls++;
    return { size: (await stat(file)).size };
  };

  it('computes once for the same content, and again when the content changes within the same mtime and size', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: 1\n');
    const when = new Date('2026-01-01T00:00:00Z');
    await utimes(file, when, when);
    assert.deepEqual(await memoOnContent('k', null, [file], lengthOf(file), env), { size: 5 });
    assert.deepEqual(await memoOnContent('k', null, [file], lengthOf(file), env), { size: 5 });
    assert.equal(calls, 1);
    // Same size, mtime put back: a key of mtime and size would answer from the old content.
    await writeFile(file, 'x: 2\n');
    await utimes(file, when, when);
    let seen = '';
    await memoOnContent('k', null, [file], async () => ((seen = 'recomputed'), calls++), env);
    assert.equal(seen, 'recomputed');
  });

  it('keys on the loader and its arguments, not only the files', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: 1\n');
    assert.equal(await memoOnContent('k', ['gfx90a'], [file], async () => 'one', env), 'one');
    assert.equal(await memoOnContent('k', ['gfx90a', 'gfx942'], [file], async () => 'two', env), 'two');
    assert.equal(await memoOnContent('other', ['gfx90a'], [file], async () => 'three', env), 'three');
    assert.equal(await memoOnContent('k', ['gfx90a'], [file], async () => 'not called', env), 'one');
  });

  it('the synchronous form shares the rules: computed once per content, a throw stored never, the entry of the asynchronous form read alike', async () => {
    const file = path.join(dir, 'masks.yaml');
    await writeFile(file, 'llvm_slots: []\n');
    const load = () => ((calls++), { slots: 0 });
    assert.deepEqual(memoOnContentSync('masks', [], [file], load, env), { slots: 0 });
    assert.deepEqual(memoOnContentSync('masks', [], [file], load, env), { slots: 0 });
    assert.equal(calls, 1);
    assert.deepEqual(await memoOnContent('masks', [], [file], async () => 'not called', env), { slots: 0 });
    await writeFile(file, 'llvm_slots: [23]\n');
    assert.deepEqual(memoOnContentSync('masks', [], [file], () => ((calls++), { slots: 1 }), env), { slots: 1 });
    assert.equal(calls, 2);
    for (let i = 0; i < 2; i++) assert.throws(() => memoOnContentSync('bad', [], [file], () => ((calls++), assert.fail('masks.yaml:1:1: not a list')), env), /not a list/);
    assert.equal(calls, 4);
  });

  it('stores no failure: a loader that throws throws again, with its own report', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: [\n');
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        memoOnContent('k', null, [file], async () => ((calls++), Promise.reject(new Error('a.yaml:1:5: YAML syntax'))), env),
        /YAML syntax/,
      );
    }
    assert.equal(calls, 2);
  });

  it('stores nothing when a file changed while the loader read it', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: 1\n');
    const during = async () => {
      calls++;
      await writeFile(file, 'x: 22\n');
      return 'made of x: 1';
    };
    assert.equal(await memoOnContent('k', null, [file], during, env), 'made of x: 1');
    await writeFile(file, 'x: 1\n');
    assert.equal(await memoOnContent('k', null, [file], async () => ((calls++), 'fresh'), env), 'fresh');
    assert.equal(calls, 2);
  });

  it('leaves a FIFO, a directory and a missing file to the loader, without waiting on the FIFO', async () => {
    const fifo = path.join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    await mkdir(path.join(dir, 'd.yaml'));
    for (const f of [fifo, path.join(dir, 'd.yaml'), path.join(dir, 'missing.yaml')]) {
      assert.equal(await memoOnContent('k', null, [f], async () => ((calls++), 'refused by the loader'), env), 'refused by the loader');
      assert.equal(await memoOnContent('k', null, [f], async () => ((calls++), 'refused by the loader'), env), 'refused by the loader');
    }
    assert.equal(calls, 6);
  });

  it('ignores and replaces a damaged entry; ROCM_EBUILD_NO_CACHE stores nothing', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: 1\n');
    await memoOnContent('k', null, [file], async () => 'v', env);
    const [entry] = await readdir(memoDir(env));
    await writeFile(path.join(memoDir(env), entry!), '{"format":1,"kind":"k","key":');
    assert.equal(await memoOnContent('k', null, [file], async () => ((calls++), 'v'), env), 'v');
    assert.equal(await memoOnContent('k', null, [file], async () => ((calls++), 'v'), env), 'v');
    assert.equal(calls, 1);
    const off = { ...env, XDG_CACHE_HOME: path.join(dir, 'off'), ROCM_EBUILD_NO_CACHE: '1' };
    await memoOnContent('k', null, [file], async () => 'v', off);
    await assert.rejects(readdir(memoDir(off)), { code: 'ENOENT' });
  });

  it('gpu list sees an edited targets.yaml and devices.yaml on the next run', async () => {
    const manifest = path.join(dir, 'manifest');
    await cp(path.join(root, 'manifest'), manifest, { recursive: true });
    const host = await fakeHost('workstation');
    const run = () => runCli(['gpu', 'list', '--json', '--manifest', manifest, '--version', '6.2.2'], { env: { ...env, ...host.env } });
    const before = await run();
    assert.equal(before.code, 0, before.stderr);
    assert.equal((await run()).stdout, before.stdout, 'the same from the cache');
    const devices = path.join(manifest, 'devices.yaml');
    await writeFile(devices, (await readFile(devices, 'utf8')).replaceAll('name: "', 'name: "Edited '));
    const after = await run();
    assert.equal(after.code, 0, after.stderr + after.stdout);
    assert.match(after.stdout, /Edited /);
    assert.notEqual(after.stdout, before.stdout);
    const targets = path.join(manifest, 'targets.yaml');
    await writeFile(targets, `${await readFile(targets, 'utf8')}\nbogus: true\n`);
    const broken = await run();
    assert.equal(broken.code, 2, broken.stdout);
    assert.match(broken.stdout + broken.stderr, /targets\.yaml.*bogus|bogus.*targets\.yaml/s);
  });

  it('concurrent writers leave one whole entry and no temporary file', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: 1\n');
    const script = `
      const { memoOnContent } = await import(${JSON.stringify(new URL('../../src/util/content-memo.js', import.meta.url).href)});
      const v = await memoOnContent('k', null, [${JSON.stringify(file)}], async () => ({ big: 'y'.repeat(200000) }));
      process.stdout.write(String(v.big.length));`;
    const run = () =>
      promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env, ROCM_EBUILD_NO_CACHE: '' } });
    const outs = await Promise.all(Array.from({ length: 6 }, run));
    for (const o of outs) assert.equal(o.stdout, '200000');
    const left = await readdir(memoDir(env));
    assert.equal(left.length, 1, left.join(' '));
    assert.ok(left[0]!.endsWith('.json'));
    assert.equal(await memoOnContent('k', null, [file], async () => ((calls++), { big: '' }), env).then((v) => (v as { big: string }).big.length), 200000);
    assert.equal(calls, 0);
  });

  it("a killed writer's temporary file stays while it may be a write in progress, and goes once old", async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, 'x: 1\n');
    await memoOnContent('k', null, [file], async () => 'v', env);
    const [entry] = await readdir(memoDir(env));
    // kill -9 between write and rename leaves <entry>.<pid>.<random>.tmp
    const fresh = path.join(memoDir(env), `${entry}.999999.aaaaaaaa.tmp`);
    const stale = path.join(memoDir(env), `${entry}.999998.bbbbbbbb.tmp`);
    await writeFile(fresh, '{"format":1,');
    await writeFile(stale, '{"format":1,');
    const hourAgo = new Date(Date.now() - 3600_000);
    await utimes(stale, hourAgo, hourAgo);
    await writeFile(file, 'x: 2\n'); // a new key: the next run stores, and prunes
    assert.equal(await memoOnContent('k', null, [file], async () => 'w', env), 'w');
    const left = await readdir(memoDir(env));
    assert.ok(left.includes(path.basename(fresh)), 'a recent temporary file may be a concurrent write: kept');
    assert.ok(!left.includes(path.basename(stale)), 'an old one is removed');
  });
});
