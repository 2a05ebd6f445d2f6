/**
 * LLVM slots ::gentoo's profiles mask as USE flags (`llvm_slot_N` in
 * profiles/base/use.mask) while its LLVM of that slot is not ready for
 * general use. An ebuild with LLVM_COMPAT=( N ) of such a slot cannot be
 * installed until the user unmasks the flag: `-llvm_slot_N` in
 * /etc/portage/profile/use.mask, which `rocm-ebuild test` writes into its
 * containers.
 *
 * The data, and where it comes from: slot 23, which ROCm 10.0.0 is built
 * with. Real Portage 3.0.82 resolving the 10.0.0 overlay against ::gentoo
 * refused every ebuild with LLVM_COMPAT=( 23 ) until `-llvm_slot_23` was put
 * in the profile's use.mask, and pkgcheck 0.10.41 reports the mask as
 * NonsolvableDeps (docs/qa.md). Slots 18 to 22, those of the 6.2 to 7.2
 * releases, resolved without it. Drop a slot from the list once ::gentoo
 * unmasks it (a stale entry costs one harmless line: unmasking a flag that is
 * not masked changes nothing).
 */
export const MASKED_LLVM_SLOTS: readonly number[] = [23];

/** The `llvm_slot_N` flags of these slots that ::gentoo masks. */
export function maskedLlvmSlotFlags(slots: readonly number[]): string[] {
  return [...new Set(slots)].filter((s) => MASKED_LLVM_SLOTS.includes(s)).sort((a, b) => a - b).map((s) => `llvm_slot_${s}`);
}
