import { strict as assert } from 'node:assert';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckReport } from '../../src/pr/check.js';
import { bareBin, commitAll, git, IDENTITY, prCli, prFixture, signed, stub, workClone, type PrFixture } from './support.js';

/**
 * pkgcheck cannot be installed here (no PyPI), so a stub stands in for it on
 * PATH, through the same lookup and arguments users get: it records how it
 * was called and prints JsonReporter lines in the shape pkgcheck writes them
 * (one JSON object per result, nested category → package → version →
 * "_<level>" → keyword → message; commit results at the top level, their
 * message starting "commit <abbreviated id>").
 */

const RECORDED = (short: string) => `{"_style": {"BadCommitSummary": "commit ${short}, summary missing 'sci-libs/rocBLAS' package prefix: 'rocBLAS: add a patch'"}}
{"_error": {"MissingSignOff": "commit ${short}, missing sign-off: Bob Committer <bob@example.org>"}}
{"sci-libs": {"rocBLAS": {"6.2.2": {"_warning": {"UnusedInherits": "unused eclass: flag-o-matic"}}}}}
{"dev-util": {"nvidia-cuda-toolkit": {"_error": {"SrcUriChecksumChange": "'cuda_12.6.1_560.35.03_linux.run' has different checksums across commits"}}}}
{"_style": {"InvalidCommitMessage": "commit 0123456789ab: no commit message"}}
`;

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
    await mkdir(path.join(dir, 'sci-libs/rocBLAS/files'), { recursive: true });
    await writeFile(path.join(dir, 'sci-libs/rocBLAS/files/x.patch'), 'x\n');
    bad = await commitAll(dir, f.home, signed('rocBLAS: add a patch'), { author: IDENTITY, committer: { name: 'Bob Committer', email: 'bob@example.org' } });
  });

  const withStub = async (script: string) => {
    await stub(bin, 'pkgcheck', script);
    return { PATH: `${bin}:${process.env.PATH}`, PKGCHECK_LOG: log };
  };

  it('runs scan --commits A..B with the git checks added and JsonReporter, in the overlay, naming the base remote', async () => {
    const env = await withStub(`printf '%s\\n' "$PWD" "$@" > "$PKGCHECK_LOG"\nshort=$(git rev-parse --short HEAD)\ncat <<EOF\n${RECORDED('$short')}EOF\nexit 1`);
    const r = await prCli(f, ['check', '--overlay', dir, '--json'], { env });
    assert.equal(r.code, 6, r.stderr);
    const args = (await readFile(log, 'utf8')).trimEnd().split('\n');
    assert.deepEqual(args, [dir, 'scan', '--commits', `${f.base}..${bad}`, '-c', '+GitCommitMessageCheck,+GitPkgCommitsCheck', '-R', 'JsonReporter', '--git-remote', 'origin']);
    const report = JSON.parse(r.stdout) as CheckReport;
    assert.equal(report.tools.pkgcheck.ran, true);
    assert.equal(report.tools.pkgcheck.results, 5);
    const by = (k: string) => report.results.filter((x) => x.keyword === k);
    // What both tools found is one result, marked as both's.
    assert.deepEqual(by('BadCommitSummary').map((x) => [x.commit, x.sources]), [[bad, ['rocm-ebuild', 'pkgcheck']]]);
    assert.deepEqual(by('MissingSignOff').map((x) => [x.sources, x.pkgcheckMessage?.replace(/[0-9a-f]{7,}/, 'ID')]), [[['rocm-ebuild', 'pkgcheck'], 'commit ID, missing sign-off: Bob Committer <bob@example.org>']]);
    // Only pkgcheck's: attributed to the range's last commit touching the package, or left loose.
    assert.deepEqual(by('UnusedInherits').map((x) => [x.commit, x.version, x.level, x.sources]), [[bad, '6.2.2', 'warning', ['pkgcheck']]]);
    assert.deepEqual(by('SrcUriChecksumChange').map((x) => [x.commit, x.category, x.package, x.sources]), [[undefined, 'dev-util', 'nvidia-cuda-toolkit', ['pkgcheck']]]);
    assert.deepEqual(by('InvalidCommitMessage'), [], 'a commit outside the range is left out');
    assert.ok(report.notes.some((n) => /pkgcheck reported 1 result about commits outside the range/.test(n)), report.notes.join('\n'));
  });

  it('says which tool said what in the text report', async () => {
    const env = await withStub(`short=$(git rev-parse --short HEAD)\ncat <<EOF\n${RECORDED('$short')}EOF\nexit 1`);
    const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`], { env });
    assert.equal(r.code, 6);
    assert.match(r.stdout, /^ {2}commit [0-9a-f]{12}: MissingSignOff: missing sign-off: Bob Committer <bob@example\.org> \[error, [0-9a-f]{12}, rocm-ebuild\+pkgcheck\]$/m);
    assert.match(r.stdout, /^ {2}sci-libs\/rocBLAS-6\.2\.2: UnusedInherits: unused eclass: flag-o-matic \[warning, [0-9a-f]{12}, pkgcheck\]$/m);
    assert.match(r.stdout, /^not tied to a commit of the range:\n {2}dev-util\/nvidia-cuda-toolkit: SrcUriChecksumChange: .* \[error, pkgcheck\]$/m);
    assert.match(r.stdout, /\(rocm-ebuild and pkgcheck\): 2 errors, 1 warning, 1 style, 0 info$/m);
  });

  it('when pkgcheck fails, reports why and keeps its own results', async () => {
    const env = await withStub(`echo "pkgcheck scan: error: failed running git: fatal: bad revision 'origin/HEAD..HEAD'" >&2\nexit 2`);
    const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`, '--json'], { env });
    assert.equal(r.code, 6);
    const report = JSON.parse(r.stdout) as CheckReport;
    assert.equal(report.tools.pkgcheck.ran, false);
    assert.match(report.tools.pkgcheck.reason ?? '', /^pkgcheck failed: pkgcheck scan: error: failed running git/);
    assert.ok(report.results.every((x) => x.sources.length === 1 && x.sources[0] === 'rocm-ebuild'));
  });

  it('without pkgcheck on PATH, says once that only its own checks ran', async () => {
    const env = { PATH: await bareBin(path.join(f.work, 'bare-bin')) };
    const r = await prCli(f, ['check', '--overlay', dir, '--range', `${f.tip}..HEAD`], { env });
    assert.equal(r.code, 6, r.stderr);
    assert.equal(r.stdout.match(/pkgcheck is not installed: only rocm-ebuild's checks ran/g)?.length, 1);
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
