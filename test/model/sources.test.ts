import { strict as assert } from 'node:assert';
import path from 'node:path';
import { expand, locateSource } from '../../src/model/sources/index.js';
import { metadataContext, renderEbuild } from '../../src/render/index.js';
import { stackFor, validateManifest } from '../../src/stack-check/index.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';

const ctx = (version: string, index = 0) => ({ pn: 'rocBLAS', version, releaseTag: 'rocm-${PV}', index });

/** The fixture stack with a GPU library whose source moved into a monorepo from 6.3.0. */
const MOVED = BASE_FILES['components/gpulib.yaml']!.replace(
  'sources:\n  - github: ROCm/gpulib\n',
  `sources:
  - github: ROCm/gpulib
    releases: { until: "6.3.0" }
  - release_asset: ROCm/rocm-libraries
    file: gpulib.tar.gz
    releases: { from: "6.3.0" }
`,
).replace(
  'overrides:\n  - versions: { from: "6.3.0" }\n    set:\n',
  'overrides:\n  - versions: { from: "6.3.0" }\n    set:\n      homepage: https://github.com/ROCm/rocm-libraries/tree/develop/projects/gpulib\n',
);

describe('model: source kinds and eras', function () {
  this.timeout(60_000);

  it('a repository tag archive: renamed to ${P} for the main tree, <repo>-${PV} after it', () => {
    const main = locateSource({ github: 'ROCm/rocBLAS' }, ctx('6.2.2'));
    assert.equal(main.uri, 'https://github.com/ROCm/rocBLAS/archive/rocm-${PV}.tar.gz -> ${P}.tar.gz');
    assert.equal(main.url, 'https://github.com/ROCm/rocBLAS/archive/rocm-6.2.2.tar.gz');
    assert.equal(main.name, 'rocBLAS-6.2.2.tar.gz');
    assert.deepEqual([main.dir, main.dirExpanded, main.repo, main.tag, main.project], ['rocBLAS-rocm-${PV}', 'rocBLAS-rocm-6.2.2', 'ROCm/rocBLAS', 'rocm-6.2.2', 'rocBLAS']);
    const second = locateSource({ github: 'ROCm/Tensile' }, ctx('6.2.2', 1));
    assert.equal(second.name, 'Tensile-6.2.2.tar.gz');
    // GitHub drops the "v" of a version tag in the archive's directory.
    assert.equal(locateSource({ github: 'ROCm/half', tag: 'v2.2.0' }, ctx('6.2.2')).dir, 'half-2.2.0');
  });

  it("a monorepo's release asset: the release's tag, renamed per version, unpacking to the project's name", () => {
    const l = locateSource({ release_asset: 'ROCm/rocm-libraries', file: 'rocblas.tar.gz' }, ctx('7.2.0'));
    assert.equal(l.uri, 'https://github.com/ROCm/rocm-libraries/releases/download/rocm-${PV}/rocblas.tar.gz -> rocblas-${PV}.tar.gz');
    assert.equal(l.url, 'https://github.com/ROCm/rocm-libraries/releases/download/rocm-7.2.0/rocblas.tar.gz');
    assert.deepEqual([l.name, l.dir, l.path, l.repo, l.tag, l.project], ['rocblas-7.2.0.tar.gz', 'rocblas', 'projects/rocblas', 'ROCm/rocm-libraries', 'rocm-7.2.0', 'rocblas']);
    const tensile = locateSource({ release_asset: 'ROCm/rocm-libraries', file: 'tensile.tar.gz', path: 'shared/tensile' }, ctx('7.2.0'));
    assert.equal(tensile.path, 'shared/tensile');
    assert.ok(l.versioned && tensile.versioned);
  });

  it('expands $(ver_cut) as Portage does, for tags that name only part of the version', () => {
    assert.equal(expand('therock-$(ver_cut 1-2)', 'hip', '10.0.0'), 'therock-10.0');
    assert.equal(expand('v$(ver_cut 1)', 'hip', '7.14.1'), 'v7');
    const l = locateSource({ release_asset: 'ROCm/rocm-libraries', file: 'rocblas.tar.gz', tag: 'therock-$(ver_cut 1-2)' }, ctx('10.0.0'));
    assert.equal(l.url, 'https://github.com/ROCm/rocm-libraries/releases/download/therock-10.0/rocblas.tar.gz');
    assert.equal(l.uri, 'https://github.com/ROCm/rocm-libraries/releases/download/therock-$(ver_cut 1-2)/rocblas.tar.gz -> rocblas-${PV}.tar.gz');
  });

  it('a release that switches era is an ordinary resolution: SRC_URI, S and remote-ids follow the source of each release', async () => {
    const dir = await fixtureManifest({ 'components/gpulib.yaml': MOVED });
    const { manifest, issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.deepEqual(issues, []);
    const before = (await stackFor(manifest!, '6.2.2')).byAtom.get('sci-libs/gpulib')!;
    const after = (await stackFor(manifest!, '6.3.0')).byAtom.get('sci-libs/gpulib')!;
    assert.deepEqual(before.distfiles.map((d) => d.name), ['gpulib-6.2.2.tar.gz']);
    assert.equal(before.sourceDir, '${WORKDIR}/gpulib-rocm-${PV}');
    assert.deepEqual(after.distfiles.map((d) => d.name), ['gpulib-6.3.0.tar.gz']);
    assert.equal(after.sourceDir, '${WORKDIR}/gpulib');
    assert.equal(after.sources[0]!.at, 1, 'the era is found at its place in the list as written');
    const text = renderEbuild(after, await stackFor(manifest!, '6.3.0'), { year: 2026 });
    // Long entries put the arrow on its own line: compare the value with its whitespace collapsed.
    const srcUri = /^SRC_URI="([^"]*)"$/m.exec(text)?.[1]?.replace(/\s+/g, ' ').trim();
    assert.equal(srcUri, 'https://github.com/ROCm/rocm-libraries/releases/download/rocm-${PV}/gpulib.tar.gz -> gpulib-${PV}.tar.gz');
    assert.match(text, /^S="\$\{WORKDIR\}\/gpulib"$/m);
    assert.doesNotMatch(text, /ROCm\/gpulib\/archive/);
    assert.deepEqual(metadataContext(after, await stackFor(manifest!, '6.3.0')).remoteIds, [{ type: 'github', id: 'ROCm/rocm-libraries' }]);
    assert.deepEqual(metadataContext(before, await stackFor(manifest!, '6.2.2')).remoteIds, [{ type: 'github', id: 'ROCm/gpulib' }]);
  });

  it('refuses a release that no source serves, at the sources list', async () => {
    const gap = MOVED.replace('releases: { from: "6.3.0" }', 'releases: { from: "6.3.1" }');
    const dir = await fixtureManifest({ 'components/gpulib.yaml': gap });
    const { issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    const found = issues.filter((i) => /no source serves 6\.3\.0/.test(i.message));
    assert.equal(found.length, 1, JSON.stringify(issues, null, 1));
    assert.equal(found[0]!.path, '$.sources');
    assert.match(found[0]!.file, /gpulib\.yaml$/);
    assert.ok(found[0]!.line > 1 && found[0]!.hint);
  });

  it('refuses a source that mixes kinds, naming the three forms', async () => {
    const mixed = MOVED.replace('  - release_asset: ROCm/rocm-libraries\n', '  - release_asset: ROCm/rocm-libraries\n    github: ROCm/gpulib\n');
    const dir = await fixtureManifest({ 'components/gpulib.yaml': mixed });
    const { issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.ok(issues.some((i) => i.path.startsWith('$.sources[1]') && /release_asset/.test(i.hint ?? '')), JSON.stringify(issues, null, 1));
  });

  it("a monorepo asset counts as fetching AMD's project of that name (composablekernel.tar.gz is composable_kernel)", async () => {
    const stack = BASE_FILES['stack.yaml']!.replace('  "6.2.2": { llvm_slot: 18 }\n', '').replace(
      'components:\n  - components/*.yaml\n',
      'components:\n  - components/*.yaml\nprojects:\n  "6.3.0": [base, gpulib, app, composable_kernel]\n',
    );
    // gpulib builds from the monorepo's composable_kernel asset too; app claims the project without fetching it.
    const gpulib = MOVED.replace('name: gpulib', 'name: gpulib\nprojects: [gpulib, composable_kernel]').replace(
      '    file: gpulib.tar.gz\n    releases: { from: "6.3.0" }\n',
      '    file: gpulib.tar.gz\n    releases: { from: "6.3.0" }\n  - release_asset: ROCm/rocm-libraries\n    file: composablekernel.tar.gz\n',
    );
    const app = BASE_FILES['components/app.yaml']!.replace('name: app', 'name: app\nprojects: [app, composable_kernel]');
    const dir = await fixtureManifest({ 'stack.yaml': stack, 'components/gpulib.yaml': gpulib, 'components/app.yaml': app });
    const { issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    const claims = issues.filter((i) => /composable_kernel/.test(i.message));
    assert.equal(claims.length, 1, JSON.stringify(issues, null, 1));
    assert.match(claims[0]!.file, /app\.yaml$/, 'the claim that fetches nothing is blamed, not the asset');
  });
});
