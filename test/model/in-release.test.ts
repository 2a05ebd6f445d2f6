import { strict as assert } from 'node:assert';
import { loadManifestOrFail } from '../../src/stack-check/index.js';
import { inRelease, knownReleases, packagesOfEveryRelease, resolveComponent, resolveStack, releaseModel, type ResolvedComponent } from '../../src/model/resolve.js';
import type { LoadedComponent, Manifest } from '../../src/manifest/load.js';

/**
 * inRelease answers what resolveComponent's undefined answers, without the
 * full merge: lint's view of the stack asks it for every component and
 * release (392 times for the shipped manifest).
 */
describe('model: inRelease agrees with resolveComponent', function () {
  this.timeout(60_000);
  let manifest: Manifest;
  before(async () => {
    manifest = await loadManifestOrFail(undefined);
  });
  const policy = { default: [], optional: [] };
  const resolves = (c: LoadedComponent, v: string) => resolveComponent(manifest, c, releaseModel(manifest, v, policy)!) !== undefined;

  it('for every component of the shipped manifest in every release', () => {
    let present = 0;
    for (const c of manifest.components) {
      for (const v of knownReleases(manifest)) {
        assert.equal(inRelease(c, v), resolves(c, v), `${c.spec.name} in ${v}`);
        if (inRelease(c, v)) present++;
      }
    }
    assert.ok(present > 0 && present < manifest.components.length * knownReleases(manifest).length, 'both answers occur');
  });

  it('packagesOfEveryRelease gives what resolving every release and keeping the last of each atom gives, renamed packages included', () => {
    const reference = (m: Manifest) => {
      const all = new Map<string, ResolvedComponent>();
      for (const v of knownReleases(m)) for (const c of resolveStack(m, releaseModel(m, v, policy)!).components) all.set(c.atom, c);
      return all;
    };
    const same = (m: Manifest) => {
      const got = packagesOfEveryRelease(m, (v) => releaseModel(m, v, policy)!);
      const want = reference(m);
      assert.deepEqual([...got.keys()], [...want.keys()]);
      for (const [atom, c] of want) assert.deepEqual([got.get(atom)!.version, got.get(atom)!.spec], [c.version, c.spec], atom);
      return got;
    };
    same(manifest);
    // One component renamed from 6.3.0 on: both names are packages, each as resolved in its last release.
    const [first, ...rest] = manifest.components;
    const renamed = { ...first!, spec: { ...first!.spec, overrides: [...(first!.spec.overrides ?? []), { versions: { from: '6.3.0' }, reason: 't', set: { atom: 'sci-libs/renamed-for-test' } } as never] } };
    const got = same({ ...manifest, components: [renamed, ...rest] });
    assert.ok(got.has('sci-libs/renamed-for-test') && got.has(first!.spec.atom));
  });

  it('when overrides move, widen or remove the release range', () => {
    const releases = knownReleases(manifest);
    const base = manifest.components.find((c) => !c.spec.releases && !c.spec.overrides?.some((o) => 'releases' in (o.set as object)))!;
    const variants: LoadedComponent['spec']['overrides'][] = [
      // From 6.3 on, the component ends at 6.3.2.
      [{ versions: { from: '6.3.0' }, reason: 't', set: { releases: { until: '6.3.2' } } } as never],
      // Two overrides: the later one removes the range again.
      [{ versions: { from: '6.2.0' }, reason: 't', set: { releases: { from: '7.0.0' } } } as never, { versions: { from: '6.3.0' }, reason: 't', set: { releases: null } } as never],
      // An override that touches other keys only.
      [{ versions: { from: '6.2.0' }, reason: 't', set: { keywords: '' } } as never],
    ];
    for (const overrides of variants) {
      for (const topRange of [undefined, { from: '6.2.0' }]) {
        const spec = { ...base.spec, overrides, ...(topRange ? { releases: topRange } : {}) };
        const c: LoadedComponent = { ...base, spec: spec as LoadedComponent['spec'] };
        for (const v of releases) assert.equal(inRelease(c, v), resolves(c, v), `${JSON.stringify(overrides)} ${JSON.stringify(topRange)} in ${v}`);
      }
    }
  });
});
