import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot, schemasDir } from '../paths.js';
import { memoOnContentSync } from '../util/content-memo.js';
import { formatIssue, type ManifestIssue } from './issues.js';
import { SchemaValidator } from './schema-validator.js';
import { parseYamlSource } from './yaml-source.js';

/**
 * What ::gentoo's profiles mask that ROCm ebuilds may need, and the local
 * settings that unmask it. The data is manifest/gentoo-masks.yaml (Gentoo's
 * state, not a stack's: the shipped copy is the one read); the functions
 * below say which ebuilds need a masked LLVM slot, for `lint`, `bump` and
 * `pr body` alike.
 */

/** One LLVM slot ::gentoo's profiles mask (its llvm_slot_N flag). */
export interface MaskedLlvmSlot {
  slot: number;
  /** The flag the llvm-r2 eclass gives the slot: llvm_slot_<slot>. */
  flag: string;
  /** The ::gentoo profile file that masks it, when known (e.g. profiles/base/use.mask). */
  maskedIn?: string;
  reason: string;
  evidence: { how: string; date: string };
}

export interface GentooMasks {
  file: string;
  llvmSlots: MaskedLlvmSlot[];
}

export const gentooMasksPath = path.join(projectRoot, 'manifest', 'gentoo-masks.yaml');

