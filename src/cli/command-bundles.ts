import { promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { BUNDLE_INPUTS, COMMAND_BUNDLE_DIR, projectRoot } from '../paths.js';

import { writeFileAtomically } from '../util/atomic-write.js';
import { compiledModules } from '../util/content-memo.js';

/**
 * Our own commands, bundled at build time: dist/cli/<command>.js, one ES
 * module per command, and the code they share in chunks beside them
 * (esbuild's code splitting, so a module a command imports lazily stays a
 * file of its own, loaded only when asked for). oclif.manifest.json points
 * every command at its bundle (command-manifest.ts), bin/run.js uses the
 * manifest only while the bundles are current (its bundlesCurrent), and
 * otherwise runs the compiled modules in dist/src, as before.
 *
 * Why: Node 20's loader reads each ES module through the thread pool,
 * resolves and links it; `test --dry-run` imported some 40 of our modules,
 * and its bundle with its chunks is about 25 files. Measured alternately on
 * this project's 2-core machine: 290 → 268 ms and 307 → 291 ms for the
 * whole `test --dry-run`.
 *
 * dist/src stays what tests import and what workers (the hash worker) and
 * generated files are found beside: every `import.meta.url` in a bundled
 * module is rewritten to the URL of the compiled module it came from, so the
 * paths it computes (templates, schemas, the worker, the package root) are
 * the same either way. Libraries stay external, `#oclif` and `#nunjucks`
 * included (they are the code-cached bundles of vendor-bundles.ts).
 */

const COMMANDS_DIR = path.join('dist', 'src', 'commands');
/** A temporary file older than this was left by a killed build. */
const STALE_TMP_MS = 10 * 60 * 1000;
/**
 * How long a file an earlier build wrote, and a later one no longer lists,
 * stays for the processes started on that build: they import chunks lazily,
 * some only minutes into a run, and a command runs from the build it started
 * on however many builds come meanwhile.
 */
export const RETIRED_KEEP_MS = 60 * 60 * 1000;

/** The bundle of a command: `upstream:tags` → upstream-tags.js. */
export function bundleFileOf(id: string): string {
  return `${id.replace(/:/g, '-')}.js`;
}

/** The compiled command modules by command id (oclif's: the path under commands/, `/` as `:`). */
function commandModules(root: string): Map<string, string> {
  const dir = path.join(root, COMMANDS_DIR);
  return new Map(compiledModules(dir).map((rel) => [rel.replace(/\.c?js$/, '').split('/').join(':'), path.join(dir, rel)]));
}

/** `import.meta.url` of a module bundled from `file` into `outdir`: the URL `file` has, computed from the bundle's. */
export function rewriteImportMetaUrl(source: string, file: string, outdir: string): string {
  const rel = path.relative(outdir, file).split(path.sep).join('/');
  return source.replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(rel)}, import.meta.url).href`);
}

const importMetaUrl = (outdir: string): Plugin => ({
  name: 'import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => ({ contents: rewriteImportMetaUrl(await fs.readFile(args.path, 'utf8'), args.path, outdir), loader: 'js' }));
  },
});

export interface BundleInputs {
  format: 1;
  /** Every compiled module in a bundle, relative to the package root, with its size. */
  inputs: Record<string, number>;
  /** The files of this build in dist/cli. */
  outputs: string[];
  /** Files of earlier builds this one does not write, by when a build first left them out (ms since the epoch): kept RETIRED_KEEP_MS. */
  retired?: Record<string, number>;
}

/**
 * Bundle every command into dist/cli, in place and in an order that a
 * rocm-ebuild running meanwhile never minds: the chunks first (their names
 * carry a hash of their content, so a new one never replaces an old one a
 * running process may still import lazily), then each command's file
 * (renamed into place whole), then the list of inputs. Files of earlier
 * builds stay for RETIRED_KEEP_MS after a build first leaves them out, for
 * processes started on those builds (two builds in a row must not take a
 * chunk from under a command started before the first); then they go.
 */
export async function buildCommandBundles(root = projectRoot): Promise<string> {
  const esbuild = (await import('esbuild')) as typeof import('esbuild');
  const modules = commandModules(root);
  const entryPoints: Record<string, string> = {};
  for (const [id, file] of modules) {
    const name = bundleFileOf(id).slice(0, -3);
    if (entryPoints[name]) throw new Error(`commands ${id} and another both bundle to ${name}.js`);
    entryPoints[name] = file;
  }
  const outdir = path.join(root, COMMAND_BUNDLE_DIR);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir,
    chunkNames: 'chunk-[hash]',
    packages: 'external',
    external: ['#oclif', '#nunjucks'],
    // codeIdentity (util/content-memo.ts) then names the code by the bundles' list of inputs.
    define: { ROCM_EBUILD_BUNDLED: 'true' },
    plugins: [importMetaUrl(outdir)],
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  await fs.mkdir(outdir, { recursive: true });
  const entries = new Set(Object.keys(entryPoints).map((n) => `${n}.js`));
  const isEntry = (f: string) => entries.has(path.basename(f)) || entries.has(path.basename(f).replace(/\.map$/, ''));
  const files = result.outputFiles;
  for (const f of files.filter((o) => !isEntry(o.path))) await writeFileAtomically(f.path, f.contents);
  for (const f of files.filter((o) => isEntry(o.path))) await writeFileAtomically(f.path, f.contents);
  const previous = await fs
    .readFile(path.join(outdir, BUNDLE_INPUTS), 'utf8')
    .then((t) => JSON.parse(t) as Partial<BundleInputs>)
    .catch(() => ({}) as Partial<BundleInputs>);
  const list: BundleInputs = { format: 1, inputs: {}, outputs: files.map((f) => path.basename(f.path)).sort() };
  for (const rel of Object.keys(result.metafile.inputs).sort()) list.inputs[rel] = statSync(path.join(root, rel)).size;
  list.retired = retiredFiles(previous, list.outputs, Date.now());
  await writeFileAtomically(path.join(outdir, BUNDLE_INPUTS), `${JSON.stringify(list, null, 1)}\n`);
  const keep = new Set([...list.outputs, ...Object.keys(list.retired), BUNDLE_INPUTS]);
  for (const f of await fs.readdir(outdir)) {
    if (keep.has(f)) continue;
    if (f.endsWith('.tmp')) {
      // A temporary file goes once it is a killed build's, not a concurrent build's write in progress.
      const st = await fs.stat(path.join(outdir, f)).catch(() => undefined);
      if (!st || Date.now() - st.mtimeMs < STALE_TMP_MS) continue;
    }
    await fs.rm(path.join(outdir, f), { force: true });
  }
  return outdir;
}

/**
 * The files a build keeps without writing them: the previous build's outputs
 * it does not write (retired now) and those retired earlier, until they are
 * RETIRED_KEEP_MS old. A list that is not an object of times counts as none.
 */
export function retiredFiles(previous: Partial<BundleInputs>, outputs: string[], now: number): Record<string, number> {
  const written = new Set(outputs);
  const retired: Record<string, number> = {};
  const earlier = typeof previous.retired === 'object' && previous.retired !== null ? previous.retired : {};
  for (const [f, at] of Object.entries(earlier)) {
    if (!written.has(f) && typeof at === 'number' && now - at < RETIRED_KEEP_MS) retired[f] = at;
  }
  for (const f of Array.isArray(previous.outputs) ? previous.outputs : []) {
    if (typeof f === 'string' && !written.has(f)) retired[f] ??= now;
  }
  return Object.fromEntries(Object.entries(retired).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildCommandBundles();
}
