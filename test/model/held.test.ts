import { strict as assert } from 'node:assert';
import path from 'node:path';
import { ebuildRelease, heldSentence, packageSlot, releaseOfEbuild } from '../../src/model/held.js';
import { makePlan } from '../../src/plan/plan.js';
import { renderEbuild } from '../../src/render/index.js';
import { renderPackageSets } from '../../src/stack-check/package-set.js';
import { stackFor, validateManifest } from '../../src/stack-check/index.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';

/** The fixture stack where 6.3.0 holds sci-libs/app at its own 6.2.2, built against 6.3.0's gpulib. */
const HELD = `${BASE_FILES['components/app.yaml']!}overrides:
  - versions: { from: "6.3.0" }
    reason: upstream made no 6.3 release of it
    set:
      version: "6.2.2"
`;

describe('model and plan: a release holds a package at its own version', function () {
  this.timeout(60_000);

  async function models() {
    const dir = await fixtureManifest({ 'components/app.yaml': HELD });
    const { manifest, issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.deepEqual(issues, []);
    return { old: await stackFor(manifest!, '6.2.2'), now: await stackFor(manifest!, '6.3.0') };
  }

  it('resolves PV to its own version, its sources to that version\'s tag, and SLOT and ROCM_VERSION to the release', async () => {
    const { old, now } = await models();
    const app = now.byAtom.get('sci-libs/app')!;
    assert.deepEqual([app.version, app.release, app.held], ['6.2.2', '6.3.0', { reason: 'upstream made no 6.3 release of it' }]);
    assert.equal(app.distfiles[0]!.urls[0], 'https://github.com/ROCm/app/archive/rocm-6.2.2.tar.gz');
    assert.equal(packageSlot(app), '0/6.3');
    const text = renderEbuild(app, now, { year: 2026 });
    assert.match(text, /^ROCM_VERSION=6\.3\.0$/m);
    assert.match(text, /^SLOT="0\/6\.3"$/m);
    assert.match(text, /^# ROCm 6\.3\.0 holds app at 6\.2\.2, its own version; upstream made no 6\.3 release\n# of it\. Built against the 6\.3\.0 libraries, it takes their sub-slot\.\nSLOT=/m);
    // Its dependencies are the release's: :${SLOT} is 0/6.3, gpulib 6.3.0's.
    assert.match(text, /^RDEPEND="sci-libs\/gpulib:\$\{SLOT\}\[\$\{ROCM_USEDEP\}\]"$/m);
    assert.match(heldSentence(app), /^ROCm 6\.3\.0 holds sci-libs\/app at 6\.2\.2, its own version: upstream made no 6\.3 release of it\. Its SLOT is the release's sub-slot, "0\/6\.3"/);
    // In 6.2.2 it is an ordinary package of its release.
    const before = old.byAtom.get('sci-libs/app')!;
    assert.deepEqual([before.version, before.held, packageSlot(before)], ['6.2.2', undefined, '0/$(ver_cut 1-2)']);
  });

  it("tells an ebuild of the held version apart by its SLOT: the release's, or its own version's", async () => {
    const { now } = await models();
    const app = now.byAtom.get('sci-libs/app')!;
    assert.equal(ebuildRelease(app, '6.2.2-r1', 'EAPI=8\nSLOT="0/6.3"\n'), '6.3.0');
    assert.equal(ebuildRelease(app, '6.2.2', 'EAPI=8\nSLOT="0/$(ver_cut 1-2)"\n'), '6.2.2');
    assert.equal(ebuildRelease(now.byAtom.get('sci-libs/gpulib')!, '6.3.0', 'SLOT="0/6.3"\n'), '6.3.0');
    // From the manifest alone, as lint and pr check read an overlay's ebuilds.
    assert.equal(releaseOfEbuild(now.manifest, 'sci-libs/app', '6.2.2-r1', 'SLOT="0/6.3"\n'), '6.3.0');
    assert.equal(releaseOfEbuild(now.manifest, 'sci-libs/app', '6.2.2', 'SLOT="0/$(ver_cut 1-2)"\n'), '6.2.2');
    assert.equal(releaseOfEbuild(now.manifest, 'sci-libs/gpulib', '6.2.2', 'SLOT="0/6.3"\n'), '6.2.2', 'gpulib is not held: its PV is its release');
  });

  it('plans the held version: kept where the overlay has it, no drop of it with --drop-old, and a newer one is a downgrade', async () => {
    const { now } = await models();
    const view = (app: string[]) => ({
      repoName: 'test',
      layout: new Map(),
      eclass: '',
      targetsDesc: '',
      packages: new Map([
        ['dev-libs/rocm-base', { versions: ['6.2.2'] }],
        ['sci-libs/gpulib', { versions: ['6.2.2'] }],
        ['sci-libs/app', { versions: app }],
      ]),
    });
    const plan = makePlan(now, view(['6.2.2']), { dropOld: true });
    const app = plan.entries.filter((e) => e.atom === 'sci-libs/app');
    assert.deepEqual(app.map((e) => [e.action, e.version]), [['keep', '6.2.2']], 'bump decides the revision; nothing drops 6.2.2');
    assert.deepEqual(plan.entries.filter((e) => e.action === 'drop').map((e) => e.atom).sort(), ['dev-libs/rocm-base', 'sci-libs/gpulib']);
    assert.deepEqual(plan.held, [{ atom: 'sci-libs/app', version: '6.2.2', reason: 'upstream made no 6.3 release of it' }]);
    assert.deepEqual(plan.scaffold.find((s) => s.what === 'targets-desc')?.releases, ['6.3.0'], 'the dropped release is not described');
    assert.equal(plan.dropOld, true);
    // Without --drop-old 6.2.2 stays, and its release with it.
    assert.deepEqual(makePlan(now, view(['6.2.2']), { dropOld: false }).scaffold.find((s) => s.what === 'targets-desc')?.releases, ['6.2.2', '6.3.0']);
    // An app-6.3.0 an older rocm-ebuild wrote is newer than the version the release holds: a downgrade, refused by bump.
    const newer = makePlan(now, view(['6.3.0']), { dropOld: true });
    assert.deepEqual(newer.newer, [{ atom: 'sci-libs/app', versions: ['6.3.0'] }]);
    assert.deepEqual(newer.entries.filter((e) => e.atom === 'sci-libs/app').map((e) => [e.action, e.version]), [['add', '6.2.2']]);
  });

  it('package sets say which version of a held member they mean', async () => {
    const { now } = await models();
    const sets = renderPackageSets(now, 'test');
    const gfx1030 = sets.find((f) => f.path === 'metadata/sets/rocm-gfx1030')!.content;
    assert.match(gfx1030, /^# at its own version: sci-libs\/app-6\.2\.2, built against ROCm 6\.3\.0 \(SLOT="0\/6\.3"\)$/m);
    assert.match(gfx1030, /^sci-libs\/app::test$/m);
  });
});
