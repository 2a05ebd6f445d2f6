import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { readBoundedSync } from '../util/bounded-read.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { compareVersions, isVersion } from '../model/version.js';
import { slotOf, type ProvidedEbuild } from '../ebuild/dependencies.js';

/** What an overlay holds for one package. */
export interface PackageState {
  atom: string;
  /** Ebuild versions (with -rN), oldest first. */
  versions: string[];
  hasMetadata: boolean;
  /** The metadata.xml text, if any. */
  metadata?: string;
  /** The Manifest text, if any. */
  manifest?: string;
  /** Files under files/ (patches). */
  files: string[];
}

export interface OverlayState {
  dir: string;
  exists: boolean;
  repoName?: string;
  /** profiles/repo_name as the file holds it (repoName is its text trimmed). */
  repoNameText?: string;
  /** metadata/layout.conf as key → value. */
  layout?: Map<string, string>;
  eclass?: string;
  targetsDesc?: string;
  /** metadata/rocm-ebuild.conf, the overlay's rocm-ebuild settings (overlay/settings.ts). */
  settings?: string;
  /** The package sets: sets.conf and the files under sets/, by path relative to the overlay. */
  packageSets: Map<string, string>;
  packages: Map<string, PackageState>;
}

/** No file of an overlay's that rocm-ebuild reads comes near this (a Manifest of a large package is some 100 KiB). */
const MAX_OVERLAY_FILE = 16 * 1024 * 1024;

/**
 * A file of the overlay, or undefined when there is none. Opened without
 * blocking and refused (exit 4, naming it) unless it is a regular file: an
 * untracked FIFO at sets.conf would otherwise hold the synchronous read, and
 * with it the whole process, signals included, for good.
 */
function readOptional(file: string): string | undefined {
  const r = readBoundedSync(file, MAX_OVERLAY_FILE);
  if (r.ok) return r.data.toString('utf8');
  if (r.code === 'ENOENT') return undefined;
  throw new UserError(
    `${file}: ${r.reason}; rocm-ebuild reads only regular files of the overlay, so nothing was written\n` +
      'hint: remove it or put the regular file git tracks in its place (git checkout -- <path>), then run again',
    ExitCode.overlayRefused,
  );
}

/** A file that must exist (an ebuild a listing found), read as readOptional reads. */
function readRequired(file: string): string {
  const text = readOptional(file);
  if (text === undefined) throw new UserError(`${file}: no such file; the overlay changed while rocm-ebuild read it`, ExitCode.overlayRefused);
  return text;
}

export function parseLayoutConf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const m = /^([A-Za-z0-9_-]+)\s*=\s*(.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!.trim());
  }
  return out;
}

/** The files outside package directories that scanOverlay reads. */
const SCANNED_FILES = ['profiles/repo_name', 'metadata/layout.conf', 'metadata/rocm-ebuild.conf', 'eclass/rocm.eclass', 'profiles/desc/amdgpu_targets.desc', 'sets.conf'];
/** Directories outside package directories whose files scanOverlay reads. */
const SCANNED_DIRS = ['metadata/sets'];

/** git pathspecs covering everything scanOverlay may read for `atoms`. */
export function scannedPathspecs(atoms: readonly string[]): string[] {
  return [...SCANNED_FILES, ...SCANNED_DIRS, ...atoms];
}

/** Whether scanOverlay reads `file` (relative, forward slashes) for one of `atoms`: what it holds decides the plan. */
export function isScanned(file: string, atoms: ReadonlySet<string>): boolean {
  if (SCANNED_FILES.includes(file) || SCANNED_DIRS.some((d) => file.startsWith(`${d}/`))) return true;
  const [category, pn, name, ...rest] = file.split('/');
  if (!category || !pn || !name || !atoms.has(`${category}/${pn}`)) return false;
  if (name === 'files') return rest.length > 0;
  return rest.length === 0 && (name === 'Manifest' || name === 'metadata.xml' || name.endsWith('.ebuild'));
}

/**
 * Read what the overlay holds for the given packages (others are not looked
 * at). The reads are synchronous on purpose: some 150 small ones for a
 * release, where a trip through libuv's thread pool each cost 20-30 ms of
 * waiting against 3-5 ms.
 */
