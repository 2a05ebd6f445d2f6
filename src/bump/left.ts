import { readEbuild, overlayIndex, type OverlayState } from '../overlay/scan.js';
import { restrictedDepsOfText, slotOf, unmet, type ProvidedEbuild, type RestrictedDep } from '../ebuild/dependencies.js';
import { inRelease, knownReleases, type ResolvedComponent, type StackModel } from '../model/resolve.js';
import { packageSlot } from '../model/held.js';
import { compareVersions, withoutRevision } from '../model/version.js';
import { describedPackages, whyLeft } from '../plan/left.js';
import { stackFor } from '../stack-check/index.js';

/** What the plan needs to know of packages that left the release: which, why, and which of their older versions the bump would orphan. */

/**
 * The packages the overlay holds that a component describes and this release
 * does not generate: each with its component as the newest release that has
 * it describes it, and why it left (plan/left.ts).
 */
export async function leftCandidates(model: StackModel, state: OverlayState): Promise<Map<string, { component: ResolvedComponent; reason: string }>> {
  const manifest = model.manifest;
  const out = new Map<string, { component: ResolvedComponent; reason: string }>();
  const newestFirst = knownReleases(manifest).sort(compareVersions).reverse();
  const models = new Map<string, Promise<StackModel>>();
  const modelOf = (r: string) => models.get(r) ?? models.set(r, stackFor(manifest, r)).get(r)!;
  for (const [atom, loaded] of describedPackages(manifest)) {
    if (model.byAtom.has(atom) || !state.packages.get(atom)?.versions.length) continue;
    for (const r of newestFirst) {
      if (!inRelease(loaded, r)) continue;
      const component = (await modelOf(r)).byAtom.get(atom);
      if (!component) continue;
      out.set(atom, { component, reason: whyLeft(manifest, loaded, model.release.version) });
      break;
    }
  }
  return out;
}

/**
 * Whether an older version of a left package that keeps newer ones (or a
 * 9999) is orphaned by the bump: a dependency of its ebuild on a package of
 * the overlay, at a slot or version, that no ebuild the overlay holds after
 * the bump meets (lint's NonexistentDeps, asked in advance). A version the
 * release writes has the SLOT the model gives (model/held.ts: a component
 * held at its own version has the release's sub-slot); others their own.
 */
export async function orphanTest(
  model: StackModel,
  state: OverlayState,
  left: ReadonlyMap<string, unknown>,
): Promise<(atom: string, version: string, after: ReadonlyMap<string, readonly string[]>) => boolean> {
  const release = model.release.version;
  const deps = new Map<string, RestrictedDep[]>();
  for (const atom of left.keys()) {
    const versions = state.packages.get(atom)?.versions ?? [];
    const old = versions.filter((v) => v !== '9999' && compareVersions(withoutRevision(v), release) < 0);
    if (old.length === versions.length) continue; // the whole package goes: nothing to decide
    for (const v of old) deps.set(`${atom}-${v}`, await restrictedDepsOfText(readEbuild(state.dir, atom, v), atom.split('/')[1]!, v));
  }
  const keys = [...new Set([...deps.values()].flat().map((d) => d.key))].filter((k) => state.packages.has(k));
  const held = keys.length > 0 ? overlayIndex(state.dir, keys) : new Map<string, ProvidedEbuild[]>();
  return (atom, version, after) => {
    const wanted = deps.get(`${atom}-${version}`) ?? [];
    const index = new Map<string, ProvidedEbuild[]>();
    for (const d of wanted) {
      const pn = d.key.split('/')[1]!;
      const c = model.byAtom.get(d.key);
      // The version this release writes has the SLOT the model gives (a held one's is the release's, "0/10.0"); others as the overlay holds them.
      const provided = (v: string): ProvidedEbuild =>
        c && withoutRevision(v) === c.version
          ? { version: v, ...slotOf(packageSlot(c), pn, v) }
          : (held.get(d.key)?.find((p) => p.version === v) ?? { version: v, ...slotOf('0/$(ver_cut 1-2)', pn, v) });
      index.set(d.key, (after.get(d.key) ?? []).map(provided));
    }
    // A package the overlay will not hold at all is ::gentoo's business, not an orphaning by this bump.
    return unmet(wanted, new Map([...index].filter(([, p]) => p.length > 0))).length > 0;
  };
}
