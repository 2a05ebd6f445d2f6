import { knownReleases, resolveComponent, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { refreshMetadata, type MetadataNeeds } from '../overlay/metadata-refresh.js';
import { metadataContext } from '../render/index.js';

/**
 * An existing metadata.xml brought to the ebuild versions its package holds
 * after a commit (overlay/metadata-refresh.ts): the USE flags and upstream
 * repositories those versions need, none of what only versions no longer
 * held needed (a source that moved, a flag that went), bugs-to the newest's.
 * Versions of releases the manifest does not know count for nothing.
 */
export function metadataForVersions(text: string, component: ResolvedComponent, versions: readonly string[], model: StackModel): string {
  const at = (release: string) => resolveComponent(model.manifest, component.loaded, { ...model.release, version: release });
  const held = [...new Set(versions.map(withoutRevision))]
    .filter((v) => model.manifest.stack.releases[v])
    .sort(compareVersions)
    .map(at)
    .filter((c): c is ResolvedComponent => c !== undefined);
  if (held.length === 0) return text;
  const needs: MetadataNeeds = { flags: new Map(), repos: [] };
  for (const c of held) {
    const m = metadataContext(c, model);
    for (const f of m.useFlags) needs.flags.set(f.name, f.description);
    for (const r of m.remoteIds) if (!needs.repos.includes(r.id)) needs.repos.push(r.id);
    if (m.bugsTo) needs.bugsTo = m.bugsTo;
  }
  // Only what some release of the manifest wrote may be taken out.
  const flags = new Set<string>();
  const repos = new Set<string>();
  for (const release of knownReleases(model.manifest)) {
    const c = at(release);
    if (!c) continue;
    const m = metadataContext(c, model);
    for (const f of m.useFlags) flags.add(f.name);
    for (const r of m.remoteIds) repos.add(r.id);
  }
  return refreshMetadata(text, needs, { flags, repos });
}
