import { strict as assert } from 'node:assert';
import path from 'node:path';
import { classifyReleaseTag, STREAMS } from '../../src/model/streams.js';
import { compareVersions } from '../../src/model/version.js';
import { renderEbuild } from '../../src/render/index.js';
import { stackFor, validateManifest } from '../../src/stack-check/index.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';

describe('model: release streams', function () {
  this.timeout(60_000);

  it('reads both tag schemes as Gentoo versions, which Portage orders as one stream', () => {
    assert.deepEqual(classifyReleaseTag('rocm-7.2.4')?.version, '7.2.4');
    assert.equal(classifyReleaseTag('rocm-7.2.4')?.stream.name, 'legacy');
    assert.deepEqual(classifyReleaseTag('therock-7.14')?.version, '7.14.0');
    assert.deepEqual(classifyReleaseTag('therock-10.0')?.version, '10.0.0');
    assert.deepEqual(classifyReleaseTag('therock-10.0.1')?.version, '10.0.1');
    assert.equal(classifyReleaseTag('therock-10'), undefined);
    assert.equal(classifyReleaseTag('release/therock-10.0'), undefined);
    assert.deepEqual(['10.0.0', '7.14.0', '7.2.4', '7.9.0'].sort(compareVersions), ['7.2.4', '7.9.0', '7.14.0', '10.0.0']);
    assert.equal(STREAMS.therock.tagFor('10.0.0'), 'therock-$(ver_cut 1-2)');
    assert.equal(STREAMS.therock.tagFor('10.0.1'), 'therock-${PV}');
    assert.equal(STREAMS.legacy.tagFor('7.2.4'), 'rocm-${PV}');
  });

  it("a TheRock release's sources follow its tags: a monorepo's therock-X.Y archive, PV the plain version", async () => {
    const stack = BASE_FILES['stack.yaml']!.replace('  "6.3.0": { llvm_slot: 19 }\n', '  "6.3.0": { llvm_slot: 19 }\n  "10.0.0": { llvm_slot: 23, stream: therock }\n  "10.0.1": { llvm_slot: 23, stream: therock }\n');
    const gpulib = BASE_FILES['components/gpulib.yaml']!.replace(
      'sources:\n  - github: ROCm/gpulib\n',
      'sources:\n  - github: ROCm/gpulib\n    releases: { until: "10.0.0" }\n  - github: ROCm/rocm-libraries\n    distfile: rocm-libraries-${PV}.tar.gz\n    subdir: projects/gpulib\n    releases: { from: "10.0.0" }\n',
    );
    const dir = await fixtureManifest({ 'stack.yaml': stack, 'components/gpulib.yaml': gpulib });
    const { manifest, issues } = await validateManifest(path.join(dir, 'stack.yaml'));
    assert.deepEqual(issues.filter((i) => /gpulib|stack/.test(i.file) && !/target policy|evidence/.test(i.message)), []);
    for (const [v, tag] of [['10.0.0', 'therock-$(ver_cut 1-2)'], ['10.0.1', 'therock-${PV}']] as const) {
      const model = await stackFor(manifest!, v);
      const c = model.byAtom.get('sci-libs/gpulib')!;
      assert.equal(c.distfiles[0]!.uri, `https://github.com/ROCm/rocm-libraries/archive/${tag}.tar.gz -> rocm-libraries-\${PV}.tar.gz`);
      assert.equal(c.distfiles[0]!.urls[0], `https://github.com/ROCm/rocm-libraries/archive/${v === '10.0.0' ? 'therock-10.0' : 'therock-10.0.1'}.tar.gz`);
      assert.equal(c.sourceDir, `\${WORKDIR}/rocm-libraries-${tag}/projects/gpulib`);
      assert.match(renderEbuild(c, model, { year: 2026 }), /rocm-libraries\/archive\/therock-/);
    }
  });
});
