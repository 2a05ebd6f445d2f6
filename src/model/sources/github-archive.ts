import type { SourceSpec } from '../../manifest/types.js';
import { expand, isVersioned, type SourceKind } from './kind.js';

/** GitHub strips a leading "v" from version-like tags when naming the archive's directory. */
function archiveDir(repoName: string, tag: string): string {
  return `${repoName}-${/^v[0-9]/.test(tag) ? tag.slice(1) : tag}`;
}

/**
 * A repository's tag archive, `https://github.com/<repo>/archive/<tag>.tar.gz`,
 * renamed in DISTDIR (`${P}.tar.gz` for the main tree, `<repo>-${PV}.tar.gz`
 * after it) and unpacking to `<repo>-<tag>`. A shared archive (llvm-project
 * for comgr, device-libs and hipcc) is the same source with a `subdir`.
 */
export const githubArchive: SourceKind = {
  key: 'github',
  locate(src: SourceSpec, ctx) {
    const repo = src.github!;
    const repoName = repo.split('/')[1]!;
    const tag = src.tag ?? ctx.releaseTag;
    const distfile = src.distfile ?? (ctx.index === 0 ? '${P}.tar.gz' : `${repoName}-\${PV}.tar.gz`);
    const dir = src.dir ?? archiveDir(repoName, tag);
    const x = (t: string) => expand(t, ctx.pn, ctx.version);
    return {
      name: x(distfile),
      url: `https://github.com/${repo}/archive/${x(tag)}.tar.gz`,
      uri: `https://github.com/${repo}/archive/${tag}.tar.gz -> ${distfile}`,
      dir,
      dirExpanded: x(dir),
      repo,
      tag: x(tag),
      project: repoName,
      versioned: isVersioned(tag),
    };
  },
};
