import { createHash, randomBytes } from 'node:crypto';
import { promises as fs, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { schemasDir } from '../paths.js';
import { cacheDisabled, cacheHome } from '../util/cache-home.js';
import { codeIdentity } from '../util/content-memo.js';
import type { Manifest } from '../manifest/load.js';
import { parseYamlSource, type YamlSource } from '../manifest/yaml-source.js';
import type { Policies } from '../model/targets.js';

/**
 * The checked manifest of a previous run, reused while nothing it was made
 * from has changed: reading, schema validation and the stack-wide checks of
 * every release are most of what validate, graph, render and bump cost.
 *
 * A cache that can go stale is a defect, so the key is the content of every
 * file the load could have depended on: every file under the manifest's
 * directory (so an added, removed or renamed component is seen, whatever the
 * globs say), the schemas, and the code (size, mtime and inode of each
 * compiled module: a rebuilt rocm-ebuild checks afresh). A manifest that
 * reads files outside its directory (a targets file elsewhere) is not cached.
 * The key is computed before and after the load, and an entry stored only if
 * both agree: an edit made while the files were read is not paired with what
 * the load made of them. Only manifests that passed every check are stored;
 * an invalid one is validated, and its problems reported, every time.
 *
 * One file per manifest under $XDG_CACHE_HOME/rocm-ebuild/manifest/, written
 * to a temporary name and renamed, so a concurrent run reads the old entry or
 * the new one, never half of one. An entry that cannot be read, was written
 * by another version or for another manifest, or whose key differs is
 * ignored and replaced.
 */

const MAGIC = 'rocm-ebuild manifest cache';
const FORMAT = 1;
/** Past these, the manifest's directory is not a manifest's (a stack.yaml in $HOME): no cache. */
const MAX_FILES = 4000;
const MAX_BYTES = 64 * 1024 * 1024;
/** Entries kept: one per manifest location, the least recently written dropped beyond this. */
const MAX_ENTRIES = 32;
/** A temporary file older than this is a killed run's, not a write in progress. */
const STALE_TMP_MS = 10 * 60 * 1000;

// The switch is shared by every cache of checked results; re-exported for the callers of this module.
export { cacheDisabled };

export function manifestCacheFile(stackFile: string, env: NodeJS.ProcessEnv = process.env): string {
  const id = createHash('sha256').update(path.resolve(stackFile)).digest('hex').slice(0, 24);
  return path.join(cacheHome(env), 'manifest', `${id}.v8`);
}

/** A YamlSource as stored: the parse tree and line table are rebuilt from the text when asked for. */
interface StoredSource {
  __yamlSource: true;
  file: string;
  value: unknown;
  text: string;
}

interface Entry {
  magic: string;
  format: number;
  stackFile: string;
  key: string;
  manifest: unknown;
  policies: Policies;
}

/**
 * Everything under `dir`, sorted, with its content, into `hash`; false when
 * it is not cacheable (too big, something that is not a file or directory,
 * a directory link that loops). Links are followed, files and directories
 * alike, and hashed as what they lead to: the load follows them too (a
 * `components` directory that is a link to a checkout elsewhere is read
 * through it), so a retargeted link, or an edit behind one, changes the key.
 */
function treeKey(dir: string, hash: ReturnType<typeof createHash>): boolean {
  const budget = { files: MAX_FILES, bytes: MAX_BYTES };
  const visited = new Set<string>();
  // Synchronous on purpose: some 80 small files, where the promise API's hop
  // through libuv's thread pool per call cost 15-30 ms against 3-5 ms.
  const walk = (at: string, prefix: string): boolean => {
    let real: string;
    let entries: string[];
    try {
      real = realpathSync(at);
      entries = readdirSync(at);
    } catch {
      return false;
    }
    // A link back to a directory being walked would never end; such a manifest is not cached.
    if (visited.has(real)) return false;
    visited.add(real);
    const names = entries.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    budget.files -= names.length;
    if (budget.files < 0) return false;
    for (const name of names) {
      const rel = `${prefix}${name}`;
      let st;
      try {
        st = statSync(path.join(at, name), { throwIfNoEntry: false });
      } catch {
        // A link loop (ELOOP) or an unreadable entry: the load reports it, located; nothing is cached.
        return false;
      }
      if (!st) {
        // A dangling link: its target's absence is what the load saw too.
        hash.update(`x ${rel}\0`);
        continue;
      }
      if (st.isDirectory()) {
        hash.update(`d ${rel}\0`);
        if (!walk(path.join(at, name), `${rel}/`)) return false;
        continue;
      }
      // Anything else that is not a regular file (a FIFO given as a component) is left to the load to refuse, uncached.
      if (!st.isFile()) return false;
      budget.bytes -= st.size;
      if (budget.bytes < 0) return false;
      let content: Buffer;
      try {
        content = readFileSync(path.join(at, name));
      } catch {
        return false;
      }
      hash.update(`f ${rel} ${content.length}\0`).update(content);
    }
    visited.delete(real);
    return true;
  };
  return walk(dir, '');
}

/** The libraries whose verdict or output a load depends on: a different version may read or validate otherwise. */
const LIBRARIES = ['yaml', 'ajv', 'fast-glob', 'web-tree-sitter', 'tree-sitter-bash'];

/**
 * The package.json of library `name` as a bare import from this module finds
 * it: in node_modules/<name> of the nearest directory up the tree that has
 * one, which is where Node's resolver looks. By hand: import.meta.resolve cost
 * about a millisecond per name here, for what is one read. Synchronous: each
 * trip through the thread pool cost 2-3 ms. Empty when not installed (the load
 * would fail, and nothing would be stored).
 */
function libraryManifest(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      return readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8');
    } catch {
      // Not here: the resolver goes on to the parent directory.
    }
    const up = path.dirname(dir);
    if (up === dir) return '';
    dir = up;
  }
}

