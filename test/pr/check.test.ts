import { strict as assert } from 'node:assert';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkRange, openRange, type CheckReport } from '../../src/pr/check.js';
import type { Manifest } from '../../src/manifest/load.js';
import { loadManifest } from '../../src/stack-check/index.js';
import { defaultManifestPath } from '../../src/paths.js';
import type { PrResult } from '../../src/pr/types.js';
import { commitAll, git, IDENTITY, prCli, prFixture, signed, SIGN_OFF, workClone, type PrFixture } from './support.js';

const BOB = { name: 'Bob Committer', email: 'bob@example.org' };
const YEAR = new Date().getFullYear();

describe('pr check', function () {
  this.timeout(600_000);
  let f: PrFixture;
  let manifest: Manifest;

  before(async () => {
    f = await prFixture();
    manifest = await loadManifest(defaultManifestPath);
  });

  async function check(dir: string, range: string): Promise<CheckReport> {
    const ctx = await openRange(dir, { range });
    try {
      return await checkRange(ctx, { manifest, pkgcheck: false });
    } finally {
      ctx.objects.close();
    }
  }

  describe('the 53 commits of a real bump 6.2.2', () => {
    let report: CheckReport;
    let cli: { code: number; stdout: string; stderr: string };

    before(async () => {
      cli = await prCli(f, ['check', '--overlay', f.overlay, '--json', '--no-pkgcheck']);
      report = JSON.parse(cli.stdout) as CheckReport;
    });

    it('takes origin/HEAD..HEAD when the branch has no upstream, and finds every commit', () => {
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(report.range.label, 'origin/master..HEAD');
      assert.equal(report.range.origin, 'origin-head');
      assert.equal(report.range.base, f.base);
      assert.equal(report.range.head, f.tip);
      assert.equal(report.range.commits, 53);
      assert.equal(report.commits[0]!.summary, 'profiles, metadata: new repository rocm');
      assert.equal(report.commits.at(-1)!.summary, 'sci-libs/rocAL: new package, add 6.2.2');
      assert.equal(report.ebuildsLinted, 49);
    });

    it('has no error, warning or style result: only the findings the manifest accepts, as info', () => {
      assert.deepEqual(report.counts, { error: 0, warning: 0, style: 0, info: 4 });
      assert.deepEqual(
        report.results.map((r) => `${r.category}/${r.package} ${r.keyword}`),
        [
          'media-libs/rocDecode UseChangeNeeded',
          'sci-libs/rpp RequiredUseDefaults',
          'sci-libs/MIVisionX RequiredUseDefaults',
          'sci-libs/rocAL RequiredUseDefaults',
        ],
      );
      assert.ok(report.tools.shellcheck, 'shellcheck is installed here and must have run');
    });

    it('prints pkgcheck-style lines and says when only its own checks ran', async () => {
      const text = await prCli(f, ['check', '--overlay', f.overlay, '--range', 'HEAD~2', '--no-pkgcheck']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^[0-9a-f]{12} sci-libs\/rocAL: new package, add 6\.2\.2$/m);
      assert.match(text.stdout, /^ {2}sci-libs\/rocAL-6\.2\.2: RequiredUseDefaults: .* \[info, [0-9a-f]{12}\]$/m);
      assert.match(text.stdout, /^HEAD~2\.\.HEAD: 2 commits, 2 ebuilds linted \(rocm-ebuild\): 0 errors, 0 warnings, 0 style, 2 info$/m);
      assert.match(text.stdout, /^note: disabled with --no-pkgcheck$/m);
      // As its help says: progress only on a terminal; in a pipe the report alone.
      assert.equal(text.stderr, '');
    });
  });

  describe('hand-made commits, one keyword each: fires on the bad commit, quiet on its near miss', () => {
    let dir: string;
    const rocblas = 'sci-libs/rocBLAS/rocBLAS-6.2.2.ebuild';

    before(async () => {
      dir = await workClone(f, 'keywords');
    });

    beforeEach(async () => {
      await git(dir, ['switch', '-q', '-C', 'work', f.tip], f.home);
      await git(dir, ['clean', '-qfdx'], f.home);
    });

    const write = async (rel: string, text: string) => {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await writeFile(path.join(dir, rel), text);
    };
    const read = (rel: string) => readFile(path.join(dir, rel), 'utf8');
    const results = async (keyword?: string) => (await check(dir, `${f.tip}..HEAD`)).results.filter((r) => !keyword || r.keyword === keyword);
    const only = (rs: PrResult[], keyword: string) => rs.filter((r) => r.keyword === keyword);
    /** rocBLAS at 6.2.3: the 6.2.2 ebuild copied, with (or without) its DIST line. */
    const addVersion = async (version: string, options: { dist?: boolean; edit?: (t: string) => string } = {}) => {
      const text = (options.edit ?? ((t: string) => t))(await read(rocblas));
      await write(`sci-libs/rocBLAS/rocBLAS-${version}.ebuild`, text);
      if (options.dist ?? true) {
        const manifestFile = 'sci-libs/rocBLAS/Manifest';
        const line = (await read(manifestFile)).trim().replaceAll('6.2.2', version);
        await write(manifestFile, `${(await read(manifestFile)).trimEnd()}\n${line}\n`.split('\n').filter(Boolean).sort().join('\n') + '\n');
      }
    };

    it('BadCommitSummary: a summary without the package prefix; quiet with it', async () => {
      await write('sci-libs/rocBLAS/files/rocBLAS-6.2.2-gcc14.patch', '--- a\n+++ b\n');
      const bad = await commitAll(dir, f.home, signed('rocBLAS: fix the build with GCC 14'));
      const rs = await results('BadCommitSummary');
      assert.equal(rs.length, 1);
      assert.equal(rs[0]!.commit, bad);
      assert.equal(rs[0]!.level, 'style');
      assert.match(rs[0]!.message, /summary missing 'sci-libs\/rocBLAS' package prefix/);
      await git(dir, ['commit', '-q', '--amend', '--cleanup=verbatim', '-m', signed('sci-libs/rocBLAS: fix the build with GCC 14')], f.home);
      assert.deepEqual(await results('BadCommitSummary'), []);
    });

    it('BadCommitSummary: the added version missing from the summary; quiet when named', async () => {
      await addVersion('6.2.3');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: version bump'));
      assert.match((await results('BadCommitSummary'))[0]?.message ?? '', /summary missing package version '6\.2\.3'/);
      await git(dir, ['commit', '-q', '--amend', '--cleanup=verbatim', '-m', signed('sci-libs/rocBLAS: add 6.2.3')], f.home);
      assert.deepEqual(await results(), []);
    });

    it('MultiplePackagesCommit: two packages in one commit; quiet with a cat/*: summary', async () => {
      await write('sci-libs/rocBLAS/files/a.patch', 'a\n');
      await write('sci-libs/hipBLAS/files/b.patch', 'b\n');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add patches'));
      let rs = await results();
      assert.deepEqual(rs.map((r) => r.keyword).sort(), ['BadCommitSummary', 'MultiplePackagesCommit']);
      assert.match(only(rs, 'MultiplePackagesCommit')[0]!.message, /2 packages in one commit \(sci-libs\/hipBLAS, sci-libs\/rocBLAS\)/);
      assert.equal(only(rs, 'MultiplePackagesCommit')[0]!.level, 'warning');
      await git(dir, ['commit', '-q', '--amend', '--cleanup=verbatim', '-m', signed('sci-libs/*: add patches')], f.home);
      assert.deepEqual(await results(), []);
      // Across categories no prefix covers both.
      await write('dev-util/hip/files/c.patch', 'c\n');
      await write('sci-libs/hipBLAS/files/c.patch', 'c\n');
      await commitAll(dir, f.home, signed('sci-libs/*: more patches'));
      rs = await results('MultiplePackagesCommit');
      assert.equal(rs.length, 1);
    });

    it('InvalidCommitMessage: a summary over 69 characters after the prefix; quiet at 69', async () => {
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      await commitAll(dir, f.home, signed(`sci-libs/rocBLAS: ${'a'.repeat(70)}`));
      assert.match((await results('InvalidCommitMessage'))[0]?.message ?? '', /summary is too long: 70 characters after the prefix, at most 69/);
      await git(dir, ['commit', '-q', '--amend', '--cleanup=verbatim', '-m', signed(`sci-libs/rocBLAS: ${'a'.repeat(69)}`)], f.home);
      assert.deepEqual(await results(), []);
    });

    it('InvalidCommitMessage: a body line over 80 columns; quiet for a long URL alone on its line', async () => {
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      const long = `${'word '.repeat(16)}x`;
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add a patch', `Why:\n${long}`));
      const rs = await results('InvalidCommitMessage');
      assert.equal(rs.length, 1);
      assert.match(rs[0]!.message, /^line 4 is 81 columns long \(at most 80\)/);
      const url = `https://github.com/ROCm/rocBLAS/commit/${'0123456789abcdef'.repeat(5)}`;
      await git(dir, ['commit', '-q', '--amend', '--cleanup=verbatim', '-m', signed('sci-libs/rocBLAS: add a patch', `From upstream:\n${url}`)], f.home);
      assert.deepEqual(await results(), []);
    });

    it('InvalidCommitMessage: no blank line before the body, a non-trailer line among the trailers', async () => {
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      await commitAll(dir, f.home, `sci-libs/rocBLAS: add a patch\nThe body starts at once.\n\n${SIGN_OFF}\nthanks!\n`);
      const messages = (await results('InvalidCommitMessage')).map((r) => r.message);
      assert.deepEqual(messages, ['missing empty line before body', 'non-tag in footer, line 5: "thanks!"']);
    });

    it('MissingSignOff (error): signed by the author but not by the committer; quiet when both sign', async () => {
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      const sha = await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add a patch'), { author: IDENTITY, committer: BOB });
      const rs = await results('MissingSignOff');
      assert.deepEqual(rs.map((r) => [r.commit, r.level, r.message]), [[sha, 'error', 'missing sign-off: Bob Committer <bob@example.org>']]);
      const both = `sci-libs/rocBLAS: add a patch\n\n${SIGN_OFF}\nSigned-off-by: Bob Committer <bob@example.org>\n`;
      await commitAll(dir, f.home, both, { author: IDENTITY, committer: BOB });
      const after = await results('MissingSignOff');
      assert.equal(after.length, 1, 'only the first commit lacks a sign-off');
    });

    it('InvalidCommitTag: a bare bug number, http, a Fixes: naming no commit; quiet for https and real commits', async () => {
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add a patch', undefined, ['Bug: 940123', 'Closes: http://bugs.gentoo.org/940124', 'Fixes: deadbeef1234']));
      const messages = (await results('InvalidCommitTag')).map((r) => r.message);
      assert.equal(messages.length, 3, messages.join('\n'));
      assert.match(messages[0]!, /"Bug: 940123": value isn't a URL/);
      assert.match(messages[1]!, /"Closes: http:\/\/bugs\.gentoo\.org\/940124": invalid protocol; should be https/);
      assert.match(messages[2]!, /"Fixes: deadbeef1234": no such commit in this repository/);
      await git(dir, ['commit', '-q', '--amend', '--cleanup=verbatim', '-m', signed('sci-libs/rocBLAS: add a patch', undefined, ['Bug: https://bugs.gentoo.org/940123', `Fixes: ${f.tip.slice(0, 12)} ("sci-libs/rocAL: new package, add 6.2.2")`])], f.home);
      assert.deepEqual(await results(), []);
    });

    it('SrcUriChecksumChange (error): a DIST line changed for the same file name', async () => {
      const m = 'sci-libs/rocBLAS/Manifest';
      await write(m, (await read(m)).replace(/ (\d+) BLAKE2B/, (_, n: string) => ` ${Number(n) + 1} BLAKE2B`));
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: update Manifest'));
      const rs = await results('SrcUriChecksumChange');
      assert.equal(rs.length, 1);
      assert.equal(rs[0]!.level, 'error');
      assert.match(rs[0]!.message, /"rocBLAS-6\.2\.2\.tar\.gz" has different checksums than before \(size \d+ -> \d+\)/);
    });

    it('MissingManifest (error): a new ebuild whose distfile has no DIST line; quiet with it', async () => {
      await addVersion('6.2.3', { dist: false });
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      const rs = await results('MissingManifest');
      assert.deepEqual(rs.map((r) => [r.version, r.level, r.message]), [['6.2.3', 'error', 'distfile missing from Manifest: [ rocBLAS-6.2.3.tar.gz ]']]);
      await addVersion('6.2.3');
      await git(dir, ['add', '-A'], f.home);
      await git(dir, ['commit', '-q', '--amend', '--no-edit'], f.home);
      assert.deepEqual(await results(), []);
    });

    it('UnknownManifest: a DIST line no ebuild needs after a version is dropped', async () => {
      await addVersion('6.2.3');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      await rm(path.join(dir, 'sci-libs/rocBLAS/rocBLAS-6.2.3.ebuild'));
      const drop = await commitAll(dir, f.home, signed('sci-libs/rocBLAS: drop 6.2.3'));
      const rs = await results('UnknownManifest');
      assert.deepEqual(rs.map((r) => [r.commit, r.message]), [[drop, 'unknown distfile in Manifest: [ rocBLAS-6.2.3.tar.gz ]']]);
    });

    it('InvalidManifest: a Manifest that does not parse', async () => {
      await write('sci-libs/rocBLAS/Manifest', 'DIST rocBLAS-6.2.2.tar.gz twelve BLAKE2B x\n');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: break the Manifest'));
      const rs = await results('InvalidManifest');
      assert.equal(rs.length, 1);
      assert.match(rs[0]!.message, /sci-libs\/rocBLAS\/Manifest:1: /);
    });

    it("EbuildIncorrectCopyright: the header's year is not the commit's; quiet when it is", async () => {
      await addVersion('6.2.3', { edit: (t) => t.replace(/^# Copyright 1999-\d{4}/, '# Copyright 1999-2019') });
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      const rs = await results('EbuildIncorrectCopyright');
      assert.equal(rs.length, 1);
      assert.equal(rs[0]!.level, 'warning');
      assert.match(rs[0]!.message, new RegExp(`incorrect copyright year 2019: "# Copyright 1999-2019 Gentoo Authors" \\(the commit is from ${YEAR}\\)`));
      assert.deepEqual(await results('OldGentooCopyright'), [], 'lint\'s year check is folded into EbuildIncorrectCopyright');
      // A commit dated in another year with this year's header fires too.
      await git(dir, ['reset', '-q', '--hard', f.tip], f.home);
      await addVersion('6.2.3');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'), { date: '2023-06-01T12:00:00+02:00' });
      assert.match((await results('EbuildIncorrectCopyright'))[0]?.message ?? '', /the commit is from 2023/);
      await git(dir, ['reset', '-q', '--hard', f.tip], f.home);
      await addVersion('6.2.3');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      assert.deepEqual(await results(), []);
    });

    it('RdependChange: RDEPEND of a published ebuild changed in place; quiet with a revision bump', async () => {
      const edit = (t: string) => t.replace(/^RDEPEND="\n/m, 'RDEPEND="\n\tdev-libs/boost\n');
      await write(rocblas, edit(await read(rocblas)));
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: depend on boost'));
      const rs = await results('RdependChange');
      assert.deepEqual(rs.map((r) => [r.version, r.level, r.message]), [['6.2.2', 'warning', 'RDEPEND modified without revbump']]);
      await git(dir, ['reset', '-q', '--hard', f.tip], f.home);
      await git(dir, ['mv', rocblas, rocblas.replace('6.2.2.ebuild', '6.2.2-r1.ebuild')], f.home);
      await write(rocblas.replace('6.2.2.ebuild', '6.2.2-r1.ebuild'), edit(await read(rocblas.replace('6.2.2.ebuild', '6.2.2-r1.ebuild'))));
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: depend on boost'));
      assert.deepEqual(await results(), []);
    });

    it('EAPIChangeWithoutRevbump and MissingSlotmove: EAPI and SLOT changed in place; a slotmove quiets the second, a sub-slot change needs none', async () => {
      await write(rocblas, (await read(rocblas)).replace('EAPI=8', 'EAPI=7').replace('SLOT="0/$(ver_cut 1-2)"', 'SLOT="1/$(ver_cut 1-2)"'));
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: EAPI 7, slot 1'));
      const rs = await results();
      assert.equal(only(rs, 'EAPIChangeWithoutRevbump')[0]?.message, 'changed EAPI without new revision (8 -> 7)');
      assert.equal(only(rs, 'MissingSlotmove')[0]?.message, 'changed SLOT: 0 -> 1');
      assert.equal(only(rs, 'MissingSlotmove')[0]?.level, 'error');
      await write('profiles/updates/1Q-2025', 'slotmove sci-libs/rocBLAS 0 1\n');
      await git(dir, ['add', '-A'], f.home);
      await git(dir, ['commit', '-q', '--amend', '--no-edit'], f.home);
      assert.deepEqual(await results('MissingSlotmove'), []);
      await git(dir, ['reset', '-q', '--hard', f.tip], f.home);
      await write(rocblas, (await read(rocblas)).replace('SLOT="0/$(ver_cut 1-2)"', 'SLOT="0/6"'));
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: coarser sub-slot'));
      assert.deepEqual(await results('MissingSlotmove'), []);
    });

    it('MissingMove (error): a package renamed without profiles/updates; quiet with the move', async () => {
      await git(dir, ['mv', 'sci-libs/rocWMMA', 'sci-libs/rocwmma'], f.home);
      await git(dir, ['mv', 'sci-libs/rocwmma/rocWMMA-6.2.2.ebuild', 'sci-libs/rocwmma/rocwmma-6.2.2.ebuild'], f.home);
      await commitAll(dir, f.home, signed('sci-libs/rocwmma: rename from sci-libs/rocWMMA'));
      const rs = await results('MissingMove');
      assert.equal(rs.length, 1);
      assert.match(rs[0]!.message, /renamed package: sci-libs\/rocWMMA -> sci-libs\/rocwmma/);
      await write('profiles/updates/1Q-2025', 'move sci-libs/rocWMMA sci-libs/rocwmma\n');
      await git(dir, ['add', '-A'], f.home);
      await git(dir, ['commit', '-q', '--amend', '--no-edit'], f.home);
      assert.deepEqual(await results('MissingMove'), []);
    });

    it('DirectStableKeywords (error): a new ebuild committed stable', async () => {
      await addVersion('6.2.3', { edit: (t) => t.replace('KEYWORDS="~amd64"', 'KEYWORDS="amd64 ~x86"') });
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      assert.deepEqual((await results('DirectStableKeywords')).map((r) => [r.level, r.message]), [['error', 'directly committed with stable keyword: [ amd64 ]']]);
    });

    it('UnevaluatedSrcUri (info): SRC_URI built by a command rocm-ebuild does not evaluate', async () => {
      await addVersion('6.2.3', { edit: (t) => t.replace(/^SRC_URI="/m, 'SRC_URI="$(my_uris) ') });
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      assert.deepEqual((await results('UnevaluatedSrcUri')).map((r) => [r.level, r.message]), [['info', 'SRC_URI uses $(my_uris): its DIST lines were not checked']]);
    });

    it('lint, bash -n and shellcheck run on every ebuild the range adds or changes, as each commit left it', async () => {
      await addVersion('6.2.3', {
        edit: (t) => t.replace('src_prepare() {\n', 'src_prepare() {\n\tsed -i -e s/a/b/ CMakeLists.txt\n\techo $HOME\n'),
      });
      const sha = await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.3'));
      await write(rocblas.replace('6.2.2', '6.2.3'), `${await read(rocblas.replace('6.2.2', '6.2.3'))}\nif then\n`);
      const broken = await commitAll(dir, f.home, signed('sci-libs/rocBLAS: break 6.2.3'));
      const rs = await results();
      // Each commit's state is checked: both versions of the ebuild lack the die.
      assert.deepEqual(only(rs, 'MissingDie').map((r) => r.commit), [sha, broken]);
      assert.ok(only(rs, 'ShellCheck').some((r) => r.commit === sha && r.code === 'SC2086'), JSON.stringify(rs));
      const bash = only(rs, 'BashSyntax');
      assert.ok(bash.length >= 1 && bash.every((r) => r.commit === broken && r.level === 'error'), JSON.stringify(bash));
    });

    it('a symlinked ebuild is not read as ebuild text (its blob is the link target)', async () => {
      const { symlink } = await import('node:fs/promises');
      await symlink('rocBLAS-6.2.2.ebuild', path.join(dir, 'sci-libs/rocBLAS/rocBLAS-6.2.4.ebuild'));
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add 6.2.4'));
      const report = await check(dir, `${f.tip}..HEAD`);
      assert.equal(report.ebuildsLinted, 0);
      assert.deepEqual(report.results, []);
    });

    it('MergeCommit: a merge in the range, its message checked like any other', async () => {
      await git(dir, ['switch', '-q', '-c', 'side'], f.home);
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      await commitAll(dir, f.home, signed('sci-libs/rocBLAS: add a patch'));
      await git(dir, ['switch', '-q', 'work'], f.home);
      await write('sci-libs/hipBLAS/files/y.patch', 'y\n');
      await commitAll(dir, f.home, signed('sci-libs/hipBLAS: add a patch'));
      await git(dir, ['merge', '-q', '--no-ff', '--no-edit', 'side'], f.home, { env: { GIT_AUTHOR_NAME: IDENTITY.name, GIT_AUTHOR_EMAIL: IDENTITY.email, GIT_COMMITTER_NAME: IDENTITY.name, GIT_COMMITTER_EMAIL: IDENTITY.email } });
      const merge = (await git(dir, ['rev-parse', 'HEAD'], f.home)).trim();
      const report = await check(dir, `${f.tip}..HEAD`);
      assert.equal(report.range.commits, 3);
      assert.deepEqual(report.results.filter((r) => r.commit === merge).map((r) => r.keyword).sort(), ['MergeCommit', 'MissingSignOff']);
      assert.ok(report.commits.find((c) => c.sha === merge)!.merge);
    });

    it('a message that is not UTF-8 is flagged; one that declares its encoding is converted and passes', async () => {
      await write('sci-libs/rocBLAS/files/x.patch', 'x\n');
      await git(dir, ['add', '-A'], f.home);
      const tree = (await git(dir, ['write-tree'], f.home)).trim();
      const message = `sci-libs/rocBLAS: patch from Jos\xe9\n\n${SIGN_OFF}\n`;
      const who = `${IDENTITY.name} <${IDENTITY.email}> ${Math.floor(Date.now() / 1000)} +0000`;
      // git commit would convert the Latin-1 byte itself; a raw object keeps it, as old or foreign tools wrote them.
      const object = (encoding: string) => Buffer.concat([Buffer.from(`tree ${tree}\nparent ${f.tip}\nauthor ${who}\ncommitter ${who}\n${encoding}\n`), Buffer.from(message, 'latin1')]);
      const raw = (await git(dir, ['hash-object', '-t', 'commit', '-w', '--stdin'], f.home, { input: object('') })).trim();
      await git(dir, ['reset', '-q', '--hard', raw], f.home);
      const rs = await results('InvalidCommitMessage');
      assert.deepEqual(rs.map((r) => r.message), ['the message is not valid UTF-8 and declares no encoding git can convert: rewrite it in UTF-8 (git commit --amend)']);
      const declared = (await git(dir, ['hash-object', '-t', 'commit', '-w', '--stdin'], f.home, { input: object('encoding ISO-8859-1\n') })).trim();
      await git(dir, ['reset', '-q', '--hard', declared], f.home);
      const report = await check(dir, `${f.tip}..HEAD`);
      assert.deepEqual(report.results, []);
      assert.equal(report.commits[0]!.summary, 'sci-libs/rocBLAS: patch from José');
    });

    it('a root commit is checked against the empty tree', async () => {
      const fresh = path.join(f.work, 'fresh-root');
      await mkdir(path.join(fresh, 'sci-libs/foo'), { recursive: true });
      await git(fresh, ['init', '-q'], f.home);
      await writeFile(path.join(fresh, 'sci-libs/foo/foo-1.0.ebuild'), `# Copyright 1999-${YEAR} Gentoo Authors\n# Distributed under the terms of the GNU General Public License v2\n\nEAPI=8\n\nDESCRIPTION="A package added by the very first commit"\nHOMEPAGE="https://example.org"\nSRC_URI="https://example.org/\${P}.tar.gz"\n\nLICENSE="MIT"\nSLOT="0"\nKEYWORDS="~amd64"\n`);
      const root = await commitAll(fresh, f.home, signed('first commit'));
      const ctx = await openRange(fresh, { root: true });
      let report: CheckReport;
      try {
        report = await checkRange(ctx, { manifest, pkgcheck: false });
      } finally {
        ctx.objects.close();
      }
      assert.equal(report.range.origin, 'root');
      const kw = report.results.filter((r) => r.commit === root).map((r) => r.keyword);
      assert.ok(kw.includes('BadCommitSummary') && kw.includes('MissingManifest'), kw.join(' '));
    });
  });

  describe('choosing the range', () => {
    let dir: string;

    before(async () => {
      dir = await workClone(f, 'ranges');
    });

    it("uses the branch's upstream when it has one", async () => {
      await git(dir, ['branch', '-q', '-u', 'origin/master'], f.home);
      try {
        const ctx = await openRange(dir, {});
        ctx.objects.close();
        assert.equal(ctx.range.origin, 'upstream');
        assert.equal(ctx.range.label, 'origin/master..HEAD');
        assert.equal(ctx.commits.length, 53);
      } finally {
        await git(dir, ['branch', '-q', '--unset-upstream'], f.home);
      }
    });

    it('without origin/HEAD, takes the commits on no remote branch', async () => {
      await git(dir, ['remote', 'set-head', 'origin', '-d'], f.home);
      try {
        const ctx = await openRange(dir, {});
        ctx.objects.close();
        assert.equal(ctx.range.origin, 'unpushed');
        assert.deepEqual(ctx.range.excluded, ['origin/master']);
        assert.equal(ctx.commits.length, 53);
      } finally {
        await git(dir, ['remote', 'set-head', 'origin', 'master'], f.home);
      }
    });

    it('--root takes every commit; A alone means A..HEAD', async () => {
      const all = await openRange(dir, { root: true });
      all.objects.close();
      assert.equal(all.commits.length, 54);
      assert.equal(all.commits[0]!.parents.length, 0);
      const some = await openRange(dir, { range: 'HEAD~2' });
      some.objects.close();
      assert.equal(some.range.label, 'HEAD~2..HEAD');
      assert.equal(some.commits.length, 2);
    });

    it('an empty range is not an error for check: it says there is nothing to check', async () => {
      const r = await prCli(f, ['check', '--overlay', dir, '--range', 'HEAD..HEAD']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^HEAD\.\.HEAD: no commits, nothing to check$/m);
    });

    it('refuses unknown revisions, A...B, and a repository with nothing to compare with (exit 2)', async () => {
      const unknown = await prCli(f, ['check', '--overlay', dir, '--range', 'nosuch..HEAD']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown revision "nosuch"/);
      const sym = await prCli(f, ['check', '--overlay', dir, '--range', 'origin/master...HEAD']);
      assert.equal(sym.code, 2);
      assert.match(sym.stderr, /symmetric difference/);
      const lonely = path.join(f.work, 'lonely');
      await mkdir(lonely);
      await git(lonely, ['init', '-q'], f.home);
      await writeFile(path.join(lonely, 'README'), 'x\n');
      await commitAll(lonely, f.home, signed('README: start'));
      const none = await prCli(f, ['check', '--overlay', lonely]);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /the branch has no upstream, there is no origin\/HEAD and no remote-tracking branch\n {2}hint: .*--root/);
      const notRepo = await prCli(f, ['check', '--overlay', path.join(f.work, 'distfiles')]);
      assert.equal(notRepo.code, 4);
    });

    it('exits 6 on an error-level result, with --json too', async () => {
      await git(dir, ['switch', '-q', '-C', 'bad', f.tip], f.home);
      await writeFile(path.join(dir, 'README.md'), 'changed\n');
      await commitAll(dir, f.home, 'README.md: no sign-off\n');
      const text = await prCli(f, ['check', '--overlay', dir, '--range', f.tip, '--no-pkgcheck']);
      assert.equal(text.code, 6);
      assert.match(text.stdout, /^ {2}commit [0-9a-f]{12}: MissingSignOff: missing sign-off: Ada Tester <ada@example\.org> \[error, [0-9a-f]{12}\]$/m);
      const json = await prCli(f, ['check', '--overlay', dir, '--range', f.tip, '--json', '--no-pkgcheck']);
      assert.equal(json.code, 6);
      assert.equal((JSON.parse(json.stdout) as CheckReport).counts.error, 1);
    });

    it('shows control characters of hostile commit text escaped, never raw', async () => {
      await git(dir, ['switch', '-q', '-C', 'hostile', f.tip], f.home);
      await writeFile(path.join(dir, 'README.md'), 'changed\n');
      await commitAll(dir, f.home, 'README.md: \x1b[2J\x1b]0;pwned\x07clear the screen\n');
      const r = await prCli(f, ['check', '--overlay', dir, '--range', f.tip, '--no-pkgcheck']);
      assert.equal(r.code, 6, r.stderr);
      assert.ok(!r.stdout.includes('\x1b'), 'an escape sequence reached the terminal');
      assert.match(r.stdout, /\\x1b\[2J/);
    });
  });
});
