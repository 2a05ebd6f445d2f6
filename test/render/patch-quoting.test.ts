import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fullFixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir, runCli } from '../helpers/project.js';

/**
 * A patch shipped in files/ is one word in PATCHES, quoted whole, as the
 * devmanual writes it: `"${FILESDIR}/name.patch"`. Quoting only
 * "${FILESDIR}" leaves the rest a bare word that shellcheck reports (SC2206)
 * as soon as it holds an expansion, the ${PN} of a hand-written line or a
 * name the manifest may one day allow.
 */
describe('render: PATCHES from files/', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await fullFixtureManifest();
  });
  after(() => removeDir(dir));

  it('quotes the whole path of a shipped patch, and shellcheck finds nothing in PATCHES', async () => {
    const r = await runCli(['render', 'sci-libs/fullcmake', '--version', '6.2.2', '--manifest', path.join(dir, 'stack.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    const patches = /^PATCHES=\(\n([\s\S]*?)\n\)$/m.exec(r.stdout)?.[1];
    assert.ok(patches, r.stdout);
    assert.match(patches, /^\t"\$\{FILESDIR\}\/fix-build\.patch"$/m);
    assert.doesNotMatch(patches, /"\$\{FILESDIR\}"\//);
    // The same form with an expansion in the name, as a maintainer would write it: still one word.
    const line = patches.replace('fix-build.patch', '${PN}-6.2.2-fix-build.patch');
    const sc = spawnSync('shellcheck', ['-s', 'bash', '-e', 'SC2034,SC2154', '-'], { input: `PATCHES=(\n${line}\n)\necho "\${PATCHES[@]}"\n`, encoding: 'utf8' });
    assert.equal(sc.status, 0, sc.stdout);
  });
});