/**
 * The code (codeIdentity: what a rebuild or an upgrade changes), and the
 * package.json of each library the load uses (an `npm install` that brings
 * another version of one).
 */
function codeKey(hash: ReturnType<typeof createHash>): void {
  hash.update(`code ${codeIdentity()}\0`);
  for (const name of LIBRARIES) {
    const manifest = libraryManifest(name);
    hash.update(`lib ${name} ${manifest.length}\0${manifest}\0`);
  }
}

/** The key of everything a load reads; undefined when the manifest's directory is not cacheable. */
export async function computeKey(stackFile: string): Promise<string | undefined> {
  const hash = createHash('sha256').update(`${MAGIC} ${FORMAT} ${process.version}\0${path.resolve(stackFile)}\0`);
  codeKey(hash);
  hash.update('schemas\0');
  if (!treeKey(schemasDir, hash)) return undefined;
  hash.update('manifest\0');
  if (!treeKey(path.dirname(path.resolve(stackFile)), hash)) return undefined;
  return hash.digest('hex');
}

function isSource(v: unknown): v is YamlSource {
  return typeof v === 'object' && v !== null && 'doc' in v && 'lines' in v && 'text' in v && 'file' in v && 'value' in v;
}

/** The manifest with each YamlSource reduced to what rebuilds it; shared objects stay shared (v8 keeps identity). */
function dehydrate(manifest: Manifest): unknown {
  const stored = new Map<YamlSource, StoredSource>();
  const store = (s: YamlSource): StoredSource => {
    let out = stored.get(s);
    if (!out) stored.set(s, (out = { __yamlSource: true, file: s.file, value: s.value, text: s.text }));
    return out;
  };
  const walk = (v: unknown, seen: Map<object, unknown>): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (isSource(v)) return store(v);
    if (seen.has(v)) return seen.get(v);
    if (v instanceof Map || v instanceof Set || ArrayBuffer.isView(v) || v instanceof Date || v instanceof RegExp) return v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      seen.set(v, out);
      for (const x of v) out.push(walk(x, seen));
      return out;
    }
    const out: Record<string, unknown> = {};
    seen.set(v, out);
    for (const [k, x] of Object.entries(v)) out[k] = walk(x, seen);
    return out;
  };
  return walk(manifest, new Map());
}

/** A YamlSource whose parse tree and line table come from its text on first use (error positions only). */
function rehydrateSource(s: StoredSource): YamlSource {
  let parsed: YamlSource | undefined;
  const parse = (): YamlSource => (parsed ??= parseYamlSource(s.file, s.text).source!);
  return {
    file: s.file,
    value: s.value,
    text: s.text,
    get doc() {
      return parse().doc;
    },
    get lines() {
      return parse().lines;
    },
  };
}

