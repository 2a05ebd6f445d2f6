import type { EvidenceFact, EvidenceKind, EvidenceSpec } from '../manifest/types.js';
import { byCodePoint } from '../util/order.js';
import { inRange } from './version.js';

/**
 * How far a package's facts were checked, weakest first. `none`: nothing
 * recorded. `pin`: only where the source is (the commit TheRock pins), not
 * what it needs. `peer`: agrees with a named packager's recipe of the same
 * version. `tag`: read at the upstream tag.
 */
export type EvidenceLevel = 'none' | EvidenceKind;
export const LEVELS: readonly EvidenceLevel[] = ['none', 'pin', 'peer', 'tag'];

export function levelRank(level: EvidenceLevel): number {
  return LEVELS.indexOf(level);
}

/** A package's evidence in one release: its strongest record sets the level. */
export interface PackageEvidence {
  level: EvidenceLevel;
  records: EvidenceSpec[];
  /** Facts some record of this release compared, in the vocabulary's order. */
  facts: EvidenceFact[];
}

const FACT_ORDER: readonly EvidenceFact[] = ['sources', 'deps', 'cmake', 'targets', 'use', 'fixups', 'offline', 'python', 'tests', 'install', 'license'];

export function covers(record: EvidenceSpec, version: string): boolean {
  return Array.isArray(record.releases) ? record.releases.includes(version) : inRange(version, record.releases);
}

/** The evidence a component's records give one release. */
export function evidenceFor(records: readonly EvidenceSpec[] | undefined, version: string): PackageEvidence {
  const mine = (records ?? []).filter((r) => covers(r, version));
  const level = mine.reduce<EvidenceLevel>((best, r) => (levelRank(r.kind) > levelRank(best) ? r.kind : best), 'none');
  const seen = new Set(mine.flatMap((r) => r.facts ?? []));
  return { level, records: mine, facts: FACT_ORDER.filter((f) => seen.has(f)) };
}

/** A release's evidence: the weakest of its packages', and how many packages stand at each level. */
export interface ReleaseEvidence {
  level: EvidenceLevel;
  counts: Record<EvidenceLevel, number>;
  /** The packages at the weakest level, by atom. */
  weakest: string[];
}

export function releaseEvidence(packages: readonly { atom: string; evidence: PackageEvidence }[]): ReleaseEvidence {
  const counts: Record<EvidenceLevel, number> = { none: 0, pin: 0, peer: 0, tag: 0 };
  for (const p of packages) counts[p.evidence.level]++;
  const level = LEVELS.find((l) => counts[l] > 0) ?? 'none';
  return { level, counts, weakest: packages.filter((p) => p.evidence.level === level).map((p) => p.atom).sort(byCodePoint) };
}

/** One line for people: "peer: ::gentoo …rocBLAS-7.2.0.ebuild (sources, deps, cmake)"; "none: not checked". */
export function describeEvidence(e: PackageEvidence): string {
  if (e.records.length === 0) return 'none: not checked against upstream or another packager';
  const strongest = e.records.filter((r) => r.kind === e.level);
  const others = e.records.filter((r) => r.kind !== e.level);
  const one = (r: EvidenceSpec) => `${r.source}${r.facts?.length ? ` (${r.facts.join(', ')})` : ''}${r.pin ? `: ${pinned(r.pin)}` : ''}`;
  return `${e.level}: ${strongest.map(one).join('; ')}${others.length ? `; also ${others.map((r) => `${r.kind}: ${one(r)}`).join('; ')}` : ''}`;
}

/** "ROCm/rocm-libraries 8d1ae90eff7d projects/rocblas, fetched by that commit": what a pin record pins, and how the ebuild gets it. */
function pinned(pin: NonNullable<EvidenceSpec['pin']>): string {
  const how = pin.fetch === 'commit' ? 'fetched by that commit' : `fetched by tag ${pin.fetch.tag}, seen at that commit`;
  return `${pin.repo} ${pin.commit.slice(0, 12)}${pin.path ? ` ${pin.path}` : ''}, ${how}`;
}

/** "3 tag, 40 peer, 8 none" in the order weakest first, leaving out levels nobody has. */
export function describeCounts(counts: Record<EvidenceLevel, number>): string {
  return LEVELS.filter((l) => counts[l] > 0)
    .map((l) => `${counts[l]} ${l}`)
    .join(', ');
}

/** What each level means, for one line of output. */
export const EVIDENCE_MEANING: Record<EvidenceLevel, string> = {
  tag: 'read at the upstream tags',
  peer: "agrees with a named packager's recipe of the same version",
  pin: 'sources as TheRock pins them; build facts not compared',
  none: 'not checked against upstream or another packager',
};
