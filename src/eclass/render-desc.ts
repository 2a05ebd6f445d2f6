import { templateEnv } from '../render/env.js';
import { policyFor } from './policy.js';
import type { TargetTable } from './table.js';

/**
 * profiles/desc/amdgpu_targets.desc: the Gentoo header with `year`, then one
 * "<target> - <description>" line per target, in table order. By default the
 * targets are those some policy offers: a flag no ebuild can have would be
 * reported by pkgcheck as UnusedGlobalUseExpand. An overlay holding only some
 * releases can pass `only` (e.g. the targets of those releases' policies).
 */
export function renderAmdgpuTargetsDesc(table: TargetTable, year: number, only?: Iterable<string>): string {
  const wanted = new Set(only ?? table.policies.flatMap((p) => [...p.defaultOn, ...p.optional]));
  return templateEnv().render('profiles/amdgpu_targets.desc.njk', {
    year,
    targets: table.targets.filter((t) => wanted.has(t.name)),
  });
}

/**
 * The targets ebuilds of these ROCm releases can offer: every target of each
 * release's policy (full-target libraries exist in every release, subset
 * libraries offer fewer), in table order. A desc listing more would make
 * pkgcheck report UnusedGlobalUseExpand.
 */
export function targetsOfReleases(table: TargetTable, releases: Iterable<string>): string[] {
  const wanted = new Set<string>();
  for (const v of releases) {
    // A release no policy covers (an old series kept in an overlay) adds
    // nothing: rocm.eclass cannot offer targets for it either.
    let policy;
    try {
      ({ policy } = policyFor(table, v));
    } catch {
      continue;
    }
    for (const t of [...policy.defaultOn, ...policy.optional]) wanted.add(t);
  }
  return table.targets.map((t) => t.name).filter((t) => wanted.has(t));
}

/** The targets an amdgpu_targets.desc lists, in its order. */
export function descTargets(text: string): string[] {
  return [...text.matchAll(/^([A-Za-z0-9][A-Za-z0-9_+@-]*) - /gm)].map((m) => m[1]!);
}

/** amdgpu_targets.desc for an overlay holding ebuilds of these releases. */
export function renderAmdgpuTargetsDescFor(table: TargetTable, releases: Iterable<string>, year: number): string {
  return renderAmdgpuTargetsDesc(table, year, targetsOfReleases(table, releases));
}

const COPYRIGHT_RE = /^# Copyright (?:(\d{4})-)?(\d{4}) Gentoo Authors/;

/** The last year of the "# Copyright [YYYY-]YYYY Gentoo Authors" first line, if any. */
export function copyrightYear(text: string): number | undefined {
  const m = COPYRIGHT_RE.exec(text);
  return m ? Number(m[2]) : undefined;
}

/** `text` with its copyright line ending in `year` ("2024" becomes "2024-2026"). */
export function withCopyrightYear(text: string, year: number): string {
  return text.replace(COPYRIGHT_RE, (_all, first: string | undefined, last: string) => {
    const start = first ?? last;
    return start === String(year) ? `# Copyright ${year} Gentoo Authors` : `# Copyright ${start}-${year} Gentoo Authors`;
  });
}
