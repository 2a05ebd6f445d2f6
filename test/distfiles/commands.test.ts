import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TestServer, testCert } from '../helpers/http-server.js';
import { git, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';
import { synthesizeDistfiles, type PlanJson } from '../helpers/stack-distfiles.js';

/**
 * The distfile behaviour of the real `manifest` and `bump` commands: one
 * overlay bumped offline from synthetic distfiles, shared by every test here
 * (each test restores what it changes).
 */
describe('distfiles through the commands (manifest, bump)', function () {
  this.timeout(120_000);
  let work: string;
  let home: string;
  let distdir: string;
  let overlay: string;
  let plan: PlanJson;
  const cacheFile = () => path.join(home, '.cache', 'rocm-ebuild', 'hash-cache.json');
  const rocprim = () => plan.packages.find((p) => p.atom === 'sci-libs/rocPRIM')!.distfiles[0]!.name;
  const manifest = (args: string[], env?: NodeJS.ProcessEnv) =>
    runCli(['manifest', ...args, '--overlay', overlay, '--distdir', distdir], { home, ...(env ? { env } : {}) });

  before(async () => {
    work = await tempDir('rocm-ebuild-distfile-cmds-');
    home = await gitHome({ name: 'Ada Tester', email: 'ada@example.org' });
    distdir = path.join(work, 'distfiles');
    overlay = path.join(work, 'overlay');
    plan = await synthesizeDistfiles('6.2.2', distdir, home);
    const r = await runCli(['bump', '6.2.2', '--overlay', overlay, '--distdir', distdir, '--offline'], { home });
    assert.equal(r.code, 0, r.stderr);
  });

  after(async () => {
    await removeDir(work);
    await removeDir(home);
  });

  it('manifest --force reads every file again instead of trusting a (tampered) hash cache', async () => {
    const name = rocprim();
    const file = path.join(distdir, name);
    const manifestFile = path.join(overlay, 'sci-libs/rocPRIM/Manifest');
    const good = await readFile(manifestFile, 'utf8');
    const body = await readFile(file);
    const truth = {
      blake2b: createHash('blake2b512').update(body).digest('hex'),
      sha512: createHash('sha512').update(body).digest('hex'),
    };
    // A cache entry the cache's own rules accept (same stamp, settled mtime) but with other digests.
    const old = new Date(Date.now() - 3600_000);
    await utimes(file, old, old);
    const st = await stat(file, { bigint: true });
    const lie = { blake2b: 'c'.repeat(128), sha512: 'd'.repeat(128) };
    await mkdir(path.dirname(cacheFile()), { recursive: true });
    await writeFile(
      cacheFile(),
      JSON.stringify({
        version: 1,
        entries: {
          [file]: {
            dev: String(st.dev),
            ino: String(st.ino),
            size: String(st.size),
            mtimeNs: String(st.mtimeNs),
            ctimeNs: String(st.ctimeNs),
            ...lie,
            readStartMs: Date.now(),
          },
        },
      }),
    );
    try {
      const r = await manifest(['sci-libs/rocPRIM', '--offline', '--force']);
      assert.equal(r.code, 0, r.stderr);
      const text = await readFile(manifestFile, 'utf8');
      assert.ok(text.includes(`BLAKE2B ${truth.blake2b} SHA512 ${truth.sha512}`), text);
      assert.ok(!text.includes(lie.blake2b));
      const cache = JSON.parse(await readFile(cacheFile(), 'utf8')) as { entries: { [p: string]: { blake2b: string } } };
      assert.equal(cache.entries[file]?.blake2b ?? truth.blake2b, truth.blake2b, 'the lie is not kept in the cache either');
    } finally {
      await writeFile(manifestFile, good);
      await rm(cacheFile(), { force: true });
    }
  });

  describe('a malformed line in an existing Manifest', () => {
    const cases: [string, (line: string) => string][] = [
      ['a size that is not a number', (l) => l.replace(/^(DIST \S+) \d+/, '$1 12x')],
      ['a truncated line', (l) => l.split(' ').slice(0, 4).join(' ')],
      ['an unknown entry type', () => 'DISTFILE foo.tar.gz 1'],
      ['a digest that is not hex', (l) => l.replace(/BLAKE2B [0-9a-f]{8}/, 'BLAKE2B zzzzzzzz')],
    ];
    cases.forEach(([what, spoil], i) => {
      // One case goes through bump too: each bump costs seconds, and the parser is the same.
      const withBump = i === 0;
      it(`${what}: ${withBump ? 'manifest and bump name' : 'manifest names'} the file and line (exit 4) and change nothing`, async () => {
        const manifestFile = path.join(overlay, 'sci-libs/rocPRIM/Manifest');
        const good = await readFile(manifestFile, 'utf8');
        const lines = good.trimEnd().split('\n');
        const bad = [...lines, spoil(lines[0]!)].join('\n') + '\n';
        const head = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
        await writeFile(manifestFile, bad);
        // Committed, as a hand edit would be: bump refuses a dirty worktree before reading Manifests.
        await git(overlay, ['commit', '-q', '-am', 'sci-libs/rocPRIM: a hand-edited Manifest'], home);
        const committed = (await git(overlay, ['rev-parse', 'HEAD'], home)).trim();
        try {
          const m = await manifest(['sci-libs/rocPRIM', '--offline']);
          assert.equal(m.code, 4, m.stderr);
          assert.match(m.stderr, new RegExp(`sci-libs/rocPRIM/Manifest:${lines.length + 1}: `));
          assert.doesNotMatch(m.stderr, /at .*\.js:\d+/, 'no stack trace');
          assert.equal(await readFile(manifestFile, 'utf8'), bad);
          if (!withBump) return;
          // A bump adding a version to rocPRIM must read its Manifest first.
          const b = await runCli(['bump', '6.2.4', '--overlay', overlay, '--distdir', distdir, '--offline'], { home });
          assert.equal(b.code, 4, b.stderr);
          assert.match(b.stderr, new RegExp(`sci-libs/rocPRIM/Manifest:${lines.length + 1}: `));
          assert.equal((await git(overlay, ['rev-parse', 'HEAD'], home)).trim(), committed);
          assert.equal(await git(overlay, ['status', '--porcelain'], home), '');
        } finally {
          await git(overlay, ['reset', '-q', '--hard', head], home);
          assert.equal(await readFile(manifestFile, 'utf8'), good);
        }
      });
    });
  });

  describe('a distdir that is not a directory', () => {
    it('manifest: one line, exit 2, before any work', async () => {
      const file = path.join(work, 'a-file');
      await writeFile(file, 'not a directory\n');
      for (const args of [['--offline'], []]) {
        const r = await runCli(['manifest', '--overlay', overlay, '--distdir', file, ...args], { home });
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, /--distdir .*a-file is a file, not a directory/);
        assert.equal(r.stdout, '');
      }
    });

    it('bump: one line, exit 2, and a new overlay is not even created', async () => {
      const file = path.join(work, 'a-file');
      await writeFile(file, 'not a directory\n');
      const fresh = path.join(work, 'fresh-overlay');
      for (const distdirArgs of [['--distdir', file], ['--distdir', path.join(file, 'sub')]]) {
        const r = await runCli(['bump', '6.2.2', '--overlay', fresh, ...distdirArgs], { home });
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr, /--distdir .*(is a file, not a directory|is not a directory: .*a-file is a file)/);
        assert.ok(!existsSync(fresh), 'nothing was done');
      }
    });

    it('$DISTDIR naming a file is refused the same way', async () => {
      const file = path.join(work, 'a-file');
      await writeFile(file, 'not a directory\n');
      const r = await runCli(['manifest', '--overlay', overlay, '--offline'], { home, env: { DISTDIR: file } });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /DISTDIR from the environment .*a-file is a file, not a directory/);
    });
  });

  describe('downloads through a proxy that refuses github.com (no real network is used)', () => {
    let proxy: TestServer;
    const viaProxy = (): NodeJS.ProcessEnv => ({
      HTTP_PROXY: proxy.origin,
      HTTPS_PROXY: proxy.origin,
      http_proxy: undefined,
      https_proxy: undefined,
      // Mirrors on 127.0.0.1 are reached directly.
      NO_PROXY: '127.0.0.1',
      no_proxy: undefined,
      GENTOO_MIRRORS: undefined,
    });
    before(async () => {
      proxy = await TestServer.start();
      proxy.proxyStatus = 403;
    });
    after(async () => {
      await proxy.close();
    });

    /** Moves `count` distfiles of the plan that come from github.com out of the distdir for the test's duration. */
    async function withoutDistfiles<T>(count: number, run: (names: string[]) => Promise<T>): Promise<T> {
      const names = plan.packages
        .flatMap((p) => p.distfiles)
        .filter((d) => d.urls.some((u) => new URL(u).host === 'github.com'))
        .map((d) => d.name)
        .filter((n, i, all) => all.indexOf(n) === i)
        .slice(0, count);
      assert.equal(names.length, count);
      const aside = path.join(work, 'aside');
      await mkdir(aside, { recursive: true });
      for (const n of names) await rename(path.join(distdir, n), path.join(aside, n));
      try {
        return await run(names);
      } finally {
        for (const n of names) await rename(path.join(aside, n), path.join(distdir, n));
      }
    }

    it('one host that cannot be reached is one line with advice, not a block per file (exit 5)', async () => {
      await withoutDistfiles(8, async (names) => {
        const r = await runCli(['manifest', '--overlay', overlay, '--distdir', distdir, '--retries', '0'], { home, env: viaProxy() });
        assert.equal(r.code, 5, r.stderr);
        const lines = r.stderr.trim().split('\n');
        assert.ok(lines.length <= 16, `a short report:\n${r.stderr}`);
        assert.match(r.stderr, /^github\.com: the proxy refused the connection: HTTP 403 \(8 files: .*, … and 3 more\)$/m);
        assert.match(r.stderr, /what to do: The proxy refused to connect to github\.com .*--mirror.*--offline/);
        assert.doesNotMatch(r.stderr, /aborted|disk space/);
        for (const n of names) assert.match(r.stdout, new RegExp(`^(failed|unchanged) +`, 'm'), n);
      });
    });

    it('--json keeps every file with each URL tried and the cause', async () => {
      await withoutDistfiles(3, async (names) => {
        const r = await runCli(['manifest', '--overlay', overlay, '--distdir', distdir, '--retries', '0', '--json'], { home, env: viaProxy() });
        assert.equal(r.code, 5, r.stderr);
        const result = JSON.parse(r.stdout) as { distfiles: { name: string; status: string; attempts: { url: string; outcome: string }[]; failure?: { cause: string; host: string } }[] };
        const failed = result.distfiles.filter((d) => d.status === 'failed');
        assert.deepEqual(failed.map((d) => d.name).sort(), [...names].sort());
        for (const d of failed) {
          assert.deepEqual(d.failure && { cause: d.failure.cause, host: d.failure.host }, { cause: 'proxy', host: 'github.com' });
          assert.ok(d.attempts.length >= 1 && d.attempts.every((a) => a.url.startsWith('https://github.com/')), JSON.stringify(d.attempts));
        }
      });
    });

    it('fetches from an https mirror through the proxy\'s CONNECT tunnel, trusting a CA given with NODE_EXTRA_CA_CERTS', async () => {
      const name = rocprim();
      const file = path.join(distdir, name);
      const manifestFile = path.join(overlay, 'sci-libs/rocPRIM/Manifest');
      const good = await readFile(manifestFile, 'utf8');
      const body = await readFile(file);
      const cert = testCert();
      const caFile = path.join(work, 'mirror-ca.pem');
      await writeFile(caFile, cert.cert);
      const mirror = await TestServer.start({ tls: cert });
      const mirrorHost = new URL(mirror.origin).host;
      // Like a proxy's access rules: the mirror is allowed, anything else (github.com) refused.
      proxy.proxyStatus = (to) => (to === mirrorHost ? 200 : 403);
      const tunnelsBefore = proxy.tunnels.length;
      try {
        mirror.route(`/mirror/${name}`, { body });
        await rename(file, path.join(work, name));
        const r = await runCli(['manifest', 'sci-libs/rocPRIM', '--overlay', overlay, '--distdir', distdir, '--mirror', mirror.url('/mirror'), '--retries', '0'], {
          home,
          // 127.0.0.1 goes through the proxy too this time.
          env: { ...viaProxy(), NO_PROXY: undefined, NODE_EXTRA_CA_CERTS: caFile },
        });
        assert.equal(r.code, 0, r.stderr);
        const tunnels = proxy.tunnels.slice(tunnelsBefore);
        assert.ok(tunnels.length >= 1 && tunnels.every((t) => t === mirrorHost), tunnels.join(' '));
        assert.equal(mirror.requestsFor(`/mirror/${name}`).length, 1);
        assert.deepEqual(await readFile(file), body);
        assert.equal(await readFile(manifestFile, 'utf8'), good, 'the Manifest entry verified the download');
      } finally {
        proxy.proxyStatus = 403;
        await mirror.close();
        if (!existsSync(file)) await rename(path.join(work, name), file);
        await rm(path.join(work, name), { force: true });
      }
    });

    it('--max-size caps a download no Manifest sizes yet (bump and manifest take it)', async () => {
      const name = rocprim();
      const manifestFile = path.join(overlay, 'sci-libs/rocPRIM/Manifest');
      const good = await readFile(manifestFile, 'utf8');
      const mirror = await TestServer.start();
      try {
        mirror.route(`/mirror/${name}`, { body: Buffer.alloc(0), faults: [{ kind: 'endless' }] });
        await rm(manifestFile);
        await rename(path.join(distdir, name), path.join(work, name));
        const r = await runCli(
          ['manifest', 'sci-libs/rocPRIM', '--overlay', overlay, '--distdir', distdir, '--mirror', mirror.url('/mirror'), '--max-size', '2', '--retries', '0'],
          { home, env: viaProxy() },
        );
        assert.equal(r.code, 5, r.stderr);
        assert.match(r.stderr, /sends more than the 2\.0 MiB cap .*\(--max-size\)/);
        assert.ok(!existsSync(path.join(distdir, name)) && !existsSync(path.join(distdir, `${name}.partial`)));
        const help = await runCli(['bump', '--help'], { home });
        assert.match(help.stdout, /--max-size=MIB/);
        const manifestHelp = (await runCli(['manifest', '--help'], { home })).stdout.replace(/\s+/g, ' ');
        assert.match(manifestHelp, /HTTP_PROXY, HTTPS_PROXY and NO_PROXY .*NODE_EXTRA_CA_CERTS=FILE/);
      } finally {
        await mirror.close();
        await rename(path.join(work, name), path.join(distdir, name));
        await writeFile(manifestFile, good);
      }
    });
  });
});
