import type { Level } from '../lint/types.js';

export type { Level } from '../lint/types.js';

/** Who said it: our own checks (git checks, lint, bash -n, shellcheck) or pkgcheck. */
export type ResultSource = 'rocm-ebuild' | 'pkgcheck';

/**
 * One finding about the range, in the fields of pkgcheck's results plus
 * where it came from. `commit` is the full id of the commit the finding is
 * about (absent for pkgcheck package results no commit of the range claims).
 */
export interface PrResult {
  keyword: string;
  level: Level;
  message: string;
  /** The tools that reported it; both when pkgcheck said the same as we did. */
  sources: ResultSource[];
  /** pkgcheck's own text, when it reported the same finding. */
  pkgcheckMessage?: string;
  commit?: string;
  category?: string;
  package?: string;
  version?: string;
  /** e.g. "rocm.eclass" for eclass results. */
  eclass?: string;
  file?: string;
  line?: number;
  /** For bash -n and shellcheck findings: the tool and its code. */
  tool?: 'bash' | 'shellcheck';
  code?: string;
}

export interface Person {
  name: string;
  email: string;
  /** Strict ISO 8601 with the person's UTC offset, as git records it. */
  date: string;
}

/** One changed path of a commit, from `git log --raw -M`. */
export interface PathChange {
  /** A added, M modified, D deleted, T type changed, R renamed, C copied. */
  status: 'A' | 'M' | 'D' | 'T' | 'R' | 'C';
  path: string;
  /** The path before a rename or copy. */
  oldPath?: string;
  oldBlob: string;
  newBlob: string;
  oldMode: string;
  newMode: string;
}

export interface CommitInfo {
  sha: string;
  short: string;
  parents: string[];
  author: Person;
  committer: Person;
  /** The message as UTF-8 text (invalid bytes replaced). */
  message: string;
  /** False when the raw message is not valid UTF-8 (and declared no other encoding git could convert). */
  utf8: boolean;
  /** The encoding header, when the commit declares one. */
  encoding?: string;
  /** Empty for merge commits (their changes come from the merged parents). */
  changes: PathChange[];
}

/** How the range was chosen, for messages and --json. */
export type RangeOrigin = 'given' | 'upstream' | 'origin-head' | 'unpushed' | 'root';

export interface ResolvedRange {
  /** What the user sees: "origin/master..HEAD", "HEAD (every commit)". */
  label: string;
  origin: RangeOrigin;
  /** The excluded side as the user named it (a ref), if any. */
  baseRef?: string;
  /** Full id of the base commit (absent when the range reaches the root, or when "unpushed" excludes several refs). */
  base?: string;
  /** The included side as named ("HEAD", a branch). */
  headRef: string;
  head: string;
  /** Arguments for `git rev-list` / `git log` selecting the commits. */
  revArgs: string[];
  /** For the "unpushed" default: the remote-tracking refs excluded. */
  excluded?: string[];
}
