import { SETTINGS_FILE } from '../overlay/settings.js';
import type { ObjectReader } from './git-read.js';
import { ours } from './keywords.js';
import { eclassOf, packageOf } from './overlay-paths.js';
import type { CommitInfo, PrResult } from './types.js';

/**
 * What a pull request to ::gentoo may not carry: files outside the package
 * directories, eclass/, profiles/ and metadata/; rocm-ebuild's own settings
 * file; a new file directly in metadata/ (::gentoo keeps only its
 * layout.conf and its own directories there). And what it must call out:
 * an eclass change, which ::gentoo reviews on the gentoo-dev mailing list.
 */
const GENTOO_METADATA_FILES = new Set(['metadata/layout.conf']);

export async function isGentoo(objects: ObjectReader, head: string): Promise<boolean> {
  return (await objects.text(`${head}:profiles/repo_name`))?.trim() === 'gentoo';
}

export function gentooChecks(commits: CommitInfo[]): PrResult[] {
  const out: PrResult[] = [];
  for (const c of commits) {
    if (c.parents.length > 1) continue;
    for (const ch of c.changes) {
      if (ch.status === 'D') continue;
      const p = ch.path;
      const at = { commit: c.sha, file: p };
      if (p === SETTINGS_FILE) {
        out.push(ours('NotGentooFile', `${p} is rocm-ebuild's own settings file; ::gentoo does not carry it: drop it from the branch (bump keeps the setting in git config rocm-ebuild.maintainer for ::gentoo)`, at));
      } else if (packageOf(p) || eclassOf(p) || p.startsWith('profiles/')) {
        continue;
      } else if (p.startsWith('metadata/')) {
        if (ch.status === 'A' && !p.slice('metadata/'.length).includes('/') && !GENTOO_METADATA_FILES.has(p)) {
          out.push(ours('NotGentooFile', `${p} is a new file directly in metadata/, where ::gentoo keeps only layout.conf and its own directories: drop it from the branch`, at));
        }
      } else {
        out.push(ours('NotGentooFile', `${p} is outside the package directories, eclass/, profiles/ and metadata/: ::gentoo has no place for it; drop it from the branch`, at));
      }
    }
    for (const ch of c.changes) {
      const eclass = eclassOf(ch.path) ?? (ch.oldPath ? eclassOf(ch.oldPath) : undefined);
      if (!eclass) continue;
      out.push(
        ours(
          'EclassChange',
          `${eclass}.eclass is ${ch.status === 'A' ? 'added' : ch.status === 'D' ? 'removed' : 'changed'}: every ::gentoo ebuild inheriting it is affected; post the change to the gentoo-dev mailing list for review before it is merged, and keep it in a commit of its own, first`,
          { commit: c.sha, eclass: `${eclass}.eclass`, file: ch.path },
        ),
      );
    }
  }
  return out;
}
