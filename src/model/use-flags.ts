/**
 * Which USE flags need a local description in metadata.xml. USE_EXPAND flags
 * are described by the profiles (profiles/desc/*.desc) and global flags by
 * ::gentoo's profiles/use.desc, so repeating them locally is noise
 * (pkgcheck's RedundantLongDescription-style findings).
 */
export const USE_EXPAND_PREFIXES = [
  'amdgpu_targets_',
  'cpu_flags_',
  'video_cards_',
  'python_targets_',
  'python_single_target_',
  'llvm_slot_',
  'llvm_targets_',
  'input_devices_',
  'l10n_',
];

/** Global flags of ::gentoo (profiles/use.desc) the stack uses. */
export const GLOBAL_FLAGS = new Set([
  'X',
  'cuda',
  'debug',
  'doc',
  'examples',
  'ffmpeg',
  'fortran',
  'mpi',
  'opencl',
  'opencv',
  'openmp',
  'opengl',
  'python',
  'rocm',
  'static',
  'static-libs',
  'test',
  'tbb',
  'vulkan',
  'vaapi',
]);

/**
 * USE_EXPAND variables the user (make.conf) and the profiles set, never an
 * ebuild: a + default in IUSE would overrule the user's VIDEO_CARDS or
 * CPU_FLAGS_* where they name nothing.
 */
export const USER_USE_EXPAND: Record<string, string> = {
  video_cards_: 'VIDEO_CARDS',
  cpu_flags_: 'CPU_FLAGS_*',
  input_devices_: 'INPUT_DEVICES',
  l10n_: 'L10N',
};

/** The flags Gentoo's default profile enables through USE_EXPAND variables (stack.yaml's profile.use_expand). */
export function profileUseFlags(useExpand: Record<string, string[]> | undefined): Set<string> {
  return new Set(Object.entries(useExpand ?? {}).flatMap(([variable, values]) => values.map((v) => `${variable.toLowerCase()}_${v}`)));
}

export function isUseExpand(flag: string): boolean {
  return USE_EXPAND_PREFIXES.some((p) => flag.startsWith(p));
}

export function needsLocalDescription(flag: string): boolean {
  return !isUseExpand(flag) && !GLOBAL_FLAGS.has(flag);
}
