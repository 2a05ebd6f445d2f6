import { strict as assert } from 'node:assert';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';

/** pr check and pr body say when a dropped ebuild had changes made by hand. */
describe('pr check and pr body: dropped ebuilds that were changed by hand', function () {
  this.timeout(120_000);
  let small: SmallStackFixture;
  let work: string;

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-pr-steady-');
  });
  after(() => removeDir(work));

  for (const how of ['with the record of what was generated', 'in a clone without it: re-rendered from the stack manifest'] as const) {
    it(`names the dropped version and marks it in the body (${how})`, async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, how.startsWith('with') ? 'record' : 'clone'));
      const file = path.join(overlay, 'sci-libs/gpulib/gpulib-6.2.2.ebuild');
      await writeFile(file, (await readFile(file, 'utf8')).replace('-DAMDGPU_TARGETS="$(get_amdgpu_flags)"', '-DAMDGPU_TARGETS="$(get_amdgpu_flags)" -DHAND=1'));
      await git(overlay, ['commit', '-q', '-s', '-a', '-m', 'sci-libs/gpulib: hand change'], small.home);
      const start = (await git(overlay, ['rev-parse', 'HEAD'], small.home)).trim();
      const r = await runCli(['bump', '6.3.0', '--overlay', overlay, ...small.flags, '--drop-old', '--discard-local'], { home: small.home });
      assert.equal(r.code, 0, r.stderr);
      if (!how.startsWith('with')) await git(overlay, ['update-ref', '-d', 'refs/rocm-ebuild-generated'], small.home);
      const manifest = small.flags[small.flags.indexOf('--manifest') + 1]!;
      const check = await runCli(['pr', 'check', '--overlay', overlay, '--range', start, '--manifest', manifest, '--no-pkgcheck', '--json'], { home: small.home });
      const report = JSON.parse(check.stdout) as { results: { keyword: string; level: string; package?: string; version?: string; message: string }[] };
      const found = report.results.filter((x) => x.keyword === 'DroppedLocalChanges');
      assert.deepEqual(found.map((x) => [x.package, x.version, x.level]), [['gpulib', '6.2.2', 'warning']], JSON.stringify(report.results));
      assert.match(found[0]!.message, /gpulib-6\.2\.2 is dropped, and it differed from what (rocm-ebuild generated|the stack manifest generates) for it \(2 lines changed by hand\)/);
      const body = await runCli(['pr', 'body', '--overlay', overlay, '--range', start, '--manifest', manifest, '--no-pkgcheck'], { home: small.home });
      assert.equal(body.code, 0, body.stderr);
      assert.match(body.stdout, /^- `sci-libs\/gpulib`: 6\.2\.2 \(\*\*changed by hand:\*\* 6\.2\.2 differed from what rocm-ebuild generates; check the change went along\)$/m);
      assert.match(body.stdout, /^- `sci-libs\/app`: 6\.2\.2$/m);
    });
  }
});
