import type { Manifest } from '../manifest/load.js';
import { inRelease, knownReleases, releaseModel, resolveComponent, type ResolvedComponent } from './resolve.js';
import { expand } from './sources/index.js';
import { compareVersions, withoutRevision } from './version.js';

/**
 * A release can hold a package at its own version (`version:` in the
 * manifest): TheRock does not build MIGraphX, so ROCm 10.0 builds its last
 * release, 7.2.4, against the 10.0 libraries. PV is 7.2.4, and what ties
 * the ebuild to its release is the sub-slot: every package of a release
 * has the release's (`0/$(ver_cut 1-2)`, PV's), and the `:${SLOT}`
 * dependencies of the stack rely on it, so a held package states the
 * release's literally (`0/10.0`). The same version can then be in the
 * overlay twice, once per release, told apart by their SLOT.
 */

/** SLOT as the package's ebuild in this release writes it. */
export function packageSlot(c: ResolvedComponent): string {
  return c.held ? `0/${expand('$(ver_cut 1-2)', c.pn, c.release)}` : '0/$(ver_cut 1-2)';
}

/** An ebuild's literal SLOT assignment, read without a parse (as overlay/scan.ts reads it). */
function slotAssignment(text: string): string | undefined {
  const m = /^SLOT=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#]*))/m.exec(text);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

/**
 * The release an ebuild of a package was generated for: `c`'s release when
 * `c` is held there and the ebuild has its SLOT, else the ebuild's own
 * version (every other ebuild's release is its PV).
 */
export function ebuildRelease(c: ResolvedComponent, ebuildVersion: string, text: string): string {
  const pv = withoutRevision(ebuildVersion);
  return c.held && pv === c.version && slotAssignment(text) === packageSlot(c) ? c.release : pv;
}

/**
 * The release an ebuild of a package of the stack was generated for, read
 * from the manifest and the ebuild's SLOT: the newest release whose literal
 * sub-slot it has and that holds the package at the ebuild's version, else
 * its version (lint and pr check judge each ebuild against its release).
 */
export function releaseOfEbuild(manifest: Manifest, atom: string, ebuildVersion: string, text: string): string {
  const pv = withoutRevision(ebuildVersion);
  const subslot = /^0\/([0-9]+\.[0-9]+)$/.exec(slotAssignment(text) ?? '')?.[1];
  if (subslot === undefined) return pv;
  const candidates = knownReleases(manifest)
    .filter((r) => expand('$(ver_cut 1-2)', '', r) === subslot)
    .sort(compareVersions)
    .reverse();
  for (const r of candidates) {
    const model = releaseModel(manifest, r, { default: [], optional: [] })!;
    const c = manifest.components
      .filter((loaded) => inRelease(loaded, r))
      .map((loaded) => resolveComponent(manifest, loaded, model))
      .find((x) => x?.atom === atom);
    if (c && ebuildRelease(c, ebuildVersion, text) === r) return r;
  }
  return pv;
}

/** For people (commit bodies, bump's plan, the pull request): "ROCm 10.0.0 holds sci-libs/migraphx at 7.2.4: …". */
export function heldSentence(c: ResolvedComponent): string {
  const why = c.held?.reason ? `: ${c.held.reason.replace(/[.\s]+$/, '')}` : '';
  return `ROCm ${c.release} holds ${c.atom} at ${c.version}, its own version${why}. Its SLOT is the release's sub-slot, "${packageSlot(c)}", as for every package built against ${c.release}.`;
}
