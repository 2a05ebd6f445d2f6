import { formatManifest, parseManifest, updateManifest, type ManifestEntry } from '../distfiles/index.js';
import type { FileChange } from '../git/transaction.js';
import type { PlanEntry } from '../plan/plan.js';
import type { PackageState } from './scan.js';

/**
 * The files one package's commit changes. Nothing else in the overlay is
 * touched: other packages' Manifests stay byte for byte as they were.
 */
export function addChanges(
  entry: PlanEntry,
  state: PackageState | undefined,
  rendered: { ebuild: string; metadata: string },
  entries: ManifestEntry[],
): FileChange[] {
  const { atom, component } = entry;
  const changes: FileChange[] = [{ path: `${atom}/${component.pn}-${entry.version}.ebuild`, content: rendered.ebuild }];
  if (!state?.hasMetadata) changes.push({ path: `${atom}/metadata.xml`, content: rendered.metadata });
  const old = state?.manifest !== undefined ? parseManifest(state.manifest, `${atom}/Manifest`) : [];
  const text = formatManifest(updateManifest(old, entries, () => true));
  changes.push(...manifestChange(atom, state?.manifest, text));
  return changes;
}

/** Remove old ebuilds and the Manifest lines only they needed. */
export function dropChanges(entry: PlanEntry, state: PackageState, unneeded: Set<string>): FileChange[] {
  const changes: FileChange[] = (entry.versions ?? []).map((v) => ({
    path: `${entry.atom}/${entry.component.pn}-${v}.ebuild`,
    content: null,
  }));
  if (state.manifest !== undefined) {
    const old = parseManifest(state.manifest, `${entry.atom}/Manifest`);
    const text = formatManifest(updateManifest(old, [], (name) => !unneeded.has(name)));
    changes.push(...manifestChange(entry.atom, state.manifest, text));
  }
  return changes;
}

function manifestChange(atom: string, before: string | undefined, after: string): FileChange[] {
  if (after === (before ?? '')) return [];
  // A thin Manifest without DIST lines is no Manifest at all.
  if (after === '') return before === undefined ? [] : [{ path: `${atom}/Manifest`, content: null }];
  return [{ path: `${atom}/Manifest`, content: after }];
}
