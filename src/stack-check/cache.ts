import { createHash, randomBytes } from 'node:crypto';
import { promises as fs, type Dirent } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { schemasDir } from '../paths.js';
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

/** $XDG_CACHE_HOME/rocm-ebuild, or ~/.cache/rocm-ebuild (relative XDG values are ignored, as the spec says). */
export function cacheHome(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.cache');
  return path.join(base, 'rocm-ebuild');
}

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

/** Everything under `dir`, sorted, with its content hash; undefined when it is not cacheable. */
async function treeKey(dir: string, hash: ReturnType<typeof createHash>): Promise<boolean> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return false;
  }
  if (entries.length > MAX_FILES) return false;
  const rel = (e: Dirent) => path.relative(dir, path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
  const sorted = entries.map((e) => ({ e, name: rel(e) })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let bytes = 0;
  for (const { e, name } of sorted) {
    if (e.isDirectory()) {
      hash.update(`d ${name}\0`);
      continue;
    }
    // A link is hashed as what it points to (the load follows it); anything else that is not a
    // regular file (a FIFO given as a component) is left to the load to refuse, uncached.
    const full = path.join(dir, name);
    let content: Buffer;
    try {
      const st = await fs.stat(full);
      if (st.isDirectory()) {
        hash.update(`l ${name} -> dir\0`);
        continue;
      }
      if (!st.isFile()) return false;
      bytes += st.size;
      if (bytes > MAX_BYTES) return false;
      content = await fs.readFile(full);
    } catch {
      // A dangling link: its target's absence is what the load saw too.
      hash.update(`x ${name}\0`);
      continue;
    }
    hash.update(`f ${name} ${content.length}\0`).update(content);
  }
  return true;
}

/** The compiled code: size, mtime and inode of every module (a rebuild or an upgrade changes them). */
async function codeKey(hash: ReturnType<typeof createHash>): Promise<void> {
  const dist = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
  const entries = await fs.readdir(dist, { withFileTypes: true, recursive: true });
  const files = entries
    .filter((e) => e.isFile() && (e.name.endsWith('.js') || e.name.endsWith('.cjs')))
    .map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name))
    .sort();
  const stats = await Promise.all(files.map((f) => fs.stat(f)));
  files.forEach((f, i) => hash.update(`${path.relative(dist, f)} ${stats[i]!.size} ${stats[i]!.mtimeMs} ${stats[i]!.ino}\0`));
}

/** The key of everything a load reads; undefined when the manifest's directory is not cacheable. */
export async function computeKey(stackFile: string): Promise<string | undefined> {
  const hash = createHash('sha256').update(`${MAGIC} ${FORMAT} ${process.version}\0${path.resolve(stackFile)}\0`);
  await codeKey(hash);
  hash.update('schemas\0');
  if (!(await treeKey(schemasDir, hash))) return undefined;
  hash.update('manifest\0');
  if (!(await treeKey(path.dirname(path.resolve(stackFile)), hash))) return undefined;
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

function rehydrate(v: unknown, seen = new Map<object, unknown>()): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (seen.has(v)) return seen.get(v);
  if ((v as Partial<StoredSource>).__yamlSource === true) {
    const out = rehydrateSource(v as StoredSource);
    seen.set(v, out);
    return out;
  }
  if (v instanceof Map || v instanceof Set || ArrayBuffer.isView(v) || v instanceof Date || v instanceof RegExp) return v;
  if (Array.isArray(v)) {
    seen.set(v, v);
    for (let i = 0; i < v.length; i++) v[i] = rehydrate(v[i], seen);
    return v;
  }
  seen.set(v, v);
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) o[k] = rehydrate(o[k], seen);
  return v;
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
  const manifest = rehydrate(entry.manifest) as Manifest;
  if (typeof manifest !== 'object' || manifest === null || !Array.isArray(manifest.components)) return undefined;
  return { manifest, policies: entry.policies };
}

/** Drop the oldest entries beyond MAX_ENTRIES (manifests in temporary directories, long gone). */
async function prune(dir: string): Promise<void> {
  const names = (await fs.readdir(dir)).filter((f) => f.endsWith('.v8'));
  if (names.length <= MAX_ENTRIES) return;
  const aged = await Promise.all(names.map(async (f) => ({ f, t: (await fs.stat(path.join(dir, f)).catch(() => undefined))?.mtimeMs ?? 0 })));
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
