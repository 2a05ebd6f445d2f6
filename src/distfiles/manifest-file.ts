import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { ManifestEntry } from './types.js';

/**
 * Thin Manifest text. Only DIST lines carry meaning in a thin Manifest
 * (thin-manifests = true): EBUILD/AUX/MISC lines from an old thick Manifest are
 * accepted and dropped so converting a package is a plain rewrite.
 */

const HEX128 = /^[0-9a-fA-F]{128}$/;
const THICK_ONLY = new Set(['EBUILD', 'AUX', 'MISC']);

/**
 * A line of an existing Manifest that cannot be read. It is the user's file, so
 * it is reported where it is (file:line) and the overlay is refused (exit 4)
 * rather than rewritten: dropping a line we cannot read could lose the only
 * record of a distfile's digests.
 */
export class ManifestSyntaxError extends UserError {
  constructor(
    readonly reason: string,
    readonly file: string | undefined,
    readonly line: number,
  ) {
    super(
      `${file ?? 'Manifest'}:${line}: ${reason}\n` +
        '  what to do: correct the line, or delete it and run `rocm-ebuild manifest` to record it again from the distfile',
      ExitCode.overlayRefused,
      { file: file ?? null, line, reason },
    );
    this.name = 'ManifestSyntaxError';
  }
}

/** A name that can stand in a Manifest line and in DISTDIR without escaping anything. */
export function isValidDistfileName(name: string): boolean {
  return name.length > 0 && name !== '.' && name !== '..' && !/[\s/\\\0]/.test(name);
}

export function parseManifest(text: string, file?: string): ManifestEntry[] {
  const byName = new Map<string, ManifestEntry>();
  const lines = text.split('\n');
  lines.forEach((raw, index) => {
    const lineNo = index + 1;
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const fields = line.trim().split(/\s+/);
    const type = fields[0]!;
    if (THICK_ONLY.has(type)) return;
    if (type !== 'DIST') {
      throw new ManifestSyntaxError(`unknown entry type "${type}" (a thin Manifest holds DIST lines only)`, file, lineNo);
    }
    if (fields.length < 3 || fields.length % 2 !== 1) {
      throw new ManifestSyntaxError('expected "DIST <file> <size>" followed by pairs of "<HASH> <hex>"', file, lineNo);
    }
    const name = fields[1]!;
    const sizeText = fields[2]!;
    if (!isValidDistfileName(name)) throw new ManifestSyntaxError(`invalid file name "${name}"`, file, lineNo);
    if (!/^\d+$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) {
      throw new ManifestSyntaxError(`invalid size "${sizeText}" for ${name}`, file, lineNo);
    }
    const hashes = new Map<string, string>();
    for (let i = 3; i < fields.length; i += 2) {
      const algo = fields[i]!;
      if (hashes.has(algo)) throw new ManifestSyntaxError(`${algo} given twice for ${name}`, file, lineNo);
      hashes.set(algo, fields[i + 1]!);
    }
    // Other algorithms (SHA256, RMD160 from pre-2017 Manifests) are dropped: the
    // overlay's manifest-hashes are BLAKE2B and SHA512, and both are required.
    const entry: Partial<ManifestEntry> = { name, size: Number(sizeText) };
    for (const [algo, key] of [['BLAKE2B', 'blake2b'], ['SHA512', 'sha512']] as const) {
      const hex = hashes.get(algo);
      if (hex === undefined) {
        throw new ManifestSyntaxError(`${name} has no ${algo} digest; re-run the manifest command to rehash it`, file, lineNo);
      }
      if (!HEX128.test(hex)) throw new ManifestSyntaxError(`${algo} of ${name} is not 128 hex digits`, file, lineNo);
      entry[key] = hex.toLowerCase();
    }
    const complete = entry as ManifestEntry;
    const previous = byName.get(name);
    if (previous && !sameEntry(previous, complete)) {
      throw new ManifestSyntaxError(`${name} is listed twice with different size or digests`, file, lineNo);
    }
    byName.set(name, complete);
  });
  return sortEntries([...byName.values()]);
}

export function formatManifest(entries: ManifestEntry[]): string {
  return sortEntries(entries)
    .map((e) => {
      if (!isValidDistfileName(e.name)) throw new Error(`cannot write Manifest entry for invalid file name "${e.name}"`);
      if (!Number.isSafeInteger(e.size) || e.size < 0) throw new Error(`invalid size ${e.size} for ${e.name}`);
      if (!HEX128.test(e.blake2b) || !HEX128.test(e.sha512)) throw new Error(`invalid digest for ${e.name}`);
      return `DIST ${e.name} ${e.size} BLAKE2B ${e.blake2b.toLowerCase()} SHA512 ${e.sha512.toLowerCase()}\n`;
    })
    .join('');
}

/**
 * The package's new entry list: old entries whose name `keep` accepts, with
 * every entry of `set` replacing (or adding to) them. `set` wins over `keep`:
 * a file just verified for a present ebuild is always listed.
 */
export function updateManifest(
  old: ManifestEntry[],
  set: ManifestEntry[],
  keep: (name: string) => boolean,
): ManifestEntry[] {
  const byName = new Map<string, ManifestEntry>();
  for (const e of old) if (keep(e.name)) byName.set(e.name, e);
  for (const e of set) byName.set(e.name, e);
  return sortEntries([...byName.values()]);
}

export function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  return (
    a.name === b.name &&
    a.size === b.size &&
    a.blake2b.toLowerCase() === b.blake2b.toLowerCase() &&
    a.sha512.toLowerCase() === b.sha512.toLowerCase()
  );
}

/** Code-point order, as Portage writes Manifests: never locale-dependent. */
function sortEntries(entries: ManifestEntry[]): ManifestEntry[] {
  return [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
