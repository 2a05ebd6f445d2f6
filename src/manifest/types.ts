/**
 * The manifest as written in YAML, after schema validation. These types mirror
 * schemas/*.schema.json; the schema is the authority on what is accepted.
 */

/** Releases something applies to: `from` inclusive, `until` exclusive, compared as Gentoo versions. */
export interface VersionRange {
  from?: string;
  until?: string;
}

export type DepClass = 'RDEPEND' | 'DEPEND' | 'BDEPEND' | 'PDEPEND' | 'IDEPEND';
export type BashScalar = string | number | boolean;

export interface SourceSpec {
  /** A repository's tag archive (owner/name). */
  github?: string;
  /** A repository's archive at a commit (owner/name): the one `commit` names, else the one the release pins. */
  pinned?: string;
  /** The commit of a `pinned` source, when it is not the release's pin of the repository (40 hex digits). */
  commit?: string;
  /** A file of a repository's GitHub release (owner/name), named by `file`. */
  release_asset?: string;
  file?: string;
  /** The release asset's project directory in its repository at the tag (default projects/<name>). */
  path?: string;
  tag?: string;
  url?: string;
  distfile?: string;
  dir?: string;
  subdir?: string;
  /**
   * Unpack only these directories of the archive (relative to its top
   * directory) instead of all of it: the project's own and the shared ones it
   * reads. Default: the whole archive.
   */
  extract?: string[];
  when?: string;
  /** The releases this source serves (its era); default all the component's. */
  releases?: VersionRange;
}

export interface UseToggle {
  use: string;
  on?: string;
  off?: string;
}

export type DefineValue = BashScalar | UseToggle;

export interface CmakeSpec {
  build_type?: 'Release' | 'RelWithDebInfo' | 'Debug';
  defines?: Record<string, DefineValue>;
  flags?: string[];
  when?: { use: string; defines: Record<string, DefineValue>; otherwise?: Record<string, DefineValue> }[];
  target_defines?: {
    name: string;
    value: string;
    reason?: string;
    if_any_target: { matching?: string[]; except?: string[] };
  }[];
}

export type TargetMode = 'full' | 'subset' | 'skip-globals' | 'none';

export interface TargetsSpec {
  mode: TargetMode;
  supported?: string[];
  cmake_vars?: string[];
  join?: ';' | ',' | ' ';
  required_use_when?: string[];
}

export interface LlvmSpec {
  deps: { atom: string; classes: DepClass[]; slot_op?: boolean; when?: string }[];
}

export interface PythonDepSpec {
  atom: string;
  classes: DepClass[];
  version?: string;
  when?: string;
}

export interface PythonSpec {
  eclass: 'distutils-r1' | 'python-single-r1' | 'python-r1' | 'python-any-r1';
  when?: string;
  deps?: PythonDepSpec[];
  pep517?: 'setuptools' | 'scikit-build-core' | 'hatchling' | 'flit';
}

export interface DepSpec {
  atom: string;
  classes: DepClass[];
  version?: string;
  slot?: string;
  gpu?: boolean;
  use?: string[];
  when?: string;
  blocker?: 'weak' | 'strong';
}

export interface TestsSpec {
  gpu?: boolean;
  /** true, or why the tests cannot run under Portage (rendered as a comment). */
  restrict?: boolean | string;
  run?: 'ctest' | 'command' | 'pytest' | 'default';
  jobs?: number;
  command?: { dir?: BashScalar; argv: BashScalar[]; env?: Record<string, BashScalar> };
  env?: Record<string, BashScalar>;
  skip?: string[];
  /** The smoke tier of `rocm-ebuild test --tests smoke`. */
  smoke?: { gtest_filter?: string; env?: Record<string, string>; reason?: string };
  /** CI matrices split the test run into this many gtest shards. */
  shards?: number;
}

export type PrepareOp = { reason?: string; when?: string } & (
  | { replace: { files: string[]; from: string; to: string; first?: boolean; skip_missing?: boolean } }
  | { delete_lines: { files: string[]; matching: string; skip_missing?: boolean } }
  | { insert: InsertSpec }
  | { remove: string[] }
);

/** Lines inserted after (or before) each line matching a basic regular expression. */
export interface InsertSpec {
  files: string[];
  after?: string;
  before?: string;
  lines: string[];
  first?: boolean;
  skip_missing?: boolean;
}

/** Upstream's own patch, fetched as a distfile and applied through PATCHES. */
export interface UrlPatchSpec {
  url: string;
  distfile: string;
  reason: string;
  /** The releases it applies to; default all the component's. */
  releases?: VersionRange;
}

/** Our own patch, shipped in patches/<component>/ next to the manifest and installed to the package's files/. */
export interface FilePatchSpec {
  file: string;
  reason: string;
  /** The releases it applies to; default all the component's. */
  releases?: VersionRange;
}

/** A patch file shipped in patches/<component>/ (FILESDIR: its bare name, or with a reason and releases), or one fetched by URL. */
export type PatchSpec = string | FilePatchSpec | UrlPatchSpec;

export interface PhaseCode {
  before?: string;
  after?: string;
  replace?: string;
}

export const PHASES = [
  'pkg_pretend',
  'pkg_setup',
  'src_prepare',
  'src_configure',
  'src_compile',
  'src_test',
  'src_install',
  'pkg_postinst',
] as const;
export type PhaseName = (typeof PHASES)[number];

