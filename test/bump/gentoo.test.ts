import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { IDENTITY, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { gpgKey, type SigningKey } from '../helpers/signing-keys.js';
import { git, gitEnv, removeDir, runCli, tempDir, writeTree } from '../helpers/project.js';

/**
 * A stand-in for an eclass of ::gentoo's API (names only: this file's text is
 * ours), offering `functions` and the variables rocm.eclass documents there.
 */
function treeEclass(functions: string[]): string {
  const lines = ['# Copyright 2022-2025 Gentoo Authors', '# Distributed under the terms of the GNU General Public License v2', '', '# @ECLASS: rocm.eclass', ''];
  for (const v of ['ROCM_VERSION', 'ROCM_REQUIRED_USE', 'ROCM_USEDEP', 'ROCM_SKIP_GLOBALS']) lines.push(`# @ECLASS_VARIABLE: ${v}`, '# @DESCRIPTION:', '# Stand-in.', '');
  for (const f of functions) lines.push(`# @FUNCTION: ${f}`, '# @DESCRIPTION:', '# Stand-in.', `${f}() {`, '\t:', '}', '');
  return `${lines.join('\n')}`;
}

const DESC = `# Copyright 1999-2025 Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

gfx906 - Vega20 as ::gentoo words it
gfx950 - a target only ::gentoo describes
`;

/** A ::gentoo checkout (profiles/repo_name is gentoo) bumped by rocm-ebuild: nothing private goes in. */
describe('bump into ::gentoo itself', function () {
  this.timeout(120_000);
  let small: SmallStackFixture;
  let work: string;
  /** ::gentoo's layout.conf requires signed commits: a developer's key (commit.gpgSign off: the repository asks). */
  let key: SigningKey;

  async function gentooCheckout(name: string, functions: string[]): Promise<{ dir: string; start: string }> {
    const dir = path.join(work, name);
    await writeTree(dir, {
      'profiles/repo_name': 'gentoo\n',
      'metadata/layout.conf': 'masters =\nthin-manifests = true\nmanifest-hashes = BLAKE2B SHA512\nsign-commits = true\n',
      'profiles/desc/amdgpu_targets.desc': DESC,
      'eclass/rocm.eclass': treeEclass(functions),
    });
    await git(dir, ['init', '-q'], small.home);
    await git(dir, ['add', '-A'], small.home);
    await git(dir, ['commit', '-q', '-s', '-m', 'the tree as it was'], small.home);
    return { dir, start: (await git(dir, ['rev-parse', 'HEAD'], small.home)).trim() };
  }
  const files = async (dir: string, start: string) => (await git(dir, ['log', '--name-only', '--format=', `${start}..HEAD`], small.home)).split('\n').filter(Boolean);

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-gentoo-');
    key = await gpgKey(path.join(work, 'key'), small.home, IDENTITY, { gpgSign: false });
  });
  after(async () => {
    await key.stop();
    await removeDir(work);
  });

  it('keeps the maintainer setting in git config, only extends amdgpu_targets.desc, and keeps an eclass that has every name the ebuilds use', async () => {
    const { dir, start } = await gentooCheckout('compatible', ['get_amdgpu_flags', 'check_amdgpu', 'rocm_use_hipcc', 'rocm_use_clang']);
    const r = await runCli(['bump', '6.2.2', '--overlay', dir, ...small.flags, '--maintainer', 'gentoo'], { home: small.home, env: key.env });
    assert.equal(r.code, 0, r.stderr);
    // layout.conf says sign-commits = true, as ::gentoo's does: every commit is signed with the developer's key.
    assert.match(r.stdout, new RegExp(`^commits: signed with openpgp key ${key.fingerprint} .*\\(metadata/layout\\.conf says sign-commits = true\\)$`, 'm'));
    const touched = await files(dir, start);
    assert.ok(!touched.includes('metadata/rocm-ebuild.conf'), touched.join(' '));
    assert.ok(!existsSync(path.join(dir, 'metadata/rocm-ebuild.conf')));
    assert.equal((await git(dir, ['config', '--get', 'rocm-ebuild.maintainer'], small.home)).trim(), 'gentoo');
    assert.ok(!touched.includes('eclass/rocm.eclass'), 'the compatible eclass was replaced');
    const desc = await readFile(path.join(dir, 'profiles/desc/amdgpu_targets.desc'), 'utf8');
    for (const line of DESC.split('\n').filter(Boolean)) assert.ok(desc.includes(`${line}\n`), `lost: ${line}`);
    assert.ok(desc.split('\n').length > DESC.split('\n').length, 'no target was added');
    const lines = desc.split('\n').filter((l) => /^gfx/.test(l)).map((l) => l.split(' ')[0]!);
    assert.equal(lines.indexOf('gfx906') + 1, lines.indexOf('gfx908'), 'gfx908 is not placed after gfx906');
    const subjects = (await git(dir, ['log', '--format=%s', `${start}..HEAD`], small.home)).trim().split('\n');
    assert.ok(subjects.some((s) => /^profiles\/desc: add /.test(s)), subjects.join('\n'));
    const check = await runCli(['pr', 'check', '--overlay', dir, '--range', start, '--no-pkgcheck', '--json', '--manifest', small.flags[1]!], { home: small.home, env: key.env });
    const keywords = (JSON.parse(check.stdout) as { results: { keyword: string }[] }).results.map((x) => x.keyword);
    assert.ok(!keywords.includes('NotGentooFile') && !keywords.includes('EclassChange'), keywords.join(' '));
    // The setting is read back from git config: a contradicting --maintainer is refused.
    const again = await runCli(['bump', '6.3.0', 'gpulib', '--overlay', dir, ...small.flags, '--maintainer', 'Ada Tester <ada@example.org>', '--dry-run'], { home: small.home, env: key.env });
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /git config rocm-ebuild\.maintainer sets the maintainer to gentoo/);
  });

  it('never changes an eclass lacking names the ebuilds use: the bump stops, dry run or not, and names eclass update, which commits it alone with the review mail', async () => {
    const { dir, start } = await gentooCheckout('older', ['get_amdgpu_flags', 'check_amdgpu', 'rocm_use_clang']);
    const before = await readFile(path.join(dir, 'eclass/rocm.eclass'), 'utf8');
    const dry = await runCli(['bump', '6.2.2', '--overlay', dir, ...small.flags, '--dry-run'], { home: small.home, env: key.env });
    const real = await runCli(['bump', '6.2.2', '--overlay', dir, ...small.flags], { home: small.home, env: key.env });
    for (const r of [dry, real]) {
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, /is ::gentoo and its eclass\/rocm\.eclass lacks rocm_use_hipcc, which the ROCm 6\.2\.2 ebuilds use; a bump never changes ::gentoo's eclass/);
      assert.ok(r.stderr.includes(`rocm-ebuild eclass update --overlay ${dir} --dry-run`), r.stderr);
    }
    // The plan says the same thing whether it is a dry run or not.
    assert.equal(dry.stderr, real.stderr);
    assert.equal(await git(dir, ['rev-parse', 'HEAD'], small.home), `${start}\n`);
    assert.equal(await readFile(path.join(dir, 'eclass/rocm.eclass'), 'utf8'), before);

    // eclass update --dry-run: the diff, the commit it would make and the mail; nothing written.
    const show = await runCli(['eclass', 'update', '--overlay', dir, '--dry-run', '--mail', '-'], { home: small.home, env: key.env });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /eclass\/rocm\.eclass: adds .*rocm_use_hipcc/);
    assert.match(show.stdout, /^would commit: rocm\.eclass: add /m);
    assert.match(show.stdout, /^--- a\/eclass\/rocm\.eclass\n\+\+\+ b\/eclass\/rocm\.eclass$/m);
    assert.match(show.stdout, /^To: gentoo-dev@lists\.gentoo\.org$/m);
    assert.match(show.stdout, /^Subject: \[PATCH\] rocm\.eclass: /m);
    assert.equal(await git(dir, ['rev-parse', 'HEAD'], small.home), `${start}\n`);

    const mail = path.join(work, 'rocm-eclass.patch');
    const up = await runCli(['eclass', 'update', '--overlay', dir, '--mail', mail, '--json'], { home: small.home, env: key.env });
    assert.equal(up.code, 0, up.stderr);
    const res = JSON.parse(up.stdout) as { committed: boolean; added: string[]; subject: string; mailFile: string };
    assert.ok(res.committed && res.added.includes('rocm_use_hipcc'), up.stdout);
    const text = await readFile(mail, 'utf8');
    assert.match(text, /^From: .*\nTo: gentoo-dev@lists\.gentoo\.org\nSubject: \[PATCH\] rocm\.eclass: .*\n\n/);
    assert.match(text.replace(/\s+/g, ' '), /those ebuilds use [^.]*rocm_use_hipcc[^.]*, which it does not have\. Eclass changes are posted to the gentoo-dev mailing list/);
    assert.match(text, /^diff --git a\/eclass\/rocm\.eclass b\/eclass\/rocm\.eclass\n--- a\/eclass\/rocm\.eclass$/m);
    // One commit, the eclass alone, signed as layout.conf asks.
    const signed = execFileSync('git', ['log', '--format=%G? %s', `${start}..HEAD`], { cwd: dir, env: { ...process.env, ...gitEnv(small.home), ...key.env }, encoding: 'utf8' });
    assert.equal(signed.trim(), `G ${res.subject}`);
    assert.deepEqual(await files(dir, start), ['eclass/rocm.eclass']);
    const eclassAt = (await git(dir, ['rev-parse', 'HEAD'], small.home)).trim();

    // Now the bump goes through and leaves the eclass alone.
    const r = await runCli(['bump', '6.2.2', '--overlay', dir, ...small.flags], { home: small.home, env: key.env });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!(await files(dir, eclassAt)).includes('eclass/rocm.eclass'));
    const check = await runCli(['pr', 'check', '--overlay', dir, '--range', start, '--no-pkgcheck', '--json', '--manifest', small.flags[1]!], { home: small.home, env: key.env });
    const results = (JSON.parse(check.stdout) as { results: { keyword: string; level: string; message: string }[] }).results;
    const eclass = results.filter((x) => x.keyword === 'EclassChange');
    assert.equal(eclass.length, 1);
    assert.equal(eclass[0]!.level, 'warning');
    assert.match(eclass[0]!.message, /gentoo-dev mailing list/);
    const body = await runCli(['pr', 'body', '--overlay', dir, '--range', start, '--no-pkgcheck', '--manifest', small.flags[1]!], { home: small.home, env: key.env });
    assert.match(body.stdout, /^\*\*Eclass change:\*\* `rocm\.eclass` is changed \(rocm\.eclass: add [^)]+\)\. It affects every ebuild in ::gentoo/m);
  });

  it('pr check refuses files ::gentoo has no place for, and rocm-ebuild\'s own settings file', async () => {
    const { dir, start } = await gentooCheckout('private', ['get_amdgpu_flags', 'check_amdgpu', 'rocm_use_hipcc', 'rocm_use_clang']);
    await writeTree(dir, { 'metadata/rocm-ebuild.conf': 'maintainer = gentoo\n', 'NOTES.txt': 'x\n', 'metadata/mine.conf': 'x\n', 'profiles/package.mask/rocm': '' });
    await git(dir, ['add', '-A'], small.home);
    await git(dir, ['commit', '-q', '-s', '-m', 'metadata, profiles: private files'], small.home);
    const check = await runCli(['pr', 'check', '--overlay', dir, '--range', start, '--no-pkgcheck', '--json'], { home: small.home, env: key.env });
    assert.equal(check.code, 6, check.stderr);
    const found = (JSON.parse(check.stdout) as { results: { keyword: string; file?: string }[] }).results.filter((x) => x.keyword === 'NotGentooFile').map((x) => x.file).sort();
    assert.deepEqual(found, ['NOTES.txt', 'metadata/mine.conf', 'metadata/rocm-ebuild.conf']);
    await writeFile(path.join(dir, 'profiles/repo_name'), 'my-overlay\n');
    await git(dir, ['commit', '-q', '-s', '-a', '-m', 'profiles: not ::gentoo any more'], small.home);
    const overlay = await runCli(['pr', 'check', '--overlay', dir, '--range', start, '--no-pkgcheck', '--json'], { home: small.home, env: key.env });
    assert.ok(!(JSON.parse(overlay.stdout) as { results: { keyword: string }[] }).results.some((x) => x.keyword === 'NotGentooFile'), 'an overlay is not ::gentoo');
  });
});
