import { Flags } from '#oclif';

// Loading a checked manifest and a release of it lives in stack-check/ (workflows use it too);
// commands keep importing it from here.
export { loadManifestOrFail, stackFor } from '../stack-check/index.js';

export const manifestFlag = Flags.string({
  char: 'm',
  description: 'stack manifest: a stack.yaml or the directory holding it (default: the one shipped with rocm-ebuild)',
  helpValue: 'PATH',
});
