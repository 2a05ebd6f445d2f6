import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { appendFile, cp, lstat, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyOverlay, fullStackFixture } from '../helpers/bumped-overlay.js';
import { TestServer } from '../helpers/http-server.js';
import { git, removeDir, runCli, tempDir } from '../helpers/project.js';
import type { PlanJson } from '../helpers/stack-distfiles.js';

/** Every Manifest of the overlay with a digest of its content, to prove the untouched ones stayed so. */
async function manifests(overlay: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const category of await readdir(overlay)) {
    if (!/^[a-z]+-[a-z]+$/.test(category)) continue;
    for (const pn of await readdir(path.join(overlay, category))) {
      const file = path.join(overlay, category, pn, 'Manifest');
      if (existsSync(file)) out.set(`${category}/${pn}`, createHash('sha256').update(await readFile(file)).digest('hex'));
    }
  }
  return out;
}

describe('rocm-ebuild manifest (an overlay, a distdir and a mirror on 127.0.0.1)', function () {
  this.timeout(120_000);
  let work: string;
  let home: string;
  let distdir: string;
  let overlay: string;
  let plan: PlanJson;
  let server: TestServer;
  const rocprim = () => plan.packages.find((p) => p.atom === 'sci-libs/rocPRIM')!.distfiles[0]!.name;
  const hipcub = () => plan.packages.find((p) => p.atom === 'sci-libs/hipCUB')!.distfiles[0]!.name;
  const manifest = (args: string[]) => runCli(['manifest', ...args, '--overlay', overlay, '--distdir', distdir], { home });

  before(async () => {
    const shared = await fullStackFixture();
    work = await tempDir('rocm-ebuild-manifest-cmd-');
    home = shared.home;
    // The tests take distfiles away and change Manifests: private copies of both.
    distdir = path.join(work, 'distfiles');
    await cp(shared.distdir, distdir, { recursive: true });
    overlay = copyOverlay(shared.overlay, path.join(work, 'overlay'));
    plan = shared.plans.get('6.2.2')!;
    server = await TestServer.start();
  });

  after(async () => {
    await server.close();
    await removeDir(work);
  });

  it('reports the packages in build order, each after what it needs', async () => {
    const r = await manifest(['--offline']);
    assert.equal(r.code, 0, r.stderr);
    const printed = r.stdout.trim().split('\n').map((l) => l.split(/\s+/)[1]!);
    assert.equal(printed.length, plan.packages.length);
    const graph = JSON.parse((await runCli(['graph', '--version', '6.2.2', '--json'])).stdout) as { edges: { from: string; to: string; testOnly: boolean }[] };
    for (const e of graph.edges) if (!e.testOnly) assert.ok(printed.indexOf(e.to) < printed.indexOf(e.from), `${e.to} before ${e.from}`);
  });

  it('fetches a missing distfile from the mirror, verifies it against the Manifest and changes nothing else', async () => {
    const name = rocprim();
    const body = await readFile(path.join(distdir, name));
    server.route(`/mirror/${name}`, { body });
    await rm(path.join(distdir, name));
    const before = await manifests(overlay);
    const r = await manifest(['sci-libs/rocPRIM', '--mirror', server.url('/mirror')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^unchanged +sci-libs\/rocPRIM$/m);
    assert.deepEqual(await readFile(path.join(distdir, name)), body);
    assert.equal(server.requestsFor(`/mirror/${name}`).length, 1);
    assert.deepEqual(await manifests(overlay), before);
  });

  it('with --offline asks no mirror and reports the absent file as missing (exit 3)', async () => {
    const name = rocprim();
    const good = await readFile(path.join(distdir, name));
    server.route(`/bad/${name}`, { body: Buffer.from('not the release tarball') });
    await rm(path.join(distdir, name));
    try {
      const r = await manifest(['sci-libs/rocPRIM', '--mirror', server.url('/bad'), '--offline']);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, new RegExp(`missing: ${name.replace(/\./g, '\\.')}`));
      assert.equal(server.requestsFor(`/bad/${name}`).length, 0);
    } finally {
      await writeFile(path.join(distdir, name), good);
    }
  });

  it("drops the lines of versions no longer present; a version the stack does not know gets its ebuild's own SRC_URI", async () => {
    const file = path.join(overlay, 'sci-libs/rocPRIM/Manifest');
    const original = await readFile(file, 'utf8');
    const stale = 'DIST rocPRIM-6.1.2.tar.gz 1 BLAKE2B ' + 'a'.repeat(128) + ' SHA512 ' + 'b'.repeat(128);
    await appendFile(file, `${stale}\n`);
    await writeFile(
      path.join(overlay, 'sci-libs/rocPRIM/rocPRIM-7.9.0.ebuild'),
      '# an ebuild the stack manifest does not know\nEAPI=8\nSRC_URI="https://github.com/ROCm/rocPRIM/archive/rocm-${PV}.tar.gz -> ${P}.tar.gz"\n',
    );
    await writeFile(path.join(distdir, 'rocPRIM-7.9.0.tar.gz'), 'rocPRIM 7.9.0\n');
    const future = 'DIST rocPRIM-7.9.0.tar.gz 14 BLAKE2B ' + createHash('blake2b512').update('rocPRIM 7.9.0\n').digest('hex') + ' SHA512 ' + createHash('sha512').update('rocPRIM 7.9.0\n').digest('hex');
    const others = new Map([...(await manifests(overlay))].filter(([a]) => a !== 'sci-libs/rocPRIM'));
    try {
      const r = await manifest(['rocPRIM', '--offline']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^written +sci-libs\/rocPRIM \(7\.9\.0: distfiles from the ebuild's SRC_URI\)$/m);
      const lines = (await readFile(file, 'utf8')).trim().split('\n');
      assert.deepEqual(lines, [...original.trim().split('\n'), future].sort());
      assert.deepEqual(new Map([...(await manifests(overlay))].filter(([a]) => a !== 'sci-libs/rocPRIM')), others);
    } finally {
      await rm(path.join(overlay, 'sci-libs/rocPRIM/rocPRIM-7.9.0.ebuild'));
      await writeFile(file, original);
    }
  });

  it('writes the packages that succeeded and reports the one that did not (exit 3 offline)', async () => {
    const name = hipcub();
    const aside = await readFile(path.join(distdir, name));
    await rm(path.join(distdir, name));
    const rocprimFile = path.join(overlay, 'sci-libs/rocPRIM/Manifest');
    const original = await readFile(rocprimFile, 'utf8');
    await writeFile(rocprimFile, '');
    try {
      const r = await manifest(['sci-libs/rocPRIM', 'sci-libs/hipCUB', '--offline', '--json']);
      assert.equal(r.code, 3, r.stderr);
      const result = JSON.parse(r.stdout) as { packages: { atom: string; status: string }[]; distfiles: { name: string; status: string }[] };
      assert.deepEqual(
        result.packages.map((p) => [p.atom, p.status]).sort(),
        [['sci-libs/hipCUB', 'failed'], ['sci-libs/rocPRIM', 'written']],
      );
      assert.equal(result.distfiles.find((d) => d.name === name)!.status, 'missing');
      assert.equal(await readFile(rocprimFile, 'utf8'), original);
    } finally {
      await writeFile(path.join(distdir, name), aside);
    }
  });

  it('takes one value per --mirror, so packages may follow it', async () => {
    const r = await manifest(['--mirror', server.url('/unused'), 'sci-libs/rocPRIM', '--offline']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^unchanged +sci-libs\/rocPRIM$/m);
    assert.doesNotMatch(r.stdout, /hipCUB/);
  });

  describe('writes nothing outside the overlay', () => {
    const pkg = 'sci-libs/rocPRIM';
    afterEach(async () => {
      await rm(path.join(overlay, pkg), { recursive: true, force: true });
      await git(overlay, ['checkout', '--', pkg], home);
    });

    it('refuses a package directory that is a symlink leaving the overlay (exit 4, naming it)', async () => {
      const outside = path.join(work, 'outside-rocPRIM');
      await cp(path.join(overlay, pkg), outside, { recursive: true });
      await writeFile(path.join(outside, 'Manifest'), '');
      await rm(path.join(overlay, pkg), { recursive: true });
      await symlink(outside, path.join(overlay, pkg));
      const r = await manifest([pkg, '--offline']);
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, new RegExp(`${pkg}: a symlink to ${outside}, outside the overlay; refusing to write through it`));
      assert.equal(await readFile(path.join(outside, 'Manifest'), 'utf8'), '');
      assert.deepEqual((await readdir(outside)).sort(), ['Manifest', 'metadata.xml', 'rocPRIM-6.2.2.ebuild']);
    });

    it('refuses a Manifest that is a symlink leaving the overlay', async () => {
      const outside = path.join(work, 'outside-dir');
      await mkdir(outside, { recursive: true });
      await writeFile(path.join(outside, 'Manifest'), '');
      await rm(path.join(overlay, pkg, 'Manifest'));
      await symlink(path.join(outside, 'Manifest'), path.join(overlay, pkg, 'Manifest'));
      const r = await manifest([pkg, '--offline']);
      assert.equal(r.code, 4, r.stderr);
      assert.match(r.stderr, new RegExp(`${pkg}/Manifest: a symlink to ${outside}/Manifest, outside the overlay`));
      assert.equal(await readFile(path.join(outside, 'Manifest'), 'utf8'), '');
      assert.ok((await lstat(path.join(overlay, pkg, 'Manifest'))).isSymbolicLink());
    });
  });

  it('refuses a package that is neither in the overlay nor in the stack (exit 2)', async () => {
    const r = await manifest(['sci-libs/not-rocm']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /"sci-libs\/not-rocm" is not known/);
    const typo = await manifest(['rocPRIMM']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /"rocPRIMM" is not known; did you mean sci-libs\/rocPRIM\?/);
  });
});
