import type { ManifestIssue } from '../manifest/issues.js';
import { issueAt, type ResolvedComponent } from '../model/resolve.js';

/**
 * HOMEPAGE follows the source: a package built from a directory of a
 * repository (a monorepo's project, by `subdir` or a release asset's `path`)
 * names that repository, as the tree of its project
 * (https://github.com/ROCm/rocm-libraries/tree/develop/projects/rocblas), not
 * the repository it lived in before it moved. A homepage left behind by a
 * move is what a reviewer of the bump asks about first.
 */
export function checkHomepage(c: ResolvedComponent): ManifestIssue[] {
  const main = c.sources[0];
  const repo = main?.location.repo;
  const dir = main?.spec.subdir ?? main?.location.path;
  if (!main || !repo || dir === undefined) return [];
  if (c.spec.homepage.toLowerCase().startsWith(`https://github.com/${repo.toLowerCase()}`)) return [];
  return [
    issueAt(
      c,
      ['homepage'],
      `HOMEPAGE is ${c.spec.homepage}, but ROCm ${c.release} builds ${c.atom} from ${dir} of ${repo}`,
      `name the project's tree there, with an override for the releases built from it: homepage: https://github.com/${repo}/tree/develop/${dir}`,
    ),
  ];
}
