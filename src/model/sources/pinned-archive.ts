import type { SourceSpec } from '../../manifest/types.js';
import { expand, type SourceKind } from './kind.js';

/**
 * The ebuild variable holding a repository's pinned commit:
 * ROCm/rocm-libraries → ROCM_LIBRARIES_COMMIT. One per repository, so a
 * package built from two pinned repositories names each.
 */
export function commitVariable(repo: string): string {
  const name = repo.split('/')[1]!.toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return `${/^[A-Z]/.test(name) ? '' : 'R_'}${name}_COMMIT`;
}

/**
 * A repository's archive at one commit,
 * `https://github.com/<repo>/archive/<commit>.tar.gz`, unpacking to
 * `<repo>-<commit>`: what TheRock's releases build (each repository pinned by
 * a commit, with no tag guaranteed to equal it). The commit is the release's
 * pin of the repository (stack.yaml `pins`), or the source's own `commit`.
 * The ebuild states it once, in a variable SRC_URI and S refer to, as
 * ::gentoo writes snapshots; the DISTDIR name carries ${PV} like a tag
 * archive's (`${P}.tar.gz` for the main tree, `<repo>-${PV}.tar.gz` after
 * it), so packages built from one monorepo share one download.
 */
export const pinnedArchive: SourceKind = {
  key: 'pinned',
  locate(src: SourceSpec, ctx) {
    const repo = src.pinned!;
    const repoName = repo.split('/')[1]!;
    const variable = commitVariable(repo);
    const value = src.commit ?? ctx.pins?.[repo];
    const distfile = src.distfile ?? (ctx.index === 0 ? '${P}.tar.gz' : `${repoName}-\${PV}.tar.gz`);
    const dir = src.dir ?? `${repoName}-\${${variable}}`;
    const x = (t: string) => expand(t, ctx.pn, ctx.version).replaceAll(`\${${variable}}`, value ?? 'unpinned');
    const remote = `https://github.com/${repo}/archive/\${${variable}}.tar.gz`;
    return {
      name: x(distfile),
      url: x(remote),
      uri: `${remote} -> ${distfile}`,
      dir,
      dirExpanded: x(dir),
      repo,
      // What git and `upstream` read: the commit itself.
      ...(value !== undefined ? { tag: value } : {}),
      project: repoName,
      versioned: false,
      commit: { variable, value },
    };
  },
};
