import type { ManifestIssue } from '../manifest/issues.js';
import type { DifferenceSpec, EvidenceSpec, PeerName } from '../manifest/types.js';
import { jsonPath, locate } from '../manifest/yaml-source.js';
import { itemMatches } from '../model/peer-items.js';
import { inRange } from '../model/version.js';
import type { CheckContext } from './context.js';

/**
 * A peer's fix-up that changes our source and that we carry no equivalent
 * edit for is a finding (`upstream peer` lists it as a `peer` record's
 * `lacks`). A release with such a record must say why it goes without the
 * edit: a `differences:` entry for that peer, fact `fixups` and the fix-up's
 * name, holding for each release of the record. Otherwise the manifest does
 * not validate: a packager's build knowledge is never dropped silently.
 */

/** Which peer a record's source names: "::gentoo …" and "Spack …" are the ones upstream peer writes. */
export function peerOfSource(source: string): PeerName | undefined {
  if (source.startsWith('::gentoo ')) return 'gentoo';
  if (source.startsWith('Spack ')) return 'spack';
  return undefined;
}

function argued(differences: readonly DifferenceSpec[], peer: PeerName, item: string, version: string): boolean {
  return differences.some((d) => d.peer === peer && d.fact === 'fixups' && itemMatches(d.item, item) && (d.releases === undefined || inRange(version, d.releases)));
}

export function checkPeerFindings(ctx: CheckContext): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  for (const c of ctx.manifest.components) {
    const differences = c.spec.differences ?? [];
    (c.spec.evidence ?? []).forEach((r: EvidenceSpec, i) => {
      if (r.kind !== 'peer' || !r.lacks?.length) return;
      const peer = peerOfSource(r.source);
      const at = ['evidence', i, 'lacks'];
      if (!peer) {
        issues.push({
          file: c.source.file,
          ...locate(c.source, at),
          path: jsonPath(at),
          message: `lacks: is written by upstream peer for ::gentoo and Spack records; this record's source names neither (${r.source})`,
          hint: 'remove lacks: from this record',
        });
        return;
      }
      const releases = Array.isArray(r.releases) ? r.releases : [];
      r.lacks.forEach((item, j) => {
        const open = releases.filter((v) => !argued(differences, peer, item, v));
        if (Array.isArray(r.releases) ? open.length === 0 : differences.some((d) => d.peer === peer && d.fact === 'fixups' && itemMatches(d.item, item) && d.releases === undefined)) return;
        issues.push({
          file: c.source.file,
          ...locate(c.source, [...at, j]),
          path: jsonPath([...at, j]),
          message: `${r.source.split(' ')[0]}'s fix-up "${item}" changes our source and we carry no equivalent edit${open.length && open.length < releases.length ? ` (in ${open.join(', ')})` : ''}, and no differences: entry says why`,
          hint: `carry an equivalent edit (a prepare operation or a patch), or add to differences: { peer: ${peer}, fact: fixups, item: ${JSON.stringify(item)}, why: "…" } saying why ours is right`,
        });
      });
    });
  }
  return issues;
}
