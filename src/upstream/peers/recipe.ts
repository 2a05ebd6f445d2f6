/**
 * One packager's recipe of one version, as facts a comparison can set side
 * by side with ours: where the sources come from, what it depends on, the
 * CMake options it passes, the edits it makes to the sources, its LLVM slot
 * and test restriction. Each fact says where it was read (file and line), so
 * a report can point a reviewer at it. gentoo.ts reads an ebuild into this
 * shape (ours too, rendered), spack.ts a package.py.
 */

export type PeerKind = 'gentoo' | 'spack';

export const PEER_LABEL: Record<PeerKind, string> = { gentoo: '::gentoo', spack: 'Spack' };

/** Where a fact was read: a file of the peer's tree (or our rendered ebuild) and a 1-based line. */
export interface Where {
  file: string;
  line: number;
}

/** A source tree: a repository at a tag, and the directory of it a release asset or a recipe's root holds. */
export interface TreeRef {
  /** owner/name on GitHub, as written ("ROCm/rocm-libraries"). */
  repo: string;
  tag: string;
  /** The directory of the repository the tree is (a monorepo project's release asset), undefined for the whole repository. */
  dir?: string;
  /** A release asset's file name; its `dir` is then a guess unless our data says it. */
  asset?: string;
  /** `dir` is the asset name's stem, not a fact from our data. */
  dirGuessed?: boolean;
}

export interface SourceFact {
  url: string;
  /** The distfile name (gentoo: after "->"). */
  distfile?: string;
  /** USE condition (gentoo) or Spack condition residue under which it is fetched. */
  when: string[];
  where: Where;
}

/** A tree unpacked under the work directory (gentoo: ${WORKDIR}/<dir>; Spack: the stage, '' its root). */
export interface Unpacked {
  dir: string;
  tree?: TreeRef;
  where: Where;
}

export interface DepFact {
  /** The Gentoo atom's key (category/package), mapped from the peer's name for Spack. */
  atom?: string;
  /** The peer's own name when it is not a Gentoo atom (Spack's package name). */
  peerName?: string;
  /** Dependency classes (RDEPEND, DEPEND, BDEPEND; Spack's build/link/run/test mapped onto them). */
  classes: string[];
  /** USE conditions (gentoo) or condition residues (Spack) under which the dependency holds. */
  when: string[];
  /** The slot part as written (":${SLOT}", ":=", ":0"), empty when none. */
  slot: string;
  /** The version constraint as written (">=…-7.2", Spack's "@7.2.0"). */
  version?: string;
  blocker?: boolean;
  where: Where;
}

export interface CmakeFact {
  /** -D name, or a flag such as -Wno-dev. */
  name: string;
  /** The value normalised (quotes removed, ON/OFF for booleans, $(usex …) spelled in full). */
  value: string;
  when: string[];
  where: Where;
}

/** What an edit does to one file: the lines (or line fragments) it takes out and puts in. */
export interface FileEdit {
  /** The file, relative to the work directory ('' parts resolved), or '/…' when it is outside every source (the image, the build directory). */
  path: string;
  removes: string[];
  adds: string[];
  /** The file is created or deleted whole. */
  whole?: 'create' | 'delete';
}

export interface FixupFact {
  /** Identifies the fix-up across versions and in `differences:` entries: "patch rocSOLVER-7.1.0-fix-sparse.patch", "sed hipamd/CMakeLists.txt". */
  id: string;
  kind: 'patch' | 'sed' | 'filter_file';
  when: string[];
  where: Where;
  edits: FileEdit[];
  /** Why its edits could not be read, when they could not. */
  unreadable?: string;
  /** The recipe's own reason, for ours (a prepare operation's `reason:`). */
  reason?: string;
}

export interface PeerRecipe {
  peer: PeerKind;
  /** The recipe's file, relative to the peer tree's root (or our rendered ebuild's name). */
  file: string;
  /** The version the recipe is of (gentoo: with revision). */
  version: string;
  /** The version asked for. */
  requested: string;
  /** A lower version was read because the peer has none of the version asked for. */
  nearest: boolean;
  sources: SourceFact[];
  /** The directory the build starts in, relative to the work directory (gentoo's S, Spack's root_cmakelists_dir). */
  s?: { dir: string; where: Where };
  unpacked: Unpacked[];
  deps: DepFact[];
  cmake: CmakeFact[];
  fixups: FixupFact[];
  llvm?: { slots: string[]; where: Where };
  /** gentoo's RESTRICT as far as tests go: "test", "!test? ( test )" or "" (none). */
  tests?: { restrict: string; where: Where };
  /** What the reader met and could not read, with where and the fact it leaves undecided (undefined: every fact). */
  unreadable: Unreadable[];
  /** Facts that hold only in builds we do not make (a Spack variant off by default, a compiler, an OS): not compared. */
  aside: { what: string; why: string; where: Where }[];
}

export interface Unreadable {
  what: string;
  why: string;
  where: Where;
  fact?: FactKind;
}

/** The comparison's categories; `llvm` counts as `deps` in an evidence record. */
export type FactKind = 'sources' | 'deps' | 'cmake' | 'fixups' | 'llvm' | 'tests';
export const FACT_KINDS: readonly FactKind[] = ['sources', 'deps', 'cmake', 'fixups', 'llvm', 'tests'];

/** A tree's label for people: "ROCm/rocm-libraries rocm-7.2.0:projects/rocprim". */
export function treeLabel(t: TreeRef): string {
  return `${t.repo} ${t.tag}${t.dir ? `:${t.dir}` : ''}${t.asset ? ` (asset ${t.asset})` : ''}`;
}

/** The same tree: repository (case-insensitive, as GitHub), tag and directory. */
export function sameTree(a: TreeRef, b: TreeRef): boolean {
  return a.repo.toLowerCase() === b.repo.toLowerCase() && a.tag === b.tag && (a.dir ?? '') === (b.dir ?? '');
}

/** A GitHub URL's tree: a tag archive or a release asset; undefined for anything else. */
export function treeOfUrl(url: string): TreeRef | undefined {
  const archive = /^https:\/\/github\.com\/([^/]+\/[^/]+)\/archive\/(?:refs\/tags\/)?(.+?)\.(?:tar\.gz|tar\.bz2|tar\.xz|tgz|zip)(?:[?#].*)?$/.exec(url);
  if (archive) return { repo: archive[1]!, tag: archive[2]! };
  const asset = /^https:\/\/github\.com\/([^/]+\/[^/]+)\/releases\/download\/([^/]+)\/([^/?#]+)$/.exec(url);
  if (asset) {
    const stem = asset[3]!.replace(/\.(tar\.gz|tar\.bz2|tar\.xz|tgz|zip)$/, '');
    return { repo: asset[1]!, tag: asset[2]!, asset: asset[3]!, dir: `projects/${stem}`, dirGuessed: true };
  }
  return undefined;
}

/** The directory a GitHub tag archive unpacks to: "<repo>-<tag without a leading v>". */
export function archiveDir(t: TreeRef): string {
  return `${t.repo.split('/')[1]}-${t.tag.replace(/^v(?=\d)/, '')}`;
}
