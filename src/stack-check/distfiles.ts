import path from 'node:path';
import type { ManifestIssue } from '../manifest/issues.js';
import { issueAt, sourceDistfile, type StackModel } from '../model/resolve.js';

/**
 * One name in DISTDIR is one file: two sources naming the same distfile
 * (in one package or in two) must fetch it from the same place, as
 * llvm-project's shared tarball does, or one package would get the other's
 * bytes and fail its Manifest.
 */
export function checkDistfiles(model: StackModel): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const first = new Map<string, { url: string; file: string; atom: string }>();
  for (const c of model.components) {
    c.spec.sources.forEach((src, i) => {
      const { name, url } = sourceDistfile(model.manifest, src, i, c.pn, c.version);
      const seen = first.get(name);
      if (!seen) {
        first.set(name, { url, file: c.loaded.source.file, atom: c.atom });
        return;
      }
      if (seen.url === url) return;
      const where = seen.atom === c.atom ? 'an earlier source of this package' : path.relative(model.manifest.dir, seen.file);
      issues.push(
        issueAt(
          c,
          ['sources', i],
          `distfile ${name} is also fetched by ${where}, from ${seen.url} instead of ${url}`,
          'give this source its own `distfile:` name (e.g. with ${PN} in it), or fetch the same URL',
        ),
      );
    });
  }
  return issues;
}
