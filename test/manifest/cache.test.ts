import { copyShippedManifest } from '../helpers/manifest-copy.js';
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { cp, mkdir, readdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import v8 from 'node:v8';
import { BUNDLE_INPUTS, COMMAND_BUNDLE_DIR } from '../../src/paths.js';
import { cacheDisabled, manifestCacheFile, readCachedManifest } from '../../src/stack-check/cache.js';
import { loadManifestOrFail, stackFor } from '../../src/stack-check/index.js';
import { bin, removeDir, root, runCli, tempDir } from '../helpers/project.js';

/** The shipped stack's component count (one file each), so adding a package changes no test. */
const COMPONENTS = (await readdir(path.join(root, 'manifest', 'components'))).filter((f) => f.endsWith('.yaml')).length;

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
    await copyShippedManifest(path.join(dir, 'manifest'));
    stackFile = path.join(dir, 'manifest', 'stack.yaml');
    process.env.XDG_CACHE_HOME = cacheHome;
  });
  afterEach(async () => {
    if (savedXdg === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = savedXdg;
    await removeDir(dir);
  });

  /**
   * The entry a CLI run left, read as it stands: undefined when there is none
   * or it does not deserialize. The CLI runs from its command bundles, whose
   * code has another identity than this process's dist/src modules (see
   * codeIdentity), so readCachedManifest here would never match its key; a
   * later CLI run that keeps the entry's inode shows the CLI took it.
   */
  async function cliEntry(): Promise<{ components: number; inode: number } | undefined> {
    const file = manifestCacheFile(stackFile);
    try {
      const entry = v8.deserialize(await readFile(file)) as { stackFile: string; manifest: { components: unknown[] } };
      assert.equal(entry.stackFile, stackFile);
      return { components: entry.manifest.components.length, inode: (await stat(file)).ino };
    } catch (e) {
      if (e instanceof assert.AssertionError) throw e;
      return undefined;
    }
  }

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
    // Every stored source was restored (rehydrate looks only where a Manifest keeps them).
    assert.doesNotMatch(JSON.stringify(hit.manifest), /__yamlSource/);
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
      assert.equal(m.components.length, COMPONENTS);
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
    const stored = await cliEntry();
    assert.equal(stored?.components, COMPONENTS);
    const again = await Promise.all(Array.from({ length: 3 }, () => runCli(['graph', '--version', '6.2.2', '--manifest', stackFile], { env: env() })));
    for (const r of again) assert.equal(r.code, 0, r.stderr);
    assert.equal((await cliEntry())?.inode, stored.inode, 'the entry the concurrent runs left is whole and used');
    const left = await readdir(path.dirname(manifestCacheFile(stackFile)));
    assert.deepEqual(left.filter((f) => f.endsWith('.tmp')), [], 'no temporary file is left behind');
  });

  it('stores nothing for an invalid manifest', async () => {
    const file = path.join(dir, 'manifest', 'components', 'rocPRIM.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^atom: .*$/m, 'atom: not an atom'));
    await assert.rejects(loadManifestOrFail(stackFile));
    assert.equal(await stat(manifestCacheFile(stackFile)).catch(() => undefined), undefined);
  });

  /** The description rocPRIM has in a manifest loaded now. */
  async function rocprimDescription(): Promise<string> {
    const m = await loadManifestOrFail(stackFile);
    return m.components.find((c) => c.spec.name === 'rocPRIM')!.spec.description;
  }

  /** rocPRIM.yaml's text with another description of the same length. */
  async function redescribed(letter: string): Promise<string> {
    const text = await readFile(path.join(root, 'manifest', 'components', 'rocPRIM.yaml'), 'utf8');
    return text.replace(/^description: ./m, `description: ${letter}`);
  }

  it('sees a component link retargeted to another file', async () => {
    const outside = path.join(dir, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'a.yaml'), await redescribed('A'));
    await writeFile(path.join(outside, 'b.yaml'), await redescribed('B'));
    const link = path.join(dir, 'manifest', 'components', 'rocPRIM.yaml');
    await rm(link);
    await symlink(path.join(outside, 'a.yaml'), link);
    assert.match(await rocprimDescription(), /^A/);
    assert.ok(await readCachedManifest(stackFile));
    await rm(link);
    await symlink(path.join(outside, 'b.yaml'), link);
    assert.equal(await readCachedManifest(stackFile), undefined);
    assert.match(await rocprimDescription(), /^B/);
  });

  it('sees an edit behind a directory link (components/ living elsewhere)', async () => {
    const elsewhere = path.join(dir, 'checkout', 'components');
    await mkdir(path.dirname(elsewhere));
    await rename(path.join(dir, 'manifest', 'components'), elsewhere);
    await symlink(elsewhere, path.join(dir, 'manifest', 'components'));
    await primed();
    await writeFile(path.join(elsewhere, 'rocPRIM.yaml'), await redescribed('Q'));
    assert.equal(await readCachedManifest(stackFile), undefined);
    assert.match(await rocprimDescription(), /^Q/);
  });

  it('does not loop on a directory link to its own parent, and stores nothing then', async () => {
    await symlink('..', path.join(dir, 'manifest', 'components', 'loop'));
    await loadManifestOrFail(stackFile);
    assert.equal(await readCachedManifest(stackFile), undefined);
  });

  it('is off with ROCM_EBUILD_NO_CACHE (but not with an empty value or 0)', async () => {
    assert.equal(cacheDisabled({ ROCM_EBUILD_NO_CACHE: '1' }), true);
    assert.equal(cacheDisabled({ ROCM_EBUILD_NO_CACHE: '' }), false);
    assert.equal(cacheDisabled({ ROCM_EBUILD_NO_CACHE: '0' }), false);
    const r = await runCli(['validate', stackFile], { env: { ...env(), ROCM_EBUILD_NO_CACHE: '1' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await stat(manifestCacheFile(stackFile)).catch(() => undefined), undefined, 'nothing written');
    const r2 = await runCli(['validate', stackFile], { env: env() });
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal((await cliEntry())?.components, COMPONENTS);
  });

  it('survives runs killed at any moment (kill -9), and removes what they left once it is old', async () => {
    const entry = manifestCacheFile(stackFile);
    // Kill cold runs at moments spread over a whole load; whatever is left must be a whole entry or ignored.
    for (const ms of [150, 400, 700, 1000, 1400, 2000]) {
      await rm(path.dirname(entry), { recursive: true, force: true });
      const child = spawn(process.execPath, [bin, 'validate', stackFile], { env: { ...process.env, ...env() }, stdio: 'ignore' });
      // Listened for from the start: a run may finish before its kill comes.
      const closed = new Promise((r) => child.on('close', r));
      await new Promise((r) => setTimeout(r, ms));
      child.kill('SIGKILL');
      await closed;
      // Absent, or whole: a cut file would not deserialize, and the CLI would take it (inode kept).
      const left = await cliEntry();
      if (left) {
        assert.equal(left.components, COMPONENTS);
        assert.equal((await runCli(['validate', stackFile], { env: env() })).code, 0);
        assert.equal((await cliEntry())?.inode, left.inode, `the entry left by a run killed after ${ms} ms is used`);
      }
    }
    // A temporary file as a kill between write and rename leaves it: ignored, then removed when old.
    await loadManifestOrFail(stackFile);
    const tmp = `${entry}.12345.deadbeef.tmp`;
    await writeFile(tmp, (await readFile(entry)).subarray(0, 100));
    const hour = new Date(Date.now() - 3600_000);
    await utimes(tmp, hour, hour);
    await writeFile(entry, 'cut short');
    const r = await runCli(['validate', stackFile], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await cliEntry())?.components, COMPONENTS, 'a whole entry again');
    assert.deepEqual((await readdir(path.dirname(entry))).filter((f) => f.endsWith('.tmp')), []);
  });

  describe('keyed on the code and the schemas (a copy of the package)', () => {
    let pkg: string;
    beforeEach(async () => {
      pkg = path.join(dir, 'pkg');
      await mkdir(path.join(pkg, 'dist'), { recursive: true });
      for (const f of ['bin', 'schemas', 'eclass', 'ebuild-templates', 'package.json', 'oclif.manifest.json']) await cp(path.join(root, f), path.join(pkg, f), { recursive: true });
      for (const d of ['src', 'vendor']) await cp(path.join(root, 'dist', d), path.join(pkg, 'dist', d), { recursive: true });
      await symlink(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
    });
    const validate = () => runCli(['validate', stackFile], { env: env(), bin: path.join(pkg, 'bin', 'run.js') });
    const entryInode = async () => (await stat(manifestCacheFile(stackFile))).ino;

    it('sees a changed schema', async () => {
      assert.equal((await validate()).code, 0);
      assert.equal((await validate()).code, 0);
      // A stricter schema (as a new release of rocm-ebuild may bring): the shipped descriptions are too long for it.
      const schema = path.join(pkg, 'schemas', 'component.schema.json');
      const json = JSON.parse(await readFile(schema, 'utf8')) as { properties: { description: Record<string, unknown> } };
      json.properties.description = { ...json.properties.description, maxLength: 5 };
      await writeFile(schema, JSON.stringify(json, null, 2));
      const r = await validate();
      assert.equal(r.code, 2, r.stdout);
      assert.match(r.stderr, /description/);
    });

    it('sees a different build of the code', async () => {
      assert.equal((await validate()).code, 0);
      const first = await entryInode();
      assert.equal((await validate()).code, 0);
      assert.equal(await entryInode(), first, 'unchanged code: the entry is used, not rewritten');
      // A rebuild (or an upgrade) rewrites compiled modules: the entry is not trusted, and a new one is written.
      const module = path.join(pkg, 'dist', 'src', 'stack-check', 'values.js');
      await writeFile(module, `${await readFile(module, 'utf8')}\n// rebuilt\n`);
      assert.equal((await validate()).code, 0);
      assert.notEqual(await entryInode(), first, 'the new code checked the manifest afresh');
    });

    it('sees another version of a library the load uses (an npm install since)', async () => {
      // The copy's own node_modules: links to the installed packages, and a copy of yaml whose version moves.
      await rm(path.join(pkg, 'node_modules'));
      await mkdir(path.join(pkg, 'node_modules'));
      for (const name of await readdir(path.join(root, 'node_modules'))) await symlink(path.join(root, 'node_modules', name), path.join(pkg, 'node_modules', name));
      await rm(path.join(pkg, 'node_modules', 'yaml'));
      await cp(path.join(root, 'node_modules', 'yaml'), path.join(pkg, 'node_modules', 'yaml'), { recursive: true });
      assert.equal((await validate()).code, 0);
      const first = await entryInode();
      assert.equal((await validate()).code, 0);
      assert.equal(await entryInode(), first, 'same libraries: the entry is used');
      const manifest = path.join(pkg, 'node_modules', 'yaml', 'package.json');
      const json = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
      await writeFile(manifest, JSON.stringify({ ...json, version: `${json.version}-next` }));
      assert.equal((await validate()).code, 0);
      assert.notEqual(await entryInode(), first, 'another yaml checked the manifest afresh');
    });

    it('sees a different build of the command bundles, which run when current', async () => {
      // As installed: the bundles and the modules they were made from keep their dates, so bin/run.js runs the bundles.
      for (const d of ['src', 'cli']) {
        await rm(path.join(pkg, 'dist', d), { recursive: true, force: true });
        await cp(path.join(root, 'dist', d), path.join(pkg, 'dist', d), { recursive: true, preserveTimestamps: true });
      }
      assert.equal((await validate()).code, 0);
      const first = await entryInode();
      assert.equal((await validate()).code, 0);
      assert.equal(await entryInode(), first, 'unchanged code: the entry is used, not rewritten');
      // Every build writes the bundles' list of inputs anew (renamed into place): that names the code the bundles run.
      const list = path.join(pkg, COMMAND_BUNDLE_DIR, BUNDLE_INPUTS);
      const text = await readFile(list);
      await rm(list);
      await writeFile(list, text);
      assert.equal((await validate()).code, 0);
      assert.notEqual(await entryInode(), first, 'the new build checked the manifest afresh');
    });
  });
});
