import { strict as assert } from 'node:assert';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckReport } from '../../src/pr/check.js';
import { root } from '../helpers/project.js';
import { bareBin, commitAll, git, IDENTITY, prCli, prFixture, signed, stub, workClone, type PrFixture } from './support.js';

/**
 * pkgcheck runs through a stub on PATH, by the same lookup and arguments
 * users get. The stub records how it was called and prints what the real
 * pkgcheck 0.10.39 printed (JsonReporter) for the same kind of commit:
 * test/fixtures/pr/pkgcheck-0.10.39-commits.json was recorded with
 * `pkgcheck scan --commits origin/HEAD..HEAD -c +GitCommitMessageCheck,
 * +GitPkgCommitsCheck` (the real pkgcheck built in /work/tools, over a
 * Gentoo tree subset) on a bump 6.2.2 plus a commit adding rocBLAS 6.2.3
 * as "rocBLAS: version bump", signed off by its author only; the commit id
 * in it is replaced by @COMMIT@. Two constructed lines in the same shape
 * cover what that recording lacks: a commit outside the range and a
 * package the range does not touch.
 */

const RECORDED = path.join(root, 'test', 'fixtures', 'pr', 'pkgcheck-0.10.39-commits.json');
const EXTRA = `{"_style": {"InvalidCommitMessage": "commit 0123456789ab: no commit message"}}
{"dev-util": {"nvidia-cuda-toolkit": {"_error": {"SrcUriChecksumChange": "'cuda_12.6.1_560.35.03_linux.run' has different checksums across commits"}}}}`;
const STUB = [
  'printf \'%s\\n\' "$PWD" "$@" > "$PKGCHECK_LOG"',
  'sed "s/@COMMIT@/$(git rev-parse --short=7 HEAD)/g" "$PKGCHECK_RECORDED"',
  '[ -z "$PKGCHECK_EXTRA" ] || printf \'%s\\n\' "$PKGCHECK_EXTRA"',
  'echo "WARNING pkgcheck: running gentoo specific checks: GitCommitMessageCheck," >&2',
  'echo "                : GitPkgCommitsCheck" >&2',
].join('\n');

