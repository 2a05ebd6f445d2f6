import type { SourceSpec } from '../../manifest/types.js';

/** What a source kind needs to know about the package and release it serves. */
export interface SourceContext {
  pn: string;
  version: string;
  /** The tag scheme of the release's stream, e.g. `rocm-${PV}`, for sources that follow the release. */
  releaseTag: string;
  /** Position among the release's sources; 0 is the main tree (S). */
  index: number;
  /** The commit of each repository the release pins (stack.yaml `pins`), for sources at a pinned commit. */
  pins?: Readonly<Record<string, string>>;
}

/**
 * Where one source of one package comes from, in both forms: as the ebuild
 * writes it (with ${PV}, ${P} and friends left for Portage) and expanded for
 * this release (to download it, or to read it with `upstream`).
 */
export interface SourceLocation {
  /** The file name in DISTDIR, expanded. */
  name: string;
  /** The download URL, expanded. */
  url: string;
  /** The SRC_URI entry, in ebuild form: "https://…/rocm-${PV}.tar.gz -> ${P}.tar.gz". */
  uri: string;
  /** The directory the file unpacks to under ${WORKDIR}, in ebuild form. */
  dir: string;
  /** `dir` expanded. */
  dirExpanded: string;
  /** The GitHub repository (owner/name) holding the source, when there is one. */
  repo?: string;
  /** The git tag the source is cut from, expanded, when it is a repository's tag. */
  tag?: string;
  /** The tree's place in the repository at that tag (a monorepo's project directory), when not its root. */
  path?: string;
  /** The project name upstream gives it: the repository's or the release asset's; none for a plain URL. */
  project?: string;
  /** The source moves with the release (its tag or URL holds the version); pinned sources do not. */
  versioned: boolean;
  /**
   * A source at a commit: the ebuild variable holding it (SRC_URI and S name
   * the variable, written once above them) and the commit, undefined when
   * the release pins none for the repository (validate reports it).
   */
  commit?: { variable: string; value: string | undefined };
}

/**
 * One way upstream serves sources (a repository's tag archive, a release
 * asset, a plain URL). The manifest names the kind by the key it writes;
 * everything that needs a distfile name, a SRC_URI entry or a place to read
 * the tree from asks the kind, so a new way of releasing is a new module,
 * not a branch in every caller.
 */
export interface SourceKind {
  /** The manifest key that selects this kind (`github`, `release_asset`, `url`). */
  key: 'github' | 'pinned' | 'release_asset' | 'url';
  locate(src: SourceSpec, ctx: SourceContext): SourceLocation;
}

const VERSIONED = /\$\{(PV|P)\}|\$\(ver_cut [0-9-]+\)/;

/** A distfile the ebuild can unpack with tar (selective extraction needs it). */
export function isTarball(name: string): boolean {
  return /\.(tar(\.(gz|xz|bz2|zst|lz|lzma))?|tgz|tbz2|txz)$/.test(name);
}

/** Whether a template changes with the release. */
export function isVersioned(template: string): boolean {
  return VERSIONED.test(template);
}

/** `${PV}` → 6.2.2, `$(ver_cut 1-2)` → 6.2: what Portage would make of a template, for one package and release. */
export function expand(template: string, pn: string, version: string): string {
  return template
    .replace(/\$\{(PV|PN|P)\}/g, (_, v: string) => (v === 'PV' ? version : v === 'PN' ? pn : `${pn}-${version}`))
    .replace(/\$\(ver_cut ([0-9]+)(?:-([0-9]+))?\)/g, (_, a: string, b: string | undefined) => verCut(version, Number(a), b === undefined ? Number(a) : Number(b)));
}

/** Portage's ver_cut on a dotted version: components a to b, 1-based, joined by their dots. */
function verCut(version: string, a: number, b: number): string {
  return version.split('.').slice(a - 1, b).join('.');
}
