import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';
import { head, READ_ONLY_WHY, readOnlyMethod, runCliReadOnly, status, treeDigest } from './support.js';

describe('bump: refused overlays are left byte-identical (exit 4), bad paths are refused first (exit 2)', function () {
  this.timeout(120_000);
  let small: SmallStackFixture;
  let work: string;
  let readOnly: 'mode' | 'mount' | undefined;
  const bump = (overlay: string, ...extra: string[]) => runCli(['bump', '6.3.0', '--overlay', overlay, ...small.flags, ...extra], { home: small.home });

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-refusals-');
    readOnly = await readOnlyMethod(work);
  });
  after(() => removeDir(work));

  /** Run `bump` on a prepared copy and check it exits `code` without changing a byte of it. */
  async function refused(overlay: string, code: number, run: () => Promise<{ code: number; stdout: string; stderr: string }>): Promise<string> {
    const before = await treeDigest(overlay);
    const r = await run();
    assert.equal(r.code, code, `${r.stdout}\n${r.stderr}`);
    assert.equal(await treeDigest(overlay), before, 'the refused overlay changed');
    return r.stderr;
  }

  it('refuses a detached HEAD up front, with the hint, and leaves no pack or private ref', async () => {
    const overlay = copyOverlay(small.overlay, path.join(work, 'detached'));
    await git(overlay, ['checkout', '-q', '--detach', 'HEAD'], small.home);
    const stderr = await refused(overlay, 4, () => bump(overlay));
    assert.match(stderr, /HEAD is detached/);
    assert.match(stderr, /git switch <branch>/);
    assert.doesNotMatch(stderr, /distfiles:/, 'the refusal came after the work');
  });

  it('refuses a locked index (another git is running) and says what to do', async () => {
    const overlay = copyOverlay(small.overlay, path.join(work, 'index-lock'));
    await writeFile(path.join(overlay, '.git/index.lock'), '');
    const stderr = await refused(overlay, 4, () => bump(overlay));
    assert.match(stderr, /index\.lock exists: another git process is working in this repository/);
    assert.match(stderr, /remove .*\.git\/index\.lock/);
  });

  it('refuses a read-only overlay and says so', async function () {
    // Root ignores file modes: it needs a private mount namespace, which some containers do not allow.
    if (!readOnly) this.skip();
    const overlay = copyOverlay(small.overlay, path.join(work, 'read-only'));
    const stderr = await refused(overlay, 4, () => runCliReadOnly(['bump', '6.3.0', '--overlay', overlay, ...small.flags], [overlay], { home: small.home, method: readOnly! }));
    assert.match(stderr, new RegExp(`cannot write to ${overlay}/\\.git: (${READ_ONLY_WHY.source}); rocm-ebuild needs write access`));
  });

  it('refuses an overlay whose package directories cannot be written, before building anything', async function () {
    if (!readOnly) this.skip();
    const overlay = copyOverlay(small.overlay, path.join(work, 'read-only-category'));
    const stderr = await refused(overlay, 4, () =>
      runCliReadOnly(['bump', '6.3.0', '--overlay', overlay, ...small.flags], [path.join(overlay, 'sci-libs')], { home: small.home, method: readOnly! }),
    );
    assert.match(stderr, new RegExp(`cannot write to these directories of the overlay .*; nothing was changed:\\n {2}sci-libs/gpulib: (${READ_ONLY_WHY.source})\\n {2}sci-libs/app: (${READ_ONLY_WHY.source})\\n`));
    assert.doesNotMatch(stderr, /distfiles:/, 'the refusal came after the work');
  });

  it('refuses to create an overlay in a read-only directory, creating nothing', async function () {
    if (!readOnly) this.skip();
    const parent = path.join(work, 'read-only-parent');
    await mkdir(parent);
    const r = await runCliReadOnly(['bump', '6.2.2', '--overlay', path.join(parent, 'new'), ...small.flags], [parent], { home: small.home, method: readOnly! });
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot create the overlay .*new: .*read-only-parent is not writable \\((${READ_ONLY_WHY.source})\\)`));
    assert.doesNotMatch(r.stderr, /distfiles:/);
    assert.ok(!existsSync(path.join(parent, 'new')));
  });

  it('refuses --overlay naming a regular file, or a path under one, in one line before any work (exit 2)', async () => {
    const file = path.join(work, 'a-file');
    await writeFile(file, 'not an overlay\n');
    for (const overlay of [file, path.join(file, 'overlay')]) {
      const r = await bump(overlay);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /--overlay .*a-file(\/overlay)?: .*a-file is not a directory/);
      assert.equal(await readFile(file, 'utf8'), 'not an overlay\n');
    }
  });

  for (const [what, rel] of [
    ['a package directory', 'sci-libs/gpulib'],
    ['eclass/', 'eclass'],
  ] as const) {
    it(`refuses ${what} committed as a symlink to a directory outside the overlay, naming it (exit 4), writing nothing there`, async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, `committed-link-${rel.replace('/', '-')}`));
      const outside = path.join(work, `outside-${rel.replace('/', '-')}`);
      await cp(path.join(overlay, rel), outside, { recursive: true });
      await rm(path.join(overlay, rel), { recursive: true });
      await symlink(outside, path.join(overlay, rel));
      await git(overlay, ['add', '-A'], small.home);
      await git(overlay, ['commit', '-qm', `${rel}: a link`], small.home);
      const before = await treeDigest(outside);
      const stderr = await refused(overlay, 4, () => bump(overlay));
      assert.match(stderr, new RegExp(`${rel}: a symlink to ${outside}, outside the overlay`));
      assert.doesNotMatch(stderr, /internal error|ELOOP|ENOTDIR|Error:/);
      assert.equal(await treeDigest(outside), before, 'something was written outside the overlay');
    });
  }

  describe('ignore rules (.gitignore, info/exclude)', () => {
    it('refuses an ignored file where bump reads or writes (an ebuild), naming it and the rule', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'ignored-ebuild'));
      await writeFile(path.join(overlay, '.gitignore'), '*.ebuild\n');
      await git(overlay, ['add', '.gitignore'], small.home);
      await git(overlay, ['commit', '-qm', 'ignore ebuilds'], small.home);
      // A local copy the branch does not have: planning from it would leave app out of the bump.
      await writeFile(path.join(overlay, 'sci-libs/app/app-6.3.0.ebuild'), '# local\n');
      const stderr = await refused(overlay, 4, () => bump(overlay));
      assert.match(stderr, /sci-libs\/app\/app-6\.3\.0\.ebuild is ignored \(\.gitignore:1:\*\.ebuild\)/);
    });

    it('refuses an ignored eclass in a new repository', async () => {
      const overlay = path.join(work, 'ignored-eclass');
      await mkdir(path.join(overlay, 'eclass'), { recursive: true });
      await git(overlay, ['init', '-q'], small.home);
      await writeFile(path.join(overlay, '.git/info/exclude'), 'eclass/\n');
      await writeFile(path.join(overlay, 'eclass/rocm.eclass'), '# my own\n');
      const stderr = await refused(overlay, 4, () => runCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags], { home: small.home }));
      assert.match(stderr, /eclass\/rocm\.eclass is ignored \(\.git\/info\/exclude:1:eclass\/\)/);
    });

    it('commits what it writes even where the rules ignore it (*.ebuild, eclass/), and says so', async () => {
      const overlay = path.join(work, 'ignoring');
      await mkdir(overlay);
      await git(overlay, ['init', '-q'], small.home);
      await writeFile(path.join(overlay, '.gitignore'), '*.ebuild\neclass/\n');
      await git(overlay, ['add', '.gitignore'], small.home);
      await git(overlay, ['commit', '-qm', 'ignore rules'], small.home);
      const r = await runCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags], { home: small.home });
      assert.equal(r.code, 0, r.stderr);
      const files = (await git(overlay, ['ls-tree', '-r', '--name-only', 'HEAD'], small.home)).split('\n');
      for (const f of ['eclass/rocm.eclass', 'sci-libs/app/app-6.2.2.ebuild', 'sci-libs/gpulib/gpulib-6.2.2.ebuild', 'dev-libs/rocm-base/rocm-base-6.2.2.ebuild']) {
        assert.ok(files.includes(f), `${f} is not on the branch`);
      }
      assert.equal(await status(overlay, small.home), '');
      assert.match(
        r.stderr.replace(/\s*›\s*/g, ' '),
        /4 committed files match the overlay's ignore rules \(e\.g\. eclass\/rocm\.eclass, by \.gitignore:2:eclass\/\); they are tracked now/,
      );
      assert.ok((await head(overlay, small.home)).length > 0);
    });
  });
});
