import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BodyData } from '../../src/pr/body.js';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, removeDir, runCli, tempDir, writeTree } from '../helpers/project.js';

/**
 * What a reviewer reads in `pr body` and `pr check` after an ordinary bump:
 * whether the ebuilds were tested on a GPU, the projects left out said once
 * (not again on every point release), a hand edit the commit carried not
 * flagged as one that may be lost, and an eclass named as its file.
 */
describe('pr body and pr check after a point bump', function () {
  this.timeout(240_000);
  let small: SmallStackFixture;
  let work: string;
  let manifest: string;
  let overlay: string;
  let start: string;

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-pr-polish-');
    // The small stack, with projects left out: two for both releases, one only until 6.3.0, one from 6.3.0.
    manifest = path.join(work, 'manifest');
    execFileSync('cp', ['-a', small.manifest, manifest]);
    await appendFile(
      path.join(manifest, 'stack.yaml'),
      `excluded:
  - project: rocm-examples
    reason: Example programs, not a library anything depends on.
  - project: rocm-docs
    reason: Documentation sources; the packages install their own.
  - project: old-tool
    reason: Replaced by rocm-base's own tool from 6.3.
    releases: { until: "6.3.0" }
  - project: new-tool
    reason: Needs a driver interface Gentoo's kernels do not have yet.
    releases: { from: "6.3.0" }
`,
    );
    // A fourth package, new in the bump: a release move is one of at least four packages.
    await writeFile(path.join(manifest, 'components/extra.yaml'), 'name: extra\natom: dev-libs/rocm-extra\ndescription: Another host library, new in this bump\nhomepage: https://github.com/ROCm/extra\nlicense: MIT\nsources:\n  - github: ROCm/extra\nbuild: cmake\n');
    const distdir = path.join(work, 'distfiles');
    execFileSync('cp', ['-a', small.distdir, distdir]);
    await writeFile(path.join(distdir, 'rocm-extra-6.3.0.tar.gz'), 'rocm-extra 6.3.0\n');
    overlay = copyOverlay(small.overlay, path.join(work, 'overlay'));
    // A hand fix of gpulib-6.2.2, then 6.3.0 with --drop-old: the fix is carried into 6.3.0 and 6.2.2 dropped.
    const file = path.join(overlay, 'sci-libs/gpulib/gpulib-6.2.2.ebuild');
    await writeFile(file, (await readFile(file, 'utf8')).replace('\nsrc_configure() {', '\nPATCHES=( "${FILESDIR}/${PN}-6.2.2-fix-gcc15.patch" )\n\nsrc_configure() {'));
    await mkdir(path.join(overlay, 'sci-libs/gpulib/files'), { recursive: true });
    await writeFile(path.join(overlay, 'sci-libs/gpulib/files/gpulib-6.2.2-fix-gcc15.patch'), '--- a/x\n+++ b/x\n');
    await git(overlay, ['add', '-A'], small.home);
    await git(overlay, ['commit', '-q', '-s', '-m', 'sci-libs/gpulib: fix build with GCC 15'], small.home);
    start = (await git(overlay, ['rev-parse', 'HEAD'], small.home)).trim();
    const flags = ['--manifest', manifest, '--distdir', distdir, '--offline'];
    const r = await runCli(['bump', '6.3.0', '--overlay', overlay, ...flags, '--drop-old'], { home: small.home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /gpulib-6\.3\.0: keeps the changes made by hand to 6\.2\.2/);
  });
  after(() => removeDir(work));

  const body = (extra: string[] = []) => runCli(['pr', 'body', '--overlay', overlay, '--range', start, '--manifest', manifest, '--no-pkgcheck', ...extra], { home: small.home });

  it('says the ebuilds were not tested on a GPU when no --tests is given', async () => {
    const r = await body();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\n### GPU tests\n\nNot run for this pull request: the ebuilds passed the checks above, but were not built and tested on a GPU with `rocm-ebuild test`\.\n/);
    assert.match(r.stderr, /^note: no --tests given: /m);
    assert.doesNotMatch((await body(['--quiet'])).stderr, /^note: /m);
  });

  it('lists only the projects left out anew, and names the others as left out before, for the same reasons', async () => {
    const r = await body(['--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { body: string; data: BodyData };
    assert.equal(out.data.release, '6.3.0', JSON.stringify(out.data.packages.added));
    assert.deepEqual(out.data.packages.notAdded.map((x) => x.project), ['rocm-examples', 'rocm-docs', 'new-tool']);
    assert.deepEqual(out.data.packages.notAddedBefore, { release: '6.2.2', same: ['rocm-examples', 'rocm-docs'] });
    const section = out.body.slice(out.body.indexOf('### Not packaged'), out.body.indexOf('\n###', out.body.indexOf('### Not packaged') + 1));
    assert.equal(
      section,
      '### Not packaged (3)\n\nProjects left out of ROCm 6.3.0 on purpose:\n\n' +
        "- **new-tool**: Needs a driver interface Gentoo's kernels do not have yet.\n" +
        '- 2 more as in ROCm 6.2.2, for the same reasons: rocm-examples, rocm-docs.\n',
    );
    assert.doesNotMatch(out.body, /Example programs, not a library/);
  });

  it('a hand edit the commit says it carried is no change that may be lost, in pr check or pr body', async () => {
    const check = await runCli(['pr', 'check', '--overlay', overlay, '--range', start, '--manifest', manifest, '--no-pkgcheck', '--json'], { home: small.home });
    const results = (JSON.parse(check.stdout) as { results: { keyword: string; level: string; message: string; version?: string }[] }).results.filter((x) => x.keyword === 'DroppedLocalChanges');
    assert.equal(results.length, 1, JSON.stringify(results));
    assert.equal(results[0]!.level, 'info');
    assert.match(results[0]!.message, /^gpulib-6\.2\.2 is dropped, and it differed from .*; its commit carries the change into the ebuild it adds/);
    const r = await body();
    assert.match(r.stdout, /^- `sci-libs\/gpulib`: 6\.2\.2 \(changed by hand: 6\.2\.2; the change is carried into the new version, as its commit says\)$/m);
    assert.doesNotMatch(r.stdout, /check the change went along/);
  });

  it('an edit dropped by a commit that does not say it carried it is still flagged', async () => {
    const dir = copyOverlay(small.overlay, path.join(work, 'lost'));
    const file = path.join(dir, 'sci-libs/gpulib/gpulib-6.2.2.ebuild');
    await writeFile(file, (await readFile(file, 'utf8')).replace('\nsrc_configure() {', '\n# a local note\n\nsrc_configure() {'));
    await git(dir, ['commit', '-q', '-s', '-a', '-m', 'sci-libs/gpulib: a local note'], small.home);
    const from = (await git(dir, ['rev-parse', 'HEAD'], small.home)).trim();
    await git(dir, ['rm', '-q', 'sci-libs/gpulib/gpulib-6.2.2.ebuild'], small.home);
    // Says "Keeps the changes" of another version: not this one's.
    await git(dir, ['commit', '-q', '-s', '-m', 'sci-libs/gpulib: drop 6.2.2\n\nKeeps the changes made by hand to 6.1.0, merged into the generated text:'], small.home);
    const r = await runCli(['pr', 'body', '--overlay', dir, '--range', from, '--manifest', small.manifest, '--no-pkgcheck'], { home: small.home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\(\*\*changed by hand:\*\* 6\.2\.2 differed from what rocm-ebuild generates; check the change went along\)/);
  });

  it('pr check names an eclass by its file: rocm.eclass, not rocm.eclass.eclass', async () => {
    const dir = path.join(work, 'gentoo');
    await writeTree(dir, { 'profiles/repo_name': 'gentoo\n', 'eclass/rocm.eclass': '# @ECLASS: rocm.eclass\n' });
    await git(dir, ['init', '-q'], small.home);
    await git(dir, ['add', '-A'], small.home);
    await git(dir, ['commit', '-q', '-s', '-m', 'the tree'], small.home);
    const base = (await git(dir, ['rev-parse', 'HEAD'], small.home)).trim();
    await writeFile(path.join(dir, 'eclass/rocm.eclass'), '# @ECLASS: rocm.eclass\n# @MAINTAINER:\n# sci@gentoo.org\n');
    await git(dir, ['commit', '-q', '-s', '-a', '-m', 'rocm.eclass: name the maintainer'], small.home);
    const r = await runCli(['pr', 'check', '--overlay', dir, '--range', base, '--no-pkgcheck'], { home: small.home });
    assert.match(r.stdout, /^ {2}rocm\.eclass: EclassChange: rocm\.eclass is changed: /m);
    assert.doesNotMatch(r.stdout, /eclass\.eclass/);
  });
});
