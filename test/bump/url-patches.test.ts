import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixtureManifest } from '../helpers/fixture-manifest.js';
import { TestServer } from '../helpers/http-server.js';
import { removeDir, runCli, tempDir } from '../helpers/project.js';
import { FIXER } from '../helpers/fixer-component.js';

/** A second package naming the same upstream patch: one distfile, fetched once, in both Manifests. */
const FIXER_TOOLS = `name: fixer-tools
atom: dev-util/fixer-tools
description: Tools built from the same tree, needing the same upstream fix
homepage: https://github.com/ROCm/fixer
license: MIT
sources:
  - github: ROCm/fixer-tools
build: cmake
patches:
  - url: https://github.com/ROCm/fixer/commit/0123456789abcdef0123456789abcdef01234567.patch
    distfile: fixer-6.3.0-0123456.patch
    reason: upstream's fix for building against a newer LLVM
    releases: { from: "6.3.0" }
`;

const PATCH = Buffer.from('From 0123456789abcdef0123456789abcdef01234567\n--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n@@ -1 +1 @@\n-a\n+b\n'.repeat(64));

describe('rocm-ebuild manifest: patches fetched by URL are distfiles (a mirror on 127.0.0.1)', function () {
  this.timeout(120_000);
  let work: string;
  let manifestDir: string;
  let server: TestServer;

  before(async () => {
    work = await tempDir('rocm-ebuild-url-patches-');
    manifestDir = await fixtureManifest({ 'components/fixer.yaml': FIXER, 'components/fixer-tools.yaml': FIXER_TOOLS });
    server = await TestServer.start();
  });
  after(async () => {
    await server.close();
    await removeDir(work);
    await removeDir(manifestDir);
  });

  it('fetches the patch once for both packages, through a cut connection, and writes its DIST line in each Manifest', async () => {
    const overlay = path.join(work, 'overlay');
    const distdir = path.join(work, 'distfiles');
    await mkdir(distdir, { recursive: true });
    await mkdir(path.join(overlay, 'profiles'), { recursive: true });
    await mkdir(path.join(overlay, 'metadata'), { recursive: true });
    await writeFile(path.join(overlay, 'profiles', 'repo_name'), 'test\n');
    await writeFile(path.join(overlay, 'metadata', 'layout.conf'), 'masters = gentoo\nthin-manifests = true\n');
    for (const atom of ['dev-libs/fixer', 'dev-util/fixer-tools']) {
      const pn = atom.split('/')[1]!;
      await mkdir(path.join(overlay, atom), { recursive: true });
      const r = await runCli(['render', atom, '--version', '6.3.0', '--manifest', manifestDir]);
      assert.equal(r.code, 0, r.stderr);
      await writeFile(path.join(overlay, atom, `${pn}-6.3.0.ebuild`), r.stdout);
    }
    const tarballs = { 'fixer-6.3.0.tar.gz': Buffer.from('fixer sources\n'), 'fixer-tools-6.3.0.tar.gz': Buffer.from('fixer-tools sources\n') };
    for (const [name, body] of Object.entries(tarballs)) server.route(`/mirror/${name}`, { body });
    // The first answer breaks off mid-file; the fetcher resumes it.
    server.route('/mirror/fixer-6.3.0-0123456.patch', { body: PATCH, faults: [{ kind: 'cut', after: 100 }] });

    const r = await runCli(['manifest', '--overlay', overlay, '--distdir', distdir, '--mirror', server.url('/mirror'), '--manifest', manifestDir], {
      env: { XDG_CACHE_HOME: path.join(work, 'cache') },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.deepEqual(await readFile(path.join(distdir, 'fixer-6.3.0-0123456.patch')), PATCH);
    const dist = `DIST fixer-6.3.0-0123456.patch ${PATCH.length} BLAKE2B ${createHash('blake2b512').update(PATCH).digest('hex')} SHA512 ${createHash('sha512').update(PATCH).digest('hex')}`;
    for (const atom of ['dev-libs/fixer', 'dev-util/fixer-tools']) {
      const lines = (await readFile(path.join(overlay, atom, 'Manifest'), 'utf8')).trim().split('\n');
      assert.ok(lines.includes(dist), `${atom}: ${lines.join('\n')}`);
      assert.equal(lines.length, 2, atom);
    }
    // One file for both packages: the cut request and its resumption, nothing more.
    assert.equal(server.requestsFor('/mirror/fixer-6.3.0-0123456.patch').length, 2);
  });
});
