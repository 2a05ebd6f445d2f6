import { strict as assert } from 'node:assert';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { IDENTITY } from '../helpers/bumped-overlay.js';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { git, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';

/** A package with one patch of its own for 6.2.2 only and one for every release. */
const PATCHED = `name: patched
atom: dev-libs/patched
description: Library whose releases need patches of our own
homepage: https://github.com/ROCm/patched
license: MIT
sources:
  - github: ROCm/patched
build: cmake
patches:
  - file: patched-6.2.2-only.patch
    reason: a fix 6.2.2 alone needs
    releases: { until: "6.3.0" }
  - file: patched-6.2.2-always.patch
    reason: a fix every release needs
`;

const diff = (file: string, from: string, to: string) => `Fix ${file}.\n\n--- a/${file}\n+++ b/${file}\n@@ -1,2 +1,2 @@\n project(patched)\n-${from}\n+${to}\n`;
const ONLY = diff('CMakeLists.txt', 'add_library(patched a.c)', 'add_library(patched a.c b.c)');
const ALWAYS = diff('src/CMakeLists.txt', 'set(X 1)', 'set(X 2)');

describe('bump: our patch files go into files/ with the ebuilds that apply them', function () {
  this.timeout(300_000);
  let work: string;
  let home: string;
  let manifest: string;
  let flags: string[];

  before(async () => {
    work = await tempDir('rocm-ebuild-patch-files-');
    home = await gitHome(IDENTITY);
    manifest = await fixtureManifest({
      'components/patched.yaml': PATCHED,
      'patches/patched/patched-6.2.2-only.patch': ONLY,
      'patches/patched/patched-6.2.2-always.patch': ALWAYS,
    });
    const distdir = path.join(work, 'distfiles');
    await mkdir(distdir);
    for (const v of ['6.2.2', '6.3.0']) await writeFile(path.join(distdir, `patched-${v}.tar.gz`), `patched ${v}\n`);
    flags = ['patched', '--manifest', manifest, '--distdir', distdir, '--offline'];
  });
  after(async () => {
    await removeDir(work);
    await removeDir(home);
    await removeDir(manifest);
  });

  const files = async (overlay: string) => (await git(overlay, ['ls-tree', '-r', '--name-only', 'HEAD', 'dev-libs/patched'], home)).trim();

  it('adds them in the commit of the ebuild, byte for byte, and drops the one no remaining ebuild uses', async () => {
    const overlay = path.join(work, 'overlay');
    const first = await runCli(['bump', '6.2.2', '--overlay', overlay, ...flags], { home, cwd: work });
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual((await files(overlay)).split('\n'), [
      'dev-libs/patched/Manifest',
      'dev-libs/patched/files/patched-6.2.2-always.patch',
      'dev-libs/patched/files/patched-6.2.2-only.patch',
      'dev-libs/patched/metadata.xml',
      'dev-libs/patched/patched-6.2.2.ebuild',
    ]);
    // One commit: the ebuild and the files it applies.
    const added = (await git(overlay, ['log', '--format=%s', '--', 'dev-libs/patched/files'], home)).trim();
    assert.deepEqual(added.split('\n'), ['dev-libs/patched: new package, add 6.2.2']);
    assert.equal(await readFile(path.join(overlay, 'dev-libs/patched/files/patched-6.2.2-only.patch'), 'utf8'), ONLY);
    const ebuild = await readFile(path.join(overlay, 'dev-libs/patched/patched-6.2.2.ebuild'), 'utf8');
    assert.match(ebuild, /\nPATCHES=\(\n\t# a fix 6\.2\.2 alone needs\n\t"\$\{FILESDIR\}\/patched-6\.2\.2-only\.patch"\n\t# a fix every release needs\n\t"\$\{FILESDIR\}\/patched-6\.2\.2-always\.patch"\n\)\n/);

    const next = await runCli(['bump', '6.3.0', '--overlay', overlay, '--drop-old', ...flags], { home, cwd: work });
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual((await files(overlay)).split('\n'), [
      'dev-libs/patched/Manifest',
      'dev-libs/patched/files/patched-6.2.2-always.patch',
      'dev-libs/patched/metadata.xml',
      'dev-libs/patched/patched-6.3.0.ebuild',
    ]);
    const message = await git(overlay, ['log', '-1', '--format=%B', '--', 'dev-libs/patched'], home);
    assert.match(message, /No remaining ebuild uses files\/patched-6\.2\.2-only\.patch; removed\./);
  });

  it('stops before writing anything when files/ holds another version of a patch (a hand edit is never overwritten)', async () => {
    const overlay = path.join(work, 'edited');
    assert.equal((await runCli(['bump', '6.2.2', '--overlay', overlay, ...flags], { home, cwd: work })).code, 0);
    const file = path.join(overlay, 'dev-libs/patched/files/patched-6.2.2-always.patch');
    const edited = `${ALWAYS}# tweaked by hand\n`;
    await writeFile(file, edited);
    await git(overlay, ['commit', '-qam', 'dev-libs/patched: tweak the patch'], home);
    const head = await git(overlay, ['rev-parse', 'HEAD'], home);
    const r = await runCli(['bump', '6.3.0', '--overlay', overlay, ...flags], { home, cwd: work });
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.match(r.stderr, /dev-libs\/patched\/files\/patched-6\.2\.2-always\.patch differs from .*patches\/patched\/patched-6\.2\.2-always\.patch/);
    assert.match(r.stderr, /give a changed patch a new name/);
    assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), head.trim());
    assert.equal(await readFile(file, 'utf8'), edited);
  });
});
