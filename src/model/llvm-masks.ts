import { maskedLlvmNeeds, shippedGentooMasks, type GentooMasks, type MaskedLlvmNeed } from '../manifest/gentoo-masks.js';
import type { StackModel } from './resolve.js';

/**
 * The packages of `atoms` that an LLVM slot ::gentoo's profiles mask holds
 * back in this release: those built with llvm-r2, whose LLVM_COMPAT is the
 * release's slot (render/context.ts writes `LLVM_COMPAT=( <slot> )`).
 */
export function maskedLlvmOfRelease(model: StackModel, atoms: Iterable<string>, masks?: GentooMasks): MaskedLlvmNeed[] {
  const wanted = new Set(atoms);
  const ebuilds = model.components
    .filter((c) => c.spec.llvm && wanted.has(c.atom))
    .map((c) => ({ atom: c.atom, version: c.version, slots: [model.release.llvmSlot] }));
  return masks ? maskedLlvmNeeds(ebuilds, masks) : maskedLlvmNeeds(ebuilds);
}

/**
 * The `llvm_slot_N` flags of `slots` that ::gentoo's profiles mask, sorted:
 * what a container built with those slots must unmask (`-llvm_slot_N` in
 * /etc/portage/profile/use.mask). A stale entry in the data costs one
 * harmless line: unmasking a flag that is not masked changes nothing.
 */
export function maskedLlvmSlotFlags(slots: readonly number[], masks: GentooMasks = shippedGentooMasks()): string[] {
  const masked = new Set(masks.llvmSlots.map((s) => s.slot));
  return [...new Set(slots)].filter((s) => masked.has(s)).sort((a, b) => a - b).map((s) => `llvm_slot_${s}`);
}