/**
 * Where a Manifest holds its YamlSources: the stack file, each component's,
 * each external file's. Only these are looked at when an entry is read (the
 * values around them are plain data, 5000 objects a full walk took 5-20 ms
 * over); dehydrate still walks everything, and a test fails if a stored
 * source is left anywhere else.
 */
function rehydrate(stored: unknown): Manifest | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const m = stored as Manifest;
  if (!Array.isArray(m.components) || !Array.isArray(m.externalSources)) return undefined;
  const made = new Map<StoredSource, YamlSource>();
  const source = (v: unknown): YamlSource => {
    const s = v as StoredSource;
    if (typeof s !== 'object' || s === null || s.__yamlSource !== true) throw new Error('not a stored source');
    let out = made.get(s);
    if (!out) made.set(s, (out = rehydrateSource(s)));
    return out;
  };
  try {
    m.stackSource = source(m.stackSource);
    for (const c of m.components) c.source = source(c.source);
    m.externalSources = m.externalSources.map(source);
  } catch {
    return undefined; // not the shape this code writes: read as a miss
  }
  return m;
}

export interface CachedManifest {
  manifest: Manifest;
  policies: Policies;
}

/** The cached manifest of `stackFile` when its key still holds, else undefined. */
export async function readCachedManifest(stackFile: string, env: NodeJS.ProcessEnv = process.env): Promise<CachedManifest | undefined> {
  let entry: Entry;
  try {
    entry = v8.deserialize(await fs.readFile(manifestCacheFile(stackFile, env))) as Entry;
  } catch {
    return undefined; // none yet, unreadable, truncated or not ours
  }
  if (
    typeof entry !== 'object' ||
    entry === null ||
    entry.magic !== MAGIC ||
    entry.format !== FORMAT ||
    entry.stackFile !== path.resolve(stackFile) ||
    typeof entry.key !== 'string'
  ) {
    return undefined;
  }
  const key = await computeKey(stackFile);
  if (!key || key !== entry.key) return undefined;
  const manifest = rehydrate(entry.manifest);
  if (!manifest) return undefined;
  return { manifest, policies: entry.policies };
}

/**
 * Drop the oldest entries beyond MAX_ENTRIES (manifests in temporary
 * directories, long gone), and temporary files a killed run left (kill -9
 * between write and rename) once they are old enough not to be a concurrent
 * run's write in progress.
 */
async function prune(dir: string): Promise<void> {
  const names = await fs.readdir(dir);
  const now = Date.now();
  for (const f of names.filter((n) => n.endsWith('.tmp'))) {
    const st = await fs.stat(path.join(dir, f)).catch(() => undefined);
    if (st && now - st.mtimeMs > STALE_TMP_MS) await fs.rm(path.join(dir, f), { force: true });
  }
  const entries = names.filter((f) => f.endsWith('.v8'));
  if (entries.length <= MAX_ENTRIES) return;
  const aged = await Promise.all(entries.map(async (f) => ({ f, t: (await fs.stat(path.join(dir, f)).catch(() => undefined))?.mtimeMs ?? 0 })));
  aged.sort((a, b) => b.t - a.t);
  for (const { f } of aged.slice(MAX_ENTRIES)) await fs.rm(path.join(dir, f), { force: true });
}

/** Whether everything the load reads lies under the manifest's directory (so the key covers it). */
export function selfContained(manifest: Manifest): boolean {
  const rel = path.relative(manifest.dir, manifest.targetsFile);
  return !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * Store a checked manifest under `keys.before`, the key computed before the
 * load began; `keys.after`, computed after it, must be the same (nothing
 * changed while the load read the files), else nothing is stored.
 */
export async function writeCachedManifest(
  stackFile: string,
  loaded: CachedManifest,
  keys: { before: string; after: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  if (keys.before !== keys.after || !selfContained(loaded.manifest)) return;
  const entry: Entry = { magic: MAGIC, format: FORMAT, stackFile: path.resolve(stackFile), key: keys.before, manifest: dehydrate(loaded.manifest), policies: loaded.policies };
  const file = manifestCacheFile(stackFile, env);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(tmp, v8.serialize(entry));
    await fs.rename(tmp, file);
    await prune(path.dirname(file));
  } catch {
    // A cache that cannot be written (read-only home, full disk) only costs time.
    await fs.rm(tmp, { force: true }).catch(() => undefined);
  }
}
