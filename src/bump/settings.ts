import path from 'node:path';
import { commitMessage } from '../git/messages.js';
import type { OverlayRepo, Person } from '../git/repo.js';
import type { CommitSpec } from '../git/transaction.js';
import type { StackModel } from '../model/resolve.js';
import type { OverlayState } from '../overlay/scan.js';
import {
  formatMaintainer,
  MAINTAINER_FORMAT,
  maintainersFor,
  parseMaintainer,
  renderSettings,
  settingsMaintainer,
  SETTINGS_FILE,
  type Maintainer,
  type MaintainerSetting,
} from '../overlay/settings.js';
import { stackMaintainers } from '../render/index.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';

/**
 * The overlay's settings (metadata/rocm-ebuild.conf): who new packages'
 * metadata.xml names as maintainer, where that came from, and where a choice
 * made now is saved: with the new repository, in a commit of its own, or for
 * ::gentoo in the clone's git config.
 */

/** Where a ::gentoo checkout keeps the maintainer setting: the clone's git config, never a commit. */
export const GENTOO_SETTING = 'rocm-ebuild.maintainer';

/** The maintainer decision: the overlay's setting, else (once, when it is created) --maintainer or the git identity. */
export interface MaintainerChoice {
  maintainers: Maintainer[];
  source: string;
  /** A setting to save in the overlay (it has none yet). */
  save?: MaintainerSetting;
}

export function chooseMaintainer(
  state: OverlayState,
  requested: MaintainerSetting | undefined,
  creating: boolean,
  identity: Person | undefined,
  model: StackModel,
  dryRun: boolean,
  where: string,
): MaintainerChoice {
  const saved = `${dryRun ? 'to be ' : ''}saved in ${where}`;
  const stack = stackMaintainers(model) as Maintainer[];
  const configured = state.settings !== undefined ? settingsMaintainer(state.settings) : undefined;
  if (configured) {
    if (requested && formatMaintainer(requested) !== formatMaintainer(configured)) {
      throw new UserError(
        `${where} sets the maintainer to ${formatMaintainer(configured)}; change it there (--maintainer only sets it where none is set)`,
        ExitCode.invalidInput,
      );
    }
    return { maintainers: maintainersFor(configured, stack), source: `from ${where}` };
  }
  if (requested) {
    return {
      maintainers: maintainersFor(requested, stack),
      source: `from --maintainer${requested.kind === 'gentoo' ? ' gentoo' : ''}, ${saved}`,
      save: requested,
    };
  }
  if (creating && identity) {
    const mine = parseMaintainer(`${identity.name} <${identity.email}>`);
    if (!mine) {
      throw new UserError(
        `your git identity "${identity.name} <${identity.email}>" cannot name the maintainer in metadata.xml; give --maintainer: it ${MAINTAINER_FORMAT}`,
        ExitCode.invalidInput,
      );
    }
    return { maintainers: maintainersFor(mine, stack), source: `your git identity, ${saved}`, save: mine };
  }
  return { maintainers: stack, source: "the stack manifest's default: this overlay sets none; set it with --maintainer" };
}

/** Where the choice is saved: a commit of the settings file (an overlay that has none), or ::gentoo's git config. */
export function settingsSaves(maintainer: MaintainerChoice, creating: boolean, gentoo: boolean): { saveSettings: boolean; configSetting: MaintainerSetting | undefined } {
  // ::gentoo keeps the setting in the clone's git config, never in a commit.
  const saveSettings = maintainer.save !== undefined && !creating && !gentoo;
  const configSetting = gentoo && maintainer.save !== undefined ? maintainer.save : undefined;
  return { saveSettings, configSetting };
}

/** ::gentoo: the setting goes into the clone's git config. */
export async function saveConfigSetting(repo: OverlayRepo, setting: MaintainerSetting): Promise<void> {
  await repo.raw(['config', GENTOO_SETTING, formatMaintainer(setting)]);
}

export function settingsCommit(setting: MaintainerSetting, identity: Person): CommitSpec {
  return {
    message: commitMessage(
      `metadata: add ${path.basename(SETTINGS_FILE)}`,
      identity,
      `rocm-ebuild's settings of this overlay. New packages' metadata.xml name ${setting.kind === 'gentoo' ? "the stack manifest's maintainers (for ::gentoo)" : formatMaintainer(setting)} as maintainer.`,
    ),
    changes: [{ path: SETTINGS_FILE, content: renderSettings(setting) }],
  };
}
