import type { ObjectReader } from './git-read.js';
import { ours } from './keywords.js';
import type { CommitInfo, PrResult } from './types.js';

/** pkgdev's subject for removing a package: "cat/pkg: treeclean". */
export const TREECLEAN_RE = /^([A-Za-z0-9][A-Za-z0-9+_.-]*\/[A-Za-z0-9+_-]+): treeclean$/;

/**
 * A treeclean commit removes one whole package directory and nothing else:
 * every file under it deleted, the directory gone in the commit's tree, no
 * other path touched. A reviewer reads "treeclean" as exactly that.
 */
export async function checkTreeclean(c: CommitInfo, summary: string, objects: ObjectReader): Promise<PrResult[]> {
  const m = TREECLEAN_RE.exec(summary);
  if (!m || c.parents.length !== 1) return [];
  const atom = m[1]!;
  const [category, pkg] = atom.split('/') as [string, string];
  const at = { commit: c.sha, category, package: pkg };
  const out: PrResult[] = [];
  const outside = c.changes.filter((ch) => !ch.path.startsWith(`${atom}/`) || ch.status !== 'D');
  if (outside.length > 0) {
    out.push(
      ours(
        'BadTreeclean',
        `a treeclean of ${atom} also ${outside.map((ch) => `${ch.status === 'D' ? 'deletes' : 'changes'} ${ch.path}`).slice(0, 5).join(', ')}${outside.length > 5 ? `, and ${outside.length - 5} more` : ''}: ` +
          'remove the package alone, and commit anything else on its own',
        at,
      ),
    );
  }
  const left = await objects.tree(`${c.sha}:${atom}`);
  if (left !== undefined) {
    out.push(ours('BadTreeclean', `${atom}/ still holds ${left.map((e) => e.name).slice(0, 5).join(', ')} after its treeclean: remove the whole package directory, or name the commit "${atom}: drop <versions>"`, at));
  } else if (!c.changes.some((ch) => ch.path.startsWith(`${atom}/`))) {
    out.push(ours('BadTreeclean', `the commit removes nothing of ${atom}`, at));
  }
  return out;
}
