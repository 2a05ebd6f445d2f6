import { strict as assert } from 'node:assert';
import { loadManifest } from '../../src/stack-check/index.js';
import { compareWithManifest } from '../../src/upstream/therock/compare.js';
import type { TheRockRelease } from '../../src/upstream/therock/release.js';
import type { Subproject } from '../../src/upstream/therock/subprojects.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { removeDir } from '../helpers/project.js';

const COMMIT = 'a'.repeat(40);

function subproject(name: string, dir: string): Subproject {
  return { name, file: 'core/CMakeLists.txt', line: 1, source: { kind: 'submodule', written: `\${SYSTEMS}/${dir}`, submodule: 'rocm-systems', dir }, deps: [] };
}

/**
 * TheRock builds a runtime and its test suite from two sibling directories of
 * one pinned repository, which one package fetches as the repository's tag
 * archive (unpacking both): the tests are part of that package, not a source
 * that moved.
 */
describe('upstream therock: packages built from a whole pinned tree', () => {
  let dir: string;
  before(async () => {
    dir = await fixtureManifest({
      'components/app.yaml': BASE_FILES['components/app.yaml']!.replace(
        'sources:\n  - github: ROCm/app\n',
        'projects: [app, app-tests]\nsources:\n  - github: ROCm/rocm-systems\n    subdir: projects/app\n',
      ),
    });
  });
  after(async () => {
    await removeDir(dir);
  });

  it('matches the sibling test subproject to the package without calling it moved', async () => {
    const manifest = await loadManifest(dir);
    const release: TheRockRelease = {
      ref: 'therock-10.0',
      fullRef: 'refs/tags/therock-10.0',
      commit: COMMIT,
      version: '10.0.0',
      submodules: [{ name: 'rocm-systems', path: 'rocm-systems', url: 'https://github.com/ROCm/rocm-systems.git', github: 'ROCm/rocm-systems', commit: COMMIT }],
      subprojects: [subproject('app', 'projects/app'), subproject('app-tests', 'projects/app-tests/catch')],
      problems: [],
      unresolved: [],
      bytes: 0,
    };
    const c = compareWithManifest(manifest, '6.3.0', release);
    assert.deepEqual(
      c.matches.map((m) => [m.subproject, m.atom, m.how]),
      [
        ['app', 'sci-libs/app', 'location'],
        ['app-tests', 'sci-libs/app', 'name'],
      ],
    );
    assert.deepEqual(c.moved, []);
  });
});
