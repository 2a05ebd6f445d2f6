import { Flags } from '#oclif';
import { CONFIG_DISPLAY, settingFlagOptions } from './user-defaults.js';

/**
 * --manifest, in a module of its own: a command that only needs the flag
 * (gpu list reads just stack.yaml's release list) must not import the
 * manifest loader and every check with it.
 */
export const manifestFlag = Flags.string({
  char: 'm',
  description: `stack manifest: a stack.yaml or the directory holding it (default: manifest in ${CONFIG_DISPLAY}, else the one shipped with rocm-ebuild)`,
  helpValue: 'PATH',
  ...settingFlagOptions('manifest'),
});
