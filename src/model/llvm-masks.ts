import { maskedLlvmNeeds, type GentooMasks, type MaskedLlvmNeed } from '../manifest/gentoo-masks.js';
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
