import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cacheDisabled, cacheHome } from '../util/cache-home.js';

/**
 * The text of a help request (`--help`, `-h`, `help …`, no arguments), kept
 * from the run that printed it, so the next identical request prints it
 * without loading oclif: loading and configuring oclif is most of what
 * `rocm-ebuild --help` costs (measured on Node 20: 150 ms of CPU against
 * 70 ms for `node -e 0`, 110 ms for `node` importing oclif alone).
 *
 * Help is a function of the code, the command manifest, package.json, Node
 * (the VERSION line), the arguments, the terminal (a TTY's width) and the
 * environment (OCLIF_COLUMNS, colours). The key is a hash of all of those:
 * the files' bytes, and every environment variable but a few that change
 * from one shell prompt to the next and that help never reads (PWD…). Only a
 * run that exits 0 and writes nothing to stderr is kept, and only while
 * bin/run.js found the command manifest and the bundles current (the key
 * names their files, not the compiled modules behind them). Entries are
 * written whole (a temporary file renamed), a damaged one is a miss, and
 * ROCM_EBUILD_NO_CACHE turns it off like every other cache.
 */

/** Variables that differ between prompts of one shell and that help does not read. */
const VOLATILE = new Set(['PWD', 'OLDPWD', 'SHLVL', '_', 'HISTCMD', 'LINENO', 'RANDOM', 'SECONDS', 'EPOCHSECONDS', 'EPOCHREALTIME', 'SRANDOM']);
const FORMAT = 'rocm-ebuild help memo 1';
/** Entries kept; the oldest go beyond this. */
const MAX_ENTRIES = 64;
/** A temporary file older than this was left by a killed run. */
const STALE_TMP_MS = 10 * 60 * 1000;

/** Whether these arguments ask for help only (oclif shows help for them, and runs no command). */
export function isHelpRequest(argv: string[]): boolean {
  if (argv.length === 0) return true;
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  return words[0] === 'help' || words.includes('--help') || words.includes('-h');
}

/** The files the help text is made of, relative to the package root. */
const SOURCES = ['package.json', 'oclif.manifest.json', path.join('dist', 'cli', 'inputs.json')];
/**
 * Compiled modules help runs outside the bundles (oclif's help class and
 * what it imports, the hooks, oclif itself), named by size, mtime and inode
 * as the manifest cache names dist/src: `npx tsc` after an edit of the help
 * class leaves the bundles current but changes these.
 */
const MODULE_DIRS = [path.join('dist', 'src', 'cli'), path.join('dist', 'src', 'util'), path.join('dist', 'vendor')];

function memoKey(root: string, argv: string[], env: NodeJS.ProcessEnv): string {
  const h = createHash('sha256').update(FORMAT).update('\0');
  for (const f of SOURCES) h.update(readFileSync(path.join(root, f))).update('\0');
  for (const dir of MODULE_DIRS) {
    for (const f of readdirSync(path.join(root, dir)).sort()) {
      const st = statSync(path.join(root, dir, f));
      h.update(`${dir}/${f} ${st.size} ${st.mtimeMs} ${st.ino}\0`);
    }
  }
  h.update(JSON.stringify([process.version, process.platform, process.arch, argv]));
  h.update(JSON.stringify([process.stdout.isTTY === true, process.stdout.columns ?? null, process.stderr.isTTY === true]));
  const vars = Object.keys(env)
    .filter((k) => !VOLATILE.has(k))
    .sort()
    .map((k) => [k, env[k]]);
  return h.update(JSON.stringify(vars)).digest('hex');
}

function memoDir(env: NodeJS.ProcessEnv): string {
  return path.join(cacheHome(env), 'help');
}

/** The help text kept for this request, or undefined (none, unreadable, or the cache off). */
export function recalledHelp(root: string, argv: string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (cacheDisabled(env)) return undefined;
  try {
    const key = memoKey(root, argv, env);
    const entry = JSON.parse(readFileSync(path.join(memoDir(env), `${key.slice(0, 40)}.json`), 'utf8')) as { key?: unknown; stdout?: unknown };
    return entry.key === key && typeof entry.stdout === 'string' ? entry.stdout : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Watch this run's output; when it exits 0 having written only to stdout,
 * keep that text for the next identical request. Returns nothing: the
 * process's own output is untouched.
 */
export function rememberHelp(root: string, argv: string[], env: NodeJS.ProcessEnv = process.env): void {
  if (cacheDisabled(env)) return;
  let key: string;
  try {
    key = memoKey(root, argv, env);
  } catch {
    return;
  }
  const chunks: string[] = [];
  let clean = true;
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') chunks.push(chunk);
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk).toString('utf8'));
    else clean = false;
    return (out as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((...args: unknown[]) => {
    clean = false;
    return (err as (...a: unknown[]) => boolean)(...args);
  }) as typeof process.stderr.write;
  process.once('exit', (code) => {
    if (code !== 0 || !clean) return;
    store(memoDir(env), key, chunks.join(''));
  });
}

function store(dir: string, key: string, stdout: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const entry = path.join(dir, `${key.slice(0, 40)}.json`);
    const tmp = `${entry}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, stdout }), { mode: 0o600 });
    renameSync(tmp, entry);
    const files = readdirSync(dir);
    const now = Date.now();
    const kept: { f: string; t: number }[] = [];
    for (const f of files) {
      const t = statSync(path.join(dir, f), { throwIfNoEntry: false })?.mtimeMs;
      if (t === undefined) continue;
      if (f.endsWith('.tmp')) {
        if (now - t > STALE_TMP_MS) rmSync(path.join(dir, f), { force: true });
      } else kept.push({ f, t });
    }
    kept.sort((a, b) => b.t - a.t);
    for (const { f } of kept.slice(MAX_ENTRIES)) rmSync(path.join(dir, f), { force: true });
  } catch {
    // A read-only or full cache directory: the next request loads oclif again, nothing else.
  }
}
