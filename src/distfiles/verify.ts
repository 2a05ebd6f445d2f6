import type { ManifestEntry } from './types.js';

function short(hex: string): string {
  return `${hex.slice(0, 16)}…`;
}

/** How `actual` differs from the Manifest's `expected`, or undefined when it matches. */
export function mismatch(actual: ManifestEntry, expected: ManifestEntry): string | undefined {
  const problems: string[] = [];
  if (actual.size !== expected.size) problems.push(`size ${actual.size}, Manifest ${expected.size}`);
  if (actual.blake2b !== expected.blake2b.toLowerCase()) {
    problems.push(`BLAKE2B ${short(actual.blake2b)}, Manifest ${short(expected.blake2b)}`);
  }
  if (actual.sha512 !== expected.sha512.toLowerCase()) {
    problems.push(`SHA512 ${short(actual.sha512)}, Manifest ${short(expected.sha512)}`);
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}
