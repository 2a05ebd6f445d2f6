import { RECORD_REF } from '../git/generated-record.js';
import { renderEbuild } from '../render/index.js';
import type { ObjectReader } from './git-read.js';
import { carriedVersions } from './carried-edits.js';
import { ours } from './keywords.js';
import type { StackModels } from './lint-range.js';
import { ebuildOf } from './overlay-paths.js';
import type { CommitInfo, PrResult } from './types.js';

/**
 * Ebuilds the range drops (or renames to another version) that differ from
 * what rocm-ebuild generated for them: hand edits a reviewer should see
 * carried forward, or knowingly let go. The base is the record bump keeps
 * (refs/rocm-ebuild-generated) when this clone has it, else a render of the
 * same release from the stack manifest; an ebuild neither can speak for is
 * left alone. The copyright line does not count.
 */
export async function droppedLocalChanges(commits: CommitInfo[], objects: ObjectReader, models: StackModels | undefined): Promise<PrResult[]> {
  const out: PrResult[] = [];
  const body = (t: string) => t.replace(/^# Copyright [^\n]*\n/, '');
  for (const c of commits) {
    if (c.parents.length > 1) continue;
    for (const ch of c.changes) {
      const gone = ch.status === 'D' ? ebuildOf(ch.path) : ch.status === 'R' && ch.oldPath ? ebuildOf(ch.oldPath) : undefined;
      if (!gone) continue;
      const renamedTo = ch.status === 'R' ? ebuildOf(ch.path) : undefined;
      if (renamedTo && renamedTo.key === gone.key && renamedTo.version === gone.version) continue;
      const text = await objects.text(ch.oldBlob);
      if (text === undefined) continue;
      const path = `${gone.key}/${gone.rest}`;
      let base = await objects.text(`${RECORD_REF}:${path}`);
      let against = 'what rocm-ebuild generated for it';
      if (base === undefined && models) {
        const model = await models.forRelease(gone.base);
        const component = model?.byAtom.get(gone.key);
        const year = /^# Copyright (?:\d{4}-)?(\d{4}) /.exec(text)?.[1];
        if (model && component) {
          base = renderEbuild(component, model, { ...(year ? { year: Number(year) } : {}) });
          against = 'what the stack manifest generates for it';
        }
      }
      if (base === undefined || body(base) === body(text)) continue;
      const differing = lineCount(body(base), body(text));
      const where = { commit: c.sha, category: gone.category, package: gone.pn, version: gone.version, file: path };
      const changed = `${gone.pn}-${gone.version} is dropped, and it differed from ${against} (${differing} line${differing === 1 ? '' : 's'} changed by hand)`;
      // The commit itself says the edits went into the ebuild it writes (bump's three-way merge): to read, not to chase.
      if (carriedVersions(c.message).includes(gone.version)) {
        out.push({ ...ours('DroppedLocalChanges', `${changed}; its commit carries the change into the ebuild it adds (its message shows the lines)`, where), level: 'info' });
      } else {
        out.push(ours('DroppedLocalChanges', `${changed}: make sure the change was carried to the newer ebuild, or is no longer needed`, where));
      }
    }
  }
  return out;
}

/** Lines of `b` not in `a` plus lines of `a` not in `b` (a multiset count). */
function lineCount(a: string, b: string): number {
  const count = new Map<string, number>();
  for (const l of a.split('\n')) count.set(l, (count.get(l) ?? 0) + 1);
  let added = 0;
  for (const l of b.split('\n')) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added++;
  }
  return added + [...count.values()].reduce((x, y) => x + y, 0);
}
