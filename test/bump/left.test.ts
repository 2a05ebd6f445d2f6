import { strict as assert } from 'node:assert';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { orphanTest } from '../../src/bump/left.js';
import { scanOverlay } from '../../src/overlay/scan.js';
import { loadManifestOrFail, stackFor } from '../../src/stack-check/index.js';
import { removeDir, tempDir } from '../helpers/project.js';

/**
 * orphanTest asks in advance what lint's NonexistentDeps would say once the
 * bump has landed. A component 10.0.0 holds at its own version (MIGraphX
 * 7.2.4) is written with the release's sub-slot, SLOT="0/10.0", not
 * PV's: the test must read the SLOT the model gives, not derive it.
 */
describe('bump: orphanTest against components held at their own version (the shipped manifest, ROCm 10.0.0)', function () {
  this.timeout(60_000);
  let work: string;
  before(async () => {
    work = await tempDir('rocm-ebuild-orphan-');
  });
  after(() => removeDir(work));

  /** An overlay holding hipSPARSELt (left by 10.0.0) at 7.2.4 needing `need`, and 9999, and migraphx 7.2.3. */
  const orphaned = async (name: string, need: string) => {
    const dir = path.join(work, name);
    const lt = path.join(dir, 'sci-libs/hipSPARSELt');
    const mx = path.join(dir, 'sci-libs/migraphx');
    await mkdir(lt, { recursive: true });
    await mkdir(mx, { recursive: true });
    await writeFile(path.join(lt, 'hipSPARSELt-7.2.4.ebuild'), `EAPI=8\nSLOT="0/$(ver_cut 1-2)"\nRDEPEND="${need}"\n`);
    await writeFile(path.join(lt, 'hipSPARSELt-9999.ebuild'), 'EAPI=8\nSLOT="0/$(ver_cut 1-2)"\n');
    await writeFile(path.join(mx, 'migraphx-7.2.3.ebuild'), 'EAPI=8\nSLOT="0/$(ver_cut 1-2)"\n');
    const model = await stackFor(await loadManifestOrFail(undefined), '10.0.0');
    const held = model.byAtom.get('sci-libs/migraphx')!;
    assert.deepEqual([held.version, Boolean(held.held)], ['7.2.4', true]);
    const state = await scanOverlay(dir, ['sci-libs/hipSPARSELt', 'sci-libs/migraphx']);
    const test = await orphanTest(model, state, new Map([['sci-libs/hipSPARSELt', {}]]));
    // After the bump the overlay holds migraphx 7.2.4, the one 10.0.0 writes (7.2.3 dropped).
    return test('sci-libs/hipSPARSELt', '7.2.4', new Map([['sci-libs/migraphx', ['7.2.4']]]));
  };

  it("an ebuild needing migraphx's 10.0 sub-slot is met by the 7.2.4 the bump writes (SLOT 0/10.0): not orphaned", async () => {
    assert.equal(await orphaned('needs-10.0', 'sci-libs/migraphx:0/10.0'), false);
  });

  it("an ebuild needing migraphx's 7.2 sub-slot is orphaned: the 7.2.4 of 10.0.0 is SLOT 0/10.0, not PV's 0/7.2", async () => {
    assert.equal(await orphaned('needs-7.2', 'sci-libs/migraphx:0/7.2'), true);
  });
});