export interface ComponentSpec {
  name: string;
  projects?: string[];
  atom: string;
  description: string;
  homepage: string;
  license: string;
  releases?: VersionRange;
  /**
   * The package's own version in a release, when it is not the release's
   * (a component the release holds at its last upstream version, built
   * against the release's libraries): set per release with `overrides`.
   */
  version?: string;
  keywords?: string;
  sources: SourceSpec[];
  s?: string;
  build: 'cmake' | 'python' | 'none';
  cmake?: CmakeSpec;
  compiler?: 'host' | 'hipcc' | 'clang' | 'hip-lang';
  targets?: TargetsSpec;
  platform?: 'amd' | 'nvidia';
  llvm?: LlvmSpec;
  python?: PythonSpec;
  use?: Record<string, { description?: string; default?: boolean }>;
  required_use?: string[];
  deps?: DepSpec[];
  tests?: TestsSpec;
  prepare?: PrepareOp[];
  patches?: PatchSpec[];
  inherit?: string[];
  globals?: Record<string, BashScalar>;
  restrict?: string[];
  phases?: Partial<Record<PhaseName, PhaseCode>>;
  qa?: { accept: { keyword: string; reason: string }[] };
  notes?: string;
  /** Where the component's facts come from, per release. */
  evidence?: EvidenceSpec[];
  /** Where our data differs from a peer's recipe on purpose, and why ours is right (`upstream peer`). */
  differences?: DifferenceSpec[];
  overrides?: { versions: VersionRange; set: Partial<ComponentSpec>; reason?: string }[];
}

/** How a fact was established: read at the upstream tag, agreed with a named packager's recipe, or pinned by TheRock. */
export type EvidenceKind = 'tag' | 'peer' | 'pin';

/** `offline`: with the options the ebuild passes, the build reaches no download (checked by `upstream evidence`). */
export type EvidenceFact = 'sources' | 'deps' | 'cmake' | 'targets' | 'fixups' | 'tests' | 'use' | 'python' | 'license' | 'install' | 'offline';

export interface EvidenceSpec {
  /** The releases the record covers: a list, or a range. */
  releases: string[] | VersionRange;
  kind: EvidenceKind;
  /** What was read or compared ("::gentoo sci-libs/rocBLAS/rocBLAS-7.2.0.ebuild"). */
  source: string;
  facts?: EvidenceFact[];
  /** kind pin: what TheRock pins, and how the ebuild fetches it. */
  pin?: PinSpec;
  note?: string;
  /** A `peer` record's findings: the peer's fix-ups on our source that we carry no equivalent edit for (each argued in `differences:`). */
  lacks?: string[];
}

/** The peers `upstream peer` reads, and the facts it compares. */
export type PeerName = 'gentoo' | 'spack';
export type PeerFact = 'sources' | 'deps' | 'cmake' | 'fixups' | 'llvm' | 'tests';

/** One argued difference from a peer's recipe: the item the comparison names, and why ours is right. */
export interface DifferenceSpec {
  peer: PeerName;
  fact: PeerFact;
  /** The item as `upstream peer` names it: an atom, a -D name, "patch x.patch", "sed path", "SRC_URI", "S", "LLVM_COMPAT", "RESTRICT". */
  item: string;
  why: string;
  /** The releases the argument holds for; default all. */
  releases?: VersionRange;
}

/**
 * The commit TheRock pins for a component's source, as a `pin` record states
 * it: the repository, the commit, the project's directory in it, and how the
 * ebuild gets that commit: the archive of the commit itself, or a tag that
 * `upstream tags` saw at that very commit.
 */
export interface PinSpec {
  repo: string;
  commit: string;
  path?: string;
  fetch: 'commit' | { tag: string };
}

export interface ReleaseSpec {
  llvm_slot: number;
  /** AMD's release stream (default legacy). */
  stream?: 'legacy' | 'therock';
  /** The tag of the release's sources, when not the stream's. */
  tag?: string;
  /** The commit of each repository the release pins (owner/name → 40 hex digits): what `pinned` sources fetch. */
  pins?: Record<string, string>;
}

/** Python implementations: they follow Gentoo's profiles, not ROCm releases. */
export interface StackPythonSpec {
  compat: string;
  current: string[];
  default: string[];
}

/** Gentoo's license groups as far as the stack needs them: @FREE, expanded. */
export interface StackLicensesSpec {
  free: string[];
}

export interface MaintainerSpec {
  type: 'person' | 'project';
  email: string;
  name?: string;
}

export interface StackSpec {
  name: string;
  repo_name: string;
  defaults?: { tag?: string; keywords?: string; maintainers?: MaintainerSpec[] };
  releases: Record<string, ReleaseSpec>;
  python: StackPythonSpec;
  licenses?: StackLicensesSpec;
  profile?: { use_expand?: Record<string, string[]> };
  targets: string;
  external: string[];
  components: string[];
  projects?: Record<string, string[]>;
  excluded?: { project: string; reason: string; releases?: VersionRange }[];
}

export interface ExternalSpec {
  packages: Record<
    string,
    { subslot: boolean; slots?: string[]; versions?: string[]; iuse?: string[]; eclass?: boolean; note?: string }
  >;
}
