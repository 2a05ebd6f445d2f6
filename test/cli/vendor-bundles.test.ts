import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { MANIFEST_FILE } from '../../src/cli/command-manifest.js';
import { COMMAND_SORT, shimSource, sortCommandsByCodePoint } from '../../src/cli/vendor-bundles.js';
import { bin, root } from '../helpers/project.js';

/**
 * The bundled oclif (dist/vendor) against @oclif/core as installed: node's
 * `--conditions=rocm-ebuild-unbundled` makes `#oclif` resolve to the latter
 * (package.json "imports"), so the same bin/run.js runs on each.
 */
function run(args: string[], env: NodeJS.ProcessEnv, unbundled: boolean, nodeOptions: string[] = []): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeOptions, ...(unbundled ? ['--conditions=rocm-ebuild-unbundled'] : []), bin, ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

async function same(args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const [bundled, upstream] = await Promise.all([run(args, env, false), run(args, env, true)]);
  assert.equal(bundled.code, upstream.code, `rocm-ebuild ${args.join(' ')}: exit code`);
  assert.equal(bundled.out, upstream.out, `rocm-ebuild ${args.join(' ')} ${JSON.stringify(env)}: output`);
}

describe('bundled libraries (dist/vendor): oclif and nunjucks', function () {
  this.timeout(180_000);

  it('re-exports every name of @oclif/core and nunjucks', async () => {
    // Node 23 and later add 'module.exports' to the namespace of every CommonJS module imported as ESM: Node's name, not the library's.
    const names = (mod: object) => Object.keys(mod).filter((n) => n !== 'default' && n !== '__esModule' && n !== 'module.exports').sort();
    assert.deepEqual(names(await import('#oclif')), names(await import('@oclif/core')));
    assert.deepEqual(names(await import('#nunjucks')), names(((await import('nunjucks')) as { default: object }).default));
    assert.deepEqual(names(((await import('#nunjucks')) as { default: object }).default), names(((await import('nunjucks')) as { default: object }).default));
    assert.match(shimSource({ pkg: 'x', file: 'x' }, ['Command', 'default', '__esModule', 'not-a-name', 'vendored', 'requireWithCodeCache']), /export const \{ Command \} = vendored;/);
  });

  it('prints every help text exactly as @oclif/core does, at two widths and in colour', async () => {
    const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8')) as { commands: Record<string, unknown> };
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { oclif: { topics: Record<string, unknown> } };
    const ids = ['', ...Object.keys(pkg.oclif.topics), ...Object.keys(manifest.commands)].map((id) => id.split(':').filter(Boolean));
    for (const id of ids) await same([...id, '--help'], { OCLIF_COLUMNS: '64' });
    for (const id of [[], ['bump'], ['test'], ['ci', 'k8s']]) {
      await same([...id, '--help'], { OCLIF_COLUMNS: '132' });
      await same([...id, '--help'], { NO_COLOR: undefined, FORCE_COLOR: '1', OCLIF_COLUMNS: '100' });
    }
  });

  it('reports usage errors, unknown commands and the version the same way', async () => {
    await same(['--version']);
    await same(['bump', '--no-such-flag']);
    await same(['no-such-command']);
    await same(['gpu', 'list', '--format', 'xml']);
    await same(['render']);
  });

  it('runs commands the same way, ebuilds rendered by either nunjucks included', async () => {
    await same(['graph', '--version', '6.2.2']);
    await same(['validate', '--json']);
    for (const atom of ['rocBLAS', 'hip', 'composable-kernel']) await same(['render', atom, '--version', '6.2.2']);
    await same(['render', 'rocBLAS', '--version', '6.2.2', '--metadata']);
  });

  it('sorts command ids by code point (every tested locale\'s order for ours but Welsh) and never builds a collator', async () => {
    const bundle = await readFile(path.join(root, 'dist', 'vendor', 'oclif-core.cjs'), 'utf8');
    assert.ok(!bundle.includes('localeCompare'), 'no localeCompare is left in the oclif bundle');
    assert.ok(bundle.includes('a.id < b.id ? -1 : a.id > b.id ? 1 : 0'), 'the code-point sort is in the bundle');
    const file = path.join('x', 'node_modules', '@oclif', 'core', 'lib', 'config', 'plugin.js');
    assert.equal(sortCommandsByCodePoint(file, `a${COMMAND_SORT.from}b`), `a${COMMAND_SORT.to}b`);
    assert.throws(() => sortCommandsByCodePoint(file, 'changed upstream'), /not found once/);
    assert.throws(() => sortCommandsByCodePoint(file, `${COMMAND_SORT.from}${COMMAND_SORT.from}`), /not found once/);
    assert.equal(sortCommandsByCodePoint(path.join('x', 'other.js'), COMMAND_SORT.from), COMMAND_SORT.from);
    // The order help lists commands in, as oclif's localeCompare would give it in these locales.
    const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8')) as { commands: Record<string, unknown> };
    const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { oclif: { topics: Record<string, unknown> } };
    const ids = [...Object.keys(manifest.commands), ...Object.keys(pkg.oclif.topics)];
    const byCodePoint = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const locales = [undefined, 'en', 'en-US-u-va-posix', 'de', 'fr', 'es', 'it', 'pl', 'cs', 'sk', 'hu', 'lt', 'lv', 'et', 'fi', 'sv', 'da', 'nb', 'cy', 'tr', 'ru', 'ja', 'zh', 'ko'];
    // oclif's help sorts by code point itself; this order is only config.commands', which decides
    // which of two equally close commands a typo is told about. Welsh's "th" puts ci:gitlab first.
    const differ = locales.filter((l) => JSON.stringify([...ids].sort(new Intl.Collator(l).compare)) !== JSON.stringify(byCodePoint));
    assert.deepEqual(differ, ['cy']);
  });

  it('makes no process load oclif or nunjucks from node_modules', async () => {
    // One copy in a process: oclif's instanceof checks and settings need it.
    const r = await run(['render', 'hip', '--version', '6.2.2'], { NODE_DEBUG: 'module' }, false);
    assert.equal(r.code, 0);
    assert.doesNotMatch(r.out, /node_modules[/\\](@oclif[/\\]core|nunjucks)[/\\]/, `${path.basename(bin)} loaded upstream files`);
  });

  it('makes the bundles import nothing from node_modules at run time: oclif\'s import of wsl-utils is bundled too', async () => {
    // A loader hook reports every module resolved for code of the bundles
    // (their import() calls go through util/code-cache.js). oclif asks
    // wsl-utils for the platform on every start; imported from
    // node_modules, that was six ES modules and node:process's facade.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rocm-ebuild-hook-'));
    try {
      const hooks = path.join(dir, 'hooks.mjs');
      await writeFile(hooks, "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(`resolved ${r.url} from ${c.parentURL}\\n`); return r; }\n");
      const register = path.join(dir, 'register.mjs');
      await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
      const r = await run(['validate', '--json'], {}, false, ['--import', pathToFileURL(register).href]);
      assert.equal(r.code, 0, r.out);
      const resolved = r.out.split('\n').filter((l) => l.startsWith('resolved '));
      assert.ok(resolved.some((l) => /dist\/vendor\/oclif-core\.js from /.test(l)), 'the hook saw the imports');
      const fromBundles = resolved.filter((l) => /from \S*(dist\/vendor\/|dist\/src\/util\/code-cache\.js)/.test(l) && /node_modules/.test(l.split(' from ')[0]!));
      assert.deepEqual(fromBundles, []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
