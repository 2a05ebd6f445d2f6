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
import { srcUriEntries, Unevaluable } from '../ebuild/src-uri.js';
import { ebuildVars } from '../ebuild/vars.js';
import { readEbuild } from './scan.js';
import { realPathInside } from './paths.js';
import type { OverlayState } from './scan.js';
import { writeFileAtomic } from './write.js';

export interface PackageManifestResult {
  atom: string;
  /**
   * written: the Manifest changed; unchanged; removed: no distfiles left; failed: a distfile is missing or bad;
   * unevaluated: an ebuild's SRC_URI could not be evaluated, the Manifest was left as it was.
   */
  status: 'written' | 'unchanged' | 'removed' | 'failed' | 'no-distfiles' | 'unevaluated';
  /** Ebuild versions the stack manifest does not generate: their distfiles come from their own SRC_URI. */
  fromEbuild: string[];
  /** unevaluated: which ebuild, and what in its SRC_URI. */
  why?: string;
  distfiles: string[];
}

/** A package to refresh: a stack component (its known releases' distfiles come from the manifest), or any package of the overlay. */
export interface ManifestTarget {
  atom: string;
  component?: ResolvedComponent;
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
  targets: ManifestTarget[],
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
  for (const t of targets) {
    if (state.packages.has(t.atom)) files.set(t.atom, await realPathInside(state.dir, `${t.atom}/Manifest`));
  }

  const needs = new Map<string, DistfileNeed>();
  const perPackage = new Map<string, { names: Set<string>; fromEbuild: string[]; old: ManifestEntry[]; why?: string }>();
  for (const t of targets) {
    const pkg = state.packages.get(t.atom);
    if (!pkg) continue;
    const [category, pn] = t.atom.split('/') as [string, string];
    const old = pkg.manifest !== undefined ? parseManifest(pkg.manifest, path.join(t.atom, 'Manifest')) : [];
    const names = new Set<string>();
    const fromEbuild: string[] = [];
    let why: string | undefined;
    for (const v of pkg.versions) {
      const model = t.component ? modelFor(withoutRevision(v)) : undefined;
      const at = model && t.component ? resolveComponent(manifest, t.component.loaded, model.release) : undefined;
      let distfiles: { name: string; urls: string[] }[];
      if (at) distfiles = at.distfiles;
      else {
        // An ebuild the stack manifest does not generate: its own SRC_URI says what it needs, as for pkgdev manifest.
        fromEbuild.push(v);
        try {
          const entries = srcUriEntries(await ebuildVars(readEbuild(state.dir, t.atom, v)), { category, pn, version: v });
          distfiles = entries.map((e) => ({ name: e.name, urls: e.url && /^https?:\/\//i.test(e.url) ? [e.url] : [] }));
        } catch (err) {
          if (!(err instanceof Unevaluable)) throw err;
          why ??= `${pn}-${v}.ebuild: SRC_URI uses ${err.what}`;
          continue;
        }
      }
      for (const d of distfiles) {
        names.add(d.name);
        const need = needs.get(d.name) ?? { name: d.name, urls: [...d.urls], neededBy: [] };
        for (const u of d.urls) if (!need.urls.includes(u)) need.urls.push(u);
        need.neededBy.push({ atom: t.atom, ebuild: `${pn}-${v}.ebuild` });
        const expected = old.find((e) => e.name === d.name);
        if (expected && !options.force) need.expected = expected;
        needs.set(d.name, need);
      }
    }
    perPackage.set(t.atom, { names, fromEbuild, old, ...(why ? { why } : {}) });
  }

  const distfiles = await ensureDistfiles([...needs.values()], options);
  const byName = new Map(distfiles.map((r) => [r.name, r]));
  const packages: PackageManifestResult[] = [];
  for (const [atom, { names, fromEbuild, old, why }] of perPackage) {
    const results = [...names].map((n) => byName.get(n)!);
    const base = { atom, fromEbuild, distfiles: [...names].sort() };
    if (why) {
      // Which lines an unevaluated ebuild needs cannot be told: the Manifest stays as it is.
      packages.push({ ...base, status: 'unevaluated', why });
      continue;
    }
    if (results.some((r) => !r.entry)) {
      packages.push({ ...base, status: 'failed' });
      continue;
    }
    const text = formatManifest(updateManifest(old, results.map((r) => r.entry!), (name) => names.has(name)));
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
