import { statSync } from 'node:fs';
import path from 'node:path';
import {
  describeProblems,
  ensureDistfiles,
  parseManifest,
  resolveDistdir,
  type DistfileNeed,
  type DistfileResult,
  type ManifestEntry,
} from '../distfiles/index.js';
import type { OverlayState } from '../overlay/scan.js';
import { UserError } from '../util/errors.js';
import { ExitCode } from '../util/exit-codes.js';
import type { PackageWork } from './reconcile.js';
import type { BumpOptions, BumpResult } from './types.js';

/**
 * The seventh stage: every distfile the written ebuilds need, at hand and
 * hashed (downloaded unless --offline), before anything is written; or
 * refused with what is missing and how to get it.
 */
export async function ensureAllDistfiles(
  writes: PackageWork[],
  state: OverlayState,
  o: BumpOptions,
): Promise<{ results: DistfileResult[]; entries: Map<string, ManifestEntry> }> {
  const needs = new Map<string, DistfileNeed>();
  for (const w of writes) {
    const pkg = state.packages.get(w.atom);
    const known = pkg?.manifest !== undefined ? parseManifest(pkg.manifest, `${w.atom}/Manifest`) : [];
    for (const d of w.component.distfiles) {
      // A revision bump of a release whose distfiles the Manifest already lists needs none of them on disk.
      if (w.revbump && known.some((k) => k.name === d.name)) continue;
      const need = needs.get(d.name) ?? { name: d.name, urls: d.urls, neededBy: [] };
      need.neededBy.push({ atom: w.atom, ebuild: `${w.component.pn}-${w.write!.version}.ebuild` });
      const expected = known.find((k) => k.name === d.name);
      if (expected) need.expected = expected;
      needs.set(d.name, need);
    }
  }
  const results = await ensureDistfiles([...needs.values()], {
    distdir: resolveDistdir(o.distdir),
    offline: o.offline,
    mirrors: o.mirrors,
    ...(o.jobs !== undefined ? { jobs: o.jobs } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.retries !== undefined ? { retries: o.retries } : {}),
    ...(o.maxSize !== undefined ? { maxSize: o.maxSize } : {}),
    ...(o.distfileProgress ? { progress: o.distfileProgress } : {}),
  });
  const missing = results.filter((r) => r.status === 'missing');
  const failed = results.filter((r) => r.status === 'failed');
  if (missing.length > 0 || failed.length > 0) {
    const distdir = resolveDistdir(o.distdir);
    const lines = missing.map((r) => `  ${r.name} (missing; needed by ${r.neededBy.map((n) => `${n.atom}/${n.ebuild}`).join(', ')})`);
    // Failures grouped by cause: one unreachable host is one line, not a block per file (--json has them all).
    if (failed.length > 0) lines.push(describeProblems(failed, { distdir }).replace(/^/gm, '  '));
    const how = missing.length > 0
      ? `Put the files into ${distdir} (or point --distdir at a directory holding them)${o.offline ? ', or run without --offline to download them' : ''}.`
      : 'Files fetched so far stay in the distdir; run the bump again to fetch only what is missing.';
    throw new UserError(
      `${missing.length + failed.length} distfile${missing.length + failed.length === 1 ? '' : 's'} ${failed.length ? 'could not be fetched or verified' : 'missing'}; nothing was written to the overlay:\n${lines.join('\n')}\n${how}`,
      failed.length > 0 ? ExitCode.fetchFailed : ExitCode.missingDistfiles,
      { distdir, missing: missing.map((r) => ({ name: r.name, urls: needs.get(r.name)!.urls, neededBy: r.neededBy })), failed },
    );
  }
  return { results, entries: new Map(results.map((r) => [r.name, r.entry!])) };
}

/** What a dry run can tell of the downloads: the distfiles needed, and which the distdir already has. */
export function downloadSize(works: PackageWork[], state: OverlayState, distdir: string): NonNullable<BumpResult['download']> {
  const names = new Set<string>();
  for (const w of works) {
    if (!w.write) continue;
    const known = state.packages.get(w.atom)?.manifest ?? '';
    for (const d of w.component.distfiles) if (!(w.revbump && known.includes(`DIST ${d.name} `))) names.add(d.name);
  }
  let present = 0;
  let presentBytes = 0;
  const missing: string[] = [];
  for (const name of [...names].sort()) {
    try {
      const st = statSync(path.join(distdir, name));
      if (!st.isFile()) throw new Error('not a file');
      present++;
      presentBytes += st.size;
    } catch {
      missing.push(name);
    }
  }
  return { files: names.size, present, presentBytes, missing, distdir };
}
