import { strict as assert } from 'node:assert';
import path from 'node:path';
import { loadManifest } from '../../src/stack-check/index.js';
import { replayPatches } from '../../src/upstream/replay/patches.js';
import { TreeProvider } from '../../src/upstream/trees/sources.js';
import { removeDir, root, tempDir } from '../helpers/project.js';

/**
 * A release drafted from the shipped 10.0.0 (`bump 10.1.0 --derive-from 10.0.0`):
 * HIPIFY's and rocm-cmake's pinned sources are 10.0.0's alone, so in 10.1.0 they
 * have none. The fix-up replay says so instead of failing on the missing tree.
 */
describe('derive-from a release whose pinned sources end with it', function () {
  this.timeout(120_000);
  let work: string;
  before(async () => (work = await tempDir('rocm-ebuild-sourceless-')));
  after(() => removeDir(work));

  it('replays the others and reports the components left without a source, offline, without a TypeError', async () => {
    const m = await loadManifest(path.join(root, 'manifest/stack.yaml'));
    const drafted = { ...m, stack: { ...m.stack, releases: { ...m.stack.releases, '10.1.0': { llvm_slot: m.stack.releases['10.0.0']!.llvm_slot, stream: 'therock' as const } } } };
    // Offline with an empty distdir: every tree is unreadable, which the report says line by line.
    const provider = new TreeProvider({ kind: 'archive', distdir: work, offline: true, mirrors: [], cacheDir: path.join(work, 'cache') });
    const report = await replayPatches(drafted, { version: '10.1.0', against: '10.0.0', components: m.components, provider, jobs: 2, progress: { step() {}, done() {} } as never });
    const hipify = report.components.find((c) => c.component === 'HIPIFY');
    assert.ok(hipify, report.components.map((c) => c.component).join(' '));
    assert.match(hipify.tree, /^no source in 10\.1\.0 /);
    assert.deepEqual(hipify.lines, []);
    assert.ok(report.components.some((c) => c.lines.length > 0), 'the components with a source are replayed');
  });
});
