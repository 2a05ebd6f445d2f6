import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import { byCodePoint } from '../util/order.js';
import { levenshtein } from '../util/closest.js';

/**
 * Package names as a maintainer types them on the command line: the full
 * atom (`sci-libs/rocBLAS`), or the package name alone (`rocBLAS`) when only
 * one category has it. Case must match, as in Portage; a name that matches
 * nothing gets the nearest known names as suggestions, so a typo is one
 * line to fix rather than a lookup.
 */
export interface NameResolution {
  atoms: string[];
  problems: { name: string; why: string }[];
}

const NAME_RE = /^(?:[A-Za-z0-9+_][A-Za-z0-9+_.-]*\/)?[A-Za-z0-9+_][A-Za-z0-9+_-]*$/;

export function resolvePackageNames(names: readonly string[], known: readonly string[]): NameResolution {
  const atoms: string[] = [];
  const problems: NameResolution['problems'] = [];
  const byPn = new Map<string, string[]>();
  for (const atom of known) {
    const pn = atom.slice(atom.indexOf('/') + 1);
    byPn.set(pn, [...(byPn.get(pn) ?? []), atom]);
  }
  const knownSet = new Set(known);
  for (const raw of names) {
    const name = raw.trim();
    if (!NAME_RE.test(name)) {
      problems.push({ name: raw, why: 'is not a package name (category/PN or PN)' });
      continue;
    }
    let atom: string | undefined;
    if (name.includes('/')) {
      if (knownSet.has(name)) atom = name;
    } else {
      const hits = byPn.get(name) ?? [];
      if (hits.length > 1) {
        problems.push({ name, why: `is ambiguous: ${hits.sort(byCodePoint).join(', ')}; give the category` });
        continue;
      }
      atom = hits[0];
    }
    if (atom === undefined) {
      const near = suggestions(name, known);
      problems.push({ name, why: `is not known${near.length ? `; did you mean ${near.join(' or ')}?` : ''}` });
      continue;
    }
    if (!atoms.includes(atom)) atoms.push(atom);
  }
  return { atoms, problems };
}

/** resolvePackageNames, refusing (exit 2) any name that does not resolve; `what` names the set ("ROCm 6.2.4"). */
export function requirePackageNames(names: readonly string[], known: readonly string[], what: string): string[] {
  const r = resolvePackageNames(names, known);
  if (r.problems.length > 0) {
    throw new UserError(
      `${r.problems.length === 1 ? 'a package name' : 'package names'} not in ${what}:\n${r.problems.map((p) => `  ${JSON.stringify(p.name)} ${p.why}`).join('\n')}`,
      ExitCode.invalidInput,
      { unknown: r.problems },
    );
  }
  return r.atoms;
}

/** The known atoms closest to `name` (edit distance, case-insensitive), at most three. */
export function suggestions(name: string, known: readonly string[]): string[] {
  const lower = name.toLowerCase();
  // A typo or two, more for longer names; a full atom is compared as one, a PN with the PNs.
  const limit = Math.max(1, Math.floor(lower.length / 4));
  const scored = known
    .map((atom) => {
      const d = lower.includes('/') ? levenshtein(lower, atom.toLowerCase()) : levenshtein(lower, atom.slice(atom.indexOf('/') + 1).toLowerCase());
      return { atom, d };
    })
    .filter((s) => s.d <= limit)
    .sort((a, b) => a.d - b.d || byCodePoint(a.atom, b.atom));
  return scored.slice(0, 3).map((s) => s.atom);
}
