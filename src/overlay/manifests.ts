import { rm } from 'node:fs/promises';
import path from 'node:path';
import {
  ensureDistfiles,
  formatManifest,
  parseManifest,
  updateManifest,
  type DistfileNeed,
  type DistfileResult,
  type EnsureOptions,
  type ManifestEntry,
} from '../distfiles/index.js';
import type { Manifest } from '../manifest/load.js';
import { releaseModel, resolveComponent, resolveStack, type ResolvedComponent } from '../model/resolve.js';
import type { Policies } from '../model/targets.js';
import { withoutRevision } from '../model/version.js';
import { realPathInside } from './paths.js';
import type { OverlayState } from './scan.js';
import { writeFileAtomic } from './write.js';

export interface PackageManifestResult {
  atom: string;
  /** written: the Manifest changed; unchanged; removed: no distfiles left; failed: a distfile is missing or bad. */
  status: 'written' | 'unchanged' | 'removed' | 'failed' | 'no-distfiles';
  /** Ebuild versions whose distfiles the manifest cannot tell (release unknown): their lines are kept. */
  unknownVersions: string[];
  distfiles: string[];
}

/**
 * Rewrite the thin Manifests of `atoms`: each from the distfiles of the
 * ebuild versions the overlay holds, fetched and hashed; lines of removed
 * versions go, lines of versions the manifest does not know stay. Packages
 * whose distfiles all succeeded are written even if others failed; packages
 * not named are never touched.
 */
export async function refreshManifests(
  manifest: Manifest,
  policies: Policies,
  state: OverlayState,
  components: ResolvedComponent[],
  options: EnsureOptions & { force?: boolean },
): Promise<{ packages: PackageManifestResult[]; distfiles: DistfileResult[] }> {
  const models = new Map<string, ReturnType<typeof resolveStack>>();
  const modelFor = (release: string) => {
    if (!manifest.stack.releases[release]) return undefined;
    let m = models.get(release);
    if (!m) {
      m = resolveStack(manifest, releaseModel(manifest, release, policies.byRelease.get(release)!)!);
      models.set(release, m);
    }
    return m;
  };

  // Where each Manifest really is, before anything is read, fetched or written:
  // a package directory or Manifest that is a symlink out of the overlay is refused (exit 4).
  const files = new Map<string, string>();
  for (const c of components) {
    if (state.packages.has(c.atom)) files.set(c.atom, await realPathInside(state.dir, `${c.atom}/Manifest`));
  }

  const needs = new Map<string, DistfileNeed>();
  const perPackage = new Map<string, { names: Set<string>; unknown: string[]; old: ManifestEntry[] }>();
  for (const c of components) {
    const pkg = state.packages.get(c.atom);
    if (!pkg) continue;
    const old = pkg.manifest !== undefined ? parseManifest(pkg.manifest, path.join(c.atom, 'Manifest')) : [];
    const names = new Set<string>();
    const unknown: string[] = [];
    for (const v of pkg.versions) {
      const model = modelFor(withoutRevision(v));
      const at = model ? resolveComponent(manifest, c.loaded, model.release) : undefined;
      if (!at) {
        unknown.push(v);
        continue;
      }
      for (const d of at.distfiles) {
        names.add(d.name);
        const need = needs.get(d.name) ?? { name: d.name, urls: d.urls, neededBy: [] };
        need.neededBy.push({ atom: c.atom, ebuild: `${c.pn}-${v}.ebuild` });
        const expected = old.find((e) => e.name === d.name);
        if (expected && !options.force) need.expected = expected;
        needs.set(d.name, need);
      }
    }
    perPackage.set(c.atom, { names, unknown, old });
  }

  const distfiles = await ensureDistfiles([...needs.values()], options);
  const byName = new Map(distfiles.map((r) => [r.name, r]));
  const packages: PackageManifestResult[] = [];
  for (const [atom, { names, unknown, old }] of perPackage) {
    const results = [...names].map((n) => byName.get(n)!);
    const base = { atom, unknownVersions: unknown, distfiles: [...names].sort() };
    if (results.some((r) => !r.entry)) {
      packages.push({ ...base, status: 'failed' });
      continue;
    }
    const keep = (name: string) => names.has(name) || unknown.some((v) => name.includes(withoutRevision(v)));
    const text = formatManifest(updateManifest(old, results.map((r) => r.entry!), keep));
    const file = files.get(atom)!;
    const before = state.packages.get(atom)?.manifest;
    if (text === (before ?? '')) {
      packages.push({ ...base, status: names.size === 0 && before === undefined ? 'no-distfiles' : 'unchanged' });
    } else if (text === '') {
      await rm(file, { force: true });
      packages.push({ ...base, status: 'removed' });
    } else {
      await writeFileAtomic(file, text);
      packages.push({ ...base, status: 'written' });
    }
  }
  return { packages, distfiles };
}
