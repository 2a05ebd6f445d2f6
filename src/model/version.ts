import type { VersionRange } from '../manifest/types.js';

/**
 * Gentoo version syntax and ordering (PMS section 3.2–3.3), enough to sort the
 * ebuilds an overlay holds and to tell which are older than a bump's release.
 */

const VERSION_RE = /^(\d+(?:\.\d+)*)([a-z])?((?:_(?:alpha|beta|pre|rc|p)\d*)*)(?:-r(\d+))?$/;
const SUFFIX_ORDER: Record<string, number> = { alpha: 0, beta: 1, pre: 2, rc: 3, p: 5 };

export interface GentooVersion {
  text: string;
  numbers: string[];
  letter: string;
  suffixes: { kind: string; n: bigint }[];
  revision: bigint;
}

export function parseVersion(text: string): GentooVersion | undefined {
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  const suffixes = [...(m[3] ?? '').matchAll(/_(alpha|beta|pre|rc|p)(\d*)/g)].map((s) => ({
    kind: s[1]!,
    n: BigInt(s[2] || '0'),
  }));
  return { text, numbers: m[1]!.split('.'), letter: m[2] ?? '', suffixes, revision: BigInt(m[4] ?? '0') };
}

export function isVersion(text: string): boolean {
  return parseVersion(text) !== undefined;
}

function cmpBig(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Comparisons already made: resolving a stack compares the same few hundred
 * versions against the same range bounds thousands of times (every release
 * against every override's range), and parsing each time was a tenth of a
 * manifest check. Bounded, so a long run comparing many versions stays small.
 */
const compared = new Map<string, number>();
const COMPARED_MAX = 50_000;

/** PMS 3.3 comparison; throws on text that is not a version. */
export function compareVersions(a: string, b: string): number {
  const key = `${a}\0${b}`;
  const known = compared.get(key);
  if (known !== undefined) return known;
  const c = compareParsed(a, b);
  if (compared.size >= COMPARED_MAX) compared.clear();
  compared.set(key, c);
  return c;
}

function compareParsed(a: string, b: string): number {
  const va = parseVersion(a);
  const vb = parseVersion(b);
  if (!va || !vb) throw new Error(`not a Gentoo version: ${!va ? a : b}`);
  const c0 = cmpBig(BigInt(va.numbers[0]!), BigInt(vb.numbers[0]!));
  if (c0 !== 0) return c0;
  const n = Math.max(va.numbers.length, vb.numbers.length);
  for (let i = 1; i < n; i++) {
    const x = va.numbers[i];
    const y = vb.numbers[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    // Components with a leading zero compare as strings (after stripping trailing zeros).
    if (x.startsWith('0') || y.startsWith('0')) {
      const xs = x.replace(/0+$/, '');
      const ys = y.replace(/0+$/, '');
      if (xs !== ys) return xs < ys ? -1 : 1;
    } else {
      const c = cmpBig(BigInt(x), BigInt(y));
      if (c !== 0) return c;
    }
  }
  if (va.letter !== vb.letter) return va.letter < vb.letter ? -1 : 1;
  const m = Math.max(va.suffixes.length, vb.suffixes.length);
  for (let i = 0; i < m; i++) {
    const x = va.suffixes[i];
    const y = vb.suffixes[i];
    if (!x || !y) {
      const present = (x ?? y)!;
      const sign = present.kind === 'p' ? 1 : -1;
      return x ? sign : -sign;
    }
    if (x.kind !== y.kind) return SUFFIX_ORDER[x.kind]! < SUFFIX_ORDER[y.kind]! ? -1 : 1;
    const c = cmpBig(x.n, y.n);
    if (c !== 0) return c;
  }
  return cmpBig(va.revision, vb.revision);
}

/** The version without its -rN revision. */
export function withoutRevision(version: string): string {
  return version.replace(/-r\d+$/, '');
}

export type { VersionRange };

/** `from` is inclusive, `until` exclusive, both compared as Gentoo versions. */
export function inRange(version: string, range: VersionRange | undefined): boolean {
  if (!range) return true;
  if (range.from !== undefined && compareVersions(version, range.from) < 0) return false;
  if (range.until !== undefined && compareVersions(version, range.until) >= 0) return false;
  return true;
}

