import type { Manifest } from '../manifest/load.js';
import { describeEvidence, type EvidenceLevel } from '../model/evidence.js';
import { evidenceOf, expand, inRelease, releaseModel, releaseTag, resolveComponent } from '../model/resolve.js';
import { withoutRevision } from '../model/version.js';
import { STREAMS } from '../model/streams.js';
import { compareVersions } from '../model/version.js';
import { ebuildVars } from '../ebuild/vars.js';
import { packageSlot } from '../model/held.js';
import type { RangeContext } from './check.js';

/**
 * What a reviewer of a release move asks first, read from the ebuilds the
 * range adds and the ones they replace: where the sources come from now
 * (AMD moved most projects into two monorepos at 7.2.0), which LLVM slot the
 * replaced versions were built with, and how far each added version's facts
 * were checked (the stack manifest's evidence), whether the release comes
 * from another of AMD's release streams than the versions it replaces
 * (legacy rocm-X.Y.Z tags, TheRock's therock-X.Y), and which packages the
 * overlay holds that the release no longer has.
 */
export interface ReleaseNotes {
  /** LLVM_COMPAT of the versions the added ones replace, when it differs from theirs. */
  llvmBefore: { slots: string; ebuilds: number }[];
  /** Packages whose SRC_URI moved to another repository or kind of download. */
  sourceMoves: { atom: string; from: string; to: string }[];
  /** Each added version with the evidence the stack manifest records for it (when the manifest knows the release). */
  evidence: { atom: string; version: string; level: EvidenceLevel; text: string }[];
  /** The release's stream, when the versions it replaces came from another one (the stack manifest's streams). */
  stream?: { release: string; label: string; tag: string; from: { release: string; label: string; tag: string } };
  /** Stack packages the overlay holds at the replaced release that the new release no longer has: they keep their old versions. */
  left: { atom: string; versions: string[] }[];
  /**
   * Added versions of packages the release holds at their own version
   * (model/held.ts): PV is not the release, SLOT is the release's sub-slot.
   */
  held: { atom: string; versions: string[]; slot: string; reason?: string }[];
}

/** The packages a release holds at their own version, by atom (no target policy needed). */
function heldIn(manifest: Manifest, release: string): Map<string, { version: string; slot: string; reason?: string }> {
  const model = releaseModel(manifest, release, { default: [], optional: [] });
  const out = new Map<string, { version: string; slot: string; reason?: string }>();
  if (!model) return out;
  for (const loaded of manifest.components) {
    if (!inRelease(loaded, release)) continue;
    const c = resolveComponent(manifest, loaded, model);
    if (c?.held) out.set(c.atom, { version: c.version, slot: packageSlot(c), ...(c.held.reason ? { reason: c.held.reason } : {}) });
  }
  return out;
}

/** Where an ebuild's sources come from, as a reviewer names it: "ROCm/rocBLAS tag archive", "ROCm/rocm-libraries release asset", "ROCm/rocm-libraries commit archive". */
export function sourceOrigin(ebuild: string): string | undefined {
  const origins = new Set<string>();
  for (const m of ebuild.matchAll(/https:\/\/github\.com\/([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+)\/(archive|releases\/download)\/(\$\{[A-Z0-9_]+_COMMIT\}|[0-9a-f]{40}\.)?/g)) {
    // The archive of a commit (a pinned source: its commit variable, or the hash itself) is not a tag's.
    origins.add(`${m[1]} ${m[2] === 'archive' ? (m[3] ? 'commit archive' : 'tag archive') : 'release asset'}`);
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
  release?: { version: string; heldAt: (atom: string) => Promise<string[]> },
): Promise<ReleaseNotes> {
  const head = ctx.range.head;
  const before = new Map<string, number>();
  const sourceMoves: ReleaseNotes['sourceMoves'] = [];
  const evidence: ReleaseNotes['evidence'] = [];
  const heldHere = manifest && release ? heldIn(manifest, release.version) : new Map<string, { version: string; slot: string; reason?: string }>();
  const held: ReleaseNotes['held'] = [];
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
    const own = heldHere.get(a.atom);
    const ownVersions = own ? a.versions.filter((v) => withoutRevision(v) === own.version) : [];
    if (own && ownVersions.length) held.push({ atom: a.atom, versions: ownVersions, slot: own.slot, ...(own.reason ? { reason: own.reason } : {}) });
    if (manifest) {
      for (const v of a.versions) {
        // A version the release holds the package at is the release's: its evidence is the release's record.
        const e = evidenceOf(manifest, a.atom, ownVersions.includes(v) ? release!.version : v);
        if (e) evidence.push({ atom: a.atom, version: v, level: e.level, text: describeEvidence(e) });
      }
    }
  }
  const after = new Set(llvmAfter.map((l) => l.slots));
  const llvmBefore = [...before]
    .filter(([s]) => !after.has(s) || after.size > 1)
    .map(([slots, ebuilds]) => ({ slots, ebuilds }))
    .sort((x, y) => y.ebuilds - x.ebuilds);
  const moved = manifest && release ? await releaseMove(manifest, release.version, added, release.heldAt) : { left: [] };
  return { llvmBefore: llvmBefore.length && [...before.keys()].some((s) => !after.has(s)) ? llvmBefore : [], sourceMoves, evidence, ...moved, held };
}

/** The release most of the added packages replace: the newest version each held before, by count. */
export function replacedRelease(added: readonly { previous: string[] }[]): string | undefined {
  const tally = new Map<string, number>();
  for (const a of added) {
    const v = a.previous.at(-1)?.replace(/-r\d+$/, '');
    if (v) tally.set(v, (tally.get(v) ?? 0) + 1);
  }
  return [...tally].sort((x, y) => y[1] - x[1] || compareVersions(y[0], x[0]))[0]?.[0];
}

/** A release as a reviewer reads its stream: the stream's label and the tag its sources are cut from. */
function streamOf(manifest: Manifest, version: string): { release: string; label: string; tag: string } {
  const r = manifest.stack.releases[version]!;
  return { release: version, label: STREAMS[r.stream ?? 'legacy'].label, tag: expand(releaseTag(manifest, version), '', version) };
}

/**
 * Between the release the range replaces and the one it adds (both known to
 * the manifest): the change of stream, and the stack packages that exist in
 * the old release but not in the new one while the overlay still holds them.
 */
async function releaseMove(
  manifest: Manifest,
  version: string,
  added: readonly { atom: string; previous: string[] }[],
  heldAt: (atom: string) => Promise<string[]>,
): Promise<Pick<ReleaseNotes, 'stream' | 'left'>> {
  const old = replacedRelease(added);
  if (!old || old === version || !manifest.stack.releases[version] || !manifest.stack.releases[old]) return { left: [] };
  const now = streamOf(manifest, version);
  const before = streamOf(manifest, old);
  const left: ReleaseNotes['left'] = [];
  for (const loaded of manifest.components) {
    if (!inRelease(loaded, old) || inRelease(loaded, version)) continue;
    const versions = await heldAt(loaded.spec.atom);
    if (versions.length) left.push({ atom: loaded.spec.atom, versions });
  }
  left.sort((a, b) => (a.atom < b.atom ? -1 : a.atom > b.atom ? 1 : 0));
  return { ...(now.label !== before.label ? { stream: { ...now, from: before } } : {}), left };
}
