import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, smallStackFixture, type SmallStackFixture } from '../helpers/bumped-overlay.js';
import { git, removeDir, runCli, tempDir, writeTree } from '../helpers/project.js';

/** manifest and lint on any ebuild of an overlay, as pkgdev and pkgcheck users expect. */
describe('manifest and lint: any ebuild of the overlay, the stack\'s conventions for the stack only', function () {
  this.timeout(120_000);
  let small: SmallStackFixture;
  let work: string;
  let overlay: string;
  let distdir: string;
  const year = new Date().getFullYear();
  const foo = (eapi: string, extra = '') => `# Copyright 1999-${year} Gentoo Authors
# Distributed under the terms of the GNU General Public License v2

EAPI=${eapi}

DESCRIPTION="A small library that is not part of the ROCm stack"
HOMEPAGE="https://example.org/foo"
SRC_URI="https://example.org/releases/\${P}.tar.gz${extra}"

LICENSE="MIT"
SLOT="0"
KEYWORDS="~amd64"
`;
  const manifestFlags = () => ['--overlay', overlay, '--manifest', small.flags[small.flags.indexOf('--manifest') + 1]!, '--distdir', distdir, '--offline'];

  before(async () => {
    small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-any-');
    overlay = copyOverlay(small.overlay, path.join(work, 'overlay'));
    distdir = path.join(work, 'distfiles');
    execFileSync('cp', ['-a', small.distdir, distdir]);
    await writeFile(path.join(distdir, 'gpulib-6.3.4.tar.gz'), 'gpulib 6.3.4\n');
    await writeFile(path.join(distdir, 'foo-1.0.tar.gz'), 'foo 1.0\n');
    // A hand-made version of a stack package the manifest does not know, and a package of no stack.
    const gpulib = await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.2.2.ebuild'), 'utf8');
    await writeTree(overlay, {
      'sci-libs/gpulib/gpulib-6.3.4.ebuild': gpulib,
      'dev-libs/foo/foo-1.0.ebuild': foo('7'),
      'dev-libs/foo/metadata.xml': await readFile(path.join(overlay, 'dev-libs/rocm-base/metadata.xml'), 'utf8'),
    });
  });
  after(() => removeDir(work));

  it('manifest writes the DIST lines of a version the stack manifest does not know, from its own SRC_URI', async () => {
    const r = await runCli(['manifest', 'gpulib', ...manifestFlags()], { home: small.home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /written\s+sci-libs\/gpulib \(6\.3\.4: distfiles from the ebuild's SRC_URI\)/);
    const text = await readFile(path.join(overlay, 'sci-libs/gpulib/Manifest'), 'utf8');
    assert.match(text, /^DIST gpulib-6\.3\.4\.tar\.gz 13 BLAKE2B [0-9a-f]{128} SHA512 [0-9a-f]{128}$/m);
    assert.match(text, /^DIST gpulib-6\.2\.2\.tar\.gz /m);
  });

  it('manifest accepts a package of no stack (dev-libs/foo), and by default does every package of the overlay', async () => {
    const r = await runCli(['manifest', 'dev-libs/foo', ...manifestFlags()], { home: small.home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(await readFile(path.join(overlay, 'dev-libs/foo/Manifest'), 'utf8'), /^DIST foo-1\.0\.tar\.gz 8 BLAKE2B /m);
    const all = await runCli(['manifest', ...manifestFlags()], { home: small.home });
    assert.equal(all.code, 0, all.stderr);
    for (const atom of ['dev-libs/foo', 'dev-libs/rocm-base', 'sci-libs/app', 'sci-libs/gpulib']) assert.match(all.stdout, new RegExp(`\\s${atom}\\b`));
  });

  it('hostile SRC_URI: a command substitution is not run and leaves the Manifest as it was (exit 2); a name leaving the distdir is refused', async () => {
    const marker = path.join(work, 'ran');
    await writeFile(path.join(overlay, 'dev-libs/foo/foo-1.1.ebuild'), foo('8', ` $(touch ${marker})`));
    const before = await readFile(path.join(overlay, 'dev-libs/foo/Manifest'), 'utf8');
    const r = await runCli(['manifest', 'dev-libs/foo', ...manifestFlags()], { home: small.home });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /unevaluated\s+dev-libs\/foo: foo-1\.1\.ebuild: SRC_URI uses \$\(touch /);
    assert.equal(await readFile(path.join(overlay, 'dev-libs/foo/Manifest'), 'utf8'), before);
    assert.ok(!existsSync(marker));
    await writeFile(path.join(overlay, 'dev-libs/foo/foo-1.1.ebuild'), foo('8', ' -> ../../escape.tar.gz'));
    const bad = await runCli(['manifest', 'dev-libs/foo', ...manifestFlags()], { home: small.home });
    assert.equal(bad.code, 5, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /invalid distfile name/);
    assert.ok(!existsSync(path.join(work, 'escape.tar.gz')));
    assert.equal(await readFile(path.join(overlay, 'dev-libs/foo/Manifest'), 'utf8'), before);
    await git(overlay, ['clean', '-q', '-f', 'dev-libs/foo/foo-1.1.ebuild'], small.home).catch(() => undefined);
    execFileSync('rm', ['-f', path.join(overlay, 'dev-libs/foo/foo-1.1.ebuild')]);
  });

  it('lint --overlay checks every ebuild, the stack\'s conventions only on the stack\'s packages, with messages that fit', async () => {
    const r = await runCli(['lint', '--overlay', overlay, '--manifest', small.flags[small.flags.indexOf('--manifest') + 1]!, '--json', '--no-shellcheck'], { home: small.home });
    const out = JSON.parse(r.stdout) as { results: { category: string; package: string; version: string; keyword: string; message: string }[] };
    const of = (pkg: string, version: string) => out.results.filter((x) => x.package === pkg && x.version === version).map((x) => x.keyword);
    assert.ok(!of('foo', '1.0').includes('UnsupportedEapi'), 'EAPI 7 is accepted for a package of no stack');
    assert.ok(!of('foo', '1.0').includes('MissingSlotSubslot'), 'SLOT="0" is fine outside the stack');
    // The hand-made gpulib-6.3.4 is checked (it used to be skipped), as a stack package.
    const text = await readFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.3.4.ebuild'), 'utf8');
    await writeFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.3.4.ebuild'), text.replace('EAPI=8', 'EAPI=7').replace('SLOT="0/$(ver_cut 1-2)"', 'SLOT="0"'));
    await writeFile(path.join(overlay, 'dev-libs/foo/foo-1.0.ebuild'), foo('6'));
    const again = await runCli(['lint', '--overlay', overlay, 'gpulib', 'dev-libs/foo', '--manifest', small.flags[small.flags.indexOf('--manifest') + 1]!, '--json', '--no-shellcheck'], { home: small.home });
    assert.equal(again.code, 6, again.stderr);
    const res = (JSON.parse(again.stdout) as typeof out).results;
    const msg = (pkg: string, version: string, keyword: string) => res.find((x) => x.package === pkg && x.version === version && x.keyword === keyword)?.message;
    assert.match(msg('gpulib', '6.3.4', 'UnsupportedEapi') ?? '', /EAPI=8 must be the first assignment \(the ROCm stack's ebuilds are EAPI 8\)/);
    assert.match(msg('gpulib', '6.3.4', 'MissingSlotSubslot') ?? '', /ROCm packages use SLOT="0\/\$\(ver_cut 1-2\)"/);
    assert.match(msg('foo', '1.0', 'UnsupportedEapi') ?? '', /EAPI=6 is banned in ::gentoo; use 8/);
    assert.equal(msg('foo', '1.0', 'MissingSlotSubslot'), undefined);
    await writeFile(path.join(overlay, 'sci-libs/gpulib/gpulib-6.3.4.ebuild'), text);
    await writeFile(path.join(overlay, 'dev-libs/foo/foo-1.0.ebuild'), foo('7'));
  });

  it('lint refuses a name that is in neither the overlay nor the stack, with a suggestion', async () => {
    const r = await runCli(['lint', '--overlay', overlay, 'dev-libs/fo', '--manifest', small.flags[small.flags.indexOf('--manifest') + 1]!], { home: small.home });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /"dev-libs\/fo" is not known; did you mean dev-libs\/foo\?/);
  });
});
