import { parseAtom, parseAtomAsWritten } from './atom.js';
import { ebuildVars, unquote } from './vars.js';
import { expand } from '../model/resolve.js';
import { compareVersions, parseVersion, withoutRevision } from '../model/version.js';

/**
 * Whether the dependencies of an ebuild on packages of its own overlay can be
 * met by the ebuilds the overlay holds: pkgcheck's NonexistentDeps as far as
 * one overlay tells. The stack's ebuilds tie each other by subslot
 * (`dev-util/hip:${SLOT}`, SLOT="0/$(ver_cut 1-2)"), so a package left at an
 * older release than its dependencies does not resolve although every
 * package exists. An index of the overlay is built once; each dependency is
 * then looked up in the versions of one package, so a scan stays linear in
 * the number of ebuilds.
 */

/** One ebuild the overlay holds: its version and SLOT, split at the subslot. */
export interface ProvidedEbuild {
  version: string;
  /** Undefined when the ebuild's SLOT could not be read: it then meets any slot. */
  slot?: string;
  /** Undefined: the same as the slot (PMS 7.2). */
  subslot?: string;
}

/** Every ebuild of the overlay's packages, by atom. */
export type OverlayIndex = ReadonlyMap<string, readonly ProvidedEbuild[]>;

/** A dependency that restricts the slot or the version of a package: what the index can refute. */
export interface RestrictedDep {
  /** As written (`dev-util/hip:${SLOT}`). */
  text: string;
  /** With ${SLOT}, ${PV} and $(ver_cut) expanded (`dev-util/hip:0/6.2`). */
  expanded: string;
  key: string;
  op: string;
  version?: string;
  glob: boolean;
  slot?: string;
  subslot?: string;
  line: number;
}

const DEP_VARS = new Set(['RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND', 'IDEPEND']);

/** An ebuild's SLOT for one version, its $(ver_cut) and ${PV} expanded; undefined when it has none or it is not literal. */
export function slotOf(value: string | undefined, pn: string, version: string): { slot: string; subslot?: string } | undefined {
  if (value === undefined) return undefined;
  const text = expand(value.trim(), pn, withoutRevision(version));
  if (!/^[A-Za-z0-9+_.-]+(\/[A-Za-z0-9+_.-]+)?$/.test(text)) return undefined;
  const [slot, subslot] = text.split('/') as [string, string | undefined];
  return { slot, ...(subslot ? { subslot } : {}) };
}

/**
 * The package dependencies of the dependency variables that name a slot or a
 * version, ${SLOT} standing for the ebuild's own. Blockers, eclass-generated
 * text ($(llvm_gen_dep …)) and plain `cat/pkg` or `:=` atoms (any version
 * will do) are left out.
 */
export function restrictedDeps(globals: readonly { name: string; value: string; line: number }[], pn: string, version: string): RestrictedDep[] {
  const own = globals.filter((g) => g.name === 'SLOT').at(-1)?.value;
  const slot = own !== undefined ? expand(own.trim(), pn, withoutRevision(version)) : undefined;
  const out: RestrictedDep[] = [];
  for (const g of globals) {
    if (!DEP_VARS.has(g.name)) continue;
    g.value.split('\n').forEach((line, i) => {
      const plain = line.replace(/\$\([^)]*\)?/g, ' ');
      for (const word of plain.split(/\s+/)) {
        if (!word.includes('/') || word.startsWith('!')) continue;
        if (word.includes('${SLOT}') && slot === undefined) continue;
        const expanded = expand(word.replace(/\$\{SLOT\}/g, slot ?? ''), pn, withoutRevision(version));
        const a = parseAtom(expanded);
        if (!a || (!a.version && !a.slot && !a.subslot)) continue;
        const { key, op, version: v, glob, slot: s, subslot: sub } = a;
        out.push({ text: word, expanded, key, op, ...(v ? { version: v } : {}), glob, ...(s ? { slot: s } : {}), ...(sub ? { subslot: sub } : {}), line: g.line + i });
      }
    });
  }
  return out;
}

/** The same, read from an ebuild's text (for callers without lint's parse of it). */
export async function restrictedDepsOfText(text: string, pn: string, version: string): Promise<RestrictedDep[]> {
  const vars = await ebuildVars(text);
  return restrictedDeps(vars.assignments.map((a) => ({ name: a.name, value: unquote(a.raw), line: a.line })), pn, version);
}

/** Every package the dependency variables of an ebuild's text name (blockers excepted): what must outlive it. */
export async function dependencyKeysOfText(text: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const a of (await ebuildVars(text)).assignments) {
    if (!DEP_VARS.has(a.name)) continue;
    for (const word of unquote(a.raw).split(/\s+/)) {
      const a = parseAtomAsWritten(word);
      if (a && !a.blocker) keys.add(a.key);
    }
  }
  return keys;
}

/** Whether `version` satisfies the atom's operator (PMS 8.3.1). */
export function versionMatches(a: { op: string; version?: string; glob: boolean }, version: string): boolean {
  if (!a.version || !a.op) return true;
  if (!parseVersion(version)) return false;
  const strip = (v: string) => v.replace(/-r\d+$/, '');
  const c = compareVersions(version, a.version);
  switch (a.op) {
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
    case '~':
      return strip(version) === strip(a.version);
    default:
      return a.glob ? version === a.version || version.startsWith(`${a.version}`) : c === 0;
  }
}

/** Whether one ebuild of the package meets the dependency's version and slot. */
export function satisfies(dep: RestrictedDep, provided: readonly ProvidedEbuild[]): boolean {
  return provided.some(
    (p) =>
      (!dep.version || versionMatches(dep, p.version)) &&
      (p.slot === undefined ||
        ((dep.slot === undefined || dep.slot === p.slot) && (dep.subslot === undefined || dep.subslot === (p.subslot ?? p.slot)))),
  );
}

/** The dependencies on packages the index holds that no ebuild of it meets. */
export function unmet(deps: readonly RestrictedDep[], index: OverlayIndex): RestrictedDep[] {
  return deps.filter((d) => {
    const provided = index.get(d.key);
    return provided !== undefined && provided.length > 0 && !satisfies(d, provided);
  });
}

/** "6.2 (0/6.2)" lists of what the index holds of a package, for messages. */
export function describeProvided(provided: readonly ProvidedEbuild[]): string {
  return provided.map((p) => (p.slot === undefined ? p.version : `${p.version} (SLOT ${p.slot}${p.subslot ? `/${p.subslot}` : ''})`)).join(', ');
}
