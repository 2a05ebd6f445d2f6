import { strict as assert } from 'node:assert';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, IDENTITY } from '../helpers/bumped-overlay.js';
import { git, gitHome, removeDir, root, runCli, tempDir } from '../helpers/project.js';
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
    // Those 10.0.0 holds at their own version, 7.2.4, get this release's revision of it, which supersedes 7.2.4's.
    const moves = plan.packages.map((p) => (p.version === '7.2.4' ? `${p.atom}: add 7.2.4-r1` : `${p.atom}: add 10.0.0, drop 7.2.4`));
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

  it('fetches the commits TheRock pins, or the held packages\' own release tag (and commits their data pins), with LLVM 23', async () => {
    const manifest = await import('../../src/stack-check/index.js').then((m) => m.loadManifest(path.join(root, 'manifest', 'stack.yaml')));
    const pins = Object.values(manifest.stack.releases['10.0.0']!.pins!);
    for (const p of plan.packages) {
      const pn = p.atom.split('/')[1]!;
      const ebuild = await readFile(path.join(overlay, p.atom, `${pn}-${p.version === '7.2.4' ? '7.2.4-r1' : '10.0.0'}.ebuild`), 'utf8');
      const main = /^SRC_URI="\s*(https:\/\/\S+\/archive\/\S+)/m.exec(ebuild)?.[1];
      assert.ok(main, p.atom);
      assert.match(main, /\/archive\/(\$\{[A-Z_]+_COMMIT\}|rocm-\$\{PV\})\.tar\.gz$/, `${p.atom}: ${main}`);
      // A second source a component pins itself (rocm-validation-suite's mxDataGenerator) names its commit in the data.
      const own = manifest.components.find((c) => c.spec.atom === p.atom)!.spec.sources.flatMap((s) => (s.commit ? [s.commit] : []));
      for (const [, commit] of ebuild.matchAll(/^[A-Z_]+_COMMIT="([0-9a-f]{40})"$/gm)) {
        assert.ok(pins.includes(commit!) || own.includes(commit!), `${p.atom}: ${commit}`);
      }
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

  it('holds the seven packages TheRock does not build at 7.2.4: no downgrade, their 10.0 revision supersedes 7.2.4, built against the 10.0 libraries', async () => {
    const held = plan.packages.filter((p) => p.version === '7.2.4').map((p) => p.atom).sort();
    assert.deepEqual(held, [
      'dev-python/rocpydecode',
      'dev-util/rocm-validation-suite',
      'sci-libs/MIVisionX',
      'sci-libs/hipfort',
      'sci-libs/migraphx',
      'sci-libs/rocAL',
      'sci-libs/rpp',
    ]);
    for (const atom of held) {
      const pn = atom.split('/')[1]!;
      // One ebuild: 7.2.4's is dropped with its release, nothing at 10.0.0, no second ebuild of the slot.
      assert.deepEqual((await readdir(path.join(overlay, atom))).filter((f) => f.endsWith('.ebuild')), [`${pn}-7.2.4-r1.ebuild`], atom);
      const ebuild = await readFile(path.join(overlay, atom, `${pn}-7.2.4-r1.ebuild`), 'utf8');
      assert.match(ebuild, /^SLOT="0\/10\.0"$/m, atom);
      assert.match(ebuild.replace(/\n# (?!ROCm 10)/g, ' '), new RegExp(`\\n# ROCm 10\\.0\\.0 holds ${pn} at 7\\.2\\.4, its own version; TheRock does not build`), atom);
      if (/^ROCM_VERSION=/m.test(ebuild)) assert.match(ebuild, /^ROCM_VERSION=10\.0\.0$/m, atom);
      const message = await git(overlay, ['log', '-1', '--format=%B', '--', `${atom}/${pn}-7.2.4-r1.ebuild`], home);
      assert.match(message.replace(/\n/g, ' '), new RegExp(`ROCm 10\\.0\\.0 holds ${atom.replace('/', '\\/')} at 7\\.2\\.4, its own version: TheRock does not build`), atom);
      assert.match(message.replace(/\s+/g, ' '), /7\.2\.4 is dropped, superseded by it/, atom);
    }
    // Its dependencies are the 10.0 libraries: the stack's :${SLOT}, which the sub-slot makes 0/10.0.
    const migraphx = await readFile(path.join(overlay, 'sci-libs/migraphx/migraphx-7.2.4-r1.ebuild'), 'utf8');
    assert.match(migraphx, /^\tsci-libs\/rocBLAS:\$\{SLOT\}\[\$\{ROCM_USEDEP\}\]$/m);
    assert.match(migraphx, /^SRC_URI="\n\thttps:\/\/github\.com\/ROCm\/AMDMIGraphX\/archive\/rocm-\$\{PV\}\.tar\.gz -> \$\{P\}\.tar\.gz\n"$/m);
    const rocblas = await readFile(path.join(overlay, 'sci-libs/rocBLAS/rocBLAS-10.0.0.ebuild'), 'utf8');
    assert.match(rocblas, /^SLOT="0\/\$\(ver_cut 1-2\)"$/m);
    // The package sets say which version they mean.
    const set = await readFile(path.join(overlay, 'metadata/sets/rocm-gfx1100'), 'utf8');
    assert.match(set, /^# at its own version: sci-libs\/migraphx-7\.2\.4, built against ROCm 10\.0\.0 \(SLOT="0\/10\.0"\)$/m);
    // The pull request names them, with why, and gives them the release's evidence.
    const r = await runCli(['pr', 'body', '-o', overlay, '-r', `${start}..HEAD`, '--no-pkgcheck', '--json'], { home, cwd: work });
    assert.equal(r.code, 0, r.stderr);
    const body = JSON.parse(r.stdout) as { body: string; data: { notes: { release: { held: { atom: string; versions: string[]; slot: string }[]; evidence: { atom: string; version: string; text: string }[] } } } };
    assert.deepEqual(body.data.notes.release.held.map((h) => `${h.atom} ${h.versions.join(',')} ${h.slot}`).sort(), held.map((a) => `${a} 7.2.4-r1 0/10.0`));
    assert.match(body.body, /^- At their own version \(7\): ROCm 10\.0\.0 holds these packages at upstream's last release, built against its libraries with the release's sub-slot \(`SLOT="0\/10\.0"`\): /m);
    assert.match(body.data.notes.release.evidence.find((e) => e.atom === 'sci-libs/migraphx')!.text, /^none/);
    // Where sources moved: to the archives of the pinned commits, each package's record naming its commit.
    assert.match(body.body, /^- Sources: 21 packages moved from [^\n]* to ROCm\/rocm-libraries commit archives: /m);
    assert.match(body.data.notes.release.evidence.find((e) => e.atom === 'sci-libs/rocBLAS')!.text, /: ROCm\/rocm-libraries 8d1ae90eff7d projects\/rocblas, fetched by that commit$/);
    // lint judges each ebuild against its release: 7.2.4-r1 is 10.0.0's (its SLOT says so), not 7.2.4's.
    const lint = await runCli(['lint', '--overlay', overlay, '--no-shellcheck'], { home, cwd: work });
    assert.equal(lint.code, 0, lint.stdout + lint.stderr);
    assert.match(lint.stdout, /^48 ebuilds checked: 0 errors\/warnings/m);
    assert.doesNotMatch(lint.stdout, /evidence of ROCm 7\.2\.4/);
  });

  it('without --drop-old the held packages keep 7.2.4 for the 7.2.4 stack beside 10.0.0\'s revision, in another sub-slot', async () => {
    // (`keeping` was bumped by the test before this one.)
    const pn = 'migraphx';
    assert.deepEqual((await readdir(path.join(keeping, 'sci-libs', pn))).filter((f) => f.endsWith('.ebuild')).sort(), [`${pn}-7.2.4-r1.ebuild`, `${pn}-7.2.4.ebuild`]);
    assert.match(await readFile(path.join(keeping, 'sci-libs', pn, `${pn}-7.2.4.ebuild`), 'utf8'), /^SLOT="0\/\$\(ver_cut 1-2\)"$/m);
    assert.match(await readFile(path.join(keeping, 'sci-libs', pn, `${pn}-7.2.4-r1.ebuild`), 'utf8'), /^SLOT="0\/10\.0"$/m);
    const message = await git(keeping, ['log', '-1', '--format=%B', '--', `sci-libs/${pn}/${pn}-7.2.4-r1.ebuild`], home);
    assert.match(message.split('\n')[0]!, /^sci-libs\/migraphx: add 7\.2\.4-r1$/);
    assert.match(message.replace(/\s+/g, ' '), /7\.2\.4 stays, for the release it was written for/);
    const again = await bump(['10.0.0'], keeping);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already holds ROCm 10\.0\.0: nothing to do/);
  });

  it('changes nothing when run again', async () => {
    const head = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
    const again = await bump(['10.0.0', '--drop-old']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already holds ROCm 10\.0\.0: nothing to do/);
    assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), head);
  });
});
