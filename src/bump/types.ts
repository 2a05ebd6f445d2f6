import type { CommitSigning } from '../git/signing.js';
import type { DistfileProgress } from '../distfiles/index.js';
import type { EvidenceLevel, ReleaseEvidence } from '../model/evidence.js';
import type { Maintainer } from '../overlay/settings.js';
import type { LeftPackage, ScaffoldStep } from '../plan/plan.js';
import type { Progress } from '../util/progress.js';

/** What a bump is asked (BumpOptions) and what it reports (BumpResult, which --json prints). */

export interface BumpOptions {
  version: string;
  overlay: string;
  manifest?: string;
  distdir?: string;
  offline: boolean;
  dropOld: boolean;
  dryRun: boolean;
  /** false with --no-commit: leave the changes in the worktree. */
  commit: boolean;
  /** --maintainer: "gentoo" or "Name <email>", saved in the overlay's settings when it has none. */
  maintainer?: string;
  jobs?: number;
  timeoutMs?: number;
  retries?: number;
  /** Bytes: the largest download accepted for a distfile no Manifest lists yet. */
  maxSize?: number;
  mirrors: string[];
  /** Packages named on the command line (category/PN or PN): only these are bumped or regenerated. */
  packages?: string[];
  /** --allow-downgrade: add a release older than versions the overlay holds. */
  allowDowngrade?: boolean;
  /** --discard-local: drop or supersede ebuilds changed by hand even where the change cannot be carried forward. */
  discardLocal?: boolean;
  /** --separate-drops: drops in commits of their own, after every add (the older form). */
  separateDrops?: boolean;
  /** --bug / --closes values: bug numbers or https URLs, optionally "cat/pkg=…". */
  bug?: string[];
  closes?: string[];
  progress: Progress;
  distfileProgress?: DistfileProgress;
  warn(message: string): void;
}

export interface PlannedPackage {
  atom: string;
  version: string;
  /** treeclean: a version of a package that left the release, removed with the package. */
  action: 'add' | 'keep' | 'drop' | 'revbump' | 'treeclean';
  newPackage: boolean;
  /** revbump: the revision the new one replaces. */
  replaces?: string;
  distfiles: { name: string; urls: string[]; when?: string }[];
  /** How the added version's facts were established (the component's evidence in this release). */
  evidence?: EvidenceLevel;
  /** The release holds the package at its own version (model/held.ts): the release, and why. */
  held?: { release: string; reason?: string };
}

/** A package whose new ebuild is not simply what the manifest generates, or that replaces one: shown with its diff. */
export interface PackageChange {
  atom: string;
  version: string;
  /** revbump: what changed in the generated text (unified diff). */
  revbump?: { replaces: string; diff: string };
  /** Hand edits of an older ebuild carried into the new one (unified diff of the edits). */
  carried?: { from: string; diff: string };
  discarded: { version: string; diff: string }[];
  /** Files under files/ the package's commit removes: no remaining ebuild uses them. */
  removedFiles: string[];
  /** Our patch files the package's commit adds under files/: the new ebuild applies them. */
  addedFiles: string[];
}

/** The checks the written ebuilds passed before anything was written. */
export interface BumpQa {
  ebuilds: number;
  /** shellcheck ran (it is on PATH); bash -n and rocm-ebuild's own checks always do. */
  shellcheck: boolean;
  /** Style and info results of the ebuilds written: shown by lint, never failing (errors, warnings and tool findings refuse the bump). */
  findings: number;
}

export interface BumpResult {
  version: string;
  overlay: string;
  dryRun: boolean;
  committed: boolean;
  branch?: string;
  head?: string;
  scaffold: ScaffoldStep[];
  /** Who new packages' metadata.xml names, and where that came from. */
  maintainer: { maintainers: Maintainer[]; source: string };
  /** The release's evidence: the weakest of its packages'. */
  evidence: ReleaseEvidence;
  packages: PlannedPackage[];
  /**
   * Packages the overlay holds that the manifest describes and this release
   * does not generate, with the reason; what the bump does with them
   * (keep, or with --drop-old treeclean, or drop the older versions).
   * files (treeclean): every file the package directory loses, relative to the overlay.
   */
  left: { atom: string; versions: string[]; reason: string; action: LeftPackage['action']; removed: string[]; files?: string[] }[];
  /** Revision bumps, carried hand edits, discarded ones, removed and added files/ entries. */
  changes: PackageChange[];
  /** What bump could not decide alone and reports. */
  notes: string[];
  /** Whether the commits are signed, with which key, and why. */
  signing: CommitSigning;
  commits: { subject: string; files: string[] }[];
  /** What the written ebuilds were checked with (not on a dry run). */
  qa?: BumpQa;
  distfiles: { name: string; status: string; size?: number }[];
  /** --dry-run: the distfiles the bump needs, how many the distdir holds (and their bytes), how many it would download. */
  download?: { files: number; present: number; presentBytes: number; missing: string[]; distdir: string };
}
