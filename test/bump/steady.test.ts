import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';
import { head, killGroup, startCli, status, treeDigest } from './support.js';

/**
 * The days after the first bump: a manifest fix regenerates the release the
 * overlay holds as a new revision; a hand fix survives the next bump; one
 * package moves alone; a downgrade is asked for, not done by accident.
 */

const GPULIB = 'sci-libs/gpulib/gpulib-6.2.2.ebuild';
const PATCH_LINE = 'PATCHES=( "${FILESDIR}/${PN}-6.2.2-fix-gcc15.patch" )';

/** A copy of the fixture's manifest with one more CMake define for gpulib: the "manifest fix". */
async function fixedManifest(small: SmallStackFixture, into: string): Promise<string> {
  execFileSync('cp', ['-a', small.manifest, into]);
  const file = path.join(into, 'components/gpulib.yaml');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace('    BUILD_BENCHMARK: { use: benchmark }\n', '    BUILD_BENCHMARK: { use: benchmark }\n    GPULIB_FIX_GCC15: "ON"\n'));
  return into;
}

/** Commit a hand fix to gpulib-6.2.2: a PATCHES line and the patch in files/. */
async function handFix(overlay: string, home: string, line = PATCH_LINE): Promise<void> {
  const file = path.join(overlay, GPULIB);
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace('\nsrc_configure() {', `\n${line}\n\nsrc_configure() {`));
  await mkdir(path.join(overlay, 'sci-libs/gpulib/files'), { recursive: true });
  await writeFile(path.join(overlay, 'sci-libs/gpulib/files/gpulib-6.2.2-fix-gcc15.patch'), '--- a/x\n+++ b/x\n');
  await git(overlay, ['add', '-A'], home);
  await git(overlay, ['commit', '-q', '-s', '-m', 'sci-libs/gpulib: fix build with GCC 15'], home);
}

async function subjects(overlay: string, home: string, since: string): Promise<string[]> {
  return (await git(overlay, ['log', '--reverse', '--format=%s', `${since}..HEAD`], home)).trim().split('\n').filter(Boolean);
}

