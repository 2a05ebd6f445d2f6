import type { Manifest } from '../manifest/load.js';
import { describeEvidence, type EvidenceLevel } from '../model/evidence.js';
import { evidenceOf } from '../model/resolve.js';
import { ebuildVars } from '../ebuild/vars.js';
import type { RangeContext } from './check.js';

/**
 * What a reviewer of a release move asks first, read from the ebuilds the
 * range adds and the ones they replace: where the sources come from now
 * (AMD moved most projects into two monorepos at 7.2.0), which LLVM slot the
 * replaced versions were built with, and how far each added version's facts
 * were checked (the stack manifest's evidence).
 */
export interface ReleaseNotes {
  /** LLVM_COMPAT of the versions the added ones replace, when it differs from theirs. */
  llvmBefore: { slots: string; ebuilds: number }[];
  /** Packages whose SRC_URI moved to another repository or kind of download. */
  sourceMoves: { atom: string; from: string; to: string }[];
  /** Each added version with the evidence the stack manifest records for it (when the manifest knows the release). */
  evidence: { atom: string; version: string; level: EvidenceLevel; text: string }[];
}

/** Where an ebuild's sources come from, as a reviewer names it: "ROCm/rocBLAS tag archives", "ROCm/rocm-libraries release assets". */
export function sourceOrigin(ebuild: string): string | undefined {
  const origins = new Set<string>();
  for (const m of ebuild.matchAll(/https:\/\/github\.com\/([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)\/(archive|releases\/download)\//g)) {
    origins.add(`${m[1]} ${m[2] === 'archive' ? 'tag archive' : 'release asset'}`);
  }
  // The first is the main tree; secondary sources (test data) rarely move with it.
  return [...origins][0];
}

async function llvmCompat(text: string): Promise<string | undefined> {
  const compat = (await ebuildVars(text)).assignments.filter((x) => x.name === 'LLVM_COMPAT').at(-1);
  return compat?.raw.replace(/^\(\s*|\s*\)$/g, '').split(/\s+/).filter(Boolean).join(' ');
}

export async function gatherReleaseNotes(
  ctx: RangeContext,
  base: string | undefined,
  added: readonly { atom: string; versions: string[]; previous: string[] }[],
  llvmAfter: readonly { slots: string }[],
  manifest: Manifest | undefined,
): Promise<ReleaseNotes> {
  const head = ctx.range.head;
  const before = new Map<string, number>();
  const sourceMoves: ReleaseNotes['sourceMoves'] = [];
  const evidence: ReleaseNotes['evidence'] = [];
  for (const a of added) {
    const pn = a.atom.split('/')[1]!;
    const newest = a.versions.at(-1)!;
    const now = await ctx.objects.text(`${head}:${a.atom}/${pn}-${newest}.ebuild`);
    const replaced = base && a.previous.length ? await ctx.objects.text(`${base}:${a.atom}/${pn}-${a.previous.at(-1)!}.ebuild`) : undefined;
    if (replaced !== undefined) {
      const slots = await llvmCompat(replaced);
      if (slots) before.set(slots, (before.get(slots) ?? 0) + 1);
      const from = sourceOrigin(replaced);
      const to = now !== undefined ? sourceOrigin(now) : undefined;
      if (from && to && from !== to) sourceMoves.push({ atom: a.atom, from, to });
    }
    if (manifest) {
      for (const v of a.versions) {
        const e = evidenceOf(manifest, a.atom, v);
        if (e) evidence.push({ atom: a.atom, version: v, level: e.level, text: describeEvidence(e) });
      }
    }
  }
  const after = new Set(llvmAfter.map((l) => l.slots));
  const llvmBefore = [...before]
    .filter(([s]) => !after.has(s) || after.size > 1)
    .map(([slots, ebuilds]) => ({ slots, ebuilds }))
    .sort((x, y) => y.ebuilds - x.ebuilds);
  return { llvmBefore: llvmBefore.length && [...before.keys()].some((s) => !after.has(s)) ? llvmBefore : [], sourceMoves, evidence };
}
