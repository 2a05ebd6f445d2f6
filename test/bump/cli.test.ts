import { strict as assert } from 'node:assert';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';

/** Lines of one section of oclif's help (indented lines after its heading). */
function helpSection(help: string, heading: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `no ${heading} section`);
  const end = lines.findIndex((l, i) => i > start && /^[A-Z][A-Z ]+$/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

describe('bump, manifest and lint: flags and help', function () {
  this.timeout(120_000);
  let small: SmallStackFixture;
  let work: string;

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-bump-cli-');
  });
  after(() => removeDir(work));

  it('takes one value per --mirror, so the version may follow it', async () => {
    const r = await runCli(
      ['bump', '--overlay', path.join(work, 'none'), '--mirror', 'http://127.0.0.1:9/a', '--mirror', 'http://127.0.0.1:9/b', '6.2.2', '--dry-run', '--json'],
      { home: small.home },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { version: string }).version, '6.2.2');
  });

  it("says which packages of 10.0.0 need LLVM 23, whose slot ::gentoo's profiles mask, and the setting that lifts the mask", async () => {
    const r = await runCli(['bump', '--overlay', path.join(work, 'llvm-23'), '10.0.0', '--dry-run', '--offline', '--distdir', path.join(work, 'dist')], { home: small.home });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const at = lines.findIndex((l) => /^13 packages can only be built with LLVM 23 \(llvm_slot_23, masked by ::gentoo's profiles\/base\/use\.mask: LLVM 23 has no keyworded release yet\); /.test(l));
    assert.ok(at >= 0, r.stdout);
    assert.equal(lines[at + 1], 'To install them, add to /etc/portage/profile/package.use.mask:');
    assert.equal(lines[at + 2], '  dev-libs/rocm-comgr -llvm_slot_23');
    assert.equal(lines[at + 14], '  sci-libs/miopen -llvm_slot_23');
    assert.equal(lines[at + 15], 'or -llvm_slot_23 to /etc/portage/profile/use.mask for every package.');
  });

  it('says the version is missing without an unrelated note', async () => {
    const r = await runCli(['bump', '--overlay', path.join(work, 'none')], { home: small.home });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^rocm-ebuild: missing VERSION \(ROCm release, e\.g\. 6\.2\.2\), e\.g\. rocm-ebuild bump 6\.2\.2 --overlay ~\/rocm-overlay; see rocm-ebuild bump --help\n$/);
    assert.doesNotMatch(r.stderr, /Note: |multiple values/);
  });

  for (const command of ['bump', 'manifest']) {
    it(`${command} --help fills its description paragraphs to the width (no ragged hard breaks)`, async () => {
      const r = await runCli([command, '--help'], { home: small.home });
      assert.equal(r.code, 0, r.stderr);
      const description = helpSection(r.stdout, 'DESCRIPTION');
      for (let i = 0; i + 1 < description.length; i++) {
        const line = description[i]!;
        const next = description[i + 1]!;
        if (!line.trim() || !next.trim()) continue;
        const firstWord = next.trim().split(' ')[0]!;
        assert.ok(line.length + 1 + firstWord.length > 80, `"${firstWord}" would have fitted on:\n${line}\n${next}`);
      }
    });
  }

  it('lint --overlay needs no --version: each ebuild is checked against its own release', async () => {
    const r = await runCli(['lint', '--overlay', small.overlay, '--manifest', small.manifest, '--no-shellcheck'], { home: small.home });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^3 ebuilds checked: 0 errors\/warnings/m);
  });

  it('lint and manifest refuse an --overlay that is not a directory (exit 2)', async () => {
    const file = path.join(work, 'file');
    await writeFile(file, '');
    for (const args of [['lint', '--overlay', file, '--manifest', small.manifest], ['manifest', '--overlay', file, '--manifest', small.manifest]]) {
      const r = await runCli(args, { home: small.home });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /--overlay .*file: .*file is not a directory/);
    }
  });
});
