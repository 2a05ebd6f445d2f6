import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { codeCacheDir, DYNAMIC_IMPORT } from '../../src/util/code-cache.js';
import { bin, removeDir, runCli, tempDir } from '../helpers/project.js';

const loader = fileURLToPath(new URL('../../src/util/code-cache.js', import.meta.url));

/**
 * requireWithCodeCache in a new process, as the CLI uses it: within one
 * process V8 keeps what it compiled and would answer from memory, which is
 * not what is under test. The module's export is awaited if it is a function.
 */
async function requireWithCodeCache(file: string, env: NodeJS.ProcessEnv): Promise<{ cache: string; exports: unknown }> {
  const script = `
    const { requireWithCodeCache } = await import(${JSON.stringify(loader)});
    const r = requireWithCodeCache(${JSON.stringify(file)});
    const value = typeof r.exports === 'function' ? await r.exports() : r.exports;
    process.stdout.write(JSON.stringify({ cache: r.cache, exports: value }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ROCM_EBUILD_NO_CACHE: '', ...env } });
  return JSON.parse(stdout) as { cache: string; exports: unknown };
}

describe('util: V8 code cache for the oclif bundle', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(async () => {
    dir = await tempDir('rocm-ebuild-code-cache-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
  });
  afterEach(() => removeDir(dir));

  const entries = async () => (await readdir(codeCacheDir(env)).catch(() => [] as string[])).sort();

  it('compiles once, then V8 takes the cached bytecode', async () => {
    const file = path.join(dir, 'm.cjs');
    await writeFile(file, 'const twice = (n) => 2 * n;\nmodule.exports = { answer: twice(21), dir: __dirname, file: __filename };\n');
    const first = await requireWithCodeCache(file, env);
    assert.equal(first.cache, 'miss');
    assert.deepEqual(first.exports, { answer: 42, dir, file });
    assert.equal((await entries()).length, 1);
    const second = await requireWithCodeCache(file, env);
    assert.equal(second.cache, 'hit');
    assert.deepEqual(second.exports, first.exports);
  });

  it('never hands V8 the bytecode of another source of the same length', async () => {
    // V8 itself only compares the length: keyed on less than the content, this returned 1.
    const file = path.join(dir, 'm.cjs');
    await writeFile(file, 'module.exports = 1;\n');
    assert.equal((await requireWithCodeCache(file, env)).exports, 1);
    await writeFile(file, 'module.exports = 2;\n');
    const again = await requireWithCodeCache(file, env);
    assert.equal(again.exports, 2);
    assert.equal(again.cache, 'miss');
    assert.equal((await entries()).length, 1, 'the entry of the old source is removed');
  });

  it('a damaged or truncated entry is refused by V8, compiled afresh and replaced', async () => {
    const file = path.join(dir, 'm.cjs');
    await writeFile(file, `module.exports = ${JSON.stringify('x'.repeat(5000))}.length;\n`);
    await requireWithCodeCache(file, env);
    const [name] = await entries();
    const entry = path.join(codeCacheDir(env), name!);
    const good = await readFile(entry);
    for (const bad of [Buffer.from('not bytecode'), good.subarray(0, good.length >> 1), Buffer.alloc(0)]) {
      await writeFile(entry, bad);
      const r = await requireWithCodeCache(file, env);
      assert.equal(r.exports, 5000);
      assert.notEqual(r.cache, 'hit');
      assert.equal((await requireWithCodeCache(file, env)).cache, 'hit', 'rewritten whole');
    }
  });

  it('import() works in the loaded code, from the cache too', async () => {
    // vm's own import() throws on Node 20 without --experimental-vm-modules,
    // and the main-context loader constant is lost once code comes from the cache.
    const file = path.join(dir, 'm.cjs');
    await writeFile(file, `module.exports = async () => (await ${DYNAMIC_IMPORT}('node:path')).sep;\n`);
    for (const expected of ['miss', 'hit']) {
      const r = await requireWithCodeCache(file, env);
      assert.equal(r.cache, expected);
      assert.equal(r.exports, path.sep);
    }
  });

  it('ROCM_EBUILD_NO_CACHE reads and writes nothing; an unwritable cache costs only the compile', async () => {
    const file = path.join(dir, 'm.cjs');
    await writeFile(file, 'module.exports = 7;\n');
    assert.equal((await requireWithCodeCache(file, { ...env, ROCM_EBUILD_NO_CACHE: '1' })).cache, 'off');
    assert.deepEqual(await entries(), []);
    if (process.getuid?.() === 0) return; // root writes through a read-only mode
    await mkdir(codeCacheDir(env), { recursive: true });
    await chmod(codeCacheDir(env), 0o500);
    try {
      assert.equal((await requireWithCodeCache(file, env)).exports, 7);
      assert.equal((await requireWithCodeCache(file, env)).cache, 'miss');
    } finally {
      await chmod(codeCacheDir(env), 0o700);
    }
  });

  it('the CLI runs the same on a cold and a warm code cache, and after its entry was damaged', async () => {
    const cliEnv = { XDG_CACHE_HOME: path.join(dir, 'cli-cache') };
    const cold = await runCli(['gpu', 'list', '--help'], { env: cliEnv });
    assert.equal(cold.code, 0, cold.stderr);
    const files = await readdir(codeCacheDir(cliEnv));
    assert.deepEqual(files.map((f) => f.replace(/\.[0-9a-f]{20}\.bin$/, '')), ['oclif-core.cjs'], `${bin} keeps one entry`);
    const warm = await runCli(['gpu', 'list', '--help'], { env: cliEnv });
    assert.equal(warm.stdout, cold.stdout);
    assert.equal(warm.stderr, '');
    await writeFile(path.join(codeCacheDir(cliEnv), files[0]!), 'garbage');
    const damaged = await runCli(['gpu', 'list', '--help'], { env: cliEnv });
    assert.equal(damaged.stdout, cold.stdout);
    assert.equal(damaged.stderr, '');
  });

  it("concurrent cold runs all succeed and leave one whole entry; a killed run's temporary file goes once old", async () => {
    const cliEnv = { XDG_CACHE_HOME: path.join(dir, 'race-cache') };
    const runs = await Promise.all(Array.from({ length: 4 }, () => runCli(['--version'], { env: cliEnv })));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const cacheDir = codeCacheDir(cliEnv);
    const left = await readdir(cacheDir);
    assert.equal(left.filter((f) => f.endsWith('.bin')).length, 1, left.join(' '));
    assert.deepEqual(left.filter((f) => f.endsWith('.tmp')), []);
    assert.equal((await runCli(['--version'], { env: cliEnv })).stderr, '');
    // kill -9 between write and rename leaves <entry>.<pid>.<time>.tmp: kept while it may be a write
    // in progress, removed by the next store once it is older than ten minutes.
    const [entry] = left;
    const fresh = path.join(cacheDir, `${entry}.999999.1.tmp`);
    const stale = path.join(cacheDir, `${entry}.999998.1.tmp`);
    await writeFile(fresh, 'partial');
    await writeFile(stale, 'partial');
    const hourAgo = new Date(Date.now() - 3600_000);
    await utimes(stale, hourAgo, hourAgo);
    await writeFile(path.join(cacheDir, entry!), 'damaged'); // the next run stores again
    assert.equal((await runCli(['--version'], { env: cliEnv })).code, 0);
    const after = await readdir(cacheDir);
    assert.ok(after.includes(path.basename(fresh)), 'a recent temporary file may be a concurrent write: kept');
    assert.ok(!after.includes(path.basename(stale)), 'an old one is removed');
  });
});
