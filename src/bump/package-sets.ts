import { commitMessage } from '../git/messages.js';
import type { Person } from '../git/repo.js';
import type { CommitSpec } from '../git/transaction.js';
import type { StackModel } from '../model/resolve.js';
import type { OverlayState } from '../overlay/scan.js';
import type { Plan } from '../plan/plan.js';
import { renderPackageSets, SETS_CONF, SETS_DIR } from '../stack-check/package-set.js';
import { stackFor } from '../stack-check/index.js';

/** The package sets' files the bump changes (null: removed), for the newest release the overlay holds after it. */
export interface PackageSets {
  version: string;
  changes: { path: string; content: string | null }[];
}

/**
 * The overlay's package sets as they should be after the bump, for the
 * newest release it will hold (what emerge picks), or undefined when they
 * already are. Sets the package-sets step's action.
 */
export async function packageSetChanges(plan: Plan, model: StackModel, state: OverlayState): Promise<PackageSets | undefined> {
  const step = plan.scaffold.find((s) => s.what === 'package-sets');
  if (!step) return undefined;
  const held = (step.releases ?? [plan.version]).filter((v) => model.manifest.stack.releases[v]);
  const newest = held[held.length - 1] ?? plan.version;
  const setsModel = newest === plan.version ? model : await stackFor(model.manifest, newest);
  const wanted = renderPackageSets(setsModel, state.repoName ?? model.manifest.stack.repo_name);
  const changes: { path: string; content: string | null }[] = wanted.filter((f) => state.packageSets.get(f.path) !== f.content);
  // A set of a target the newest release no longer offers goes.
  for (const file of state.packageSets.keys()) if (!wanted.some((f) => f.path === file)) changes.push({ path: file, content: null });
  if (changes.length === 0) return undefined;
  if (step.action === 'keep') step.action = 'update';
  return { version: newest, changes };
}

export function packageSetsCommit(sets: PackageSets, identity: Person): CommitSpec {
  return {
    message: commitMessage(
      `${SETS_CONF}, ${SETS_DIR}: package sets for ROCm ${sets.version}`,
      identity,
      'One set per GPU target, everything GPUs of that target can use: emerge @rocm-gfx1030 (rocm-ebuild set).',
    ),
    changes: sets.changes,
  };
}
