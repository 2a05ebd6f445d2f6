import type { SourceSpec } from '../../manifest/types.js';
import { expand, isVersioned, type SourceKind } from './kind.js';

/** Any https URL with its DISTDIR name and unpacked directory written out (a data archive, a third-party tarball). */
export const urlFile: SourceKind = {
  key: 'url',
  locate(src: SourceSpec, ctx) {
    const url = src.url!;
    const distfile = src.distfile!;
    const dir = src.dir!;
    const basename = url.split('/').pop()!;
    const x = (t: string) => expand(t, ctx.pn, ctx.version);
    return {
      name: x(distfile),
      url: x(url),
      uri: basename === distfile ? url : `${url} -> ${distfile}`,
      dir,
      dirExpanded: x(dir),
      versioned: isVersioned(url) || isVersioned(distfile),
    };
  },
};
