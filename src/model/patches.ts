import type { FilePatchSpec, PatchSpec, UrlPatchSpec, VersionRange } from '../manifest/types.js';
import { expand } from './sources/kind.js';
import { inRange } from './version.js';

/** A patch of one release, with where the manifest writes it (for error locations). */
export type ReleasePatch =
  | { kind: 'file'; at: number; file: string; reason?: string }
  | { kind: 'url'; at: number; spec: UrlPatchSpec; name: string; url: string; uri: string };

/** The directory of a component's patch files, relative to the manifest's: patches/<component name>. */
export function patchDir(component: string): string {
  return `patches/${component}`;
}

/** A patch entry that names a file shipped next to the manifest: its bare name, or { file, reason, releases }. */
export function isFilePatch(p: PatchSpec): p is string | FilePatchSpec {
  return typeof p === 'string' || 'file' in p;
}

/**
 * The patches that apply to a release, in the order written: files shipped
 * next to the manifest (a bare name always, { file } when its `releases` hold
 * the version), patches fetched by URL when their `releases` hold it. A
 * fetched patch is a distfile like any source (its name and URL expanded for
 * the release, its SRC_URI entry in ebuild form).
 */
export function patchesOf(patches: readonly PatchSpec[] | undefined, pn: string, version: string, release = version): ReleasePatch[] {
  const out: ReleasePatch[] = [];
  (patches ?? []).forEach((p, at) => {
    if (typeof p === 'string') out.push({ kind: 'file', at, file: p });
    // `releases` names stack releases; the names expand with the package's own version (PV).
    else if (!inRange(release, p.releases as VersionRange | undefined)) return;
    else if ('file' in p) out.push({ kind: 'file', at, file: p.file, reason: p.reason });
    else {
      const basename = p.url.split('/').pop()!;
      out.push({
        kind: 'url',
        at,
        spec: p,
        name: expand(p.distfile, pn, version),
        url: expand(p.url, pn, version),
        uri: basename === p.distfile ? p.url : `${p.url} -> ${p.distfile}`,
      });
    }
  });
  return out;
}
