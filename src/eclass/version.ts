/**
 * ROCM_VERSION as rocm.eclass reads it. Kept in lock-step with
 * `_rocm_select_policy` in eclass/rocm.eclass (test/eclass-policy.test.ts
 * compares the two): X.Y (read as X.Y.0), X.Y.Z, either with Gentoo version
 * suffixes (ignored), or 9999 for live ebuilds.
 */

/** The same regular expression as the eclass's. */
export const ROCM_VERSION_RE = /^([0-9]+)\.([0-9]+)(\.([0-9]+))?(_(alpha|beta|pre|rc|p)[0-9]*)*$/;

/** A release version as three numbers. */
export type Triple = readonly [number, number, number];

export type RocmVersion =
  | { kind: 'live'; text: string }
  | {
      kind: 'release';
      text: string;
      triple: Triple;
      normalized: string;
      /** X.Y.Z rather than X.Y: one release, not a release line. */
      patchGiven: boolean;
    };

/** Parse ROCM_VERSION; undefined when the eclass would reject it. */
export function parseRocmVersion(text: string): RocmVersion | undefined {
  if (text === '9999') return { kind: 'live', text };
  const m = ROCM_VERSION_RE.exec(text);
  if (!m) return undefined;
  const triple: Triple = [Number(m[1]), Number(m[2]), Number(m[4] ?? '0')];
  return { kind: 'release', text, triple, normalized: triple.join('.'), patchGiven: m[4] !== undefined };
}

/** Parse a plain X.Y.Z (or X.Y) release version of the target table. */
export function parseTriple(text: string): Triple | undefined {
  const m = /^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?$/.exec(text);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? '0')];
}

export function compareTriples(a: Triple, b: Triple): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}
