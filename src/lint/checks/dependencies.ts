import { parseAtom, type Atom } from '../../ebuild/atom.js';
import { versionMatches } from '../../ebuild/dependencies.js';
import type { Check, EbuildFacts, StackPackage } from '../types.js';

const DEP_VARS = ['RDEPEND', 'DEPEND', 'BDEPEND', 'PDEPEND', 'IDEPEND'];

/** One package dependency as written: `!!>=cat/pkg-1.2:0=[a,b(-)?]`. */
export interface ParsedAtom {
  text: string;
  blocker: Atom['blocker'];
  op: Atom['op'];
  key: string;
  version?: string;
  glob: boolean;
  use: string[];
  line: number;
}

/**
 * The package atoms of the dependency variables, with ${PV} and ${SLOT}
 * expanded. Groups, USE conditionals and eclass-generated text
 * ($(llvm_gen_dep …), ${PYTHON_DEPS}) are skipped.
 */
export function dependencyAtoms(f: EbuildFacts): ParsedAtom[] {
  const out: ParsedAtom[] = [];
  for (const g of f.globals) {
    if (!DEP_VARS.includes(g.name)) continue;
    const value = g.value.replace(/\$\{RDEPEND\}|\$\{DEPEND\}/g, '');
    value.split('\n').forEach((text, i) => {
      // Eclass helpers generate their own atoms.
      const plain = text.replace(/\$\([^)]*\)?/g, ' ');
      for (const word of plain.split(/\s+/)) {
        if (!word.includes('/')) continue;
        const expanded = word.replace(/\$\{PV\}/g, f.input.version).replace(/\$\{SLOT\}/g, '0');
        const a = parseAtom(expanded);
        if (!a) continue;
        out.push({ text: word, blocker: a.blocker, op: a.op, key: a.key, ...(a.version ? { version: a.version } : {}), glob: a.glob, use: a.use.filter(Boolean), line: g.line + i });
      }
    });
  }
  return out;
}

/** The flags ${ROCM_USEDEP} (ROCM_USE_DEP) stands for in this ebuild. */
function rocmUseDep(f: EbuildFacts): string[] {
  return (f.input.eclassIuse ?? [])
    .map((w) => w.replace(/^[+-]/, ''))
    .filter((flag) => flag.startsWith('amdgpu_targets_'))
    .map((flag) => `${flag}(-)?`);
}

/** Flags from eclasses whose values the profiles define (not checkable here). */
const OPEN_ENDED = /^(python_targets_|python_single_target_|llvm_slot_|llvm_targets_)/;

/**
 * USE dependencies that no version of the dependency can satisfy, and
 * blockers on versions that do not exist: what pkgcheck reports from the
 * repository's metadata (NonsolvableDeps*, NonexistentBlocker), checked here
 * against the stack manifest and the external package list.
 */
export const dependencyCheck: Check = {
  name: 'DependencyCheck',
  keywords: [
    { name: 'NonsolvableDeps', level: 'error', description: 'a USE dependency asks for a flag the dependency does not have' },
    { name: 'NonexistentBlocker', level: 'warning', description: 'a blocker matches no version of the package that exists' },
    {
      name: 'UseChangeNeeded',
      level: 'warning',
      description: "a USE dependency on a ::gentoo package asks for a flag Gentoo's default profile leaves off: emerge stops for a USE change",
    },
  ],
  run(f) {
    const stack = f.input.stack;
    if (!stack) return [];
    const out = [];
    const usedep = rocmUseDep(f);
    for (const a of dependencyAtoms(f)) {
      const pkg: StackPackage | undefined = stack.get(a.key);
      if (!pkg) continue;
      if (a.blocker) {
        const known = pkg.versions;
        if (a.version && (!known || !known.some((v) => versionMatches(a, v)))) {
          out.push({
            keyword: 'NonexistentBlocker',
            message: known
              ? `${a.text} blocks no version of ${a.key} that exists (${known.join(', ') || 'none'}); remove it, or say with a comment what it blocks`
              : `${a.text}: the versions of ${a.key} are unknown; list ::gentoo's under "versions" in the external package list, or drop the blocker`,
            line: a.line,
          });
        }
        continue;
      }
      if (!pkg.iuse) continue;
      const flags = a.use.flatMap((u) => (u === '${ROCM_USEDEP}' || u === '${ROCM_USE_DEP}' ? usedep : [u]));
      const missing: string[] = [];
      const off: string[] = [];
      for (const u of flags) {
        // flag, !flag, flag?, !flag?, flag=, !flag=, -flag, each with an optional (+)/(-) default.
        const m = /^[!-]?([A-Za-z0-9][A-Za-z0-9+_@-]*)(\([+-]\))?[?=]?$/.exec(u);
        if (!m) continue;
        const [, flag, def] = m as unknown as [string, string, string | undefined];
        // (+) treats a flag the dependency lacks as enabled: always satisfiable.
        // A plain [flag] on a ::gentoo package whose default-profile state is
        // recorded: Portage cannot pick it by itself (emerge --pretend stops with
        // "The following USE changes are necessary"), the user must set it.
        if (pkg.enabled && pkg.iuse.has(flag) && u === flag && !pkg.enabled.has(flag)) off.push(flag);
        if (def === '(+)' || OPEN_ENDED.test(flag) || pkg.iuse.has(flag)) continue;
        // (-) or no default: a missing flag counts as disabled (or is an error), so
        // requiring it enabled can never be met.
        if (!u.startsWith('!') && !u.startsWith('-')) missing.push(flag);
      }
      if (missing.length > 0) {
        out.push({
          keyword: 'NonsolvableDeps',
          message: pkg.enabled
            ? `${a.key}: USE dependency on ${missing.join(', ')}, which the external package list does not record in ${a.key}'s iuse; record it there if ::gentoo's ebuild has it (with + when the default profile enables it), or drop it`
            : `${a.key}: USE dependency on ${missing.join(', ')}, which ${a.key} does not have in IUSE; tie only the flags both packages have`,
          line: a.line,
        });
      }
      if (off.length > 0) {
        out.push({
          keyword: 'UseChangeNeeded',
          message: `${a.key}[${off.join(',')}]: Gentoo's default profile leaves ${off.join(', ')} off, so emerge stops and asks for a USE change; make the dependency optional, or accept UseChangeNeeded with the reason users must enable it`,
          line: a.line,
        });
      }
    }
    return out;
  },
};
