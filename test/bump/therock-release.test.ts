import { strict as assert } from 'node:assert';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, IDENTITY } from '../helpers/bumped-overlay.js';
import { git, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';
import { synthesizeDistfiles, type PlanJson } from '../helpers/stack-distfiles.js';

/**
 * The shipped stack's move from the last legacy release to TheRock's first
 * ROCm 10 release, as a maintainer runs it: an overlay holding 7.2.4,
 * `bump 10.0.0 --drop-old`, then the pull request's text.
 */
describe('bump 10.0.0 --drop-old on an overlay holding 7.2.4 (legacy stream to TheRock)', function () {
  this.timeout(240_000);
  let work: string;
  let home: string;
  let distdir: string;
  let overlay: string;
  /** The same 7.2.4 overlay, bumped without --drop-old in the test that needs it. */
  let keeping: string;
  let plan: PlanJson;
  let old: PlanJson;
  let start: string;
  let result: { code: number | null; stdout: string; stderr: string };

  const bump = (args: string[], dir = overlay) => runCli(['bump', ...args, '--overlay', dir, '--distdir', distdir, '--offline'], { home, cwd: work });
  const subjects = async (range: string) => (await git(overlay, ['log', '--reverse', '--format=%s', range], home)).trim().split('\n');

  before(async () => {
    work = await tempDir('rocm-ebuild-therock-');
    home = await gitHome(IDENTITY);
    distdir = path.join(work, 'distfiles');
    overlay = path.join(work, 'overlay');
    old = await synthesizeDistfiles('7.2.4', distdir, home);
    plan = await synthesizeDistfiles('10.0.0', distdir, home);
    const created = await bump(['7.2.4']);
    assert.equal(created.code, 0, created.stderr);
    start = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
    keeping = copyOverlay(overlay, path.join(work, 'keeping'));
    result = await bump(['10.0.0', '--drop-old']);
  });

  after(async () => {
    await removeDir(work);
    await removeDir(home);
  });

  it('moves every package of 10.0.0 in one commit each, in build order, and removes the one that left', async () => {
    assert.equal(result.code, 0, result.stderr);
    const moves = plan.packages.map((p) => `${p.atom}: add 10.0.0, drop 7.2.4`);
    assert.deepEqual(await subjects(`${start}..HEAD`), [
      'profiles/desc: amdgpu_targets.desc for ROCm 10.0.0',
      ...moves,
      'dev-libs/roct-thunk-interface: treeclean',
      'sets.conf, metadata/sets: package sets for ROCm 10.0.0',
    ]);
    // TheRock's ROCR-Runtime installs libhsakmt itself: the thunk package is not in 10.0.0.
    const before = new Set(old.packages.map((p) => p.atom));
    const after = new Set(plan.packages.map((p) => p.atom));
    assert.deepEqual([...before].filter((a) => !after.has(a)), ['dev-libs/roct-thunk-interface']);
    assert.deepEqual([...after].filter((a) => !before.has(a)), []);
    assert.deepEqual(await readdir(path.join(overlay, 'dev-libs')).then((d) => d.includes('roct-thunk-interface')), false);
    const rocr = await readFile(path.join(overlay, 'dev-libs/rocr-runtime/rocr-runtime-10.0.0.ebuild'), 'utf8');
    assert.match(rocr, /^\t!dev-libs\/roct-thunk-interface$/m);
    assert.equal((await git(overlay, ['status', '--porcelain', '--untracked-files=all'], home)).trim(), '');
  });

  it('fetches from the therock-10.0 tag archives, the commits TheRock pins, or the last legacy tag, with LLVM 23', async () => {
    for (const p of plan.packages) {
      const pn = p.atom.split('/')[1]!;
      const ebuild = await readFile(path.join(overlay, p.atom, `${pn}-10.0.0.ebuild`), 'utf8');
      const main = /^SRC_URI="\s*(https:\/\/\S+\/archive\/(?:\$\(ver_cut 1-2\)|\S)+)/m.exec(ebuild)?.[1];
      assert.ok(main, p.atom);
      assert.match(main, /\/archive\/(therock-\$\(ver_cut 1-2\)|[0-9a-f]{40}|rocm-7\.2\.4)\.tar\.gz$/, `${p.atom}: ${main}`);
      const compat = /^LLVM_COMPAT=\( (.*) \)$/m.exec(ebuild)?.[1];
      if (compat !== undefined) assert.equal(compat, '23', p.atom);
    }
    // One archive per monorepo, shared by its packages.
    const rocblas = await readFile(path.join(overlay, 'sci-libs/rocBLAS/Manifest'), 'utf8');
    assert.match(rocblas, /^DIST rocm-libraries-10\.0\.0\.tar\.gz /m);
  });

  it("the pull request's notes say the stream changed, LLVM 22 became 23, and which package left", async () => {
    const r = await runCli(['pr', 'body', '-o', overlay, '-r', `${start}..HEAD`, '--no-pkgcheck'], { home, cwd: work });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^- LLVM: `LLVM_COMPAT=\( 23 \)` in \d+ ebuilds \(the versions they replace had `\( 22 \)`\)/m);
    assert.match(r.stdout, /^- Release stream: TheRock therock-X\.Y \(`therock-10\.0` for 10\.0\.0\); the versions replaced came from the legacy rocm-X\.Y\.Z stream \(`rocm-7\.2\.4`\)\.$/m);
    assert.match(r.stdout, /^- `dev-libs\/roct-thunk-interface` \(7\.2\.4\): Not part of ROCm 10\.0\.0/m);
    assert.doesNotMatch(r.stdout, /kept here at their old versions/);
    assert.match(r.stdout, /^Projects left out of ROCm 10\.0\.0 on purpose:$/m);
    const json = JSON.parse((await runCli(['pr', 'body', '-o', overlay, '-r', `${start}..HEAD`, '--no-pkgcheck', '--json'], { home, cwd: work })).stdout) as {
      title: string;
      data: { notes: { release: { stream?: { tag: string; from: { tag: string } }; left: { atom: string; versions: string[] }[] } } };
    };
    assert.equal(json.title, 'ROCm 10.0.0, drop 7.2.4');
    assert.equal(json.data.notes.release.stream?.tag, 'therock-10.0');
    assert.equal(json.data.notes.release.stream?.from.tag, 'rocm-7.2.4');
    assert.deepEqual(json.data.notes.release.left, []);
  });

  it('without --drop-old the package that left stays at 7.2.4, and the notes say so', async () => {
    const kept = await bump(['10.0.0'], keeping);
    assert.equal(kept.code, 0, kept.stderr);
    const thunk = await readdir(path.join(keeping, 'dev-libs/roct-thunk-interface'));
    assert.deepEqual(thunk.filter((f) => f.endsWith('.ebuild')), ['roct-thunk-interface-7.2.4.ebuild']);
    const r = await runCli(['pr', 'body', '-o', keeping, '-r', `${start}..HEAD`, '--no-pkgcheck'], { home, cwd: work });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^- Not part of ROCm 10\.0\.0 any more, kept here at their old versions \(no package of 10\.0\.0 depends on them\): `dev-libs\/roct-thunk-interface` 7\.2\.4\.$/m);
  });

  it('changes nothing when run again', async () => {
    const head = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
    const again = await bump(['10.0.0', '--drop-old']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already holds ROCm 10\.0\.0: nothing to do/);
    assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), head);
  });
});
