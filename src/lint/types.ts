import type { Node, Tree } from '../ebuild/bash-parser.js';
import type { OverlayIndex } from '../ebuild/dependencies.js';
import type { GentooMasks } from '../manifest/gentoo-masks.js';

/** pkgcheck's result levels. */
export type Level = 'error' | 'warning' | 'style' | 'info';

/** A result keyword a check can emit, named after pkgcheck's where one exists. */
export interface Keyword {
  name: string;
  level: Level;
  description: string;
}

/** One finding, in the fields of pkgcheck's JSON reporter plus a line. */
export interface LintResult {
  category: string;
  package: string;
  version: string;
  keyword: string;
  level: Level;
  message: string;
  file: string;
  line?: number;
}

/** What is known of a package dependencies may name: the stack's own, or one of ::gentoo's. */
export interface StackPackage {
  /** Its IUSE (stack packages only): USE dependencies on it must name these. */
  iuse?: Set<string>;
  /** The versions that exist, when known: blockers must match one of them. */
  versions?: string[];
  /**
   * The flags of `iuse` that Gentoo's default profile enables (external
   * packages, when recorded): a USE dependency on any other makes Portage ask
   * the user for a USE change.
   */
  enabled?: Set<string>;
  /**
   * The amdgpu targets the package can be merged with at all (stack
   * packages whose REQUIRED_USE needs a target, directly or through what
   * they need); undefined when any will do.
   */
  usableTargets?: string[];
}

/** What the runner knows about the ebuild under check. */
export interface EbuildInput {
  /** Path for messages, e.g. "sci-libs/rocBLAS/rocBLAS-6.2.2.ebuild". */
  file: string;
  atom: string;
  version: string;
  text: string;
  /** The package's metadata.xml, when checking a package directory. */
  metadata?: string;
  /** IUSE the inherited eclasses add (amdgpu_targets_* from rocm.eclass), with defaults marked "+". */
  eclassIuse?: string[];
  /** The targets rocm.eclass offers in this ebuild's release, before ROCM_SUPPORTED_TARGETS narrows them. */
  releaseTargets?: string[];
  /** ROCM_REQUIRED_USE as the eclass computes it for this ebuild. */
  rocmRequiredUse?: string;
  /** GitHub repositories the package's sources come from (for MissingRemoteId). */
  upstreamRepos?: string[];
  /** The year the copyright header must end with. */
  year: number;
  /**
   * Python implementations as Gentoo has them now (stack.yaml's python):
   * `current` are supported, `default` are enabled by the profiles.
   */
  python?: { current: string[]; default: string[] };
  /** USE_EXPAND flags Gentoo's default profile enables (video_cards_amdgpu, …): on under default USE. */
  profileFlags?: ReadonlySet<string>;
  /** Gentoo's @FREE license group, expanded (stack.yaml's licenses.free): what Portage accepts by default. */
  freeLicenses?: ReadonlySet<string>;
  /** What ::gentoo's profiles mask; the shipped manifest/gentoo-masks.yaml when unset. */
  gentooMasks?: GentooMasks;
  /** Eclasses of the overlay itself (eclass/*.eclass), which ebuilds may inherit. */
  eclasses?: string[];
  /** Every package of the stack and the external package list, by atom (cat/pkg). */
  stack?: Map<string, StackPackage>;
  /** `lint --overlay`: every ebuild of the overlay with its SLOT, by atom; dependencies on its packages must be met by them. */
  overlay?: OverlayIndex;
  /**
   * The ebuild is one of the ROCm stack's: its conventions apply (EAPI 8,
   * SLOT="0/$(ver_cut 1-2)"). Other ebuilds in an overlay are judged as
   * pkgcheck judges any ebuild.
   */
  rocm?: boolean;
}

export interface Assignment {
  name: string;
  /** The value with one level of quotes removed. */
  value: string;
  line: number;
  node: Node;
}

export interface Command {
  name: string;
  node: Node;
  line: number;
  /** The function the command is in, undefined at global scope. */
  fn?: string;
  /** Types of the nodes enclosing it, the root first: `isInside` without climbing the tree. */
  ancestors: readonly string[];
}

/**
 * A node of a type some check declared in `nodeTypes`, as the one traversal
 * of the tree met it: where it is comes from the walk, so asking costs no
 * call into WebAssembly.
 */
export interface Visited {
  type: string;
  /** Its source text. */
  text: string;
  line: number;
  startIndex: number;
  endIndex: number;
  /** The enclosing function's name, undefined at global scope. */
  fn?: string;
  /** Types of the enclosing nodes, the root first. */
  ancestors: readonly string[];
  /** The tree-sitter node, for types declared 'node' (undefined for 'text'). */
  node?: Node;
}

/** Facts extracted once from the parse tree and shared by all checks. */
export interface EbuildFacts {
  input: EbuildInput;
  tree: Tree;
  lines: string[];
  /** Top-level assignments in file order. */
  globals: Assignment[];
  globalMap: Map<string, Assignment>;
  inherits: string[];
  inheritLine?: number;
  functions: Map<string, Node>;
  commands: Command[];
  /** IUSE flags without +/- (ebuild's own and the eclasses'). */
  iuse: Set<string>;
  /** Flags enabled by default (+flag). */
  iuseDefaults: Set<string>;
  /** Every node of `type` in document order; the type must be in some check's `nodeTypes`. */
  nodes(type: string): readonly Visited[];
}

export interface Check {
  name: string;
  keywords: Keyword[];
  /**
   * Node types the check reads through `facts.nodes(type)`. The tree is
   * walked once for all checks (pkgcheck's feed design) and only these types
   * are collected; 'text' asks for text and place alone, without the
   * WebAssembly node (much cheaper), 'node' for the node as well.
   */
  nodeTypes?: { [type: string]: 'node' | 'text' };
  run(facts: EbuildFacts): Omit<LintResult, 'category' | 'package' | 'version' | 'file' | 'level'>[];
}
