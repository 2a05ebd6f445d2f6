import type { ResolvedComponent, StackModel } from '../model/resolve.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { buildGraph } from './graph.js';

/** revbump: the release is present, but what bump writes for it changed: the next revision replaces it. */
export type Action = 'add' | 'keep' | 'drop' | 'revbump';

export interface PlanEntry {
  atom: string;
  version: string;
  action: Action;
  /** add: the package directory does not exist yet. */
  newPackage: boolean;
  /** drop: the ebuild versions removed (with -rN); revbump: the revision it replaces. */
  versions?: string[];
  distfiles: { name: string; urls: string[]; when?: string }[];
  component: ResolvedComponent;
  /** drop of a package that left the release (plan.left): why, and whether the whole package goes. */
  left?: { reason: string; treeclean: boolean };
}

/**
 * A package the overlay holds that a component of the manifest describes but
 * this release does not generate (plan/left.ts).
 */
export interface LeftPackage {
  atom: string;
  /** Every version the overlay holds, oldest first. */
  versions: string[];
  /** Why the release does not have it (whyLeft). */
  reason: string;
  /**
   * keep: nothing changes (no --drop-old, or only named packages are bumped);
   * treeclean: every version goes, and the package with them;
   * drop: versions newer than the release (or 9999) stay, and the older ones
   * go where this bump leaves their dependencies unmet (bump decides, it reads the ebuilds).
   */
  action: 'keep' | 'treeclean' | 'drop';
  /** treeclean, drop: the versions removed. */
  remove: string[];
  component: ResolvedComponent;
}

export interface ScaffoldStep {
  what: 'repository' | 'targets-desc' | 'eclass' | 'package-sets';
  /**
   * update: profiles/desc/amdgpu_targets.desc when the overlay's releases
   * change its targets; the package sets when their members change.
   */
  action: 'add' | 'keep' | 'update';
  /** targets-desc, package-sets: the ROCm releases the overlay holds after the bump, oldest first. */
  releases?: string[];
  /** targets-desc of a file not ours to rewrite (::gentoo's): the existing text with the lines it lacked. */
  extended?: { text: string; added: string[] };
}

export interface Plan {
  version: string;
  /** --drop-old: versions of older releases go (a held package's older revision too, once its new one is written). */
  dropOld: boolean;
  /** Packages the release holds at their own version (PV is not the release): which, and why. */
  held: { atom: string; version: string; reason?: string }[];
  /** Build order of the release's packages. */
  order: string[];
  scaffold: ScaffoldStep[];
  /** Adds and keeps in build order, then drops in reverse build order, then the drops of packages that left the release. */
  entries: PlanEntry[];
  /** Packages holding versions newer than the release (a downgrade), newest first per package. */
  newer: { atom: string; versions: string[] }[];
  /** Packages that left the release, by atom (their drops are entries too, marked `left`). */
  left: LeftPackage[];
}

/**
 * What a plan reads of the overlay; overlay/scan.ts's OverlayState is one.
 * Declared here because plan/ sits below the overlay's I/O layer.
 */
export interface OverlayView {
  repoName?: string;
  layout?: unknown;
  eclass?: string;
  targetsDesc?: string;
  /** sets.conf and sets/*, by path relative to the overlay. */
  packageSets?: ReadonlyMap<string, string>;
  packages: ReadonlyMap<string, { versions: string[] }>;
}

export interface PlanOptions {
  dropOld: boolean;
  /** Only these packages (atoms of the release), when the command line names some. */
  only?: ReadonlySet<string>;
  /**
   * Packages the overlay holds that the manifest describes and the release
   * does not generate, with the component as last described and the reason
   * (plan/left.ts). Their versions must be in `overlay.packages`.
   */
  left?: ReadonlyMap<string, { component: ResolvedComponent; reason: string }>;
  /**
   * Whether an older version of a left package that keeps newer versions
   * would be orphaned: its dependencies unmet by `after`, the versions each
   * package holds after the bump. Without it every older version is.
   */
  orphaned?: (atom: string, version: string, after: ReadonlyMap<string, readonly string[]>) => boolean;
}

/**
 * Decide per package what a bump does. A package holding the release (any
 * revision of it) is kept untouched: the tool never overwrites an ebuild a
 * maintainer may have edited. Drops come last and consumers first, so every
 * intermediate commit still resolves.
 */
