import { evaluateRequiredUse } from '../lint/checks/use-flags.js';
import { gatesOnTargets } from '../model/target-closure.js';
import type { ResolvedComponent, StackModel } from '../model/resolve.js';
import { profileUseFlags } from '../model/use-flags.js';
import { gfxOrder } from '../render/deps.js';
import { flagLimitClauses } from '../render/context.js';
import { packageSlot } from '../model/held.js';

/**
 * "Everything my GPUs can use": the packages of one release that Portage can
 * merge for a system whose AMDGPU_TARGETS are `targets`, under the default
 * USE flags of Gentoo's profile, with why each other package is left out.
 */
export interface PackageSet {
  version: string;
  targets: string[];
  /** Members, in the manifest's order. */
  atoms: string[];
  excluded: { atom: string; reason: string }[];
  /**
   * Members whose REQUIRED_USE also asks for flags only the user can set
   * (CPU_FLAGS_X86), whatever the GPU: Portage names them, and the package
   * says so above REQUIRED_USE.
   */
  userFlags: { atom: string; clause: string }[];
}

export class PackageSetError extends Error {}

/** The flags a package has enabled for these targets under default USE: its + defaults, the profile's USE_EXPAND values, the targets. */
export function enabledFlags(c: ResolvedComponent, targets: ReadonlySet<string>, profile: ReadonlySet<string>): Set<string> {
  const own = Object.entries(c.spec.use ?? {});
  return new Set([
    ...own.filter(([, f]) => f.default).map(([flag]) => flag),
    ...own.map(([flag]) => flag).filter((flag) => profile.has(flag)),
    ...c.targets.filter((t) => targets.has(t)).map((t) => `amdgpu_targets_${t}`),
  ]);
}

/** REQUIRED_USE as the ebuild has it, ${ROCM_REQUIRED_USE} expanded (the Python eclasses' part is lint's RequiredUseDefaults). */
export function requiredUseClauses(c: ResolvedComponent): string[] {
  const clauses: string[] = [];
  const mode = c.spec.targets.mode;
  if (mode === 'full' || mode === 'subset') {
    const rocm = `|| ( ${c.targets.map((t) => `amdgpu_targets_${t}`).join(' ')} )`;
    const when = c.spec.targets.required_use_when;
    clauses.push(...(when ? when.map((w) => `${w}? ( ${rocm} )`) : [rocm]));
  }
  return [...clauses, ...(c.spec.required_use ?? []), ...flagLimitClauses(c)];
}

/**
 * What a package set asks of a package whatever the targets: its REQUIRED_USE clauses, and
 * whether each holds with every target the package offers enabled (if not, no choice of GPUs
 * helps, and the clause is the user's to meet). Asked once per package, not once per target.
 */
const targetFree = new WeakMap<ResolvedComponent, { profile: ReadonlySet<string>; clauses: string[]; holdsWithAll: boolean[] }>();

function targetFreeFacts(c: ResolvedComponent, profile: ReadonlySet<string>): { clauses: string[]; holdsWithAll: boolean[] } {
  const known = targetFree.get(c);
  if (known && known.profile === profile) return known;
  const clauses = requiredUseClauses(c);
  const all = enabledFlags(c, new Set(c.targets), profile);
  const facts = { profile, clauses, holdsWithAll: clauses.map((clause) => !evaluateRequiredUse(clause, all)) };
  targetFree.set(c, facts);
  return facts;
}

/** The profile's USE_EXPAND flags of a manifest, one Set per manifest (targetFreeFacts keys on it). */
const profiles = new WeakMap<StackModel['manifest'], Set<string>>();
function profileOf(model: StackModel): Set<string> {
  let p = profiles.get(model.manifest);
  if (!p) profiles.set(model.manifest, (p = profileUseFlags(model.manifest.stack.profile?.use_expand)));
  return p;
}

const holds = (cond: string, enabled: ReadonlySet<string>) => (cond.startsWith('!') ? !enabled.has(cond.slice(1)) : enabled.has(cond));

/**
 * The package set of `model`'s release for `targets`: every package that can
 * be merged with them, found as Portage would refuse the others: a package
 * whose REQUIRED_USE asks for a target none of `targets` is, or that needs
 * (unconditionally or under a flag enabled by default) a package outside the
 * set, is left out, until nothing changes. NVIDIA-only packages
 * (platform: nvidia) are never members. A REQUIRED_USE that fails whatever
 * the targets (CPU flags the user sets) does not exclude; it is listed.
 */
