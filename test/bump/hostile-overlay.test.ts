import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, runCli, tempDir, removeDir } from '../helpers/project.js';
import { head, killGroup, startCli, status, waitForFile } from './support.js';

/**
 * An overlay someone else shaped: a profiles/repo_name that is not a name, the
 * package sets' files linked out of the overlay or replaced by a FIFO, and a
 * signal while bump waits. Each is refused or ends the run, exit code and
 * message as documented, before anything is written.
 */
describe('bump: hostile overlay files (package sets, repo_name, FIFOs, signals)', function () {
  this.timeout(180_000);
  let small: SmallStackFixture;
  let work: string;
  let outside: string;

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-hostile-');
    outside = path.join(work, 'outside');
    await mkdir(outside);
  });
  after(() => removeDir(work));

  const bump = (overlay: string) => runCli(['bump', '6.3.0', '--overlay', overlay, ...small.flags], { home: small.home, killAfterMs: 60_000 });
  /** A copy of the 6.2.2 overlay with `change` committed; its tip. */
  const prepared = async (name: string, change: (overlay: string) => Promise<void>) => {
    const overlay = copyOverlay(small.overlay, path.join(work, name));
    await change(overlay);
    await git(overlay, ['add', '-A'], small.home);
    await git(overlay, ['commit', '-q', '-m', name], small.home);
    return { overlay, tip: await head(overlay, small.home) };
  };
  const unchanged = async (overlay: string, tip: string | undefined) => {
    assert.equal(await head(overlay, small.home), tip);
    assert.equal(await status(overlay, small.home), '');
    assert.ok(!existsSync(path.join(overlay, '.git/rocm-ebuild.lock')), 'the lock was left');
  };
  const refused = (r: { code: number; stdout: string; stderr: string }) => {
    assert.equal(r.code, 4, r.stdout + r.stderr);
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at .*\.js:\d+/i);
    return r.stderr.replace(/\s*›\s*/g, ' ');
  };

  for (const [what, text, line, reason] of [
    ['a newline and an INI section', 'test\n[evil]\nclass = portage.sets.shell.CommandOutputSet\ncommand = touch /tmp/owned\n', 2, /"\[evil\]": profiles\/repo_name holds one line, the name/],
    ['a version-like ending', 'rocm-7_rc1\n', 1, /"rocm-7_rc1" is not a repository name PMS allows: it ends in "-7_rc1", which reads as a version/],
    ['a space and a bracket', 'my overlay]\n', 1, /is not a repository name PMS allows: a repository name holds only A-Z a-z 0-9 _ -/],
  ] as const) {
    it(`profiles/repo_name with ${what}: refused naming file:line and the fix; sets.conf is never written`, async () => {
      const { overlay, tip } = await prepared(`repo-name-${line}-${what.split(' ')[1]}`, (o) => writeFile(path.join(o, 'profiles/repo_name'), text));
      const setsBefore = await readFile(path.join(overlay, 'sets.conf'), 'utf8');
      const err = refused(await bump(overlay));
      assert.match(err, new RegExp(`${path.join(overlay, 'profiles/repo_name').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:${line}: `));
      assert.match(err, reason);
      assert.match(err, /nothing was written/);
      assert.match(err, /hint: write the overlay's name alone on the first line/);
      await unchanged(overlay, tip);
      assert.equal(await readFile(path.join(overlay, 'sets.conf'), 'utf8'), setsBefore);
    });
  }

  for (const rel of ['sets.conf', 'metadata/sets', 'metadata/rocm-ebuild.conf']) {
    it(`${rel} a committed symlink out of the overlay: refused (exit 4) naming it, not an internal error`, async () => {
      const target = path.join(outside, path.basename(rel));
      const { overlay, tip } = await prepared(`linked-${path.basename(rel)}`, async (o) => {
        execFileSync('cp', ['-a', path.join(o, rel), target]);
        await git(o, ['rm', '-r', '-q', rel], small.home);
        await symlink(target, path.join(o, rel));
      });
      const err = refused(await bump(overlay));
      assert.match(err, new RegExp(`${rel.replace(/[./]/g, '\\$&')}.*rocm-ebuild reads and writes only inside the overlay`));
      await unchanged(overlay, tip);
    });
  }

  for (const rel of ['sets.conf', 'metadata/rocm-ebuild.conf']) {
    it(`an untracked FIFO at ${rel}: refused at once naming it (never opened blocking), nothing written`, async () => {
      const { overlay, tip } = await prepared(`fifo-${path.basename(rel)}`, async (o) => {
        await git(o, ['rm', '-q', rel], small.home);
      });
      execFileSync('mkfifo', [path.join(overlay, rel)]);
      const started = Date.now();
      const err = refused(await bump(overlay));
      assert.ok(Date.now() - started < 60_000);
      assert.match(err, new RegExp(`${path.join(overlay, rel).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: a FIFO, not a regular file; rocm-ebuild reads only regular files of the overlay`));
      assert.equal(await head(overlay, small.home), tip);
      assert.ok(!existsSync(path.join(overlay, '.git/rocm-ebuild.lock')), 'the lock was left');
    });
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} before the lock is taken (git's test signature hangs): bump ends within seconds, exit ${signal === 'SIGINT' ? 130 : 143}, nothing written`, async () => {
      const overlay = copyOverlay(small.overlay, path.join(work, `signal-${signal}`));
      const tip = await head(overlay, small.home);
      const marker = path.join(work, `signal-${signal}.signing`);
      const gpg = path.join(work, `signal-${signal}.gpg.sh`);
      await writeFile(gpg, `#!/bin/sh\n: > '${marker}'\nexec sleep 600\n`, { mode: 0o755 });
      const env = { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'commit.gpgSign', GIT_CONFIG_VALUE_0: 'true', GIT_CONFIG_KEY_1: 'gpg.program', GIT_CONFIG_VALUE_1: gpg };
      const run = startCli(['bump', '6.3.0', '--overlay', overlay, ...small.flags], { home: small.home, detached: true, env });
      try {
        await waitForFile(marker, run);
        const sent = Date.now();
        process.kill(run.pid, signal);
        const r = await run.done;
        assert.ok(Date.now() - sent < 10_000, `took ${Date.now() - sent} ms`);
        assert.equal(r.code, signal === 'SIGINT' ? 130 : 143, r.stderr);
        assert.match(r.stderr, new RegExp(`interrupted by ${signal}; the overlay is unchanged`));
      } finally {
        killGroup(run); // the hanging gpg stand-in
      }
      await unchanged(overlay, tip);
    });
  }
});
