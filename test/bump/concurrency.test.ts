import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, runCli, tempDir, removeDir } from '../helpers/project.js';
import { commitAllRecords, emptyCommits, head, killGroup, startCli, status, stopAtBranchMove, waitForFile } from './support.js';

/** What a bump leaves in .git only while it runs. */
function leftovers(overlay: string): string[] {
  return ['rocm-ebuild.lock', 'rocm-ebuild.landing', 'index.lock', 'rocm-ebuild.index', 'rocm-ebuild.index.lock'].filter((f) => existsSync(path.join(overlay, '.git', f)));
}

/**
 * A smudge filter on ebuilds that stops the checkout at the second ebuild it
 * writes: the worktree is then half updated, with git's index.lock held, which
 * is where a kill -9 hurts most. Once `paused` exists it passes content through.
 */
async function pauseCheckoutAtSecondEbuild(overlay: string, home: string): Promise<string> {
  const marker = path.join(overlay, '..', `${path.basename(overlay)}.paused`);
  const script = path.join(overlay, '..', `${path.basename(overlay)}.smudge.sh`);
  await writeFile(
    script,
    `n=$(cat "${marker}.count" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "${marker}.count"\n` +
      `if [ "$n" -eq 2 ] && [ ! -e "${marker}" ]; then : > "${marker}"; sleep 600; fi\n` +
      'exec cat\n',
  );
  await git(overlay, ['config', 'filter.pause.smudge', `sh ${script}`], home);
  await writeFile(path.join(overlay, '.git/info/attributes'), '*.ebuild filter=pause\n');
  return marker;
}