export function packageSet(model: StackModel, targets: readonly string[]): PackageSet {
  const offered = [...model.release.policy.default, ...model.release.policy.optional];
  const unknown = targets.filter((t) => !offered.includes(t));
  if (targets.length === 0) throw new PackageSetError('no targets given: name the gfx targets of your GPUs, e.g. "gfx1030"');
  if (unknown.length > 0) {
    throw new PackageSetError(`ROCm ${model.release.version} offers no target ${unknown.join(', ')}; it offers ${offered.join(' ')}`);
  }
  const wanted = new Set(targets);
  const profile = profileOf(model);
  const excluded = new Map<string, string>();
  const userFlags: PackageSet['userFlags'] = [];
  for (const c of model.components) if (c.spec.platform === 'nvidia') excluded.set(c.atom, 'only HIP on NVIDIA GPUs uses it');

  // What a package's own REQUIRED_USE and targets say does not change while others are left
  // out: it is decided once, and the fixed point below goes over dependencies only.
  const enabledOf = new Map(model.components.map((c) => [c.atom, enabledFlags(c, wanted, profile)]));
  const ownReason = (c: ResolvedComponent): string | undefined => {
    if (gatesOnTargets(c) && !c.targets.some((t) => wanted.has(t))) {
      const by = c.targetLimits?.length ? ` (those of ${c.targetLimits.map((l) => l.atom).join(', ')}, which it needs)` : '';
      return `built for ${c.targets.join(' ')} only${by}`;
    }
    const enabled = enabledOf.get(c.atom)!;
    const { clauses, holdsWithAll } = targetFreeFacts(c, profile);
    for (const [i, clause] of clauses.entries()) {
      const failed = evaluateRequiredUse(clause, enabled);
      if (failed && holdsWithAll[i]) return `REQUIRED_USE ${failed} fails with these targets`;
    }
    return undefined;
  };
  const depReason = (c: ResolvedComponent): string | undefined => {
    const enabled = enabledOf.get(c.atom)!;
    for (const d of c.spec.deps ?? []) {
      if (d.blocker || !model.byAtom.has(d.atom) || (d.when && !holds(d.when, enabled))) continue;
      const reason = excluded.get(d.atom);
      if (reason !== undefined) return `needs ${d.atom}${d.when ? ` (USE=${d.when}, on by default)` : ''}, which is left out: ${reason}`;
    }
    return undefined;
  };
  const own = new Map(model.components.map((c) => [c.atom, excluded.has(c.atom) ? undefined : ownReason(c)]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of model.components) {
      if (excluded.has(c.atom)) continue;
      const reason = own.get(c.atom) ?? depReason(c);
      if (reason !== undefined) {
        excluded.set(c.atom, reason);
        changed = true;
      }
    }
  }
  const atoms = model.components.map((c) => c.atom).filter((a) => !excluded.has(a));
  for (const atom of atoms) {
    const c = model.byAtom.get(atom)!;
    const enabled = enabledOf.get(atom)!;
    for (const clause of targetFreeFacts(c, profile).clauses) {
      const failed = evaluateRequiredUse(clause, enabled);
      if (failed) userFlags.push({ atom, clause: failed });
    }
  }
  return {
    version: model.release.version,
    targets: [...targets],
    atoms,
    excluded: model.components.filter((c) => excluded.has(c.atom)).map((c) => ({ atom: c.atom, reason: excluded.get(c.atom)! })),
    userFlags,
  };
}

/**
 * Where an overlay keeps its package sets, relative to its root: sets.conf
 * where Portage reads it, the set files under metadata/ (a directory at the
 * top would be an unknown category to pkgcheck: UnknownCategoryDirs).
 */
export const SETS_CONF = 'sets.conf';
export const SETS_DIR = 'metadata/sets';

/**
 * The package sets an overlay ships for the release it offers newest, one
 * per GPU target of that release (`emerge @rocm-gfx1030`; several GPUs:
 * `emerge @rocm-gfx1030 @rocm-gfx1100`, as adding a target never makes a
 * member unmergeable), and the sets.conf that tells Portage where they are
 * (`${repository:NAME}`, so the overlay may live anywhere). Atoms name the
 * overlay (`::NAME`), so ::gentoo's versions never stand in for them.
 */
export function renderPackageSets(model: StackModel, repoName: string): { path: string; content: string }[] {
  const targets = [...model.release.policy.default, ...model.release.policy.optional].sort((a, b) => gfxOrder(a) - gfxOrder(b));
  const files = [
    {
      path: SETS_CONF,
      content: [
        `# Package sets of ::${repoName}, written by rocm-ebuild: ${SETS_DIR}/rocm-<target> holds every`,
        '# package of the newest ROCm release here that GPUs of that target can use.',
        '# emerge @rocm-gfx1030, or one set per GPU: emerge @rocm-gfx1030 @rocm-gfx1100',
        `[${repoName} package sets]`,
        'class = portage.sets.files.StaticFileSet',
        'multiset = true',
        `directory = \${repository:${repoName}}/${SETS_DIR}`,
        '',
      ].join('\n'),
    },
  ];
  for (const t of targets) {
    const set = packageSet(model, [t]);
    const lines = [
      `# Everything a ${t} GPU can use (AMDGPU_TARGETS="${t}", default USE).`,
      // Members the release holds at their own version: the set names no version, so say which one it means.
      ...set.atoms
        .map((a) => model.byAtom.get(a)!)
        .filter((c) => c.held)
        .map((c) => `# at its own version: ${c.atom}-${c.version}, built against ROCm ${c.release} (SLOT="${packageSlot(c)}")`),
      ...set.excluded.map((e) => `# left out: ${e.atom}: ${e.reason}`),
      ...set.userFlags.map((u) => `# needs CPU_FLAGS_X86 set: ${u.atom} (${u.clause})`),
      ...set.atoms.map((a) => `${a}::${repoName}`),
      '',
    ];
    files.push({ path: `${SETS_DIR}/rocm-${t}`, content: lines.join('\n') });
  }
  return files;
}
