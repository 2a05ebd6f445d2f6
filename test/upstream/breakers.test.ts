import { strict as assert } from 'node:assert';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyShippedManifest } from '../helpers/manifest-copy.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import type { EvidenceReport } from '../../src/upstream/evidence/check.js';
import type { PatchesReport } from '../../src/upstream/replay/patches.js';
import { bareRepo, fixtures } from './support.js';

/**
 * The build breakers of the 7.x data, fixed by our own patches, replayed on
 * trees shaped like upstream's (test/fixtures/upstream/breakers): rocSOLVER's
 * undeclared dlsym with BUILD_WITH_SPARSE (7.1-7.2) and missing <cassert>
 * (7.0), hipBLASLt's nanobind download under the network sandbox (7.1-7.2),
 * HIP's empty __noinline__ before libstdc++ 16's <format> (7.2).
 */
describe('the 7.x build breakers: the shipped patches apply, and what they fix is checked', function () {
  this.timeout(300_000);
  let dir: string;
  let template: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dir = await tempDir('rocm-ebuild-breakers-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
    const trees = path.join(fixtures, 'breakers');
    for (const [repo, tags] of [
      ['rocSOLVER', ['rocm-7.0.2', 'rocm-7.1.0']],
      ['rocm-libraries', ['rocm-7.1.0', 'rocm-7.2.4']],
      ['rocm-systems', ['rocm-7.2.4']],
    ] as const) {
      await bareRepo(path.join(dir, 'git', 'ROCm', repo), tags.map((tag) => ({ tag, tree: path.join(trees, repo, tag) })));
    }
    template = `${path.join(dir, 'git')}/{owner}/{repo}`;
  });
  after(() => removeDir(dir));

  const patchLines = async (version: string, components: string[], manifest?: string) => {
    const r = await runCli(['upstream', 'patches', version, ...components, '--base-url', template, '--json', ...(manifest ? ['--manifest', manifest] : [])], { env });
    const report = JSON.parse(r.stdout) as PatchesReport;
    return report.components.flatMap((c) => c.lines.filter((l) => l.op === 'patch').map((l) => `${c.component} ${l.fixup} ${l.file} ${l.status}: ${l.reason}`));
  };

  it('each patch applies at its releases, at the lines upstream has (7.0.2, 7.1.0, 7.2.4)', async () => {
    // The trees are shorter than upstream's files: the hunks apply at an offset, as patch(1) would apply them.
    const applies = (lines: string[], want: string[]) =>
      assert.deepEqual(
        lines.map((l) => l.replace(/ \(hunk 1 at -\d+ lines(, hunk 2 at -\d+ lines)?\)$/, '')).sort(),
        [...want].sort(),
      );
    applies(await patchLines('7.0.2', ['rocSOLVER']), ['rocSOLVER patches[0] library/src/include/lib_device_helpers.hpp applies: 1 hunk applies']);
    applies(await patchLines('7.1.0', ['rocSOLVER', 'hipBLASLt']), [
      'rocSOLVER patches[1] library/src/refact/rocsolver_rfinfo.cpp applies: 2 hunks apply',
      'hipBLASLt patches[0] tensilelite/rocisa/CMakeLists.txt applies: 1 hunk applies',
    ]);
    applies(await patchLines('7.2.4', ['rocSOLVER', 'hipBLASLt', 'hip']), [
      'rocSOLVER patches[1] library/src/refact/rocsolver_rfinfo.cpp applies: 2 hunks apply',
      'hipBLASLt patches[0] tensilelite/rocisa/CMakeLists.txt applies: 1 hunk applies',
      'hip patches[0] hipamd/include/hip/amd_detail/host_defines.h applies: 1 hunk applies',
    ]);
  });

  it('a patch whose change upstream already has is reported as upstream, one whose lines are gone as failing', async () => {
    const m = await copyShippedManifest(path.join(dir, 'changed'), ['7.2.4']);
    const file = path.join(m, 'patches', 'rocSOLVER', 'rocSOLVER-7.1.0-sparse-dlsym.patch');
    const text = await readFile(file, 'utf8');
    // Reversed: the tree then already holds what the patch is to remove.
    const reversed = text.replace(/^\+(?!\+\+)/gm, '\u0000').replace(/^-(?!--)/gm, '+').replace(/^\u0000/gm, '-').replace('@@ -62,6 +62,7 @@', '@@ -62,7 +62,6 @@').replace('@@ -216,6 +217,7 @@', '@@ -217,7 +216,6 @@');
    await writeFile(file, reversed);
    assert.match((await patchLines('7.2.4', ['rocSOLVER'], m))[0]!, /upstream: the change is already there \(the patch applies backwards\)$/);
    await writeFile(file, text.replace(' ROCSOLVER_END_NAMESPACE', ' ROCSOLVER_END_NAMESPACE_RENAMED'));
    assert.match((await patchLines('7.2.4', ['rocSOLVER'], m))[0]!, /fails: hunk 2 \(line \d+ of the patch\) does not match the file near line 216$/);
  });

  it("hipBLASLt 7.2.4 downloads nothing at configure with the patch; without it, rocisa's FetchContent of nanobind fails the offline fact", async () => {
    const withPatch = await runCli(['upstream', 'evidence', '7.2.4', 'hipBLASLt', '--base-url', template, '--json'], { env });
    const report = JSON.parse(withPatch.stdout) as EvidenceReport;
    const offline = report.components[0]!.facts.find((f) => f.fact === 'offline')!;
    assert.equal(offline.status, 'held', JSON.stringify(offline));
    assert.match(offline.reason, /USE benchmark, test on and off/);

    const m = await copyShippedManifest(path.join(dir, 'unpatched'), ['7.2.4']);
    const yamlFile = path.join(m, 'components', 'hipBLASLt.yaml');
    const yaml = await readFile(yamlFile, 'utf8');
    const without = yaml.replace(/^patches:\n(?: {2}.*\n)+/m, '');
    assert.notEqual(without, yaml);
    await writeFile(yamlFile, without);
    const r = await runCli(['upstream', 'evidence', '7.2.4', 'hipBLASLt', '--base-url', template, '--manifest', m, '--json'], { env });
    assert.equal(r.code, 6, r.stderr);
    const failed = (JSON.parse(r.stdout) as EvidenceReport).components[0]!.facts.find((f) => f.fact === 'offline')!;
    assert.equal(failed.status, 'failed');
    assert.deepEqual(
      failed.details.map((d) => `${d.subject} ${d.status}`),
      ['FetchContent nanobind (tensilelite/rocisa/CMakeLists.txt:11) failed'],
    );
    assert.match(failed.details[0]!.reason, /^downloads https:\/\/github\.com\/wjakob\/nanobind\.git \(made available at tensilelite\/rocisa\/CMakeLists\.txt:16\): the network sandbox stops it/);
  });

  it('the ebuilds of 7.2.4 apply them from files/, the whole word quoted', async () => {
    for (const [atom, file] of [
      ['sci-libs/rocSOLVER', 'rocSOLVER-7.1.0-sparse-dlsym.patch'],
      ['sci-libs/hipBLASLt', 'hipBLASLt-7.1.0-system-nanobind.patch'],
      ['dev-util/hip', 'hip-7.2.0-noinline-std-headers.patch'],
    ]) {
      const r = await runCli(['render', atom!, '--version', '7.2.4']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`\\nPATCHES=\\(\\n\\t# [^\\n]+\\n\\t"\\$\\{FILESDIR\\}/${file!.replace(/[.+]/g, '\\$&')}"\\n\\)\\n`), atom);
    }
    const old = await runCli(['render', 'sci-libs/rocSOLVER', '--version', '7.0.2']);
    assert.match(old.stdout, /"\$\{FILESDIR\}\/rocSOLVER-7\.0\.0-cassert\.patch"/);
    assert.doesNotMatch(old.stdout, /sparse-dlsym/);
  });
});
