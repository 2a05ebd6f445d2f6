import { strict as assert } from 'node:assert';
import { cp, mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCommandBundles, RETIRED_KEEP_MS, rewriteImportMetaUrl, type BundleInputs } from '../../src/cli/command-bundles.js';
import { BUNDLE_INPUTS, COMMAND_BUNDLE_DIR } from '../../src/paths.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

/**
 * Our commands run from their bundles in dist/cli (src/cli/command-bundles.ts)
 * while those are current, and from the compiled modules in dist/src
 * otherwise. A loader hook, given through NODE_OPTIONS, reports every module
 * a process resolves, so a test sees which of the two ran.
 */
describe('command bundles (dist/cli)', function () {
  this.timeout(240_000);
  let work: string;
  let hookEnv: NodeJS.ProcessEnv;
  before(async () => {
    work = await tempDir('rocm-ebuild-bundles-');
    const hooks = path.join(work, 'hooks.mjs');
    await writeFile(hooks, 'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`resolved ${r.url}\\n`); return r; }\n');
    const register = path.join(work, 'register.mjs');
    await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    hookEnv = { NODE_OPTIONS: `--import ${pathToFileURL(register).href}` };
  });
  after(() => removeDir(work));

  const resolved = (stderr: string) => stderr.split('\n').flatMap((l) => (l.startsWith('resolved ') ? [l.slice('resolved '.length)] : []));
  /** Compiled modules of ours a process loaded, beyond the code-cache loader the bundled libraries come through. */
  const fromSrc = (urls: string[]) => urls.filter((u) => u.includes('/dist/src/') && !/\/dist\/src\/util\/(code-cache|cache-home)\.js$/.test(u));

  /** A copy of the package with its own dist/cli (and dist/src, dist/vendor linked to the real ones). */
  async function packageCopy(name: string): Promise<{ dir: string; bin: string }> {
    const dir = path.join(work, name);
    await mkdir(path.join(dir, 'dist'), { recursive: true });
    await cp(path.join(root, 'bin'), path.join(dir, 'bin'), { recursive: true });
    for (const f of ['package.json', 'oclif.manifest.json']) await cp(path.join(root, f), path.join(dir, f));
    for (const d of ['node_modules', 'manifest', 'schemas', 'ebuild-templates', 'eclass']) await symlink(path.join(root, d), path.join(dir, d));
    for (const d of ['src', 'vendor']) await symlink(path.join(root, 'dist', d), path.join(dir, 'dist', d));
    await cp(path.join(root, COMMAND_BUNDLE_DIR), path.join(dir, COMMAND_BUNDLE_DIR), { recursive: true, preserveTimestamps: true });
    return { dir, bin: path.join(dir, 'bin', 'run.js') };
  }

  it('rewrites import.meta.url to the URL of the compiled module, and nothing else', () => {
    const src = "const a = new URL('./w.js', import.meta.url); const b = import.meta.urlish; const c = import.meta.resolve('yaml');";
    assert.equal(
      rewriteImportMetaUrl(src, path.join('/p', 'dist', 'src', 'distfiles', 'pool.js'), path.join('/p', 'dist', 'cli')),
      'const a = new URL(\'./w.js\', new URL("../src/distfiles/pool.js", import.meta.url).href); const b = import.meta.urlish; const c = import.meta.resolve(\'yaml\');',
    );
  });

  it('runs each command from its bundle, importing none of the compiled command modules', async () => {
    for (const args of [['validate'], ['graph', '--version', '6.2.2'], ['render', 'hip', '--version', '6.2.2']]) {
      const r = await runCli(args, { env: hookEnv });
      assert.equal(r.code, 0, r.stderr);
      const urls = resolved(r.stderr);
      assert.ok(urls.some((u) => u.endsWith(`/dist/cli/${args[0]}.js`)), `${args[0]} came from its bundle`);
      assert.deepEqual(fromSrc(urls), [], `rocm-ebuild ${args.join(' ')}`);
    }
  });

  it('falls back to dist/src, with the same output, when the bundles are older than it or an input changed size', async () => {
    const normal = await runCli(['graph', '--version', '6.2.2']);
    const copy = await packageCopy('stale');
    const list = path.join(copy.dir, COMMAND_BUNDLE_DIR, BUNDLE_INPUTS);
    const run = async () => {
      const r = await runCli(['graph', '--version', '6.2.2'], { bin: copy.bin, env: hookEnv });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, normal.stdout);
      return resolved(r.stderr);
    };
    // As built: the bundles run.
    assert.deepEqual(fromSrc(await run()), []);
    // `npx tsc -p .` since the build: every compiled module is newer than the list.
    await utimes(list, new Date('2001-01-01'), new Date('2001-01-01'));
    const stale = await run();
    assert.ok(stale.some((u) => u.endsWith('/dist/src/commands/graph.js')), 'graph came from dist/src');
    assert.ok(!stale.some((u) => u.includes(`/${COMMAND_BUNDLE_DIR.split(path.sep).join('/')}/`)), 'no bundle was loaded');
    // A module of another size, whatever the dates say.
    const inputs = JSON.parse(await readFile(list, 'utf8')) as { inputs: Record<string, number> };
    inputs.inputs['dist/src/model/resolve.js']! += 1;
    await writeFile(list, JSON.stringify(inputs));
    assert.ok((await run()).some((u) => u.endsWith('/dist/src/commands/graph.js')));
    // An unreadable list is no list.
    await writeFile(list, '{');
    assert.ok((await run()).some((u) => u.endsWith('/dist/src/commands/graph.js')));
  });

  it('rebuilding while commands run breaks none of them, and leaves no stale file', async () => {
    const copy = await packageCopy('rebuilt');
    const outdir = path.join(copy.dir, COMMAND_BUNDLE_DIR);
    // A killed build's temporary file (old) goes; a concurrent build's (new) stays.
    const killed = path.join(outdir, 'graph.js.99999.tmp');
    const running = path.join(outdir, 'graph.js.99998.tmp');
    await writeFile(killed, 'x');
    await utimes(killed, new Date('2001-01-01'), new Date('2001-01-01'));
    await writeFile(running, 'x');
    // graph prints no path: the copy's dist/src is a link, which a rebuild resolves.
    const expected = (await runCli(['graph', '--version', '6.2.2'])).stdout;
    let building = true;
    const builds = (async () => {
      try {
        for (let i = 0; i < 2; i++) await buildCommandBundles(copy.dir);
      } finally {
        building = false;
      }
    })();
    let runs = 0;
    try {
      while (building) {
        const r = await runCli(['graph', '--version', '6.2.2'], { bin: copy.bin });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, expected);
        runs++;
      }
    } finally {
      await builds;
    }
    assert.ok(runs > 0);
    assert.equal(existsSync(killed), false);
    assert.equal(existsSync(running), true);
    // Nothing else is left: every file is one the list names, the list itself, or the running build's.
    const list = JSON.parse(await readFile(path.join(outdir, BUNDLE_INPUTS), 'utf8')) as BundleInputs;
    const stray = (await readdir(outdir)).filter((f) => !list.outputs.includes(f) && !(f in (list.retired ?? {})) && f !== BUNDLE_INPUTS && f !== path.basename(running));
    assert.deepEqual(stray, []);
    const after = await runCli(['validate'], { bin: copy.bin, env: hookEnv });
    assert.equal(after.code, 0, after.stderr);
    assert.deepEqual(fromSrc(resolved(after.stderr)), [], 'the rebuilt bundles are current');
  });

  it('keeps the files of a build a command may have started on through later builds, and lets them go an hour after', async () => {
    const copy = await packageCopy('generations');
    const outdir = path.join(copy.dir, COMMAND_BUNDLE_DIR);
    const listFile = path.join(outdir, BUNDLE_INPUTS);
    const readList = async () => JSON.parse(await readFile(listFile, 'utf8')) as BundleInputs;
    // The copy's build resolves dist/src through a link: its chunks are not the shipped build's.
    const first = (await readList()).outputs;
    await buildCommandBundles(copy.dir);
    await buildCommandBundles(copy.dir);
    const list = await readList();
    const retired = first.filter((f) => !list.outputs.includes(f));
    assert.ok(retired.length > 0, 'the rebuilt bundles differ from the shipped ones');
    // A command started on the first build imports its chunks lazily, after both builds.
    assert.deepEqual(retired.filter((f) => !existsSync(path.join(outdir, f))), [], 'every file of the first build is still there');
    assert.deepEqual(Object.keys(list.retired ?? {}).sort(), [...retired].sort());
    // An hour after a build first left them out, they go.
    const old = Date.now() - RETIRED_KEEP_MS - 1000;
    await writeFile(listFile, JSON.stringify({ ...list, retired: Object.fromEntries(retired.map((f) => [f, old])) }));
    await buildCommandBundles(copy.dir);
    assert.deepEqual(retired.filter((f) => existsSync(path.join(outdir, f))), [], 'the first build’s files are gone');
    assert.deepEqual((await readList()).retired, {});
    const r = await runCli(['graph', '--version', '6.2.2'], { bin: copy.bin });
    assert.equal(r.code, 0, r.stderr);
  });
});