export async function scanOverlay(dir: string, atoms: readonly string[]): Promise<OverlayState> {
  let exists = true;
  try {
    exists = statSync(dir).isDirectory();
  } catch {
    exists = false;
  }
  const state: OverlayState = { dir, exists, packageSets: new Map(), packages: new Map() };
  if (!exists) return state;
  state.repoNameText = readOptional(path.join(dir, 'profiles', 'repo_name'));
  state.repoName = state.repoNameText?.trim();
  const layout = readOptional(path.join(dir, 'metadata', 'layout.conf'));
  if (layout !== undefined) state.layout = parseLayoutConf(layout);
  state.eclass = readOptional(path.join(dir, 'eclass', 'rocm.eclass'));
  state.targetsDesc = readOptional(path.join(dir, 'profiles', 'desc', 'amdgpu_targets.desc'));
  state.settings = readOptional(path.join(dir, 'metadata', 'rocm-ebuild.conf'));
  const setsConf = readOptional(path.join(dir, 'sets.conf'));
  if (setsConf !== undefined) state.packageSets.set('sets.conf', setsConf);
  for (const d of SCANNED_DIRS) {
    let names: string[] = [];
    try {
      names = readdirSync(path.join(dir, d)).sort();
    } catch {
      names = [];
    }
    for (const name of names) {
      const file = path.join(dir, d, name);
      // A directory under metadata/sets is not a set; anything else that is not a regular file is refused.
      if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) continue;
      const text = readOptional(file);
      if (text !== undefined) state.packageSets.set(`${d}/${name}`, text);
    }
  }
  for (const atom of atoms) {
    const pkgDir = path.join(dir, atom);
    const pn = atom.split('/')[1]!;
    let entries: string[];
    try {
      entries = readdirSync(pkgDir);
    } catch {
      continue;
    }
    const versions = entries
      .filter((f) => f.startsWith(`${pn}-`) && f.endsWith('.ebuild'))
      .map((f) => f.slice(pn.length + 1, -'.ebuild'.length))
      .filter(isVersion)
      .sort(compareVersions);
    let files: string[] = [];
    try {
      files = readdirSync(path.join(pkgDir, 'files')).sort();
    } catch {
      files = [];
    }
    const manifest = readOptional(path.join(pkgDir, 'Manifest'));
    const metadata = entries.includes('metadata.xml') ? readOptional(path.join(pkgDir, 'metadata.xml')) : undefined;
    state.packages.set(atom, {
      atom,
      versions,
      hasMetadata: entries.includes('metadata.xml'),
      ...(manifest !== undefined ? { manifest } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
      files,
    });
  }
  return state;
}

/** An ebuild's text as the worktree holds it (the bump checked it is clean: the same as HEAD's). */
export function readEbuild(dir: string, atom: string, version: string): string {
  const pn = atom.split('/')[1]!;
  return readRequired(path.join(dir, atom, `${pn}-${version}.ebuild`));
}

/** Every file under a package's files/, as paths relative to it ("a.patch", "sub/b.patch"), sorted. */
export function packageFiles(dir: string, atom: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries;
    try {
      entries = readdirSync(path.join(dir, atom, 'files', rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk('');
  return out.sort();
}

/** Top-level directories of an ebuild repository that are not categories. */
const NOT_CATEGORIES = new Set(['eclass', 'profiles', 'metadata', 'licenses', 'scripts', 'distfiles', 'packages']);

/**
 * Every package directory of the overlay (category/PN holding an ebuild), as
 * pkgdev and pkgcheck see a repository: categories are the top-level
 * directories with a dash in their name, or "virtual".
 */
export function overlayPackages(dir: string): string[] {
  const out: string[] = [];
  let top: string[];
  try {
    top = readdirSync(dir);
  } catch {
    return out;
  }
  for (const category of top.sort()) {
    if (NOT_CATEGORIES.has(category) || category.startsWith('.') || !(category.includes('-') || category === 'virtual')) continue;
    let names: string[];
    try {
      if (!statSync(path.join(dir, category)).isDirectory()) continue;
      names = readdirSync(path.join(dir, category));
    } catch {
      continue;
    }
    for (const pn of names.sort()) {
      try {
        if (readdirSync(path.join(dir, category, pn)).some((f) => f.startsWith(`${pn}-`) && f.endsWith('.ebuild'))) out.push(`${category}/${pn}`);
      } catch {
        // not a directory
      }
    }
  }
  return out;
}

/** An ebuild's literal SLOT assignment (one level of quotes removed), read without a parse: the index reads every ebuild. */
function slotAssignment(text: string): string | undefined {
  const m = /^SLOT=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#]*))/m.exec(text);
  return m ? (m[1] ?? m[2] ?? m[3] ?? '') : undefined;
}

/**
 * Every ebuild of these packages with its SLOT, by atom: what dependencies on
 * them are checked against (lint's NonexistentDeps). One read per ebuild.
 */
export function overlayIndex(dir: string, atoms: readonly string[]): Map<string, ProvidedEbuild[]> {
  const index = new Map<string, ProvidedEbuild[]>();
  for (const atom of atoms) {
    const pn = atom.split('/')[1]!;
    let entries: string[];
    try {
      entries = readdirSync(path.join(dir, atom));
    } catch {
      continue;
    }
    const held: ProvidedEbuild[] = [];
    for (const f of entries) {
      if (!f.startsWith(`${pn}-`) || !f.endsWith('.ebuild')) continue;
      const version = f.slice(pn.length + 1, -'.ebuild'.length);
      if (!isVersion(version)) continue;
      held.push(providedEbuild(readRequired(path.join(dir, atom, f)), pn, version));
    }
    if (held.length > 0) index.set(atom, held.sort((a, b) => compareVersions(a.version, b.version)));
  }
  return index;
}

/** One ebuild as the index holds it; a SLOT not written literally is left unknown (it then meets any slot). */
export function providedEbuild(text: string, pn: string, version: string): ProvidedEbuild {
  return { version, ...(slotOf(slotAssignment(text), pn, version) ?? {}) };
}
