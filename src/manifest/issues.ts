import { byCodePoint } from '../util/order.js';

/** One problem in a manifest file, as users see it: where, what, and what to do. */
export interface ManifestIssue {
  file: string;
  line: number;
  column: number;
  /** JSON path of the offending value, e.g. "$.deps[2].atom". */
  path: string;
  message: string;
  hint?: string;
}

/** Every problem found in one pass, so users fix them all at once. */
export class ManifestError extends Error {
  constructor(readonly issues: ManifestIssue[]) {
    super(`${issues.length} problem${issues.length === 1 ? '' : 's'} in the manifest`);
    this.name = 'ManifestError';
  }
}

export function formatIssue(issue: ManifestIssue, cwd = process.cwd()): string {
  const rel = issue.file.startsWith(`${cwd}/`) ? issue.file.slice(cwd.length + 1) : issue.file;
  const where = issue.line > 0 ? `${rel}:${issue.line}:${issue.column}` : rel;
  const hint = issue.hint ? `\n    hint: ${issue.hint}` : '';
  return `${where}: ${issue.path}: ${issue.message}${hint}`;
}

export function sortIssues(issues: ManifestIssue[]): ManifestIssue[] {
  return [...issues].sort(
    (a, b) => byCodePoint(a.file, b.file) || a.line - b.line || a.column - b.column || byCodePoint(a.path, b.path),
  );
}
