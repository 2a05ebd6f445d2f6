import { strict as assert } from 'node:assert';
import { cp, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { manifestCacheFile, readCachedManifest } from '../../src/stack-check/cache.js';
import { loadManifestOrFail, stackFor } from '../../src/stack-check/index.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

/**
 * The cache of checked manifests must never answer for files that changed:
 * every kind of change is made here and must be seen, by the next load and
 * by the CLI.
 */
describe('manifest cache', function () {
  this.timeout(180_000);
  let dir: string;
  let cacheHome: string;
  let stackFile: string;
  const savedXdg = process.env.XDG_CACHE_HOME;
  const env = () => ({ XDG_CACHE_HOME: cacheHome });

  beforeEach(async () => {
    dir = await tempDir('rocm-ebuild-cache-');
    cacheHome = path.join(dir, 'cache');
    await cp(path.join(root, 'manifest'), path.join(dir, 'manifest'), { recursive: true });
    stackFile = path.join(dir, 'manifest', 'stack.yaml');
    process.env.XDG_CACHE_HOME = cacheHome;
  });
  afterEach(async () => {
    if (savedXdg === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedXdg;
    await removeDir(dir);
  });

  /** Loads once so the cache holds an entry, and checks it answers for the unchanged files. */
  async function primed(): Promise<void> {
    await loadManifestOrFail(stackFile);
    assert.ok((await readCachedManifest(stackFile)) !== undefined, 'a checked manifest is stored');
  }

  it('lives under $XDG_CACHE_HOME/rocm-ebuild and gives what a load gives', async () => {
    const fresh = await loadManifestOrFail(stackFile);
    assert.ok(manifestCacheFile(stackFile).startsWith(path.join(cacheHome, 'rocm-ebuild', 'manifest') + path.sep));
    const hit = await readCachedManifest(stackFile);
    assert.ok(hit);
    // Same data, same sources (their parse trees rebuilt on demand), same model.
    assert.deepEqual(JSON.parse(JSON.stringify(hit.manifest, (k, v) => (k === 'doc' || k === 'lines' ? undefined : v))), JSON.parse(JSON.stringify(fresh, (k, v) => (k === 'doc' || k === 'lines' ? undefined : v))));
    assert.equal(hit.manifest.components[0]!.source.doc.toString(), fresh.components[0]!.source.doc.toString());
    assert.deepEqual(hit.manifest.components[0]!.source.lines.lineStarts, fresh.components[0]!.source.lines.lineStarts);
    const [a, b] = [await stackFor(hit.manifest, '6.2.2'), await stackFor(fresh, '6.2.2')];
    assert.deepEqual(a.components.map((c) => [c.atom, c.version, c.targets]), b.components.map((c) => [c.atom, c.version, c.targets]));
  });

  it('sees an edit, even one that keeps the size and the modification time', async () => {
    await primed();
    const file = path.join(dir, 'manifest', 'components', 'rocPRIM.yaml');
    const before = await stat(file);
    const text = await readFile(file, 'utf8');
    const edited = text.replace(/^description: (.)/m, (_m, c: string) => `description: ${c === 'X' ? 'Y' : 'X'}`);
    assert.notEqual(edited, text);
    assert.equal(edited.length, text.length);
    await writeFile(file, edited);
    await utimes(file, before.atime, before.mtime);
    assert.equal(await readCachedManifest(stackFile), undefined);
    const m = await loadManifestOrFail(stackFile);
    assert.match(m.components.find((c) => c.spec.name === 'rocPRIM')!.spec.description, /^[XY]/);
  });

  it('sees an edit that makes the manifest invalid: the CLI reports it', async () => {
    await primed();
    const r1 = await runCli(['validate', stackFile], { env: env() });
    assert.equal(r1.code, 0, r1.stderr);
    const file = path.join(dir, 'manifest', 'components', 'rocPRIM.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^atom: .*$/m, 'atom: not an atom'));
    const r2 = await runCli(['validate', stackFile], { env: env() });
    assert.equal(r2.code, 2, r2.stdout);
    assert.match(r2.stderr, /rocPRIM\.yaml:\d+:\d+/);
  });

  it('sees an added component file', async () => {
    await primed();
    const copy = (await readFile(path.join(dir, 'manifest', 'components', 'rocm-cmake.yaml'), 'utf8'))
      .replace(/^name: .*$/m, 'name: rocm-cmake-twin')
      .replace(/^atom: .*$/m, 'atom: dev-build/rocm-cmake-twin');
    await writeFile(path.join(dir, 'manifest', 'components', 'rocm-cmake-twin.yaml'), copy);
    assert.equal(await readCachedManifest(stackFile), undefined);
    const r = await runCli(['graph', '--version', '6.2.2', '--manifest', stackFile], { env: env() });
    // The twin is either in the graph or refused by the checks: never silently absent.
    if (r.code === 0) assert.match(r.stdout, /dev-build\/rocm-cmake-twin/);
    else assert.match(r.stderr, /rocm-cmake-twin/);
  });

  it('sees a removed component file', async () => {
    await primed();
    await rm(path.join(dir, 'manifest', 'components', 'hipother.yaml'));
    assert.equal(await readCachedManifest(stackFile), undefined);
    const r = await runCli(['graph', '--version', '6.2.2', '--manifest', stackFile], { env: env() });
    assert.ok(r.code !== 0 || !/dev-libs\/hipother/.test(r.stdout), 'hipother is gone');
  });

  it('sees a renamed file, content unchanged', async () => {
    await primed();
    await rename(path.join(dir, 'manifest', 'components', 'rocPRIM.yaml'), path.join(dir, 'manifest', 'components', 'zz-rocPRIM.yaml'));
    assert.equal(await readCachedManifest(stackFile), undefined);
    const m = await loadManifestOrFail(stackFile);
    assert.ok(m.components.some((c) => c.source.file.endsWith('zz-rocPRIM.yaml')));
    assert.ok((await readCachedManifest(stackFile))!.manifest.components.some((c) => c.source.file.endsWith('zz-rocPRIM.yaml')));
  });

  it('sees a changed target table', async () => {
    await primed();
    const targets = path.join(dir, 'manifest', 'targets.yaml');
    await writeFile(targets, `${await readFile(targets, 'utf8')}\n# a comment\n`);
    assert.equal(await readCachedManifest(stackFile), undefined);
  });

  it('ignores a corrupt, truncated or foreign entry, and replaces it', async () => {
    await primed();
    const file = manifestCacheFile(stackFile);
    const good = await readFile(file);
    for (const bad of [Buffer.from('not a cache at all'), good.subarray(0, good.length >> 1), Buffer.alloc(0)]) {
      await writeFile(file, bad);
      assert.equal(await readCachedManifest(stackFile), undefined);
      const m = await loadManifestOrFail(stackFile);
      assert.equal(m.components.length, 49);
      assert.ok((await readCachedManifest(stackFile)) !== undefined, 'rewritten');
    }
    // Another manifest's entry, copied over this one's name.
    const other = path.join(dir, 'other');
    await cp(path.join(dir, 'manifest'), other, { recursive: true });
    await loadManifestOrFail(path.join(other, 'stack.yaml'));
    await writeFile(file, await readFile(manifestCacheFile(path.join(other, 'stack.yaml'))));
    assert.equal(await readCachedManifest(stackFile), undefined);
  });

  it('stays whole under concurrent runs', async () => {
    const runs = await Promise.all(Array.from({ length: 4 }, () => runCli(['validate', stackFile], { env: env() })));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.equal(new Set(runs.map((r) => r.stdout)).size, 1);
    assert.ok((await readCachedManifest(stackFile)) !== undefined);
    const again = await Promise.all(Array.from({ length: 3 }, () => runCli(['graph', '--version', '6.2.2', '--manifest', stackFile], { env: env() })));
    for (const r of again) assert.equal(r.code, 0, r.stderr);
    const left = await readdir(path.dirname(manifestCacheFile(stackFile)));
    assert.deepEqual(left.filter((f) => f.endsWith('.tmp')), [], 'no temporary file is left behind');
  });

  it('stores nothing for an invalid manifest', async () => {
    const file = path.join(dir, 'manifest', 'components', 'rocPRIM.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^atom: .*$/m, 'atom: not an atom'));
    await assert.rejects(loadManifestOrFail(stackFile));
    assert.equal(await stat(manifestCacheFile(stackFile)).catch(() => undefined), undefined);
  });
});
