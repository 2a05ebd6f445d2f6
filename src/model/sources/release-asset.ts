import type { SourceSpec } from '../../manifest/types.js';
import { expand, isVersioned, type SourceKind } from './kind.js';

/** "rocblas.tar.gz" → "rocblas": the directory such an asset unpacks to, by AMD's convention. */
function stem(file: string): string {
  return file.replace(/\.(tar\.(gz|xz|bz2|zst)|tgz|zip)$/, '');
}

/**
 * A file attached to a repository's GitHub release,
 * `https://github.com/<repo>/releases/download/<tag>/<file>`: how AMD's
 * monorepos (rocm-libraries, rocm-systems) release each project from 7.2.0,
 * one archive per project unpacking to `<project>/`. Renamed in DISTDIR to
 * `<project>-${PV}.<ext>`, since every release's asset has the same name.
 * `path` is the project's directory in the repository at the tag (by default
 * `projects/<project>`), where `upstream` reads it without the asset.
 */
export const releaseAsset: SourceKind = {
  key: 'release_asset',
  locate(src: SourceSpec, ctx) {
    const repo = src.release_asset!;
    const file = src.file!;
    const project = stem(file);
    const ext = file.slice(project.length);
    const tag = src.tag ?? ctx.releaseTag;
    const distfile = src.distfile ?? `${project}-\${PV}${ext}`;
    const dir = src.dir ?? project;
    const x = (t: string) => expand(t, ctx.pn, ctx.version);
    const remote = `https://github.com/${repo}/releases/download/${tag}/${file}`;
    return {
      name: x(distfile),
      url: x(remote),
      uri: `${remote} -> ${distfile}`,
      dir,
      dirExpanded: x(dir),
      repo,
      tag: x(tag),
      path: src.path ?? `projects/${project}`,
      project,
      versioned: isVersioned(tag) || isVersioned(file),
    };
  },
};
