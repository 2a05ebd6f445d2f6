import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { projectRoot } from '../paths.js';
import { replaceAtomically, writeFileAtomically } from '../util/atomic-write.js';
import { DYNAMIC_IMPORT } from '../util/code-cache.js';

/**
 * Libraries every command loads, each bundled into one file at build time:
 * dist/vendor/<name>.cjs, the bundle, and dist/vendor/<name>.js, an ES module
 * that loads it through V8's code cache (util/code-cache.ts) and re-exports
 * its names. Our modules import them as `#oclif` and `#nunjucks`
 * (package.json "imports"), which resolve to the bundle at run time and to
 * the library's own declarations for tsc: one copy in a process (oclif's
 * `instanceof` checks and settings singleton need that), upstream types.
 *
 * Why: @oclif/core is 158 CommonJS files (semver alone is 47), nunjucks 20.
 * Node resolves, reads, compiles and wraps each one, and for oclif that was
 * half of every command's start-up: 115–140 ms of the ~240 ms `--help` took
 * on this project's 2-core machine. As one file it loads in 55–60 ms, and in
 * 27 ms from the code cache.
 *
 * Built by `npm run build` after tsc and before the command manifest (which
 * imports oclif). esbuild is a development dependency; a packed or published
 * rocm-ebuild carries the built files. `node --conditions=rocm-ebuild-unbundled`
 * runs on the libraries as installed instead, and a test compares the two.
 */

export const VENDOR_DIR = path.join('dist', 'vendor');


/** An `import(` that is a call (not `.import(`, `fooimport(`, nor the text "import()"). */
const DYNAMIC_IMPORT_CALL = /(?<![\w$.])import\((?!\))/;
/** The same, but not of a string literal: `import("wsl-utils")` is left for esbuild to bundle. */
const COMPUTED_IMPORT_CALL = /(?<![\w$.])import\((?!\))(?!\s*(?:"[^"\n]*"|'[^'\n]*')\s*\))/g;

/**
 * Loads every file of a library for esbuild: sortCommandsByCodePoint's one
 * change to oclif, then every import() of a computed specifier (oclif's of command files,
 * lilconfig's of config files) renamed to the function util/code-cache.ts
 * passes in (see DYNAMIC_IMPORT there). An import() of a package by name is
 * bundled instead: oclif's `import("wsl-utils")`, made by every Config.load
 * to learn the platform, loaded six ES modules and node:process's ES facade
 * (whose getters open stdin) on each run, about 10 ms.
 */
const renameDynamicImports: Plugin = {
  name: 'rename-dynamic-imports',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?js$/ }, async (args) => ({
      contents: sortCommandsByCodePoint(args.path, await fs.readFile(args.path, 'utf8')).replace(COMPUTED_IMPORT_CALL, `${DYNAMIC_IMPORT}(`),
      loader: 'js',
    }));
  },
};

/**
 * string-width 4 (used by wrap-ansi and oclif's help layout) strips ANSI
 * codes and builds emoji-regex's 10 KB pattern on every call, once per word
 * of every help text: 20 ms of a command's `--help`. A string of printable
 * ASCII (U+0020–U+007E) has no escape sequence, no emoji, no combining or
 * wide character, so its width is its length, which is what string-width
 * returns for it; anything else still goes to string-width.
 */
const asciiStringWidth: Plugin = {
  name: 'ascii-string-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, (args) =>
      args.namespace === 'ascii-string-width' ? undefined : { path: args.resolveDir, namespace: 'ascii-string-width' },
    );
    build.onLoad({ filter: /.*/, namespace: 'ascii-string-width' }, (args) => ({
      contents: [
        "'use strict';",
        "const stringWidth = require('string-width');",
        'const printableAscii = /^[\\x20-\\x7e]*$/;',
        "const width = (s) => (typeof s === 'string' && printableAscii.test(s) ? s.length : stringWidth(s));",
        'module.exports = width;',
        'module.exports.default = width;',
      ].join('\n'),
      resolveDir: args.path,
      loader: 'js',
    }));
  },
};

/** The one call of localeCompare in @oclif/core, and what replaces it (see sortCommandsByCodePoint). */
export const COMMAND_SORT = { file: /[/\\]@oclif[/\\]core[/\\]lib[/\\]config[/\\]plugin\.js$/, from: '.sort((a, b) => a.id.localeCompare(b.id))', to: '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))' };

