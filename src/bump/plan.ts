import path from 'node:path';
import type { BugRef } from '../git/messages.js';
import { gitIdentity } from '../git/repo.js';
import { SETTINGS_FILE } from '../overlay/settings.js';
import { makePlan, type Plan } from '../plan/plan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpInputs } from './inputs.js';
import { leftCandidates, orphanTest } from './left.js';
import { packageSetChanges, type PackageSets } from './package-sets.js';
import type { OverlayRead } from './read.js';
import { settleTargetsDesc } from './scaffold.js';
import { existingParent, type Held } from './hold.js';
import { chooseMaintainer, GENTOO_SETTING, type MaintainerChoice } from './settings.js';
import type { BumpOptions } from './types.js';

/**
 * The fourth stage: what the bump does to each package and to the
 * scaffolding, refused here when it would downgrade or (in ::gentoo) remove
 * a package; the package sets and amdgpu_targets.desc it leaves; who new
 * packages' metadata.xml names.
 */
export interface BumpPlan {
  plan: Plan;
  /** amdgpu_targets.desc only loses targets: its commit comes after the drops. */
  descShrinks: boolean;
  /** The package sets' changes, undefined when they stay as they are. */
  sets: PackageSets | undefined;
  /** --bug / --closes, each naming a package this bump commits (or none). */
  refs: { bug: BugRef[]; closes: BugRef[] };
  /** The overlay is new: the repository's files are part of the bump. */
  creating: boolean;
  maintainer: MaintainerChoice;
  /** Packages removed whole (treeclean): every file the planned commit tracks under each, relative to the overlay. */
  treeclean: Map<string, string[]>;
}

export async function planBump(o: BumpOptions, inputs: BumpInputs, held: Held, read: OverlayRead): Promise<BumpPlan> {
  const { dir, isRepo, model } = inputs;
  const { state, gentoo } = read;
  const left = await leftCandidates(model, state);
  const plan = makePlan(model, state, {
    dropOld: o.dropOld,
    ...(inputs.only ? { only: inputs.only } : {}),
    left,
    orphaned: await orphanTest(model, state, left),
  });
  // ::gentoo ships no repository sets (sets.conf has no place there): `rocm-ebuild set` prints them instead.
  // Nor does a bump add or change its eclass (eclass update does, reviewed on gentoo-dev).
  if (gentoo) plan.scaffold = plan.scaffold.filter((s) => s.what !== 'package-sets' && s.what !== 'eclass');
  if (plan.newer.length > 0 && !o.allowDowngrade) refuseDowngrade(plan);
  // ::gentoo removes a package only after its last rites: never in a bump.
  if (gentoo && plan.left.some((l) => l.action === 'treeclean')) refuseGentooTreeclean(dir, plan);
  const { descShrinks } = await settleTargetsDesc(plan, model, state, Boolean(gentoo || inputs.only), inputs.year);
  // The package sets follow the newest release the overlay holds after this bump.
  const sets = await packageSetChanges(plan, model, state);
  const refs = inputs.refs;
  const changing = new Set(plan.entries.filter((e) => e.action !== 'keep').map((e) => e.atom));
  const stray = [...refs.bug, ...refs.closes].filter((r) => r.atom !== undefined && !changing.has(r.atom)).map((r) => r.atom!);
  if (stray.length > 0) {
    throw new UserError(`--bug/--closes name ${[...new Set(stray)].join(', ')}, which this bump does not commit`, ExitCode.invalidInput);
  }
  const creating = plan.scaffold.some((s) => s.what === 'repository' && s.action === 'add');
  const identity = held.identity ?? (await gitIdentity(isRepo ? dir : await existingParent(dir)).catch(() => undefined));
  const maintainer = chooseMaintainer(state, inputs.requested, creating, identity, model, o.dryRun, gentoo ? `git config ${GENTOO_SETTING}` : SETTINGS_FILE);
  const treeclean = await treecleanFiles(inputs, read, plan);
  return { plan, descShrinks, sets, refs, creating, maintainer, treeclean };
}

/**
 * Every file git tracks under each package a treeclean removes, in the
 * commit the plan is made from: the whole directory goes (a NOTES, a patch
 * outside files/), as pkgdev's treeclean and pr check's BadTreeclean ask.
 */
async function treecleanFiles(inputs: BumpInputs, read: OverlayRead, plan: Plan): Promise<Map<string, string[]>> {
  const atoms = plan.left.filter((l) => l.action === 'treeclean').map((l) => l.atom);
  const out = new Map<string, string[]>(atoms.map((a) => [a, []]));
  if (atoms.length === 0 || !inputs.isRepo || read.planned === undefined) return out;
  const listed = await inputs.repo.raw(['ls-tree', '-r', '-z', '--name-only', read.planned, '--', ...atoms.map((a) => `${a}/`)]);
  for (const file of listed.split('\0').filter(Boolean)) {
    const atom = file.split('/').slice(0, 2).join('/');
    out.get(atom)?.push(file);
  }
  return out;
}

/** A downgrade is refused unless asked for: the overlay holds newer versions of the packages. */
function refuseDowngrade(plan: Plan): never {
  const n = plan.newer.length;
  const shown = plan.newer.slice(0, 5).map((p) => `  ${p.atom}: ${p.versions.join(', ')}`);
  if (n > 5) shown.push(`  … and ${n - 5} more`);
  throw new UserError(
    `the overlay holds versions newer than ${plan.version} of ${n} package${n === 1 ? '' : 's'}; adding ${plan.version} would be a downgrade:\n${shown.join('\n')}\n` +
      'hint: pass --allow-downgrade to add the older release next to them, or check the version you asked for',
    ExitCode.invalidInput,
    { newer: plan.newer },
  );
}

/** ::gentoo: a package that left the release is last-rited, then removed; a bump never removes it. Nothing is written. */
function refuseGentooTreeclean(dir: string, plan: Plan): never {
  const gone = plan.left.filter((l) => l.action === 'treeclean');
  const lines = gone.map((l) => `  ${path.join(dir, l.atom)}: ${l.versions.join(', ')}: not part of ROCm ${plan.version}: ${l.reason}`);
  throw new UserError(
    `${dir} is ::gentoo, and ${gone.length === 1 ? 'a package' : `${gone.length} packages`} it holds left ROCm ${plan.version}; --drop-old would remove ${gone.length === 1 ? 'it' : 'them'} (the older stack ${gone.length === 1 ? 'it needs' : 'they need'} goes), and ::gentoo removes a package only after its last rites; nothing was written:\n${lines.join('\n')}\n` +
      `hint: last-rite ${gone.length === 1 ? 'it' : 'them'} first: mask ${gone.map((l) => l.atom).join(' ')} in ${path.join(dir, 'profiles/package.mask')} with the reason and a removal date (pkgdev mask), announce it on gentoo-dev, and remove ${gone.length === 1 ? 'it' : 'them'} after 30 days; ` +
      `or bump without --drop-old, which keeps ${gone.length === 1 ? 'it' : 'them'} and the older stack ${gone.length === 1 ? 'it needs' : 'they need'}`,
    ExitCode.overlayRefused,
    { left: gone.map((l) => ({ atom: l.atom, versions: l.versions, reason: l.reason })) },
  );
}
