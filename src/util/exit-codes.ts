/**
 * Process exit codes shared by every command. They are part of the CLI contract
 * (README "Exit codes"), so scripts can tell "fix your input" from "fetch again".
 */
export const ExitCode = {
  ok: 0,
  /** An unexpected internal error: a bug, please report it. */
  failure: 1,
  /** Invalid input: bad flags, a manifest that does not validate, an unknown atom or release. */
  invalidInput: 2,
  /** Distfiles are missing (offline mode) and nothing was written. */
  missingDistfiles: 3,
  /** The overlay cannot be touched: dirty worktree, not a git repository, no git identity, detached HEAD. */
  overlayRefused: 4,
  /** A download or verification failed; packages that succeeded were still handled. */
  fetchFailed: 5,
  /** Generated or checked files have QA errors (lint, eclass drift). */
  qaFailed: 6,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];