describe('bump after the first bump: revisions, named packages, hand edits, downgrades', function () {
  this.timeout(180_000);
  let small: SmallStackFixture;
  let work: string;
  let fixed: string;
  const flags = (manifest?: string) => {
    const f = [...small.flags];
    if (manifest) f[f.indexOf('--manifest') + 1] = manifest;
    return f;
  };
  const bump = (version: string, overlay: string, extra: string[] = [], manifest?: string) =>
    runCli(['bump', version, '--overlay', overlay, ...flags(manifest), ...extra], { home: small.home });

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-steady-');
    fixed = await fixedManifest(small, path.join(work, 'manifest-fixed'));
  });
  after(() => removeDir(work));

  describe('a manifest fix: the release the overlay holds gets a new revision', () => {
    it('--dry-run shows the revision bump and its diff, and changes nothing', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'revbump-dry'));
      const before = await treeDigest(overlay);
      const r = await bump('6.2.2', overlay, ['--dry-run'], fixed);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /revbump sci-libs\/gpulib-6\.2\.2-r1 \(replaces 6\.2\.2\)/);
      assert.match(r.stdout, /^\s+\+\s+-DGPULIB_FIX_GCC15=ON$/m);
      assert.match(r.stdout, /0 to add, 1 revision bump, 2 kept, 0 dropped/);
      assert.equal(await treeDigest(overlay), before);
      const json = JSON.parse((await bump('6.2.2', overlay, ['--dry-run', '--json'], fixed)).stdout) as { packages: { atom: string; action: string; version: string; replaces?: string }[] };
      const { evidence: _evidence, ...gpulib } = json.packages.find((p) => p.atom === 'sci-libs/gpulib') as Record<string, unknown>;
      assert.deepEqual(gpulib, {
        atom: 'sci-libs/gpulib',
        version: '6.2.2-r1',
        action: 'revbump',
        newPackage: false,
        replaces: '6.2.2',
        distfiles: [{ name: 'gpulib-6.2.2.tar.gz', urls: ['https://github.com/ROCm/gpulib/archive/rocm-6.2.2.tar.gz'] }],
      });
    });

    it('writes gpulib-6.2.2-r1 and drops 6.2.2 in one commit that says why; the others are untouched; a second run does nothing', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'revbump'));
      const start = await head(overlay, small.home);
      const r = await bump('6.2.2', overlay, [], fixed);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await subjects(overlay, small.home, start), ['sci-libs/gpulib: add 6.2.2-r1']);
      const body = await git(overlay, ['log', '-1', '--format=%b'], small.home);
      assert.match(body, /What rocm-ebuild generates for 6\.2\.2 changed since 6\.2\.2 was written/);
      assert.match(body, /^ {2}\+ -DGPULIB_FIX_GCC15=ON$/m);
      const files = (await git(overlay, ['show', '--no-renames', '--name-status', '--format=', 'HEAD'], small.home)).trim().split('\n').sort();
      assert.deepEqual(files, ['A\tsci-libs/gpulib/gpulib-6.2.2-r1.ebuild', 'D\tsci-libs/gpulib/gpulib-6.2.2.ebuild']);
      assert.match(await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.2.2-r1.ebuild'), 'utf8'), /-DGPULIB_FIX_GCC15=ON/);
      const again = await bump('6.2.2', overlay, [], fixed);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /already holds ROCm 6\.2\.2: nothing to do/);
      assert.equal(await head(overlay, small.home), (await git(overlay, ['rev-parse', 'HEAD'], small.home)).trim());
      assert.deepEqual(await subjects(overlay, small.home, start), ['sci-libs/gpulib: add 6.2.2-r1']);
    });

    it('a hand fix of the release is merged into the new revision, and said so', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'revbump-carry'));
      await handFix(overlay, small.home);
      const start = await head(overlay, small.home);
      const r = await bump('6.2.2', overlay, [], fixed);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /gpulib-6\.2\.2-r1: keeps the changes made by hand to 6\.2\.2/);
      const text = await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.2.2-r1.ebuild'), 'utf8');
      assert.ok(text.includes(PATCH_LINE), text);
      assert.match(text, /-DGPULIB_FIX_GCC15=ON/);
      assert.ok(existsSync(path.join(overlay, 'sci-libs/gpulib/files/gpulib-6.2.2-fix-gcc15.patch')), 'the patch the new revision uses was removed');
      assert.match(await git(overlay, ['log', '-1', '--format=%b'], small.home), /Keeps the changes made by hand to 6\.2\.2/);
      assert.deepEqual(await subjects(overlay, small.home, start), ['sci-libs/gpulib: add 6.2.2-r1']);
    });
  });

  describe('packages named on the command line', () => {
    it('bumps only those (a short name works), and touches nothing else', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'named'));
      const start = await head(overlay, small.home);
      const r = await bump('6.3.0', overlay, ['gpulib']);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(await subjects(overlay, small.home, start), ['sci-libs/gpulib: add 6.3.0']);
      assert.deepEqual((await readdir(path.join(overlay, 'sci-libs/app'))).filter((f) => f.endsWith('.ebuild')), ['app-6.2.2.ebuild']);
      const both = await bump('6.3.0', overlay, ['sci-libs/app', 'dev-libs/rocm-base', '--drop-old']);
      assert.equal(both.code, 0, both.stderr);
      assert.deepEqual((await subjects(overlay, small.home, start)).slice(1), ['dev-libs/rocm-base: add 6.3.0, drop 6.2.2', 'sci-libs/app: add 6.3.0, drop 6.2.2']);
      assert.ok(existsSync(path.join(overlay, GPULIB)), 'gpulib was not named, its 6.2.2 must stay');
    });

    it('a typo is refused with the nearest names, before anything is read', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'typo'));
      const before = await treeDigest(overlay);
      const r = await bump('6.3.0', overlay, ['gpulb', 'sci-libs/ap']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /"gpulb" is not known; did you mean sci-libs\/gpulib\?/);
      assert.match(r.stderr, /"sci-libs\/ap" is not known; did you mean sci-libs\/app/);
      const bad = await bump('6.3.0', overlay, ['../../etc']);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /"\.\.\/\.\.\/etc" is not a package name/);
      assert.equal(await treeDigest(overlay), before);
    });
  });

  describe('hand edits and --drop-old', () => {
    it('a hand fix is carried into the new version; the patch it uses stays', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'carry'));
      await handFix(overlay, small.home);
      const start = await head(overlay, small.home);
      const r = await bump('6.3.0', overlay, ['--drop-old']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /gpulib-6\.3\.0: keeps the changes made by hand to 6\.2\.2/);
      assert.ok((await subjects(overlay, small.home, start)).includes('sci-libs/gpulib: add 6.3.0, drop 6.2.2'));
      const text = await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.3.0.ebuild'), 'utf8');
      assert.ok(text.includes(PATCH_LINE));
      assert.match(text, /-DGPU_TARGETS=/, 'the 6.3.0 change of the generated text is there too');
      assert.ok(existsSync(path.join(overlay, 'sci-libs/gpulib/files/gpulib-6.2.2-fix-gcc15.patch')));
      assert.equal(await status(overlay, small.home), '');
    });

    it('a hand fix that does not apply is refused with its diff, nothing written; --discard-local drops it and the patch no ebuild uses', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'conflict'));
      // A hand change of the very line 6.3.0 changes (AMDGPU_TARGETS becomes GPU_TARGETS): no merge can keep both.
      const file = path.join(overlay, GPULIB);
      const text = await readFile(file, 'utf8');
      await writeFile(file, text.replace('-DAMDGPU_TARGETS="$(get_amdgpu_flags)"', '-DAMDGPU_TARGETS="$(get_amdgpu_flags)" -DHAND=1'));
      await mkdir(path.join(overlay, 'sci-libs/gpulib/files'));
      await writeFile(path.join(overlay, 'sci-libs/gpulib/files/unused fix\n.patch'), 'x\n');
      await git(overlay, ['add', '-A'], small.home);
      await git(overlay, ['commit', '-q', '-s', '-m', 'sci-libs/gpulib: hand change'], small.home);
      const before = await treeDigest(overlay);
      const r = await bump('6.3.0', overlay, ['--drop-old']);
      assert.equal(r.code, 4, r.stdout + r.stderr);
      assert.match(r.stderr, /sci-libs\/gpulib-6\.2\.2: changed by hand, and the change does not apply to 6\.3\.0/);
      assert.match(r.stderr, /^\s+\+\s+-DAMDGPU_TARGETS="\$\(get_amdgpu_flags\)" -DHAND=1$/m);
      assert.match(r.stderr, /--discard-local/);
      assert.equal(await treeDigest(overlay), before, 'a refused bump changed the overlay');

      const start = await head(overlay, small.home);
      const d = await bump('6.3.0', overlay, ['--drop-old', '--discard-local']);
      assert.equal(d.code, 0, d.stderr);
      assert.match(d.stdout, /gpulib-6\.2\.2: changes made by hand discarded \(--discard-local\)/);
      assert.match(d.stdout, /sci-libs\/gpulib: removed files\/unused fix\n\.patch: no remaining ebuild uses it/);
      assert.ok(!existsSync(path.join(overlay, 'sci-libs/gpulib/files')), 'the unused patch is still there');
      const sha = (await git(overlay, ['log', '--format=%H %s', `${start}..HEAD`], small.home)).split('\n').find((l) => l.endsWith('sci-libs/gpulib: add 6.3.0, drop 6.2.2'))!.split(' ')[0]!;
      const body = await git(overlay, ['log', '-1', '--format=%b', sha], small.home);
      assert.match(body, /Drops the changes made by hand to 6\.2\.2 \(--discard-local\)/);
      assert.match(body, /No remaining ebuild uses files\/unused fix\n\.patch; removed\./);
      assert.match(await git(overlay, ['show', '--no-renames', '--name-status', '--format=', sha], small.home), /^D\t"sci-libs\/gpulib\/files\/unused fix\\n\.patch"$/m);
    });

    it('--drop-old drops an older ebuild whose hand edit a newer one already carries, and says the new one keeps it', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'carried-twice'));
      await handFix(overlay, small.home);
      // gpulib alone to 6.3.0: the edit is carried, 6.2.2 stays.
      const one = await bump('6.3.0', overlay, ['gpulib']);
      assert.equal(one.code, 0, one.stderr);
      assert.ok((await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.3.0.ebuild'), 'utf8')).includes(PATCH_LINE));
      // A manifest fix: 6.3.0 gets -r1 (carrying the edit again), and --drop-old drops 6.2.2, whose edit -r1 has.
      const plan = await bump('6.3.0', overlay, ['--drop-old', '--dry-run'], fixed);
      assert.equal(plan.code, 0, plan.stderr);
      assert.match(plan.stdout, /gpulib-6\.3\.0-r1: keeps the changes made by hand to 6\.3\.0/);
      const start = await head(overlay, small.home);
      const r = await bump('6.3.0', overlay, ['--drop-old'], fixed);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /discarded|carried to no newer ebuild/);
      assert.ok((await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.3.0-r1.ebuild'), 'utf8')).includes(PATCH_LINE));
      assert.ok(!existsSync(path.join(overlay, GPULIB)), '6.2.2 was not dropped');
      const body = await git(overlay, ['log', '--format=%b', `${start}..HEAD`], small.home);
      assert.doesNotMatch(body, /Drops the changes made by hand/);
    });

    it('--discard-local never says it keeps and drops the same hand edit', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'carried-discard'));
      await handFix(overlay, small.home);
      assert.equal((await bump('6.3.0', overlay, ['gpulib'])).code, 0);
      const start = await head(overlay, small.home);
      const r = await bump('6.3.0', overlay, ['--drop-old', '--discard-local'], fixed);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /keeps the changes made by hand to 6\.3\.0/);
      assert.doesNotMatch(r.stdout, /changes made by hand discarded/);
      const body = await git(overlay, ['log', '--format=%b', `${start}..HEAD`], small.home);
      assert.match(body, /Keeps the changes made by hand/);
      assert.doesNotMatch(body, /Drops the changes made by hand/);
    });

    it('shellcheck judges what bump writes: a carried hand edit it warns about is refused, nothing written; a clean bump says what checked it', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'shellcheck'));
      // Unquoted: shellcheck SC2206 (word splitting), which lint --overlay fails on.
      await handFix(overlay, small.home, 'PATCHES=( "${FILESDIR}"/${PN}-6.2.2-fix-gcc15.patch )');
      const before = await treeDigest(overlay);
      const r = await bump('6.3.0', overlay, ['--drop-old']);
      assert.equal(r.code, 6, r.stdout + r.stderr);
      assert.match(r.stderr, /^  sci-libs\/gpulib\/gpulib-6\.3\.0\.ebuild:\d+: shellcheck SC2206: Quote to prevent word splitting/m);
      assert.equal(await treeDigest(overlay), before, 'a refused bump changed the overlay');
      const clean = copyOverlay(small.overlay, path.join(work, 'shellcheck-clean'));
      const ok = await bump('6.3.0', clean, ['gpulib']);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /^checked: 1 ebuild with rocm-ebuild's checks, bash -n and shellcheck: 0 errors\/warnings, \d+ style\/info findings?/m);
    });

    it('a second clone without the record is refused with the git commands that bring it; run as printed, the bump carries the edit', async () => {
      const first = copyOverlay(small.overlay, path.join(work, 'record-first'));
      const second = path.join(work, 'record-second');
      await git(work, ['clone', '-q', first, second], small.home);
      await handFix(second, small.home);
      const r = await bump('6.3.0', second, ['--drop-old']);
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /this clone has no refs\/rocm-ebuild-generated/);
      const push = /^ {4}(git -C <the clone that bumped> push origin .*)$/m.exec(r.stderr)?.[1];
      const fetch = /^ {4}(git -C \S+ fetch origin .*)$/m.exec(r.stderr)?.[1];
      assert.ok(push && fetch, r.stderr);
      // The first clone publishes the record as the printed push would (origin is that clone here), the second fetches it as printed.
      const [pushSrc, pushDst] = push.split(' ').at(-1)!.split(':');
      await git(first, ['update-ref', pushDst!, pushSrc!], small.home);
      execFileSync('bash', ['-c', fetch], { env: { ...process.env, HOME: small.home } });
      const again = await bump('6.3.0', second, ['--drop-old']);
      assert.equal(again.code, 0, again.stderr);
      assert.ok((await readFile(path.join(second, 'sci-libs/gpulib/gpulib-6.3.0.ebuild'), 'utf8')).includes(PATCH_LINE));
    });

    it('files/ entries a remaining ebuild might use through a pattern are kept', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'glob'));
      await handFix(overlay, small.home, 'PATCHES=( "${FILESDIR}"/*.patch )');
      const r = await bump('6.3.0', overlay, ['--drop-old']);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(existsSync(path.join(overlay, 'sci-libs/gpulib/files/gpulib-6.2.2-fix-gcc15.patch')));
    });
  });

  describe('downgrades', () => {
    it('a release older than what the overlay holds is refused without --allow-downgrade', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'down'));
      assert.equal((await bump('6.3.0', overlay, ['--drop-old'])).code, 0);
      const before = await treeDigest(overlay);
      const r = await bump('6.2.2', overlay);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /the overlay holds versions newer than 6\.2\.2 of 3 packages; adding 6\.2\.2 would be a downgrade/);
      assert.match(r.stderr, /sci-libs\/gpulib: 6\.3\.0/);
      assert.equal(await treeDigest(overlay), before);
      const ok = await bump('6.2.2', overlay, ['--allow-downgrade']);
      assert.equal(ok.code, 0, ok.stderr);
      assert.ok(existsSync(path.join(overlay, GPULIB)));
    });
  });

  describe('a second process and kill -9 during a revision bump', () => {
    it('kill -9 at any point: the branch and the record of what was generated move together or not at all', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'killed'));
      const start = await head(overlay, small.home);
      const recordBefore = (await git(overlay, ['rev-parse', 'refs/rocm-ebuild-generated'], small.home)).trim();
      const killed = startCli(['bump', '6.2.2', '--overlay', overlay, ...flags(fixed)], { home: small.home, detached: true });
      await killed.waitFor(/^\[1\/1\] /m);
      killGroup(killed);
      await killed.done;
      const afterKill = await head(overlay, small.home);
      const recordAfter = (await git(overlay, ['rev-parse', 'refs/rocm-ebuild-generated'], small.home)).trim();
      assert.equal(afterKill === start, recordAfter === recordBefore, 'the branch and the record moved apart');
      const again = await bump('6.2.2', overlay, [], fixed);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(await subjects(overlay, small.home, start), ['sci-libs/gpulib: add 6.2.2-r1']);
      assert.equal(await status(overlay, small.home), '');
      const third = await bump('6.2.2', overlay, [], fixed);
      assert.match(third.stdout, /nothing to do/);
    });

    it('a second bump while the first holds the lock is refused, and the first lands its revision', async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, 'second'));
      const first = startCli(['bump', '6.2.2', '--overlay', overlay, ...flags(fixed)], { home: small.home });
      await first.waitFor(/^\[1\/1\] /m);
      process.kill(first.pid, 'SIGSTOP');
      let second;
      try {
        second = await bump('6.2.2', overlay, [], fixed);
      } finally {
        process.kill(first.pid, 'SIGCONT');
      }
      assert.equal((await first.done).code, 0);
      assert.equal(second.code, 4, second.stderr);
      assert.match(second.stderr, /another rocm-ebuild \(pid \d+\) is working on this overlay/);
      assert.ok(existsSync(path.join(overlay, 'sci-libs/gpulib/gpulib-6.2.2-r1.ebuild')));
    });
  });
});
