import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE_INPUTS, COMMAND_BUNDLE_DIR, projectRoot } from '../paths.js';
import { cacheDisabled, cacheHome } from './cache-home.js';
import { readBoundedSync } from './bounded-read.js';

/**
 * What a small loader made of a few files, kept between runs and keyed on
 * their content: `gpu list` reads three YAML files (stack.yaml, targets.yaml,
 * devices.yaml) whose parsing and checking took 120 ms, three times the
 * reading of the whole GPU topology, on every run.
 *
 * The key is the SHA-256 of the files' bytes (not their mtime: an edit within
 * one timestamp tick is seen), the loader's name and arguments, and the code
 * (size, mtime and inode of every compiled module, so a rebuilt rocm-ebuild
 * computes afresh). It is taken before and after the loader runs, and the
 * result stored only if both agree, so an edit made while the loader read the
 * files never pairs its result with the other content. Only results are
 * stored: a loader that throws throws again on the next run, with its full
 * report. Anything but a regular file of at most 4 MiB (a FIFO, a device, a
 * missing file) is left to the loader to refuse, uncached.
 *
 * One JSON file per loader and argument list under
 * $XDG_CACHE_HOME/rocm-ebuild/checked/, written to a temporary name and
 * renamed; an unreadable or foreign entry is ignored and replaced.
 * ROCM_EBUILD_NO_CACHE turns it off, like the other caches.
 */

const FORMAT = 1;
const MAX_BYTES = 4 * 1024 * 1024;
/** Entries kept (three per manifest location for gpu list); the least recently written go beyond this. */
const MAX_ENTRIES = 64;
/** A temporary file older than this was left by a killed run, not a write in progress. */
const STALE_TMP_MS = 10 * 60 * 1000;

let codeIdentityMemo: string | undefined;

/**
 * The .js and .cjs files under `dir`, relative, sorted. Walked by hand: Node
 * 20's readdirSync({ recursive }) took 11-14 ms here for what this does in 2-4.
 */
export function compiledModules(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...compiledModules(path.join(dir, e.name), `${prefix}${e.name}/`));
    else if (e.name.endsWith('.js') || e.name.endsWith('.cjs')) out.push(`${prefix}${e.name}`);
  }
  return out.sort();
}

/**
 * Defined (as true) by esbuild in the command bundles of dist/cli
 * (src/cli/command-bundles.ts); absent when running the modules of dist/src.
 */
declare const ROCM_EBUILD_BUNDLED: boolean | undefined;

/**
 * The code that runs, hashed once per process. From the command bundles: the
 * bundles' list of inputs, its bytes and its size, mtime and inode. bin/run.js
 * runs the bundles only while no input changed since that list was written,
 * and every build writes it anew (a rename: another inode), so this changes
 * with every build, as the walk below does, without its 200 stats (8-12 ms of
 * every command reading the manifest). From dist/src: size, mtime and inode of
 * every compiled module.
 */
export function codeIdentity(): string {
  if (codeIdentityMemo) return codeIdentityMemo;
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const hash = createHash('sha256');
  if (typeof ROCM_EBUILD_BUNDLED !== 'undefined' && ROCM_EBUILD_BUNDLED) {
    const list = path.join(projectRoot, COMMAND_BUNDLE_DIR, BUNDLE_INPUTS);
    try {
      const st = statSync(list);
      const content = readFileSync(list);
      hash.update(`bundles ${st.size} ${st.mtimeMs} ${st.ino}\0`).update(content);
      return (codeIdentityMemo = hash.digest('hex'));
    } catch {
      // The list went (a build in progress removes nothing, but a user may): identify the modules instead.
    }
  }
  for (const f of compiledModules(src)) {
    const st = statSync(path.join(src, f));
    hash.update(`${f} ${st.size} ${st.mtimeMs} ${st.ino}\0`);
  }
  return (codeIdentityMemo = hash.digest('hex'));
}

/** The bytes of `file` if it is a regular file small enough to be a loader's input, else undefined. */
function contentOf(file: string): Buffer | undefined {
  const read = readBoundedSync(file, MAX_BYTES);
  return read.ok ? read.data : undefined;
}

function keyOf(kind: string, args: unknown, files: string[]): string | undefined {
  const hash = createHash('sha256').update(`rocm-ebuild content memo ${FORMAT}\0${process.version}\0${codeIdentity()}\0${kind}\0${JSON.stringify(args)}\0`);
  for (const f of files) {
    const content = contentOf(f);
    if (!content) return undefined;
    hash.update(`${path.resolve(f)}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

export function memoDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheHome(env), 'checked');
}

interface Entry {
  format: number;
  kind: string;
  key: string;
  value: unknown;
}

/**
 * `load()`'s result for `files` as they are now: from the cache when a run
 * already loaded the same content with the same code, else computed and
 * stored. `kind` names the loader and `args` its other inputs (both part of
 * the key); the result must survive JSON.
 */
export async function memoOnContent<T>(kind: string, args: unknown, files: string[], load: () => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const found = lookup<T>(kind, args, files, env);
  if ('value' in found) return found.value;
  const value = await load();
  keep(found, kind, args, files, value);
  return value;
}

/** The same for a loader that is synchronous (a lint check's data, read where no promise can be awaited). */
export function memoOnContentSync<T>(kind: string, args: unknown, files: string[], load: () => T, env: NodeJS.ProcessEnv = process.env): T {
  const found = lookup<T>(kind, args, files, env);
  if ('value' in found) return found.value;
  const value = load();
  keep(found, kind, args, files, value);
  return value;
}

type Lookup<T> = { value: T } | { before: string; entryFile: string } | { uncached: true };

function lookup<T>(kind: string, args: unknown, files: string[], env: NodeJS.ProcessEnv): Lookup<T> {
  if (cacheDisabled(env)) return { uncached: true };
  const before = keyOf(kind, args, files);
  if (!before) return { uncached: true };
  const entryFile = path.join(memoDir(env), `${createHash('sha256').update(`${kind}\0${JSON.stringify(args)}\0${files.map((f) => path.resolve(f)).join('\0')}`).digest('hex').slice(0, 32)}.json`);
  try {
    const entry = JSON.parse(readFileSync(entryFile, 'utf8')) as Entry;
    if (entry.format === FORMAT && entry.kind === kind && entry.key === before) return { value: entry.value as T };
  } catch {
    // None yet, or unreadable: computed and replaced.
  }
  return { before, entryFile };
}

/** Store what the loader made, unless its files changed while it read them. */
function keep(found: Lookup<unknown>, kind: string, args: unknown, files: string[], value: unknown): void {
  if (!('before' in found)) return;
  if (keyOf(kind, args, files) === found.before) store(found.entryFile, { format: FORMAT, kind, key: found.before, value });
}

function store(file: string, entry: Entry): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(tmp, file);
    prune(path.dirname(file));
  } catch {
    // A cache that cannot be written only costs time.
    rmSync(tmp, { force: true });
  }
}

function prune(dir: string): void {
  const now = Date.now();
  const entries: { file: string; mtime: number }[] = [];
  for (const f of readdirSync(dir)) {
    const file = path.join(dir, f);
    const mtime = statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? now;
    if (f.endsWith('.tmp') && now - mtime > STALE_TMP_MS) rmSync(file, { force: true });
    else if (f.endsWith('.json')) entries.push({ file, mtime });
  }
  entries.sort((a, b) => b.mtime - a.mtime);
  for (const e of entries.slice(MAX_ENTRIES)) rmSync(e.file, { force: true });
}
