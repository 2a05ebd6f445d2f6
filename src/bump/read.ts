import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { eclassPath, sameEclassCode } from '../eclass/index.js';
import { refuseLinkedDirs, refuseLinksOut } from '../overlay/paths.js';
import { checkRepoNameFile } from '../overlay/repo-name.js';
import { scanOverlay, type OverlayState } from '../overlay/scan.js';
import { SETTINGS_FILE } from '../overlay/settings.js';
import { SETS_CONF, SETS_DIR } from '../stack-check/package-set.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { BumpInputs } from './inputs.js';
import { GENTOO_SETTING } from './settings.js';
import type { BumpOptions } from './types.js';

/** The third stage: what the overlay holds of the packages, read once, from the commit the plan is made from. */
export interface OverlayRead {
  /** The commit the plan is made from (undefined: no repository yet); the branch moves only if it still points here. */
  planned: string | undefined;
  state: OverlayState;
  /** The overlay is ::gentoo itself: nothing of rocm-ebuild's own goes into it, its files are extended, never rewritten. */
  gentoo: boolean;
  /** rocm-ebuild's own rocm.eclass, the one these ebuilds are generated for. */
  ourEclass: string;
}

export async function readOverlay(o: BumpOptions, inputs: BumpInputs): Promise<OverlayRead> {
  const { dir, repo, isRepo } = inputs;
  // The plan is made from this commit (the worktree is clean, so it holds the same files);
  // the branch moves only if it still points here.
  const planned = isRepo ? await repo.head() : undefined;
  // What the scan reads and the commits write must be the overlay's own files, not a link's target.
  if (isRepo) await refuseLinks(dir, inputs.atoms);
  const state = await scanOverlay(dir, inputs.atoms);
  // The name reaches sets.conf as INI and every set's atoms: one line, a name PMS allows, or nothing is written.
  if (state.repoNameText !== undefined) checkRepoNameFile(dir, state.repoNameText);
  checkLayout(state);
  // ::gentoo itself: nothing of rocm-ebuild's own goes into it, its files are extended, never rewritten.
  const gentoo = state.repoName === 'gentoo';
  const ourEclass = await readFile(eclassPath, 'utf8');
  if (gentoo) {
    const configured = isRepo ? (await repo.raw(['config', '--get', GENTOO_SETTING]).catch(() => '')).trim() : '';
    state.settings = configured ? `maintainer = ${configured}\n` : undefined;
  // Who maintains the overlay's copy is the overlay's business; its code is ours.
  } else if (state.eclass !== undefined && !sameEclassCode(state.eclass, ourEclass)) {
    o.warn(
      `${path.join(dir, 'eclass/rocm.eclass')} differs from the rocm.eclass these ebuilds are generated for; ` +
        `it is left as it is: \`rocm-ebuild eclass update --overlay ${dir} --dry-run\` shows the difference, and without --dry-run commits the update`,
    );
  }
  return { planned, state, gentoo, ourEclass };
}

/**
 * Links where bump reads and writes: a file or directory leading outside the
 * overlay (refuseLinksOut), or a directory the commits write into or remove
 * from that is a link at all (refuseLinkedDirs). Both exit 4 before anything
 * is read.
 */
async function refuseLinks(dir: string, atoms: readonly string[]): Promise<void> {
  const files = ['eclass/rocm.eclass', 'profiles/repo_name', 'profiles/desc/amdgpu_targets.desc', 'metadata/layout.conf', SETTINGS_FILE, SETS_CONF, SETS_DIR];
  await refuseLinksOut(dir, [...files, ...atoms.map((a) => `${a}/Manifest`)]);
  await refuseLinkedDirs(dir, ['eclass', 'profiles/desc', SETS_DIR, ...atoms]);
  // The set files themselves: the package sets' commit rewrites or removes each.
  const sets = await readdir(path.join(dir, SETS_DIR)).catch(() => [] as string[]);
  await refuseLinksOut(dir, sets.map((f) => `${SETS_DIR}/${f}`));
}

function checkLayout(state: OverlayState): void {
  const layout = state.layout;
  if (!layout) return;
  const problems: string[] = [];
  if (layout.get('thin-manifests') !== 'true') problems.push('thin-manifests = true');
  const hashes = (layout.get('manifest-hashes') ?? '').split(/\s+/);
  if (!hashes.includes('BLAKE2B') || !hashes.includes('SHA512')) problems.push('manifest-hashes = BLAKE2B SHA512');
  if (problems.length > 0) {
    throw new UserError(
      `${path.join(state.dir, 'metadata/layout.conf')} must have ${problems.join(' and ')}: the Manifests rocm-ebuild writes are thin, with BLAKE2B and SHA512 hashes`,
      ExitCode.overlayRefused,
    );
  }
}
