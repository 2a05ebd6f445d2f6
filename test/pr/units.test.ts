import { strict as assert } from 'node:assert';
import { applyBugTrailers, parseBugRef } from '../../src/git/messages.js';
import { ebuildVars, rdependText } from '../../src/ebuild/vars.js';
import { printable } from '../../src/util/printable.js';
import { parseMessage } from '../../src/pr/message-check.js';
import { ebuildOf, packageOf } from '../../src/pr/overlay-paths.js';
import { parseJsonReporter } from '../../src/pr/pkgcheck.js';
import { shellLine } from '../../src/util/argv.js';
import { parseGithubUrl, redactUrl } from '../../src/pr/remote.js';
import { srcUriEntries, Unevaluable, verCut, verRs } from '../../src/ebuild/src-uri.js';
import { templateFor } from '../../src/pr/templates.js';
import { runCli } from '../helpers/project.js';

describe('pr building blocks', function () {
  this.timeout(60_000);

  it('ver_cut and ver_rs as eapi7-ver has them', () => {
    assert.equal(verCut('1-2', '6.2.2'), '6.2');
    assert.equal(verCut('1', '6.2.2'), '6');
    assert.equal(verCut('3-', '1.2.3b_alpha4'), '3b_alpha4');
    assert.equal(verCut('0-1', '.1.2'), '.1');
    assert.equal(verRs(['1', '_'], '6.2.2'), '6_2.2');
    assert.equal(verRs(['1-2', ''], '6.2.2'), '622');
  });

  it("works out SRC_URI's distfiles: renames, Portage variables, substitutions, every conditional group", async () => {
    const vars = await ebuildVars(
      [
        'MY_PN=${PN/-kernel/_kernel}',
        'MY_P="${MY_PN}-rocm-${PV}"',
        'SRC_URI="',
        '\thttps://github.com/ROCm/${MY_PN}/archive/rocm-${PV}.tar.gz -> ${MY_P}.tar.gz',
        '\ttest? ( https://example.org/data-$(ver_cut 1-2).zip )',
        '\t!doc? ( mirror://gentoo/${P,,}-docs.tar.xz )',
        '"',
        'SRC_URI+=" https://example.org/x/${PN%-kernel}.patch?raw=1"',
      ].join('\n'),
    );
    const names = srcUriEntries(vars, { category: 'sci-libs', pn: 'Composable-kernel', version: '6.2.2-r1' }).map((e) => e.name);
    assert.deepEqual(names, ['Composable_kernel-rocm-6.2.2.tar.gz', 'data-6.2.zip', 'composable-kernel-6.2.2-docs.tar.xz', 'Composable.patch']);
    const unknown = await ebuildVars('SRC_URI="https://example.org/${MY_UNSET}.tar.gz"');
    assert.throws(() => srcUriEntries(unknown, { category: 'a-b', pn: 'c', version: '1' }), (e: unknown) => e instanceof Unevaluable && /\$\{MY_UNSET\} \(not set by the ebuild/.test(e.what));
  });

  it('compares RDEPEND with ${DEPEND} expanded, whitespace aside', async () => {
    const a = await ebuildVars('DEPEND="dev-libs/a\n\tdev-libs/b"\nRDEPEND="${DEPEND}"\n');
    const b = await ebuildVars('DEPEND="dev-libs/a dev-libs/b"\nRDEPEND="dev-libs/a   dev-libs/b"\n');
    assert.equal(rdependText(a), rdependText(b));
    const c = await ebuildVars('RDEPEND="dev-libs/a"\nRDEPEND+=" dev-libs/c"\n');
    assert.equal(rdependText(c), 'dev-libs/a dev-libs/c');
  });

  it('tells package paths from repository paths, and ebuild versions', () => {
    assert.deepEqual(packageOf('sci-libs/rocBLAS/files/x.patch'), { category: 'sci-libs', pn: 'rocBLAS', key: 'sci-libs/rocBLAS', rest: 'files/x.patch' });
    assert.equal(packageOf('profiles/desc/amdgpu_targets.desc'), undefined);
    assert.equal(packageOf('eclass/rocm.eclass'), undefined);
    assert.equal(packageOf('virtual/opencl/metadata.xml')?.key, 'virtual/opencl');
    assert.equal(ebuildOf('sci-libs/rocBLAS/rocBLAS-6.2.2-r3.ebuild')?.revision, 3);
    assert.equal(ebuildOf('sci-libs/rocBLAS/hipBLAS-6.2.2.ebuild'), undefined);
  });

  it('splits a message into summary, body and trailers as GLEP 66 reads it', () => {
    const m = parseMessage('cat/pkg: x\n\nA body.\n\nBug: https://bugs.gentoo.org/1\nSigned-off-by: A <a@b>\n');
    assert.deepEqual(m.trailers.map((t) => [t.tag, t.value]), [['Bug', 'https://bugs.gentoo.org/1'], ['Signed-off-by', 'A <a@b>']]);
    assert.deepEqual(m.problems, []);
    assert.deepEqual(parseMessage('cat/pkg: x\nSigned-off-by: A <a@b>\n').problems, ['missing empty line before tags']);
    assert.deepEqual(parseMessage('cat/pkg: x\n\nBug: https://x.org/1\n\nSigned-off-by: A <a@b>\n').problems, ['empty line 4 in footer']);
    assert.deepEqual(parseMessage('cat/pkg: x\n\nSome text\nSigned-off-by: A <a@b>\n').problems, ['missing empty line before tags']);
  });

  it("reads pkgcheck's JsonReporter lines at every scope", () => {
    const found = parseJsonReporter(
      [
        '{"_style": {"InvalidCommitMessage": "commit 8d86269bb4c7: no commit message"}}',
        '{"dev-libs": {"_error": {"CatMissingMetadataXml": "category is missing metadata.xml"}}}',
        '{"dev-libs": {"foo": {"0": {"_warning": {"BadFilename": "bad filenames: [ 0.tar.gz ]"}}}}}',
        'pkgcheck: some progress text',
      ].join('\n'),
    );
    assert.deepEqual(found, [
      { keyword: 'InvalidCommitMessage', level: 'style', message: 'commit 8d86269bb4c7: no commit message', commit: '8d86269bb4c7' },
      { keyword: 'CatMissingMetadataXml', level: 'error', message: 'category is missing metadata.xml', category: 'dev-libs' },
      { keyword: 'BadFilename', level: 'warning', message: 'bad filenames: [ 0.tar.gz ]', category: 'dev-libs', package: 'foo', version: '0' },
    ]);
  });

  it('knows GitHub remotes in their URL forms, and never prints a token', () => {
    for (const url of ['https://github.com/gentoo/gentoo.git', 'git@github.com:gentoo/gentoo.git', 'ssh://git@github.com/gentoo/gentoo', 'https://me:tok@github.com/gentoo/gentoo/']) {
      assert.deepEqual(parseGithubUrl(url), { owner: 'gentoo', repo: 'gentoo' }, url);
    }
    assert.equal(parseGithubUrl('https://gitlab.com/a/b.git'), undefined);
    assert.equal(redactUrl('https://me:tok@github.com/a/b'), 'https://me:***@github.com/a/b');
    assert.equal(redactUrl('https://tok@github.com/a/b'), 'https://***@github.com/a/b');
    assert.equal(templateFor({ owner: 'gentoo', repo: 'guru' }, 'rocm'), 'guru');
    assert.equal(templateFor(undefined, 'gentoo'), 'gentoo');
    assert.equal(templateFor(undefined, 'rocm'), 'none');
  });

  it('quotes commands for the shell and escapes control characters for the terminal', () => {
    assert.equal(shellLine(['gh', 'pr', 'create', '--title', "ROCm 6.2.2: it's here", '--body-file', '-']), "gh pr create --title 'ROCm 6.2.2: it'\\''s here' --body-file -");
    assert.equal(printable('a\x1b[31mb\x07'), 'a\\x1b[31mb\\x07');
  });

  it('turns --bug/--closes values into trailers on the right commits', () => {
    assert.deepEqual(parseBugRef('940123'), { url: 'https://bugs.gentoo.org/940123' });
    assert.deepEqual(parseBugRef('sci-libs/rocBLAS=https://github.com/ROCm/rocBLAS/issues/1'), { atom: 'sci-libs/rocBLAS', url: 'https://github.com/ROCm/rocBLAS/issues/1' });
    assert.ok('error' in parseBugRef('0'));
    const commits = [
      { message: 'rocm.eclass: new eclass\n\nSigned-off-by: A <a@b>\n' },
      { message: 'sci-libs/a: add 1\n\nSigned-off-by: A <a@b>\n' },
      { message: 'sci-libs/b: drop 0\n\nSigned-off-by: A <a@b>\n' },
    ];
    applyBugTrailers(commits, { bug: [{ url: 'https://b/1' }], closes: [{ atom: 'sci-libs/a', url: 'https://b/2' }, { url: 'https://b/3' }] });
    assert.deepEqual(commits.map((c) => c.message), [
      'rocm.eclass: new eclass\n\nSigned-off-by: A <a@b>\n',
      'sci-libs/a: add 1\n\nBug: https://b/1\nCloses: https://b/2\nSigned-off-by: A <a@b>\n',
      'sci-libs/b: drop 0\n\nBug: https://b/1\nCloses: https://b/3\nSigned-off-by: A <a@b>\n',
    ]);
  });

  for (const command of ['check', 'body', 'push']) {
    it(`pr ${command} --help shows usage, examples and --json`, async () => {
      const r = await runCli(['pr', command, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^USAGE\\n {2}\\$ rocm-ebuild pr ${command}`, 'm'));
      assert.match(r.stdout, /^EXAMPLES\n/m);
      assert.match(r.stdout, /--json\s+Format output as json\./);
      assert.match(r.stdout, /Exit codes: 0 /);
    });
  }
});
