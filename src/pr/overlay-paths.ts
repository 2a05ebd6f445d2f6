import { isVersion, withoutRevision } from '../model/version.js';

/** Top-level directories of an ebuild repository that are not categories. */
const NOT_CATEGORIES = new Set(['eclass', 'profiles', 'metadata', 'licenses', 'scripts', 'distfiles', 'packages']);
const CATEGORY_RE = /^[A-Za-z0-9+_][A-Za-z0-9+_.-]*$/;
const PN_RE = /^[A-Za-z0-9+_][A-Za-z0-9+_-]*$/;

export interface PackagePath {
  category: string;
  pn: string;
  /** "category/PN" */
  key: string;
  /** The path below the package directory, e.g. "Manifest", "files/x.patch". */
  rest: string;
}

export interface EbuildPath extends PackagePath {
  /** Version with revision, e.g. "6.2.2-r1". */
  version: string;
  /** Version without -rN. */
  base: string;
  revision: number;
}

/**
 * The package a path belongs to. Categories are told apart from repository
 * directories the way Gentoo names them: every category has a dash except
 * "virtual" (an overlay need not carry profiles/categories).
 */
export function packageOf(path: string): PackagePath | undefined {
  const parts = path.split('/');
  if (parts.length < 3) return undefined;
  const [category, pn] = parts as [string, string];
  if (NOT_CATEGORIES.has(category) || category.startsWith('.')) return undefined;
  if (!CATEGORY_RE.test(category) || !(category.includes('-') || category === 'virtual')) return undefined;
  if (!PN_RE.test(pn)) return undefined;
  return { category, pn, key: `${category}/${pn}`, rest: parts.slice(2).join('/') };
}

/** "cat/pn/pn-1.2.3-r1.ebuild" → its package and version; undefined for other paths. */
export function ebuildOf(path: string): EbuildPath | undefined {
  const pkg = packageOf(path);
  if (!pkg || pkg.rest.includes('/') || !pkg.rest.endsWith('.ebuild')) return undefined;
  const stem = pkg.rest.slice(0, -'.ebuild'.length);
  if (!stem.startsWith(`${pkg.pn}-`)) return undefined;
  const version = stem.slice(pkg.pn.length + 1);
  if (!isVersion(version)) return undefined;
  const m = /-r(\d+)$/.exec(version);
  return { ...pkg, version, base: withoutRevision(version), revision: m ? Number(m[1]) : 0 };
}

/** The eclass name of "eclass/foo.eclass". */
export function eclassOf(path: string): string | undefined {
  const m = /^eclass\/([^/]+)\.eclass$/.exec(path);
  return m ? m[1] : undefined;
}
