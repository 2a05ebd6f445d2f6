import path from 'node:path';
import type { ManifestIssue } from '../manifest/issues.js';
import { patchesOf } from '../model/patches.js';
import { issueAt, type ResolvedComponent, type StackModel } from '../model/resolve.js';

/**
 * One name in DISTDIR is one file: two sources naming the same distfile
 * (in one package or in two) must fetch it from the same place, as
 * llvm-project's shared tarball does, or one package would get the other's
 * bytes and fail its Manifest.
 */
export function checkDistfiles(model: StackModel): ManifestIssue[] {
  const byName = new Map<string, { c: ResolvedComponent; at: (string | number)[]; url: string; explicit: boolean }[]>();
  const add = (name: string, entry: { c: ResolvedComponent; at: (string | number)[]; url: string; explicit: boolean }) =>
    byName.set(name, [...(byName.get(name) ?? []), entry]);
  for (const c of model.components) {
    for (const { spec: src, at: i, location } of c.sources) {
      const explicit = src.distfile !== undefined;
      add(location.name, { c, at: explicit ? ['sources', i, 'distfile'] : ['sources', i], url: location.url, explicit });
    }
    // A patch fetched by URL names its distfile: the same rule, with the sources of every package.
    for (const p of patchesOf(c.spec.patches, c.pn, c.version, c.release)) {
      if (p.kind === 'url') add(p.name, { c, at: ['patches', p.at, 'distfile'], url: p.url, explicit: true });
    }
  }
  const issues: ManifestIssue[] = [];
  for (const [name, entries] of byName) {
    if (new Set(entries.map((e) => e.url)).size < 2) continue;
    // The name as the package would get it by default is the reference; a name written out is the likelier mistake.
    const reference = entries.find((e) => !e.explicit) ?? entries[0]!;
    const refFile = path.relative(model.manifest.dir, reference.c.loaded.source.file);
    for (const e of entries) {
      if (e.url === reference.url) continue;
      const where = reference.c === e.c ? 'another source or patch of this package' : refFile;
      issues.push(
        issueAt(
          e.c,
          e.at,
          `distfile ${name} is also fetched by ${where}, from ${reference.url} instead of ${e.url}`,
          'give this source its own `distfile:` name (e.g. with ${PN} in it), or fetch the same URL',
        ),
      );
    }
  }
  return issues;
}
