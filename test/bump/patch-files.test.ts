import { strict as assert } from 'node:assert';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { IDENTITY } from '../helpers/bumped-overlay.js';
import { fixtureManifest, patchedComponent } from '../helpers/fixture-manifest.js';
import { git, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';

/** A package with one patch of its own for 6.2.2 only and one for every release. */
const PATCHED = patchedComponent(`  - file: patched-6.2.2-only.patch
    reason: a fix 6.2.2 alone needs
    releases: { until: "6.3.0" }
  - file: patched-6.2.2-always.patch
    reason: a fix every release needs
`);

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

  it('--dry-run names the files the real run adds, and refuses the clash the real run refuses', async () => {
    const overlay = path.join(work, 'dry');
    const dry = await runCli(['bump', '6.2.2', '--overlay', overlay, '--dry-run', '--json', ...flags], { home, cwd: work });
    assert.equal(dry.code, 0, dry.stderr);
    const planned = JSON.parse(dry.stdout) as { changes: { atom: string; addedFiles: string[] }[] };
    assert.deepEqual(
      planned.changes.filter((c) => c.addedFiles.length > 0).map((c) => [c.atom, c.addedFiles]),
      [['dev-libs/patched', ['patched-6.2.2-only.patch', 'patched-6.2.2-always.patch']]],
    );
    const text = await runCli(['bump', '6.2.2', '--overlay', overlay, '--dry-run', ...flags], { home, cwd: work });
    assert.match(text.stdout, /dev-libs\/patched-6\.2\.2: adds files\/patched-6\.2\.2-only\.patch, files\/patched-6\.2\.2-always\.patch: the manifest's patches, which it applies/);
    // The real run adds exactly those.
    const real = await runCli(['bump', '6.2.2', '--overlay', overlay, '--json', ...flags], { home, cwd: work });
    assert.equal(real.code, 0, real.stderr);
    const done = JSON.parse(real.stdout) as { changes: { atom: string; addedFiles: string[] }[]; commits: { files: string[] }[] };
    const written = done.commits.flatMap((c) => c.files).filter((f) => f.includes('/files/'));
    assert.deepEqual(written.sort(), planned.changes.flatMap((c) => c.addedFiles.map((f) => `${c.atom}/files/${f}`)).sort());

    // A clash: the dry run stops where the real run would, and says why.
    const file = path.join(overlay, 'dev-libs/patched/files/patched-6.2.2-always.patch');
    await writeFile(file, `${ALWAYS}# tweaked by hand\n`);
    await git(overlay, ['commit', '-qam', 'dev-libs/patched: tweak the patch'], home);
    const refused = await runCli(['bump', '6.3.0', '--overlay', overlay, '--dry-run', ...flags], { home, cwd: work });
    assert.equal(refused.code, 4, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /patched-6\.2\.2-always\.patch differs from/);
  });

  it('refuses a files/ entry that is a directory, or a link leading out of the overlay, where a patch would go', async () => {
    const overlay = path.join(work, 'odd');
    assert.equal((await runCli(['bump', '6.2.2', '--overlay', overlay, ...flags], { home, cwd: work })).code, 0);
    const files = path.join(overlay, 'dev-libs/patched/files');
    // 6.3.0 applies only the "always" patch: replace it with a directory.
    await removeDir(path.join(files, 'patched-6.2.2-always.patch'));
    await mkdir(path.join(files, 'patched-6.2.2-always.patch', 'inside'), { recursive: true });
    await writeFile(path.join(files, 'patched-6.2.2-always.patch', 'inside', 'x'), 'x\n');
    await git(overlay, ['add', '-A'], home);
    await git(overlay, ['commit', '-qm', 'dev-libs/patched: a directory where the patch was'], home);
    const head = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
    const dir = await runCli(['bump', '6.3.0', '--overlay', overlay, ...flags], { home, cwd: work });
    assert.equal(dir.code, 4, dir.stdout + dir.stderr);
    assert.match(dir.stderr, /dev-libs\/patched\/files\/patched-6\.2\.2-always\.patch: not a regular file/);
    assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), head);

    // files/ itself a link to a directory outside the overlay.
    const outside = await tempDir('rocm-ebuild-patch-files-outside-');
    try {
      await git(overlay, ['rm', '-rqf', 'dev-libs/patched/files'], home);
      await symlink(outside, files);
      await git(overlay, ['add', '-A'], home);
      await git(overlay, ['commit', '-qm', 'dev-libs/patched: files/ elsewhere'], home);
      const linked = await runCli(['bump', '6.3.0', '--overlay', overlay, ...flags], { home, cwd: work });
      assert.equal(linked.code, 4, linked.stdout + linked.stderr);
      assert.match(linked.stderr, /dev-libs\/patched\/files: a symlink to .*outside the overlay/);
      assert.deepEqual(await readdir(outside), []);
    } finally {
      await removeDir(outside);
    }
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