describe('bump: concurrent runs and interruptions (real processes, real signals)', function () {
  this.timeout(180_000);
  let small: SmallStackFixture;
  let work: string;
  const bumpArgs = (overlay: string, ...extra: string[]) => ['bump', '6.3.0', '--overlay', overlay, ...small.flags, ...extra];

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-concurrency-');
  });
  after(() => removeDir(work));

  it('two overlapping bumps: the second is refused while the first holds the lock, and no empty commit is made', async () => {
    const overlay = copyOverlay(small.overlay, path.join(work, 'race'));
    const start = await head(overlay, small.home);
    // The first run has read the overlay and planned when its distfiles are checked; freeze it there.
    const first = startCli(bumpArgs(overlay), { home: small.home });
    await first.waitFor(/^distfiles: /m);
    process.kill(first.pid, 'SIGSTOP');
    let second;
    try {
      second = await runCli(bumpArgs(overlay), { home: small.home });
    } finally {
      process.kill(first.pid, 'SIGCONT');
    }
    const firstResult = await first.done;
    assert.equal(firstResult.code, 0, firstResult.stderr);
    assert.equal(second.code, 4, `${second.stdout}\n${second.stderr}`);
    assert.match(second.stderr, new RegExp(`another rocm-ebuild \\(pid ${first.pid}\\) is working on this overlay`));
    const subjects = (await git(overlay, ['log', '--format=%s', `${start}..HEAD`], small.home)).trim().split('\n');
    assert.deepEqual(subjects.sort(), ['dev-libs/rocm-base: add 6.3.0', 'sci-libs/app: add 6.3.0', 'sci-libs/gpulib: add 6.3.0']);
    assert.deepEqual(await emptyCommits(overlay, small.home), []);
    assert.equal(await status(overlay, small.home), '');
    assert.deepEqual(leftovers(overlay), []);
  });

  it("a run whose branch moved meanwhile changes nothing, leaving the other change's index and worktree alone", async () => {
    const overlay = copyOverlay(small.overlay, path.join(work, 'moved'));
    // The same bump, done elsewhere (a co-maintainer's clone), arrives while ours is building.
    const elsewhere = copyOverlay(small.overlay, path.join(work, 'moved-elsewhere'));
    assert.equal((await runCli(bumpArgs(elsewhere), { home: small.home })).code, 0);
    const ours = startCli(bumpArgs(overlay), { home: small.home });
    await ours.waitFor(/^\[1\/3\] /m);
    process.kill(ours.pid, 'SIGSTOP');
    try {
      await git(overlay, ['pull', '-q', '--ff-only', elsewhere, 'main'], small.home);
    } finally {
      process.kill(ours.pid, 'SIGCONT');
    }
    const r = await ours.done;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /main moved while the bump ran; nothing was changed/);
    assert.equal(await head(overlay, small.home), await head(elsewhere, small.home));
    assert.equal(await status(overlay, small.home), '', 'the losing run touched the index or worktree');
    assert.equal((await git(overlay, ['for-each-ref', 'refs/rocm-ebuild'], small.home)).trim(), '');
    assert.deepEqual(leftovers(overlay), []);
  });

  for (const kind of ['new', 'existing'] as const) {
    it(`kill -9 right after the branch of ${kind === 'new' ? 'a new' : 'an existing'} overlay moved: index and worktree already agree with it (git commit -a records nothing), and the next run ends the landing`, async () => {
      const overlay = kind === 'new' ? path.join(work, 'killed-new') : copyOverlay(small.overlay, path.join(work, 'killed-moved'));
      const version = kind === 'new' ? '6.2.2' : '6.3.0';
      const { env: hooked, marker } = await stopAtBranchMove(path.join(work, `killed-${kind}`));
      const killed = startCli(['bump', version, '--overlay', overlay, ...small.flags], { home: small.home, detached: true, env: hooked });
      await waitForFile(marker, killed);
      killGroup(killed);
      await killed.done;
      const tip = await head(overlay, small.home);
      assert.ok(tip, 'the branch had not moved');
      // The window between the branch and the index is closed: nothing for a commit to record, no file staged as deleted.
      assert.deepEqual(await commitAllRecords(overlay, small.home), []);
      assert.equal(await status(overlay, small.home), '', 'the index and worktree lag behind the branch');

      const again = await runCli(['bump', version, '--overlay', overlay, ...small.flags], { home: small.home });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr.replace(/\s*›\s*/g, ' '), /finished updating the worktree of the bump pid \d+ left midway/);
      assert.equal(await head(overlay, small.home), tip);
      assert.equal(await status(overlay, small.home), '', 'files left staged');
      for (const f of (await git(overlay, ['ls-files'], small.home)).split('\n').filter(Boolean)) {
        assert.equal(await readFile(path.join(overlay, f), 'utf8'), await git(overlay, ['show', `HEAD:${f}`], small.home), f);
      }
      assert.deepEqual(leftovers(overlay), []);
    });
  }

  for (const stage of ['prepared', 'committed'] as const) {
    it(`kill -9 inside git update-ref (${stage === 'prepared' ? 'refs locked, the branch not yet moved' : 'the branch just moved'}) of a --drop-old bump: no file the bump keeps or adds is staged as deleted, and the next run ends the landing`, async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, `killed-drop-${stage}`));
      const before = await head(overlay, small.home);
      const { env: hooked, marker } = await stopAtBranchMove(path.join(work, `killed-drop-${stage}`), stage);
      const killed = startCli(bumpArgs(overlay, '--drop-old'), { home: small.home, detached: true, env: hooked });
      await waitForFile(marker, killed);
      killGroup(killed);
      await killed.done;
      const tip = await head(overlay, small.home);
      // Killed inside update-ref, git leaves its ref locks: a commit made now fails; what it would record is what is staged.
      const records = stage === 'committed' ? await commitAllRecords(overlay, small.home) : (await git(overlay, ['diff', '--cached', '--name-status', '--no-renames'], small.home)).trim().split('\n').filter(Boolean);
      if (stage === 'committed') {
        assert.notEqual(tip, before, 'the branch had not moved');
        // Index and worktree moved with the branch: a commit made now records nothing, least of all the dropped versions' successors as deleted.
        assert.deepEqual(records, []);
        assert.equal(await status(overlay, small.home), '', 'the index and worktree lag behind the branch');
      } else {
        assert.equal(tip, before, 'the branch moved');
        // The bump's own changes staged on the old branch: the 6.3.0 ebuilds added, the 6.2.2 ones deleted, nothing else.
        const deleted = records.filter((r) => r.startsWith('D\t')).map((r) => r.slice(2)).sort();
        assert.deepEqual(deleted, ['dev-libs/rocm-base/rocm-base-6.2.2.ebuild', 'sci-libs/app/app-6.2.2.ebuild', 'sci-libs/gpulib/gpulib-6.2.2.ebuild']);
        for (const r of records.filter((x) => !x.startsWith('D\t'))) assert.doesNotMatch(r, /-6\.2\.2\.ebuild$/, r);
      }
      const again = await runCli(bumpArgs(overlay, '--drop-old'), { home: small.home });
      assert.equal(again.code, 0, again.stderr);
      const subjects = (await git(overlay, ['log', '--format=%s', `${before}..HEAD`], small.home)).trim().split('\n').sort();
      assert.deepEqual(subjects, ['dev-libs/rocm-base: add 6.3.0, drop 6.2.2', 'sci-libs/app: add 6.3.0, drop 6.2.2', 'sci-libs/gpulib: add 6.3.0, drop 6.2.2']);
      assert.equal(await status(overlay, small.home), '', 'files left staged');
      for (const f of (await git(overlay, ['ls-files'], small.home)).split('\n').filter(Boolean)) {
        assert.equal(await readFile(path.join(overlay, f), 'utf8'), await git(overlay, ['show', `HEAD:${f}`], small.home), f);
      }
      assert.deepEqual(leftovers(overlay), []);
    });
  }

  it('kill -9 while a new overlay is being checked out: the next run completes it', async () => {
    const overlay = path.join(work, 'killed-new-checkout');
    const marker = path.join(work, 'killed-new-checkout.paused');
    const script = path.join(work, 'killed-new-checkout.smudge.sh');
    await writeFile(
      script,
      `n=$(cat "${marker}.count" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "${marker}.count"\n` +
        `if [ "$n" -eq 2 ] && [ ! -e "${marker}" ]; then : > "${marker}"; sleep 600; fi\nexec cat\n`,
    );
    const attributes = path.join(work, 'killed-new-checkout.attributes');
    await writeFile(attributes, '*.ebuild filter=pause\n');
    const env = {
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'filter.pause.smudge',
      GIT_CONFIG_VALUE_0: `sh ${script}`,
      GIT_CONFIG_KEY_1: 'core.attributesFile',
      GIT_CONFIG_VALUE_1: attributes,
    };
    const killed = startCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags], { home: small.home, detached: true, env });
    await waitForFile(marker, killed);
    killGroup(killed);
    await killed.done;
    const again = await runCli(['bump', '6.2.2', '--overlay', overlay, ...small.flags], { home: small.home });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await status(overlay, small.home), '', 'files left staged');
    assert.deepEqual(leftovers(overlay), []);
  });

  for (const mode of ['commit', 'no-commit'] as const) {
    it(`kill -9 while the worktree is being updated (${mode === 'commit' ? 'before the branch moves' : '--no-commit'}): the next run takes over, undoes it and bumps`, async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, `killed-${mode}`));
      const start = await head(overlay, small.home);
      const marker = await pauseCheckoutAtSecondEbuild(overlay, small.home);
      const extra = mode === 'no-commit' ? ['--no-commit'] : [];
      const killed = startCli(bumpArgs(overlay, ...extra), { home: small.home, detached: true });
      await waitForFile(marker, killed);
      killGroup(killed);
      await killed.done;
      assert.ok(existsSync(path.join(overlay, '.git/index.lock')), 'the checkout was not interrupted midway');
      // The branch moves only once the index and worktree are there.
      assert.equal(await head(overlay, small.home), start);
      // The user's index is untouched: nothing is staged, least of all a deletion.
      assert.equal((await git(overlay, ['diff', '--cached', '--name-only'], small.home)).trim(), '', 'changes were staged');

      const again = await runCli(bumpArgs(overlay, ...extra), { home: small.home });
      assert.equal(again.code, 0, again.stderr);
      again.stderr = again.stderr.replace(/\s*›\s*/g, ' '); // oclif wraps warnings
      assert.match(again.stderr, new RegExp(`taking over the lock of rocm-ebuild pid ${killed.pid}, which is no longer running`));
      assert.deepEqual(leftovers(overlay), []);
      assert.equal((await git(overlay, ['for-each-ref', 'refs/rocm-ebuild'], small.home)).trim(), '');
      if (mode === 'commit') {
        assert.match(again.stderr, /undid the worktree update of the bump pid \d+, stopped before main moved; the overlay is as it was/);
        assert.match(again.stdout, /3 commits on main/);
        assert.equal(await status(overlay, small.home), '');
        const files = (await git(overlay, ['ls-files'], small.home)).split('\n');
        for (const f of ['sci-libs/app/app-6.3.0.ebuild', 'sci-libs/gpulib/gpulib-6.3.0.ebuild', 'dev-libs/rocm-base/rocm-base-6.3.0.ebuild']) {
          assert.ok(files.includes(f), f);
          assert.equal(await readFile(path.join(overlay, f), 'utf8'), await git(overlay, ['show', `HEAD:${f}`], small.home));
        }
        assert.deepEqual(await emptyCommits(overlay, small.home), []);
      } else {
        assert.match(again.stderr, /rolled back the --no-commit changes the run pid \d+ left midway/);
        assert.equal(await head(overlay, small.home), start);
        assert.equal((await git(overlay, ['diff', '--cached', '--name-only'], small.home)).trim(), '', 'changes were staged');
        const changed = (await status(overlay, small.home)).split('\n').sort();
        assert.deepEqual(changed, [
          ' M dev-libs/rocm-base/Manifest',
          ' M sci-libs/app/Manifest',
          ' M sci-libs/gpulib/Manifest',
          '?? dev-libs/rocm-base/rocm-base-6.3.0.ebuild',
          '?? sci-libs/app/app-6.3.0.ebuild',
          '?? sci-libs/gpulib/gpulib-6.3.0.ebuild',
        ]);
      }
    });
  }
});
