import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eclassPath, sameEclassCode } from '../eclass/index.js';
import { refuseLinksOut } from '../overlay/paths.js';
import { scanOverlay, type OverlayState } from '../overlay/scan.js';
import { SETTINGS_FILE } from '../overlay/settings.js';
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
  if (isRepo) await refuseLinksOut(dir, ['eclass/rocm.eclass', 'profiles/repo_name', 'profiles/desc/amdgpu_targets.desc', 'metadata/layout.conf', SETTINGS_FILE, ...inputs.atoms.map((a) => `${a}/Manifest`)]);
  const state = await scanOverlay(dir, inputs.atoms);
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