/**
 * oclif sorts a plugin's commands by id with localeCompare on every start,
 * and the first localeCompare of a process builds ICU's collator: 12 ms of
 * every command (measured: `test --dry-run` 267 -> 255 ms). The ids are
 * sorted by code point instead. Help does not change: oclif's help sorts
 * commands by code point itself. What this order decides is config.commands',
 * which only picks between two equally close commands suggested for a typo.
 * For our ids it is the collation order of every locale a test tries (24)
 * but Welsh, where "th" puts ci:gitlab before ci:github; a new command that
 * changes that fails the test. The build stops if oclif's line is not found
 * exactly once (an oclif upgrade).
 */
export function sortCommandsByCodePoint(file: string, text: string): string {
  if (!COMMAND_SORT.file.test(file)) return text;
  if (text.split(COMMAND_SORT.from).length !== 2) {
    throw new Error(`${file}: oclif's sort of commands by localeCompare was not found once; review sortCommandsByCodePoint in src/cli/vendor-bundles.ts`);
  }
  return text.replace(COMMAND_SORT.from, COMMAND_SORT.to);
}

/** The shim's own bindings, which an exported name must not shadow (nunjucks exports one called `lib`). */
const SHIM_BINDINGS = new Set(['default', '__esModule', 'vendored', 'fileURLToPath', 'requireWithCodeCache']);
const identifier = (n: string) => /^[A-Za-z_$][\w$]*$/.test(n) && !SHIM_BINDINGS.has(n);

/** The ES module in front of a bundle: esbuild cannot see a CommonJS module's named exports, so they are listed. */
export function shimSource(lib: Pick<Vendored, 'pkg' | 'file'>, names: string[]): string {
  const named = names.filter(identifier).sort();
  return [
    `// Generated by src/cli/vendor-bundles.ts (npm run build): ${lib.pkg}, loaded through the code cache.`,
    "import { fileURLToPath } from 'node:url';",
    "import { requireWithCodeCache } from '../src/util/code-cache.js';",
    `const vendored = requireWithCodeCache(fileURLToPath(new URL('./${lib.file}.cjs', import.meta.url))).exports;`,
    ...(named.length > 0 ? [`export const { ${named.join(', ')} } = vendored;`] : []),
    'export default vendored;',
    '',
  ].join('\n');
}

export interface Vendored {
  /** The npm package. */
  pkg: string;
  /** dist/vendor/<file>.cjs and .js. */
  file: string;
  /**
   * Modules the library only requires on paths we never take, inside
   * try/catch: left out of the bundle, still found at run time if present.
   */
  external: string[];
}

export const VENDORED: Vendored[] = [
  // TypeScript loaders (running commands from sources in development) and Yarn PnP.
  { pkg: '@oclif/core', file: 'oclif-core', external: ['typescript', 'ts-node', 'tsx', 'pnpapi'] },
  // Template watching, which we never ask for.
  { pkg: 'nunjucks', file: 'nunjucks', external: ['chokidar', 'fsevents'] },
];

export async function buildVendorBundle(lib: Vendored, root = projectRoot): Promise<string> {
  const require = createRequire(path.join(root, 'package.json'));
  const exported = require(lib.pkg) as Record<string, unknown>;
  const names = typeof exported === 'object' || typeof exported === 'function' ? Object.keys(exported) : [];
  const esbuild = (await import('esbuild')) as typeof import('esbuild');
  const dir = path.join(root, VENDOR_DIR);
  await fs.mkdir(dir, { recursive: true });
  const bundleFile = path.join(dir, `${lib.file}.cjs`);
  await replaceAtomically(bundleFile, (tmp) =>
    esbuild.build({
      entryPoints: [require.resolve(lib.pkg)],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      outfile: tmp,
      external: lib.external,
      legalComments: 'eof',
      logLevel: 'warning',
      plugins: [renameDynamicImports, asciiStringWidth],
    }),
  );
  const left = DYNAMIC_IMPORT_CALL.exec(await fs.readFile(bundleFile, 'utf8'));
  if (left) throw new Error(`${path.relative(root, bundleFile)} still calls import() at offset ${left.index}; util/code-cache.ts cannot load it`);
  const shim = path.join(dir, `${lib.file}.js`);
  await writeFileAtomically(shim, shimSource(lib, names));
  return shim;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const lib of VENDORED) await buildVendorBundle(lib);
}
