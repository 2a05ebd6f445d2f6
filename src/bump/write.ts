import { type OverlayRepo } from '../git/repo.js';
import type { CommitSpec } from '../git/transaction.js';
import type { BumpOptions } from './types.js';

/**
 * Files bump writes are committed whatever the ignore rules say (fast-import
 * does not read them); say so, since a later `git add` of such a file would
 * need -f, and with --no-commit `git add -A` would leave them out.
 */
export async function noteIgnored(repo: OverlayRepo, commits: CommitSpec[], o: BumpOptions): Promise<void> {
  const written = [...new Set(commits.flatMap((c) => c.changes.filter((x) => x.content !== null).map((x) => x.path)))];
  const ignored = await repo.ignoreRules(written);
  if (ignored.length === 0) return;
  const n = ignored.length;
  const first = `${ignored[0]!.path}, by ${ignored[0]!.rule}`;
  o.warn(
    o.commit
      ? `${n} committed file${n === 1 ? '' : 's'} match the overlay's ignore rules (e.g. ${first}); they are tracked now`
      : `${n} file${n === 1 ? '' : 's'} written match the overlay's ignore rules (e.g. ${first}): \`git add\` skips them, \`git add -f\` does not`,
  );
}