describe('pr check with pkgcheck on PATH', function () {
  this.timeout(300_000);
  let f: PrFixture;
  let dir: string;
  let bin: string;
  let log: string;
  let bad: string;

  before(async () => {
    f = await prFixture();
    dir = await workClone(f, 'pkgcheck');
    bin = path.join(f.work, 'pkgcheck-bin');
    log = path.join(f.work, 'pkgcheck.args');
    const pkg = path.join(dir, 'sci-libs/rocBLAS');
    await writeFile(path.join(pkg, 'rocBLAS-6.2.3.ebuild'), await readFile(path.join(pkg, 'rocBLAS-6.2.2.ebuild'), 'utf8'));
    const manifest = await readFile(path.join(pkg, 'Manifest'), 'utf8');
    await writeFile(path.join(pkg, 'Manifest'), `${manifest}${manifest.replaceAll('6.2.2', '6.2.3')}`);
    bad = await commitAll(dir, f.home, signed('rocBLAS: version bump'), { author: IDENTITY, committer: { name: 'Bob Committer', email: 'bob@example.org' } });
  });

  const withStub = async (script: string, extra = '') => {
    await stub(bin, 'pkgcheck', script);
    return { PATH: `${bin}:${process.env.PATH}`, PKGCHECK_LOG: log, PKGCHECK_RECORDED: RECORDED, PKGCHECK_EXTRA: extra };
  };

  it('runs scan --commits A..B with the git checks added and JsonReporter, in the overlay, naming the base remote', async () => {
    const env = await withStub(STUB, EXTRA);
    const r = await prCli(f, ['check', '--overlay', dir, '--json'], { env });
    assert.equal(r.code, 6, r.stderr);
    const args = (await readFile(log, 'utf8')).trimEnd().split('\n');
    assert.deepEqual(args, [dir, 'scan', '--commits', `${f.base}..${bad}`, '-c', '+GitCommitMessageCheck,+GitPkgCommitsCheck', '-R', 'JsonReporter', '--git-remote', 'origin']);
    const report = JSON.parse(r.stdout) as CheckReport;
    assert.equal(report.tools.pkgcheck.ran, true);
    assert.equal(report.tools.pkgcheck.results, 8);
    const by = (k: string) => report.results.filter((x) => x.keyword === k);
    // What both tools found is one result, marked as both's.
    assert.deepEqual(by('BadCommitSummary').map((x) => [x.commit, x.sources]), [[bad, ['rocm-ebuild', 'pkgcheck']], [bad, ['rocm-ebuild', 'pkgcheck']]]);
    assert.deepEqual(by('MissingSignOff').map((x) => [x.sources, x.pkgcheckMessage?.replace(/[0-9a-f]{7}/, 'ID')]), [[['rocm-ebuild', 'pkgcheck'], 'commit ID, missing sign-off: Bob Committer <bob@example.org>']]);
    // Only pkgcheck's: attributed to the range's last commit touching the package, or left loose.
    // (The default range is origin/master..HEAD: the whole bump and the bad commit.)
    assert.deepEqual(by('PythonCompatUpdate').map((x) => [x.commit, x.version, x.level, x.sources]), [[bad, '6.2.2', 'info', ['pkgcheck']], [bad, '6.2.3', 'info', ['pkgcheck']]]);
    assert.deepEqual(by('RedundantVersion').map((x) => [x.commit, x.message]), [[bad, 'slot(0) keywords are overshadowed by version: 6.2.3']]);
    assert.deepEqual(by('SrcUriChecksumChange').map((x) => [x.commit, x.category, x.package, x.sources]), [[undefined, 'dev-util', 'nvidia-cuda-toolkit', ['pkgcheck']]]);
    assert.deepEqual(by('InvalidCommitMessage'), [], 'a commit outside the range is left out');
    assert.ok(report.notes.some((n) => /pkgcheck reported 1 result about commits outside the range/.test(n)), report.notes.join('\n'));
  });

  it('says which tool said what in the text report', async () => {
    const env = await withStub(STUB);
    const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`], { env });
    assert.equal(r.code, 6);
    assert.match(r.stdout, /^ {2}commit [0-9a-f]{12}: MissingSignOff: missing sign-off: Bob Committer <bob@example\.org> \[error, [0-9a-f]{12}, rocm-ebuild\+pkgcheck\]$/m);
    assert.match(r.stdout, /^ {2}sci-libs\/rocBLAS-6\.2\.2: RedundantVersion: slot\(0\) keywords are overshadowed by version: 6\.2\.3 \[info, [0-9a-f]{12}, pkgcheck\]$/m);
    assert.match(r.stdout, /\(rocm-ebuild and pkgcheck\): 1 error, 0 warnings, 2 style, 3 info$/m);
  });

  it('when pkgcheck fails, reports why and keeps its own results', async () => {
    // What the real pkgcheck 0.10.39 printed when it could not re-apply its stash after a scan.
    const env = await withStub([
      'echo "WARNING pkgcheck: running gentoo specific checks: GitCommitMessageCheck," >&2',
      'echo "pkgcheck scan: error: git failed applying stash: metadata/md5-cache/dev-build/rocm-cmake-6.2.2 already exists, no checkout" >&2',
      'exit 2',
    ].join('\n'));
    const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`, '--json'], { env });
    assert.equal(r.code, 6);
    const report = JSON.parse(r.stdout) as CheckReport;
    assert.equal(report.tools.pkgcheck.ran, false);
    assert.match(report.tools.pkgcheck.reason ?? '', /^pkgcheck failed: pkgcheck scan: error: git failed applying stash: .* \(pkgcheck stashes uncommitted files while it scans: look at `git stash list`\)$/);
    assert.ok(report.results.every((x) => x.sources.length === 1 && x.sources[0] === 'rocm-ebuild'));
  });

  it('without pkgcheck on PATH, says once that only its own checks ran', async () => {
    const env = { PATH: await bareBin(path.join(f.work, 'bare-bin')) };
    const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`], { env });
    assert.equal(r.code, 6, r.stderr);
    assert.equal(r.stdout.match(/pkgcheck is not installed: only rocm-ebuild's checks ran/g)?.length, 1);
  });

  it('does not hand pkgcheck a worktree with uncommitted work (it would stash it)', async () => {
    const env = await withStub('echo should not run >&2; exit 3');
    await writeFile(path.join(dir, 'notes.txt'), 'work in progress\n');
    try {
      const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`, '--json'], { env });
      const report = JSON.parse(r.stdout) as CheckReport;
      assert.equal(report.tools.pkgcheck.ran, false);
      assert.match(report.tools.pkgcheck.reason ?? '', /the worktree has 1 uncommitted or untracked path, which pkgcheck --commits would stash/);
      assert.equal(await readFile(path.join(dir, 'notes.txt'), 'utf8'), 'work in progress\n');
    } finally {
      await rm(path.join(dir, 'notes.txt'));
    }
  });

  it('skips pkgcheck, saying why, when the range does not end at the checked-out HEAD', async () => {
    const env = await withStub('echo should not run >&2; exit 3');
    await git(dir, ['switch', '-q', '--detach', f.tip], f.home);
    try {
      const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..${bad}`, '--json'], { env });
      const report = JSON.parse(r.stdout) as CheckReport;
      assert.equal(report.tools.pkgcheck.ran, false);
      assert.match(report.tools.pkgcheck.reason ?? '', /pkgcheck scans the checked-out tree, and the range ends at [0-9a-f]{40}, not HEAD/);
    } finally {
      await git(dir, ['switch', '-q', 'rocm-6.2.2'], f.home);
    }
  });
});
