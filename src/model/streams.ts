import { isVersion } from './version.js';

/**
 * AMD's release streams as version schemes: how a release's sources are
 * tagged upstream, and how a tag reads back as the Gentoo version (PV). The
 * legacy stream tags every component `rocm-X.Y.Z` and ends at 7.2.4; TheRock
 * (7.9 previews, 7.14, then ROCm 10) tags `therock-X.Y` for a release X.Y.0
 * and `therock-X.Y.Z` for a patch release. PV stays the plain version, so
 * Portage orders the two streams as one (7.2.4 < 7.14.0 < 10.0.0).
 */
export interface ReleaseStream {
  name: StreamName;
  /** For people: "legacy rocm-X.Y.Z", "TheRock therock-X.Y". */
  label: string;
  /** The tag template of a release's sources, in ebuild form (what SRC_URI says). */
  tagFor(version: string): string;
  /** The release a tag names, or undefined when the tag is not this stream's. */
  versionOf(tag: string): string | undefined;
}

export type StreamName = 'legacy' | 'therock';

const legacy: ReleaseStream = {
  name: 'legacy',
  label: 'legacy rocm-X.Y.Z',
  tagFor: () => 'rocm-${PV}',
  versionOf(tag) {
    const m = /^rocm-(\d+\.\d+(?:\.\d+)*)$/.exec(tag);
    return m && isVersion(m[1]!) ? m[1] : undefined;
  },
};

const therock: ReleaseStream = {
  name: 'therock',
  label: 'TheRock therock-X.Y',
  // X.Y.0 is tagged therock-X.Y; a patch release, therock-X.Y.Z.
  tagFor: (version) => (/^\d+\.\d+\.0$/.test(version) ? 'therock-$(ver_cut 1-2)' : 'therock-${PV}'),
  versionOf(tag) {
    const m = /^therock-(\d+)\.(\d+)(?:\.(\d+))?$/.exec(tag);
    return m ? `${Number(m[1])}.${Number(m[2])}.${Number(m[3] ?? 0)}` : undefined;
  },
};

export const STREAMS: Readonly<Record<StreamName, ReleaseStream>> = { legacy, therock };

/** The stream a tag belongs to, with the release it names. */
export function classifyReleaseTag(tag: string): { stream: ReleaseStream; version: string } | undefined {
  for (const stream of Object.values(STREAMS)) {
    const version = stream.versionOf(tag);
    if (version !== undefined) return { stream, version };
  }
  return undefined;
}
