import type { DepSpec, TargetsSpec } from '../manifest/types.js';

/** What the closure reads of a resolved package (ResolvedComponent is one). */
export interface TargetNode {
  atom: string;
  targets: string[];
  spec: { deps?: DepSpec[]; targets: TargetsSpec; required_use?: string[] };
  /** Set here: the unconditional dependencies that narrowed `targets`, with the targets each allows. */
  targetLimits?: TargetLimit[];
  /** Set here: the targets with which the package can be merged at all (undefined: any, or none needed). */
  usableTargets?: string[];
  /**
   * Set here: USE flags that pull in a target-limited package, with the
   * targets (of this package's) it can be merged with: with the flag on, one
   * of them must be enabled (REQUIRED_USE `flag? ( || ( … ) )`).
   */
  flagLimits?: FlagLimit[];
}

export interface FlagLimit {
  flag: string;
  atom: string;
  targets: string[];
}

export interface TargetLimit {
  atom: string;
  targets: string[];
}

/**
 * Whether REQUIRED_USE asks for one of the package's own targets whatever
 * its USE flags (${ROCM_REQUIRED_USE} not under a flag): it cannot be merged
 * unless one of them is enabled.
 */
export function gatesOnTargets(c: Pick<TargetNode, 'spec'>): boolean {
  const t = c.spec.targets;
  return (t.mode === 'full' || t.mode === 'subset') && !t.required_use_when;
}

/** Dependencies that every build of the package pulls in: no USE condition, no blocker, a build or run dependency. */
export function unconditionalDeps(c: Pick<TargetNode, 'spec'>): DepSpec[] {
  return (c.spec.deps ?? []).filter((d) => !d.when && !d.blocker && d.classes.some((k) => k === 'RDEPEND' || k === 'DEPEND' || k === 'BDEPEND'));
}

/**
 * A package's targets are the intersection of its own with the targets of
 * every target-limited package it needs unconditionally, transitively: a
 * target the dependency cannot be built for would leave the package
 * unmergeable with only that target enabled, and Portage would blame the
 * dependency. Narrows `targets` in place, records which dependencies
 * narrowed it (`targetLimits`) and the targets each package can be merged
 * with at all (`usableTargets`), for every package of one release's stack.
 */
export function limitTargets<T extends TargetNode>(components: readonly T[], byAtom: ReadonlyMap<string, T>): void {
  const done = new Set<T>();
  const visiting = new Set<T>();
  const visit = (c: T): void => {
    if (done.has(c) || visiting.has(c)) return;
    visiting.add(c);
    const limits: TargetLimit[] = [];
    for (const d of unconditionalDeps(c)) {
      const dep = byAtom.get(d.atom);
      if (!dep || dep === c) continue;
      visit(dep);
      if (dep.usableTargets && !limits.some((l) => l.atom === dep.atom)) limits.push({ atom: dep.atom, targets: dep.usableTargets });
    }
    const allowed = (t: string) => limits.every((l) => l.targets.includes(t));
    const narrowing = limits.filter((l) => c.targets.some((t) => !l.targets.includes(t)));
    if (narrowing.length > 0) {
      c.targets = c.targets.filter(allowed);
      c.targetLimits = narrowing;
    }
    // A flag that pulls in a limited package needs one of its targets, unless
    // the manifest writes its own REQUIRED_USE clause for that flag.
    for (const d of c.spec.deps ?? []) {
      const dep = byAtom.get(d.atom);
      if (!d.when || d.when.startsWith('!') || d.blocker || !dep || dep === c || c.targets.length === 0) continue;
      visit(dep);
      if (!dep.usableTargets) continue;
      if ((c.spec.required_use ?? []).some((r) => r.trimStart().startsWith(`${d.when}? `))) continue;
      const usable = dep.usableTargets;
      if (c.targets.every((t) => usable.includes(t))) continue;
      const shared = c.targets.filter((t) => usable.includes(t));
      const known = (c.flagLimits ??= []).find((l) => l.flag === d.when);
      if (known) known.targets = known.targets.filter((t) => shared.includes(t));
      else c.flagLimits.push({ flag: d.when, atom: dep.atom, targets: shared });
    }
    if (gatesOnTargets(c)) {
      c.usableTargets = c.targets;
    } else if (limits.length > 0) {
      // Without targets of its own to require, it is as mergeable as what it needs.
      const [first, ...rest] = limits;
      c.usableTargets = first!.targets.filter((t) => rest.every((l) => l.targets.includes(t)));
    }
    visiting.delete(c);
    done.add(c);
  };
  for (const c of components) visit(c);
}
