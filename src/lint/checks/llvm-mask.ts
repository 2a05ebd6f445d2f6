import { llvmCompatSlots, maskedLlvmNeeds, shippedGentooMasks } from '../../manifest/gentoo-masks.js';
import type { Check } from '../types.js';

/**
 * An ebuild whose LLVM_COMPAT names only slots ::gentoo's profiles mask
 * (manifest/gentoo-masks.yaml) cannot be merged on a stock profile: llvm-r2's
 * `^^ ( llvm_slot_… )` has no unmasked flag to hold, which pkgcheck reports as
 * RequiredUseDefaults. A notice, not a warning: it is Gentoo's state (a new
 * LLVM not keyworded yet), and the message gives the local setting that lifts
 * the mask.
 */
export const llvmMaskCheck: Check = {
  name: 'LlvmSlotMaskCheck',
  keywords: [
    {
      name: 'MaskedLlvmSlot',
      level: 'info',
      description: "every LLVM slot LLVM_COMPAT names is masked by ::gentoo's profiles: the package installs only once the mask is lifted locally",
    },
  ],
  run(f) {
    const compat = f.globalMap.get('LLVM_COMPAT');
    if (!compat || !f.inherits.some((e) => e === 'llvm-r2' || e === 'llvm-r1')) return [];
    const slots = llvmCompatSlots(compat.value);
    const [need] = maskedLlvmNeeds([{ atom: f.input.atom, version: f.input.version, slots }], f.input.gentooMasks ?? shippedGentooMasks());
    if (!need) return [];
    const flags = need.masks.map((m) => m.flag);
    const where = [...new Set(need.masks.map((m) => m.maskedIn ?? 'profiles'))].join(', ');
    const lines = flags.map((flag) => `"${f.input.atom} -${flag}"`).join(' and ');
    return [
      {
        keyword: 'MaskedLlvmSlot',
        message:
          `LLVM_COMPAT=( ${slots.join(' ')} ) needs ${flags.join(', ')}, which ::gentoo masks (${where}): ` +
          `Portage refuses the package until ${lines} is in /etc/portage/profile/package.use.mask ` +
          `(or ${flags.map((flag) => `"-${flag}"`).join(' ')} in /etc/portage/profile/use.mask for every package)`,
        line: compat.line,
      },
    ];
  },
};
