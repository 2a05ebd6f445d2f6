import { eclassApiNames, usedApiNames } from '../eclass/index.js';
import { commitMessage } from '../git/messages.js';
import type { Person } from '../git/repo.js';
import type { CommitSpec } from '../git/transaction.js';
import type { PackageWork } from './reconcile.js';

/**
 * ::gentoo's rocm.eclass against the names the new ebuilds use of ours: when
 * it lacks some, the update to ours is a commit of its own, first, saying
 * which names and why, for pr check and the PR body to call out.
 */
export function gentooEclassUpdate(tree: string, ours: string, writes: PackageWork[], identity: Person, version: string): { missing: string[]; commit: CommitSpec } | undefined {
  const api = eclassApiNames(ours);
  const have = eclassApiNames(tree);
  const used = new Set(writes.flatMap((w) => usedApiNames(w.write!.text, api)));
  const missing = [...used].filter((n) => !have.has(n)).sort();
  if (missing.length === 0) return undefined;
  const listed = `rocm.eclass: add ${missing.join(', ')}`;
  return {
    missing,
    commit: {
      message: commitMessage(
        listed.length - 'rocm.eclass: '.length <= 69 ? listed : `rocm.eclass: add ${missing.length} variables and functions for ROCm ${version}`,
        identity,
        `The ROCm ${version} ebuilds of the following commits use ${missing.join(', ')}, which this eclass does not have. ` +
          'Eclass changes are posted to the gentoo-dev mailing list for review before they are merged.',
      ),
      changes: [{ path: 'eclass/rocm.eclass', content: ours }],
    },
  };
}
