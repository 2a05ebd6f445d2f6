import type { SourceSpec, VersionRange } from '../../manifest/types.js';
import { inRange } from '../version.js';
import { githubArchive } from './github-archive.js';
import { pinnedArchive } from './pinned-archive.js';
import type { SourceContext, SourceKind, SourceLocation } from './kind.js';
import { releaseAsset } from './release-asset.js';
import { urlFile } from './url-file.js';

export { commitVariable } from './pinned-archive.js';
export { expand, isTarball, isVersioned, type SourceContext, type SourceKind, type SourceLocation } from './kind.js';

const KINDS: readonly SourceKind[] = [githubArchive, pinnedArchive, releaseAsset, urlFile];

/** The kind a source names by its key; the schema guarantees exactly one. */
export function sourceKind(src: SourceSpec): SourceKind {
  const kind = KINDS.find((k) => src[k.key] !== undefined);
  if (!kind) throw new Error(`a source names none of ${KINDS.map((k) => k.key).join(', ')}`);
  return kind;
}

export function locateSource(src: SourceSpec, ctx: SourceContext): SourceLocation {
  return sourceKind(src).locate(src, ctx);
}

/** A source with its position in the component's `sources` list, as written. */
export interface SourceEntry {
  src: SourceSpec;
  /** Index in the `sources` list as the manifest writes it (for error locations). */
  at: number;
}

/**
 * The sources that serve a release, in order: those whose `releases` range
 * holds it. A component whose source moved (its own repository until 7.1.x, a
 * monorepo's release asset from 7.2.0) lists both eras; the first source of
 * the release is its main tree.
 */
export function sourcesOf(sources: readonly SourceSpec[], version: string): SourceEntry[] {
  return sources.map((src, at) => ({ src, at })).filter(({ src }) => inRange(version, src.releases as VersionRange | undefined));
}

/** A name compared loosely with AMD's project names: "composable_kernel" ~ "composablekernel", "rocm_smi_lib" ~ "rocm-smi-lib". */
export function projectKey(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}
