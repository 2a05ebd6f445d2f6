import type { Level } from '../lint/types.js';
import type { PrResult } from './types.js';

export interface GitKeyword {
  name: string;
  level: Level;
  /** The pkgcheck check that has the same keyword, or null for rocm-ebuild's own. */
  pkgcheck: 'GitCommitMessageCheck' | 'GitPkgCommitsCheck' | 'ManifestCheck' | null;
  description: string;
}

/**
 * The keywords `pr check` adds to lint's: pkgcheck's names and levels where
 * pkgcheck has the check (GitCommitMessageCheck, GitPkgCommitsCheck and its
 * Manifest checks), our own names otherwise.
 */
export const GIT_KEYWORDS: GitKeyword[] = [
  { name: 'BadCommitSummary', level: 'style', pkgcheck: 'GitCommitMessageCheck', description: 'the summary does not start with the package, category or file prefix of what the commit touches, or lacks the added version' },
  { name: 'InvalidCommitMessage', level: 'style', pkgcheck: 'GitCommitMessageCheck', description: 'no message, summary over 69 characters after the prefix, missing blank lines, body lines over 80 columns, non-trailer lines among the trailers' },
  { name: 'InvalidCommitTag', level: 'style', pkgcheck: 'GitCommitMessageCheck', description: 'a Bug:/Closes: value that is not an https URL, Fixes:/Reverts: naming no commit, the retired Gentoo-Bug: tag' },
  { name: 'MissingSignOff', level: 'error', pkgcheck: 'GitCommitMessageCheck', description: 'the author or the committer has no Signed-off-by line (GLEP 76)' },
  { name: 'EbuildIncorrectCopyright', level: 'warning', pkgcheck: 'GitPkgCommitsCheck', description: "an added or changed ebuild's copyright year is not the commit's year" },
  { name: 'DirectStableKeywords', level: 'error', pkgcheck: 'GitPkgCommitsCheck', description: 'a new ebuild is committed with stable keywords' },
  { name: 'RdependChange', level: 'warning', pkgcheck: 'GitPkgCommitsCheck', description: 'RDEPEND of an existing ebuild changed without a revision bump' },
  { name: 'EAPIChangeWithoutRevbump', level: 'warning', pkgcheck: 'GitPkgCommitsCheck', description: 'EAPI of an existing ebuild changed without a revision bump' },
  { name: 'MissingSlotmove', level: 'error', pkgcheck: 'GitPkgCommitsCheck', description: 'SLOT of an existing ebuild changed without a slotmove in profiles/updates' },
  { name: 'MissingMove', level: 'error', pkgcheck: 'GitPkgCommitsCheck', description: 'a package was renamed without a move in profiles/updates' },
  { name: 'SrcUriChecksumChange', level: 'error', pkgcheck: 'GitPkgCommitsCheck', description: 'a Manifest line changed size or hashes for a distfile whose name stayed the same' },
  { name: 'MissingManifest', level: 'error', pkgcheck: 'ManifestCheck', description: "a distfile in an added or changed ebuild's SRC_URI has no DIST line" },
  { name: 'UnknownManifest', level: 'warning', pkgcheck: 'ManifestCheck', description: "a DIST line no ebuild of the package needs" },
  { name: 'InvalidManifest', level: 'error', pkgcheck: 'ManifestCheck', description: 'the Manifest cannot be parsed' },
  { name: 'UnsignedCommit', level: 'error', pkgcheck: null, description: 'metadata/layout.conf requires signed commits (sign-commits = true) and the commit carries no signature' },
  { name: 'BadCommitSignature', level: 'error', pkgcheck: null, description: "where signing is required: the commit's signature does not verify (changed after signing), has expired, or was made by an expired or revoked key" },
  { name: 'UnverifiedCommitSignature', level: 'warning', pkgcheck: null, description: "where signing is required: the signature cannot be checked here (the signer's key is not in the keyring, or the SSH allowed signers file does not list it)" },
  { name: 'MultiplePackagesCommit', level: 'warning', pkgcheck: null, description: 'one commit changes several packages (a ROCm pull request has one commit per package)' },
  { name: 'MergeCommit', level: 'warning', pkgcheck: null, description: 'a merge commit in the range (::gentoo keeps a linear history)' },
  { name: 'NotGentooFile', level: 'error', pkgcheck: null, description: "::gentoo: a file outside the package directories, eclass/, profiles/ and metadata/, or one of rocm-ebuild's own" },
  { name: 'EclassChange', level: 'warning', pkgcheck: null, description: '::gentoo: the range changes an eclass, which the gentoo-dev mailing list reviews first' },
  { name: 'BadTreeclean', level: 'error', pkgcheck: null, description: 'a "cat/pkg: treeclean" commit that does not remove exactly the whole package directory' },
  { name: 'DroppedLocalChanges', level: 'warning', pkgcheck: null, description: 'a dropped ebuild differs from what rocm-ebuild generated for it: changes made by hand that may be lost' },
  { name: 'UnevaluatedSrcUri', level: 'info', pkgcheck: null, description: "SRC_URI uses something rocm-ebuild does not evaluate, so its DIST lines were not checked" },
  { name: 'BashSyntax', level: 'error', pkgcheck: null, description: '`bash -n` rejects the ebuild' },
  { name: 'ShellCheck', level: 'warning', pkgcheck: null, description: 'a shellcheck finding (its own level: error, warning, info or style)' },
];

const BY_NAME = new Map(GIT_KEYWORDS.map((k) => [k.name, k]));

export function keywordLevel(name: string): Level {
  const k = BY_NAME.get(name);
  if (!k) throw new Error(`undeclared pr keyword ${name}`);
  return k.level;
}

/** A finding of one of our own checks, at its keyword's level. */
export function ours(keyword: string, message: string, where: Omit<PrResult, 'keyword' | 'level' | 'message' | 'sources'> = {}): PrResult {
  return { keyword, level: keywordLevel(keyword), message, sources: ['rocm-ebuild'], ...where };
}