export function makePlan(model: StackModel, overlay: OverlayView, options: PlanOptions): Plan {
  const version = model.release.version;
  const graph = buildGraph(model);
  const entries: PlanEntry[] = [];
  const drops: PlanEntry[] = [];
  // The releases the overlay will hold: what amdgpu_targets.desc must describe.
  const releases = new Set([version]);
  const newer: Plan['newer'] = [];
  const heldAtOwn: Plan['held'] = [];
  for (const atom of graph.order) {
    const c = model.byAtom.get(atom)!;
    const state = overlay.packages.get(atom);
    if (options.only && !options.only.has(atom)) {
      // A package left out keeps its versions, and amdgpu_targets.desc keeps describing them.
      for (const v of state?.versions ?? []) releases.add(withoutRevision(v));
      continue;
    }
    // The package's own version: the release's, or the one the release holds it at (model/held.ts).
    const pv = c.version;
    if (c.held) heldAtOwn.push({ atom, version: pv, ...(c.held.reason ? { reason: c.held.reason } : {}) });
    const later = (state?.versions ?? []).filter((v) => v !== '9999' && compareVersions(withoutRevision(v), pv) > 0);
    if (later.length > 0) newer.push({ atom, versions: later.reverse() });
    // A held package's version may be there for another release (7.2.4's migraphx-7.2.4):
    // kept here, bump reads its SLOT to tell whose it is, and writes this release's revision if needed.
    const present = state?.versions.some((v) => withoutRevision(v) === pv) ?? false;
    entries.push({
      atom,
      version: pv,
      action: present ? 'keep' : 'add',
      newPackage: !state || state.versions.length === 0,
      distfiles: c.distfiles.map((d) => ({ name: d.name, urls: d.urls, ...(d.when ? { when: d.when } : {}) })),
      component: c,
    });
    const old = state
      ? state.versions.filter((v) => options.dropOld && v !== '9999' && compareVersions(withoutRevision(v), pv) < 0)
      : [];
    // A held version stays for the release it was written for unless --drop-old drops that release.
    for (const v of state?.versions ?? []) if (!old.includes(v) && !(c.held && options.dropOld && withoutRevision(v) === pv)) releases.add(withoutRevision(v));
    if (old.length > 0) {
      drops.push({ atom, version: old.map(withoutRevision).join(', '), action: 'drop', newPackage: false, versions: old, distfiles: [], component: c });
    }
  }
  // Packages that left the release. With --drop-old the package goes (a
  // treeclean commit: its ebuilds need the old stack this bump drops), unless
  // it holds versions newer than the release or a 9999, which stay: then only
  // its older versions are candidates, and bump drops those whose
  // dependencies the bump leaves unmet. A bump of named packages leaves them
  // alone: their dependencies may not move.
  const left: LeftPackage[] = [];
  const leftDrops: PlanEntry[] = [];
  let held: Map<string, string[]> | undefined;
  const after = (): ReadonlyMap<string, readonly string[]> => {
    if (held) return held;
    held = new Map([...overlay.packages].map(([atom, p]) => [atom, [...p.versions]]));
    for (const e of [...entries, ...drops]) {
      const versions = held.get(e.atom) ?? [];
      if (e.action === 'add') versions.push(e.version);
      if (e.action === 'drop') held.set(e.atom, versions.filter((v) => !e.versions?.includes(v)));
      else held.set(e.atom, versions);
    }
    return held;
  };
  for (const [atom, { component, reason }] of [...(options.left ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const versions = overlay.packages.get(atom)?.versions ?? [];
    if (versions.length === 0 || model.byAtom.has(atom)) continue;
    const old = versions.filter((v) => v !== '9999' && compareVersions(withoutRevision(v), version) < 0);
    const removable = !options.dropOld || options.only ? [] : old.length === versions.length ? old : old.filter((v) => options.orphaned?.(atom, v, after()) ?? true);
    const action: LeftPackage['action'] = removable.length === 0 ? 'keep' : removable.length === versions.length ? 'treeclean' : 'drop';
    left.push({ atom, versions, reason, action, remove: removable, component });
    for (const v of versions) if (!removable.includes(v)) releases.add(withoutRevision(v));
    if (action !== 'keep') {
      leftDrops.push({
        atom,
        version: removable.map(withoutRevision).join(', '),
        action: 'drop',
        newPackage: false,
        versions: removable,
        distfiles: [],
        component,
        left: { reason, treeclean: action === 'treeclean' },
      });
    }
  }
  const releasesHeld = [...releases].sort((a, b) => (a === '9999' ? 1 : b === '9999' ? -1 : compareVersions(a, b)));
  const scaffold: ScaffoldStep[] = [
    { what: 'repository', action: overlay.repoName && overlay.layout ? 'keep' : 'add' },
    { what: 'targets-desc', action: overlay.targetsDesc !== undefined ? 'keep' : 'add', releases: releasesHeld },
    { what: 'eclass', action: overlay.eclass !== undefined ? 'keep' : 'add' },
    { what: 'package-sets', action: overlay.packageSets?.size ? 'keep' : 'add', releases: releasesHeld },
  ];
  const order = options.only ? graph.order.filter((a) => options.only!.has(a)) : graph.order;
  return { version, dropOld: options.dropOld, held: heldAtOwn, order, scaffold, entries: [...entries, ...drops.reverse(), ...leftDrops], newer, left };
}

