import { strict as assert } from 'node:assert';
import { appendFile, cp } from 'node:fs/promises';
import path from 'node:path';
import { splitRemovals } from '../../src/manifest/load.js';
import { SchemaValidator } from '../../src/manifest/schema-validator.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

/**
 * `null` in an override removes a key (docs/manifest.md, model/merge.ts).
 * The schema used to refuse it before the merge ever saw it, so the
 * documented `defines: { X: null }` was an error.
 */
describe('manifest: null in an override removes a key', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(async () => {
    dir = await tempDir('rocm-ebuild-null-');
    await cp(path.join(root, 'manifest'), path.join(dir, 'manifest'), { recursive: true });
  });
  afterEach(() => removeDir(dir));

  const override = (component: string, set: string) =>
    appendFile(path.join(dir, 'manifest', 'components', `${component}.yaml`), `  - versions: { from: "6.3.3" }\n    reason: a test\n    set:\n${set}`);
  // validate takes the manifest as its argument, the others as --manifest.
  const cli = (args: string[]) => runCli(args[0] === 'validate' ? [...args, path.join(dir, 'manifest')] : [...args, '--manifest', path.join(dir, 'manifest')]);

  it('takes out null members, and only those of mappings', () => {
    assert.deepEqual(splitRemovals({ prepare: null, cmake: { defines: { A: null, B: 'ON' } }, deps: [null] }), {
      rest: { cmake: { defines: { B: 'ON' } }, deps: [null] },
      removals: [['prepare'], ['cmake', 'defines', 'A']],
    });
    const v = SchemaValidator.shared();
    assert.equal(v.removable('component.schema.json', ['prepare']), true);
    assert.equal(v.removable('component.schema.json', ['cmake', 'defines', 'ANY_DEFINE']), true);
    assert.equal(v.removable('component.schema.json', ['name']), false);
    assert.equal(v.removable('component.schema.json', ['deps', 0]), false);
  });

  it('removes a phase fix-up list and one define from the release it names, and from no other', async () => {
    await override('AMDMIGraphX', '      prepare: null\n      cmake:\n        defines:\n          MIGRAPHX_USE_HIPBLASLT: null\n');
    const checked = await cli(['validate']);
    assert.equal(checked.code, 0, checked.stderr);
    const shipped = await runCli(['render', 'AMDMIGraphX', '--version', '6.3.3']);
    assert.match(shipped.stdout, /MIGRAPHX_USE_HIPBLASLT=OFF/);
    assert.match(shipped.stdout, /sed -i/);
    const r = await cli(['render', 'AMDMIGraphX', '--version', '6.3.3']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /MIGRAPHX_USE_HIPBLASLT/);
    assert.doesNotMatch(r.stdout, /sed -i/);
    const older = await cli(['render', 'AMDMIGraphX', '--version', '6.3.2']);
    assert.equal(older.stdout, (await runCli(['render', 'AMDMIGraphX', '--version', '6.3.2'])).stdout);
  });

  it('refuses to remove a key every component needs, and a null list item, at their lines', async () => {
    await override('AMDMIGraphX', '      name: null\n      deps: [null]\n');
    const r = await cli(['validate']);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /AMDMIGraphX\.yaml:\d+:\d+: \$\.overrides\[\d+\]\.set\.name: null would remove name, which every component needs/);
    assert.match(r.stderr, /AMDMIGraphX\.yaml:\d+:\d+: \$\.overrides\[\d+\]\.set\.deps\[0\]: expected object/);
  });

  it('leaves what a removal breaks to the release checks', async () => {
    // rocBLAS builds a subset of targets: without the list there is nothing to build for.
    await override('rocBLAS', '      targets: { supported: null }\n');
    const r = await cli(['validate']);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /subset needs targets\.supported \(in 6\.3\.3[,)]/);
  });
});
