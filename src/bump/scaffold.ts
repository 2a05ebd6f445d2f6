import { readFile } from 'node:fs/promises';
import { checkedTargetTable, descTargets, eclassForMaintainers, eclassPath, extendDesc, renderAmdgpuTargetsDescFor, targetsOfReleases } from '../eclass/index.js';
import { commitMessage } from '../git/messages.js';
import type { Person } from '../git/repo.js';
import type { CommitSpec } from '../git/transaction.js';
import type { StackModel } from '../model/resolve.js';
import type { OverlayState } from '../overlay/scan.js';
import { renderSettings, SETTINGS_FILE, type MaintainerSetting } from '../overlay/settings.js';
import type { Plan } from '../plan/plan.js';
import { renderLayoutConf } from '../render/index.js';

/**
 * The overlay's scaffolding: the repository's own files (profiles/repo_name,
 * metadata/layout.conf, the settings), profiles/desc/amdgpu_targets.desc and
 * rocm.eclass; whether each changes, and its commit.
 */

/**
 * amdgpu_targets.desc follows the releases the overlay holds after this bump:
 * a target no ebuild offers is pkgcheck's UnusedGlobalUseExpand, a new
 * release's target missing from it an undescribed flag. Sets the targets-desc
 * step's action (and, for a file that is only extended, the new text); true
 * when the file only loses targets.
 */
export async function settleTargetsDesc(plan: Plan, model: StackModel, state: OverlayState, extendOnly: boolean, year: number): Promise<{ descShrinks: boolean }> {
  const descStep = plan.scaffold.find((s) => s.what === 'targets-desc');
  let descShrinks = false;
  if (descStep?.action === 'keep' && state.targetsDesc !== undefined && extendOnly) {
    // ::gentoo's file (or a bump of named packages only): the targets it lacks are added, nothing else changes.
    const ours = renderAmdgpuTargetsDescFor(await checkedTargetTable(model.manifest.targetsFile), descStep.releases ?? [plan.version], year);
    const extended = extendDesc(state.targetsDesc, ours);
    if (extended) {
      descStep.action = 'update';
      descStep.extended = extended;
    }
  } else if (descStep?.action === 'keep' && state.targetsDesc !== undefined) {
    const want = targetsOfReleases(await checkedTargetTable(model.manifest.targetsFile), descStep.releases ?? [plan.version]);
    const have = descTargets(state.targetsDesc);
    if (want.join(' ') !== have.join(' ')) {
      descStep.action = 'update';
      descShrinks = want.every((t) => have.includes(t));
    }
  }
  return { descShrinks };
}

export const isDescCommit = (c: CommitSpec): boolean => c.changes.some((x) => x.path === 'profiles/desc/amdgpu_targets.desc');

export async function scaffoldCommits(
  plan: Plan,
  model: StackModel,
  identity: Person,
  year: number,
  settings: MaintainerSetting | undefined,
  maintainers: readonly { email: string; name?: string }[],
  /** A new overlay says sign-commits = true when its commits are signed: the user's git signs them. */
  signCommits: boolean,
): Promise<CommitSpec[]> {
  const commits: CommitSpec[] = [];
  const repoName = model.manifest.stack.repo_name;
  for (const step of plan.scaffold) {
    if (step.action === 'keep') continue;
    if (step.what === 'repository') {
      commits.push({
        message: commitMessage(
          `profiles, metadata: new repository ${repoName}`,
          identity,
          `An overlay for the ROCm stack on top of ::gentoo, with thin Manifests (BLAKE2B, SHA512), written by rocm-ebuild.`,
        ),
        changes: [
          { path: 'profiles/repo_name', content: `${repoName}\n` },
          { path: 'metadata/layout.conf', content: renderLayoutConf(repoName, signCommits) },
          ...(settings ? [{ path: SETTINGS_FILE, content: renderSettings(settings) }] : []),
        ],
      });
    }
    if (step.what === 'targets-desc' && step.extended) {
      const added = step.extended.added;
      const listed = `profiles/desc: add amdgpu_targets ${added.join(', ')}`;
      commits.push({
        message: commitMessage(
          listed.length - 'profiles/desc: '.length <= 69 ? listed : `profiles/desc: add ${added.length} amdgpu_targets`,
          identity,
          `Descriptions of the GPU targets the ${plan.version} ebuilds offer that amdgpu_targets.desc lacked (${added.join(', ')}); every other line is kept as it was.`,
        ),
        changes: [{ path: 'profiles/desc/amdgpu_targets.desc', content: step.extended.text }],
      });
      continue;
    }
    if (step.what === 'targets-desc') {
      const table = await checkedTargetTable(model.manifest.targetsFile);
      const releases = step.releases ?? [plan.version];
      commits.push({
        message:
          step.action === 'add'
            ? commitMessage('profiles/desc: add amdgpu_targets.desc', identity)
            : commitMessage(
                `profiles/desc: amdgpu_targets.desc for ROCm ${releases.join(', ')}`,
                identity,
                'The targets the ebuilds of these releases offer, no more (pkgcheck: UnusedGlobalUseExpand), no fewer.',
              ),
        changes: [{ path: 'profiles/desc/amdgpu_targets.desc', content: renderAmdgpuTargetsDescFor(table, releases, year) }],
      });
    }
    if (step.what === 'eclass') {
      commits.push({
        message: commitMessage(
          'rocm.eclass: new eclass',
          identity,
          'GPU targets per ROCm release from data, target coherence through ROCM_USEDEP, and HIP builds with vanilla LLVM/clang.',
        ),
        // Named as its maintainers: those of the overlay's packages.
        changes: [{ path: 'eclass/rocm.eclass', content: eclassForMaintainers(await readFile(eclassPath, 'utf8'), maintainers) }],
      });
    }
  }
  return commits;
}
