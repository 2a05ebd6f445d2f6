import { defaultManifestPath } from '../paths.js';
import { loadManifestOrFail } from '../stack-check/index.js';
import { knownReleases } from '../model/resolve.js';
import { byCodePoint } from '../util/order.js';
import type { WordKind } from './completion.js';

/** Only what versions and atoms are made of: the words reach a shell's compgen, which expands what it gets. */
const SAFE_WORD = /^[A-Za-z0-9_.+/-]+$/;

/**
 * The words a completion script offers from the stack manifest: its release
 * versions (oldest first), or its packages as category/PN and as PN (commands
 * take both). The manifest is loaded as every command loads it, through the
 * cache of checked manifests, so a TAB after the first run costs the start of
 * rocm-ebuild and one read of the cache, not a validation.
 */
export async function completionWords(kind: WordKind, manifest: string | undefined): Promise<string[]> {
  const loaded = await loadManifestOrFail(manifest ?? defaultManifestPath);
  const list =
    kind === 'releases'
      ? knownReleases(loaded)
      : [...new Set(loaded.components.flatMap((c) => [c.spec.atom, c.spec.atom.split('/')[1]!]))].sort(byCodePoint);
  return list.filter((w) => SAFE_WORD.test(w));
}