export class GentooMasksError extends Error {
  constructor(readonly issues: ManifestIssue[]) {
    super(`${issues.length} problem${issues.length === 1 ? '' : 's'} in the ::gentoo mask data:\n${issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
    this.name = 'GentooMasksError';
  }
}

/** Validate gentoo-masks.yaml text. Throws GentooMasksError listing every problem at file:line:column. */
export function parseGentooMasks(text: string, file = '<memory>'): GentooMasks {
  const read = parseYamlSource(file, text);
  if (!read.source) throw new GentooMasksError(read.issues);
  const issues = SchemaValidator.shared().validate('gentoo-masks.schema.json', read.source);
  if (issues.length > 0) throw new GentooMasksError(issues);
  const raw = read.source.value as { llvm_slots: { slot: number; masked_in?: string; reason: string; evidence: { how: string; date: string } }[] };
  return {
    file,
    llvmSlots: raw.llvm_slots.map((s) => ({
      slot: s.slot,
      flag: `llvm_slot_${s.slot}`,
      ...(s.masked_in ? { maskedIn: s.masked_in } : {}),
      reason: s.reason,
      evidence: s.evidence,
    })),
  };
}

let shipped: GentooMasks | undefined;

/**
 * The shipped manifest/gentoo-masks.yaml, read once per process and kept
 * between runs on its content and its schema's (content-memo.ts): a few
 * hundred bytes, but reading them loaded the YAML parser and the schema
 * validators, 150 ms of a bump whose manifest came from its cache.
 * Synchronous: lint checks are.
 */
export function shippedGentooMasks(): GentooMasks {
  shipped ??= memoOnContentSync('gentoo-masks', [], [gentooMasksPath, path.join(schemasDir, 'gentoo-masks.schema.json')], () =>
    parseGentooMasks(readFileSync(gentooMasksPath, 'utf8'), gentooMasksPath),
  );
  return shipped;
}

/**
 * The slots an LLVM_COMPAT value names: "( 22 23 )", "( {18..20} )", "22"
 * (the parentheses optional, brace ranges and lists expanded as bash does).
 * Words that are not slot numbers are ignored.
 */
export function llvmCompatSlots(value: string): number[] {
  const words = value.replace(/^\s*\(\s*|\s*\)\s*$/g, '').split(/\s+/).filter(Boolean);
  const slots: number[] = [];
  for (const word of words) {
    const range = /^\{(\d+)\.\.(\d+)\}$/.exec(word);
    const list = /^\{(\d+(?:,\d+)+)\}$/.exec(word);
    if (range) {
      const [a, b] = [Number(range[1]), Number(range[2])];
      for (let i = Math.min(a, b); i <= Math.max(a, b); i++) slots.push(i);
    } else if (list) {
      slots.push(...list[1]!.split(',').map(Number));
    } else if (/^\d+$/.test(word)) {
      slots.push(Number(word));
    }
  }
  return [...new Set(slots)].sort((a, b) => a - b);
}

/** An ebuild and the LLVM slots its LLVM_COMPAT names. */
export interface LlvmCompatOf {
  atom: string;
  version: string;
  slots: number[];
}

/** An ebuild that can only be built with LLVM slots ::gentoo's profiles mask. */
export interface MaskedLlvmNeed extends LlvmCompatOf {
  masks: MaskedLlvmSlot[];
}

/**
 * The ebuilds that need a masked LLVM slot: every slot of their LLVM_COMPAT
 * is masked, so llvm-r2's `^^ ( llvm_slot_… )` cannot hold on a stock profile
 * (Portage refuses them, pkgcheck reports RequiredUseDefaults). An ebuild
 * with one unmasked slot is built with that one and is not listed.
 */
export function maskedLlvmNeeds(ebuilds: readonly LlvmCompatOf[], masks: GentooMasks = shippedGentooMasks()): MaskedLlvmNeed[] {
  const bySlot = new Map(masks.llvmSlots.map((m) => [m.slot, m]));
  const needs: MaskedLlvmNeed[] = [];
  for (const e of ebuilds) {
    if (e.slots.length === 0 || !e.slots.every((s) => bySlot.has(s))) continue;
    needs.push({ ...e, masks: e.slots.map((s) => bySlot.get(s)!) });
  }
  return needs;
}

/** A local Portage setting: the file and the lines to add to it. */
export interface LocalSetting {
  file: string;
  lines: string[];
}

/**
 * The local settings that unmask what `needs` need: per package, one line
 * "<atom> -llvm_slot_N" in /etc/portage/profile/package.use.mask for each
 * package and masked slot (a "-flag" there lifts a profile's mask for the
 * packages it matches); for every package at once, "-llvm_slot_N" in
 * /etc/portage/profile/use.mask. Sorted, without duplicates.
 */
export function llvmUnmaskSettings(needs: readonly MaskedLlvmNeed[]): { perPackage: LocalSetting; everywhere: LocalSetting } {
  const perPackage = new Set<string>();
  const flags = new Set<string>();
  for (const n of needs) {
    for (const m of n.masks) {
      perPackage.add(`${n.atom} -${m.flag}`);
      flags.add(m.flag);
    }
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    perPackage: { file: '/etc/portage/profile/package.use.mask', lines: [...perPackage].sort(order) },
    everywhere: { file: '/etc/portage/profile/use.mask', lines: [...flags].sort(order).map((f) => `-${f}`) },
  };
}

/**
 * What `bump` prints and `pr body` writes about `needs`, as plain lines: which
 * packages need which masked slot, why ::gentoo masks it, and the settings
 * that unmask it. Empty when nothing needs a masked slot.
 */
export function describeMaskedLlvmNeeds(needs: readonly MaskedLlvmNeed[]): { summary: string; settings: ReturnType<typeof llvmUnmaskSettings> } | undefined {
  if (needs.length === 0) return undefined;
  const atoms = [...new Set(needs.map((n) => n.atom))];
  const masks = [...new Map(needs.flatMap((n) => n.masks).map((m) => [m.slot, m])).values()].sort((a, b) => a.slot - b.slot);
  const which = masks.map((m) => `LLVM ${m.slot} (${m.flag}, masked by ::gentoo's ${m.maskedIn ?? 'profiles'}: ${m.reason.replace(/\.$/, '')})`).join('; ');
  const summary = `${atoms.length} package${atoms.length === 1 ? '' : 's'} can only be built with ${which}; Portage refuses ${atoms.length === 1 ? 'it' : 'them'} on a stock profile until the mask is lifted locally.`;
  return { summary, settings: llvmUnmaskSettings(needs) };
}

/**
 * describeMaskedLlvmNeeds as plain lines for a terminal: the summary, then
 * the per-package lines under the file they go in, then the setting for
 * every package. Empty when nothing needs a masked slot.
 */
export function maskedLlvmText(needs: readonly MaskedLlvmNeed[]): string[] {
  const d = describeMaskedLlvmNeeds(needs);
  if (!d) return [];
  const { perPackage, everywhere } = d.settings;
  return [
    d.summary,
    `To install ${new Set(needs.map((n) => n.atom)).size === 1 ? 'it' : 'them'}, add to ${perPackage.file}:`,
    ...perPackage.lines.map((l) => `  ${l}`),
    `or ${everywhere.lines.join(' ')} to ${everywhere.file} for every package.`,
  ];
}
