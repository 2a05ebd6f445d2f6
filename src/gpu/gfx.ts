/**
 * The gfx target name of a KFD `gfx_target_version`, decoded as LLVM's
 * offload-arch does: major = v / 10000, minor = (v / 100) % 100, stepping =
 * v % 100, minor and stepping printed as one hexadecimal digit each
 * (90010 → gfx90a, 110000 → gfx1100, 90402 → gfx942). Undefined for 0 (a CPU
 * node) and for numbers no gfx name can spell (a minor or stepping above 15).
 */
export function gfxName(version: number): string | undefined {
  if (!Number.isSafeInteger(version) || version <= 0) return undefined;
  const major = Math.floor(version / 10000);
  const minor = Math.floor(version / 100) % 100;
  const stepping = version % 100;
  if (major < 1 || major > 99 || minor > 15 || stepping > 15) return undefined;
  return `gfx${major}${minor.toString(16)}${stepping.toString(16)}`;
}

/** A gfx target name as users and Portage write it: gfx90a, gfx1100. */
export const GFX_PATTERN = /^gfx[0-9]{1,2}[0-9a-f]{2}$/;

export function isGfxName(text: string): boolean {
  return GFX_PATTERN.test(text);
}

/**
 * The KFD `gfx_target_version` a gfx name stands for: the inverse of gfxName
 * (gfx90a → 90010, gfx1100 → 110000, gfx942 → 90402). Undefined for text that
 * is not a gfx name.
 */
export function gfxTargetVersion(gfx: string): number | undefined {
  if (!isGfxName(gfx)) return undefined;
  const digits = gfx.slice(3);
  const major = Number(digits.slice(0, -2));
  return major * 10000 + parseInt(digits.at(-2)!, 16) * 100 + parseInt(digits.at(-1)!, 16);
}
