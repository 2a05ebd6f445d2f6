#!/usr/bin/env node
import { readdirSync, readFileSync, statSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// Node 22.1 and later keep compiled code between runs (keyed on the source
// text): about 15 % of `--help`, which is mostly loading oclif. Node 20 has no
// such cache. It goes into rocm-ebuild's own cache directory, not Node's
// default under the OS temporary directory: the tool writes nowhere else, and
// ROCM_EBUILD_NO_CACHE turns it off like every other cache. Modules imported below.
if (module.enableCompileCache) {
  const { cacheDisabled, cacheHome } = await import('../dist/src/util/cache-home.js');
  if (!cacheDisabled()) module.enableCompileCache(`${cacheHome()}/node-compile-cache`);
}
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * oclif.manifest.json (written by `npm run build`) spares every command the
 * import of all the others and points each at its bundle in dist/cli
 * (src/cli/command-bundles.ts). oclif trusts it blindly, so it is used only
 * when it lists exactly the command files on disk and the bundles are
 * current; otherwise every command is imported from dist/src, as without
 * it: slower, never wrong (after `npx tsc -p .` alone, say).
 */
function manifestCurrent() {
  try {
    const { commands } = JSON.parse(readFileSync(`${root}oclif.manifest.json`, 'utf8'));
    const listed = Object.keys(commands).map((id) => `dist/src/commands/${id.replace(/:/g, '/')}.js`).sort();
    // Walked by hand: Node 20's readdirSync({ recursive }) costs several times more.
    const onDisk = [];
    const walk = (dir) => {
      for (const e of readdirSync(`${root}${dir}`, { withFileTypes: true })) {
        if (e.isDirectory()) walk(`${dir}/${e.name}`);
        else if (e.name.endsWith('.js')) onDisk.push(`${dir}/${e.name}`);
      }
    };
    walk('dist/src/commands');
    onDisk.sort();
    return listed.length === onDisk.length && listed.every((f, i) => f === onDisk[i]);
  } catch {
    return false;
  }
}

/**
 * The bundles are current when every compiled module they were made from is
 * still there with its size and is no newer than their list of inputs,
 * written last by the build. (Not an exact mtime: npm packs every file with
 * one fixed date, which an installed package then has throughout.)
 */
function bundlesCurrent() {
  try {
    const list = `${root}dist/cli/inputs.json`;
    const built = statSync(list).mtimeMs;
    const { format, inputs } = JSON.parse(readFileSync(list, 'utf8'));
    if (format !== 1) return false;
    for (const [file, size] of Object.entries(inputs)) {
      const st = statSync(`${root}${file}`);
      if (st.size !== size || st.mtimeMs > built) return false;
    }
    return true;
  } catch {
    return false;
  }
}

const current = manifestCurrent() && bundlesCurrent();
const argv = process.argv.slice(2);
// A help request whose text an earlier run kept is printed without loading oclif (src/cli/help-memo.ts).
let recalled;
if (current && (argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h'))) {
  const memo = await import('../dist/src/cli/help-memo.js');
  if (memo.isHelpRequest(argv)) {
    recalled = memo.recalledHelp(root, argv);
    if (recalled === undefined) memo.rememberHelp(root, argv);
  }
}
// On import oclif checks Node against the engines of its own package.json,
// which the bundle in dist/vendor does not carry: the check would load semver
// (5 ms) to find nothing. Ours is package.json's engines, which npm checks.
const engineWarning = process.env.OCLIF_DISABLE_ENGINE_WARNING;
process.env.OCLIF_DISABLE_ENGINE_WARNING = '1';
const { execute, Plugin } = recalled === undefined ? await import('#oclif') : {};
if (engineWarning === undefined) delete process.env.OCLIF_DISABLE_ENGINE_WARNING;
else process.env.OCLIF_DISABLE_ENGINE_WARNING = engineWarning;

if (recalled !== undefined) {
  process.stdout.write(recalled);
} else if (current) {
  await execute({ dir: import.meta.url });
} else {
  const plugin = new Plugin({ root, type: 'core', isRoot: true, ignoreManifest: true });
  await plugin.load();
  await execute({ dir: import.meta.url, loadOptions: { root, plugins: new Map([[plugin.name, plugin]]) } });
}
