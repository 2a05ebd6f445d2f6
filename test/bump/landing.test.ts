import { strict as assert } from 'node:assert';
import path from 'node:path';
import { copyOverlay, fullStackFixture } from '../helpers/bumped-overlay.js';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';
import { synthesizeDistfiles } from '../helpers/stack-distfiles.js';
import { commitAllRecords, head, killGroup, startCli, status, stopAtBranchMove, waitForFile } from './support.js';

/**
 * The landing of a bump that removes whole packages (--drop-old with
 * treeclean commits), killed with SIGKILL at the exact git command that
 * moves the branch: the index and worktree must already agree with the
 * branch, so neither `git status` nor a `git commit -a` made before the next
 * run sees the removed packages' files, or the new ones, as deletions.
 */
describe('bump --drop-old with treeclean, killed as the branch moves (the full stack, real git)', function () {
  this.timeout(240_000);
  let work: string;

  before(async () => {
    work = await tempDir('rocm-ebuild-landing-');
  });
  after(() => removeDir(work));

  it('leaves branch, index and worktree agreeing: nothing staged, nothing for git commit -a, and the next run ends the landing', async () => {
    const shared = await fullStackFixture();
    await synthesizeDistfiles('7.2.4', shared.distdir, shared.home);
    const overlay = copyOverlay(shared.overlay, path.join(work, 'to-7.2.4'));
    const start = await head(overlay, shared.home);
    const args = ['bump', '7.2.4', '--overlay', overlay, '--drop-old', '--distdir', shared.distdir, '--offline'];
    const { env, marker } = await stopAtBranchMove(path.join(work, 'to-7.2.4'));
    const killed = startCli(args, { home: shared.home, cwd: work, detached: true, env });
    await waitForFile(marker, killed);
    killGroup(killed);
    await killed.done;

    const tip = await head(overlay, shared.home);
    assert.notEqual(tip, start, 'the branch had not moved');
    const subjects = (await git(overlay, ['log', '--format=%s', `${start}..${tip}`], shared.home)).split('\n');
    assert.ok(subjects.includes('sci-libs/hipSPARSELt: treeclean'), subjects.join('\n'));
    assert.deepEqual(await commitAllRecords(overlay, shared.home), []);
    assert.equal(await status(overlay, shared.home), '');
    assert.equal((await git(overlay, ['ls-files', 'sci-libs/hipSPARSELt', 'dev-util/rocm_bandwidth_test'], shared.home)).trim(), '');

    const again = await runCli(args, { home: shared.home, cwd: work });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr.replace(/\s*›\s*/g, ' '), /finished updating the worktree of the bump pid \d+ left midway/);
    assert.equal(await head(overlay, shared.home), tip);
    assert.equal(await status(overlay, shared.home), '');
  });
});
