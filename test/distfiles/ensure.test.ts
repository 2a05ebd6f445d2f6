import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fsSync, { promises as fs } from 'node:fs';
import path from 'node:path';
import { describeProblem, ensureDistfiles, silentProgress, type EnsureOptions } from '../../src/distfiles/index.js';
import { removeStaleLock } from '../../src/distfiles/lock.js';
import { TestServer } from '../helpers/http-server.js';
import { entryOf, listDir, need, payload, tempDir } from './support.js';

describe('distfiles: ensureDistfiles', () => {
  let server: TestServer;
  let distdir: string;
  let scratch: string;
  const opts = (extra: Partial<EnsureOptions> = {}): EnsureOptions => ({
    distdir,
    hashCacheFile: path.join(scratch, 'hash-cache.json'),
    retryDelayMs: 5,
    timeoutMs: 2000,
    ...extra,
  });

  beforeEach(async () => {
    server = await TestServer.start();
    scratch = await tempDir('ensure');
    distdir = path.join(scratch, 'distfiles');
  });
  afterEach(async () => {
    await server.close();
    await fs.rm(scratch, { recursive: true, force: true });
  });

  describe('offline', () => {
    it('reports absent files as missing with a hint, without touching the network or creating the distdir', async () => {
      server.route('/f/a.tar.gz', { body: payload(10) });
      const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')])], opts({ offline: true }));
      assert.equal(r!.status, 'missing');
      assert.match(r!.hint!, /Copy a\.tar\.gz into .*distfiles, or run without --offline/);
      assert.equal(server.requests.length, 0);
      await assert.rejects(fs.stat(distdir));
    });

    it('verifies present files against the Manifest', async () => {
      const body = payload(2000);
      await fs.mkdir(distdir);
      await fs.writeFile(path.join(distdir, 'a.tar.gz'), body);
      const [r] = await ensureDistfiles([need('a.tar.gz', ['http://127.0.0.1:9/never'], entryOf('a.tar.gz', body))], opts({ offline: true }));
      assert.equal(r!.status, 'present');
      assert.deepEqual(r!.entry, entryOf('a.tar.gz', body));
    });

    it('hashes present files that have no Manifest entry yet', async () => {
      const body = payload(2000);
      await fs.mkdir(distdir);
      await fs.writeFile(path.join(distdir, 'new.tar.gz'), body);
      const [r] = await ensureDistfiles([need('new.tar.gz', [])], opts({ offline: true }));
      assert.equal(r!.status, 'present');
      assert.deepEqual(r!.entry, entryOf('new.tar.gz', body));
    });

    it('moves a mismatching file aside, keeps it, and fails', async () => {
      const good = payload(2000);
      const bad = payload(2000);
      await fs.mkdir(distdir);
      await fs.writeFile(path.join(distdir, 'a.tar.gz'), bad);
      const [r] = await ensureDistfiles([need('a.tar.gz', [], entryOf('a.tar.gz', good))], opts({ offline: true }));
      assert.equal(r!.status, 'failed');
      assert.equal(r!.entry, undefined);
      assert.match(r!.error!, /does not match its Manifest entry \(BLAKE2B/);
      const files = await listDir(distdir);
      assert.equal(files.length, 1);
      assert.match(files[0]!, /^a\.tar\.gz\._checksum_failure_\.[0-9a-f]{8}$/);
      assert.deepEqual(await fs.readFile(path.join(distdir, files[0]!)), bad);
      assert.match(r!.hint!, /moved to .*_checksum_failure_/);
    });

    it('catches a file replaced behind the cache', async () => {
      const good = payload(3000);
      await fs.mkdir(distdir);
      const file = path.join(distdir, 'a.tar.gz');
      await fs.writeFile(file, good);
      const old = new Date(Date.now() - 60_000);
      await fs.utimes(file, old, old);
      const expected = entryOf('a.tar.gz', good);
      const [first] = await ensureDistfiles([need('a.tar.gz', [], expected)], opts({ offline: true }));
      assert.equal(first!.status, 'present');
      // Same size, same mtime, other bytes.
      await fs.writeFile(file, payload(3000));
      await fs.utimes(file, old, old);
      const [second] = await ensureDistfiles([need('a.tar.gz', [], expected)], opts({ offline: true }));
      assert.equal(second!.status, 'failed');
    });
  });

  it('uses a present, matching file without any request', async () => {
    const body = payload(1000);
    await fs.mkdir(distdir);
    await fs.writeFile(path.join(distdir, 'a.tar.gz'), body);
    server.route('/f/a.tar.gz', { body });
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts());
    assert.equal(r!.status, 'present');
    assert.equal(server.requests.length, 0);
  });

  it('replaces a mismatching present file by a verified download', async () => {
    const body = payload(1000);
    await fs.mkdir(distdir);
    await fs.writeFile(path.join(distdir, 'a.tar.gz'), payload(999));
    server.route('/f/a.tar.gz', { body });
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    assert.match(r!.attempts[0]!.outcome, /size 999, Manifest 1000\); moved to/);
    const files = await listDir(distdir);
    assert.equal(files.length, 2);
    assert.ok(files.includes('a.tar.gz'));
    assert.deepEqual(await fs.readFile(path.join(distdir, 'a.tar.gz')), body);
  });

  it('resumes a partial file left by an earlier run', async () => {
    const body = payload(50_000);
    await fs.mkdir(distdir);
    await fs.writeFile(path.join(distdir, 'a.tar.gz.partial'), body.subarray(0, 20_000));
    server.route('/f/a.tar.gz', { body });
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    assert.equal(server.requests[0]!.range, 'bytes=20000-');
    assert.deepEqual(await listDir(distdir), ['a.tar.gz']);
  });

  it('installs a partial file that is already complete without downloading it again', async () => {
    const body = payload(5000);
    await fs.mkdir(distdir);
    await fs.writeFile(path.join(distdir, 'a.tar.gz.partial'), body);
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    assert.equal(server.requests.length, 0);
  });

  it('restarts from zero when a resumed file turns out wrong', async () => {
    const body = payload(50_000);
    await fs.mkdir(distdir);
    await fs.writeFile(path.join(distdir, 'a.tar.gz.partial'), payload(20_000));
    server.route('/f/a.tar.gz', { body });
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    assert.deepEqual(server.requests.map((q) => q.range), ['bytes=20000-', undefined]);
    assert.deepEqual(await fs.readFile(path.join(distdir, 'a.tar.gz')), body);
  });

  it('does not resume a new distfile without a validator from the same URL', async () => {
    const body = payload(50_000);
    await fs.mkdir(distdir);
    await fs.writeFile(path.join(distdir, 'a.tar.gz.partial'), body.subarray(0, 20_000));
    server.route('/f/a.tar.gz', { body });
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.equal(server.requests[0]!.range, undefined);
  });

  it('does not resume a new distfile even when the server gave an ETag: it is fetched whole again', async () => {
    const body = payload(300_000);
    server.route('/f/a.tar.gz', { body, etag: '"v1"', faults: [{ kind: 'cut', after: 100_000 }] });
    const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.deepEqual(r!.entry, entryOf('a.tar.gz', body));
    assert.equal(server.requests[1]!.range, undefined);
    assert.deepEqual(await listDir(distdir), ['a.tar.gz']);
  });

  it('merges needs for one file from several packages and reports them all', async () => {
    const body = payload(100);
    server.route('/f/llvm-project-rocm-6.2.2.tar.gz', { body });
    const url = server.url('/f/llvm-project-rocm-6.2.2.tar.gz');
    const mk = (atom: string) => ({ name: 'llvm-project-rocm-6.2.2.tar.gz', urls: [url], neededBy: [{ atom, ebuild: `${atom.split('/')[1]}-6.2.2.ebuild` }] });
    const results = await ensureDistfiles([mk('dev-libs/rocm-comgr'), mk('dev-libs/rocm-device-libs'), mk('dev-util/hipcc')], opts());
    assert.equal(results.length, 1);
    assert.equal(results[0]!.status, 'fetched');
    assert.deepEqual(results[0]!.neededBy.map((n) => n.atom), ['dev-libs/rocm-comgr', 'dev-libs/rocm-device-libs', 'dev-util/hipcc']);
    assert.equal(server.requests.length, 1);
  });

  it('fails a file whose Manifests disagree, without fetching it', async () => {
    const a = { ...need('x.tar.gz', [server.url('/f/x')], entryOf('x.tar.gz', payload(10))), neededBy: [{ atom: 'a/a', ebuild: 'a-1.ebuild' }] };
    const b = { ...need('x.tar.gz', [server.url('/f/x')], entryOf('x.tar.gz', payload(10))), neededBy: [{ atom: 'b/b', ebuild: 'b-1.ebuild' }] };
    const [r] = await ensureDistfiles([a, b], opts());
    assert.equal(r!.status, 'failed');
    assert.match(r!.error!, /Manifests disagree about x\.tar\.gz: a\/a and b\/b/);
    assert.equal(server.requests.length, 0);
  });

  it('keeps going after one failure: the others are fetched', async () => {
    const body = payload(100);
    server.route('/f/ok.tar.gz', { body });
    const results = await ensureDistfiles(
      [need('missing.tar.gz', [server.url('/f/missing.tar.gz')]), need('ok.tar.gz', [server.url('/f/ok.tar.gz')])],
      opts(),
    );
    assert.deepEqual(results.map((r) => r.status), ['failed', 'fetched']);
    const text = describeProblem(results[0]!);
    assert.match(text, /^failed: missing\.tar\.gz/);
    assert.match(text, /needed by sci-libs\/rocFoo \(rocFoo-6\.2\.2\.ebuild\)/);
    assert.match(text, /tried:\n {4}http:\/\/127\.0\.0\.1:\d+\/f\/missing\.tar\.gz: HTTP 404/);
    assert.match(text, /what to do: /);
  });

  it('throws one clear error (exit 2) for a distdir that is a file, online or offline, before any request', async () => {
    await fs.writeFile(distdir, 'not a directory');
    for (const extra of [{}, { offline: true }, { offline: true, distdir: path.join(distdir, 'below') }]) {
      await assert.rejects(
        ensureDistfiles([need('a.tar.gz', [server.url('/f/a')])], opts(extra)),
        (err: Error & { exitCode?: number }) => err.exitCode === 2 && /distfiles.* is (a file, not a directory|not a directory)/.test(err.message),
      );
    }
    assert.equal(server.requests.length, 0);
  });

  it('rejects names that would escape the distdir', async () => {
    const [r] = await ensureDistfiles([need('../evil', [server.url('/x')])], opts());
    assert.equal(r!.status, 'failed');
    assert.match(r!.error!, /invalid distfile name/);
    assert.equal(server.requests.length, 0);
  });

  describe('mirrors', () => {
    it('tries a flat --mirror first', async () => {
      const body = payload(500);
      server.route('/mirror/a.tar.gz', { body });
      server.route('/upstream/a.tar.gz', { body });
      const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/upstream/a.tar.gz')])], opts({ mirrors: [server.url('/mirror')] }));
      assert.equal(r!.source, server.url('/mirror/a.tar.gz'));
      assert.equal(server.requestsFor('/upstream/a.tar.gz').length, 0);
    });

    it('falls back to upstream when the mirror lacks the file, without retrying the mirror', async () => {
      const body = payload(500);
      server.route('/upstream/a.tar.gz', { body });
      const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/upstream/a.tar.gz')])], opts({ mirrors: [server.url('/mirror/')] }));
      assert.equal(r!.status, 'fetched');
      assert.equal(r!.source, server.url('/upstream/a.tar.gz'));
      assert.deepEqual(r!.attempts[0], { url: server.url('/mirror/a.tar.gz'), outcome: 'HTTP 404', cause: 'http' });
    });

    it('reads a Gentoo mirror through its layout.conf (filename-hash BLAKE2B 8)', async () => {
      const body = payload(500);
      const name = 'rocm-core-6.2.2.tar.gz';
      const dir = createHash('blake2b512').update(name).digest('hex').slice(0, 2);
      server.route('/gentoo/distfiles/layout.conf', { body: Buffer.from('[structure]\n0=filename-hash BLAKE2B 8\n1=flat\n') });
      server.route(`/gentoo/distfiles/${dir}/${name}`, { body });
      const results = await ensureDistfiles(
        [need(name, ['http://127.0.0.1:9/unused']), need('other.tar.gz', [])],
        opts({ mirrors: [server.url('/gentoo/distfiles')] }),
      );
      assert.equal(results[0]!.source, server.url(`/gentoo/distfiles/${dir}/${name}`));
      assert.equal(server.requestsFor('/gentoo/distfiles/layout.conf').length, 1, 'layout.conf is read once per run');
    });

    it('skips an unreachable mirror for the rest of the run', async () => {
      const body = payload(100);
      server.route('/u/a', { body });
      server.route('/u/b', { body });
      const closed = await TestServer.start();
      const dead = closed.url('/mirror');
      await closed.close();
      const results = await ensureDistfiles([need('a', [server.url('/u/a')]), need('b', [server.url('/u/b')])], opts({ mirrors: [dead] }));
      assert.deepEqual(results.map((r) => r.status), ['fetched', 'fetched']);
      for (const r of results) assert.match(r.attempts[0]!.outcome, /^mirror skipped: .*connection refused/);
    });
  });

  describe('locks', () => {
    it('waits while another live process on this host downloads the file, then uses what it installed', async () => {
      await fs.mkdir(distdir);
      const body = payload(1000);
      const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
      const lock = path.join(distdir, 'a.tar.gz.partial.lock');
      try {
        await fs.writeFile(lock, `${sleeper.pid} ${(await import('node:os')).hostname()}\n`);
        const waited: string[] = [];
        const progress = {
          ...silentProgress,
          // What the holder does when it is done: install the file, drop its lock.
          waiting(name: string, holder: string) {
            waited.push(`${name}: ${holder}`);
            void fs.writeFile(path.join(distdir, name), body).then(() => fs.rm(lock));
          },
        };
        const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a')], entryOf('a.tar.gz', body))], opts({ progress }));
        assert.equal(r!.status, 'present', r!.error);
        assert.deepEqual(waited, [`a.tar.gz: process ${sleeper.pid} on ${(await import('node:os')).hostname()}`]);
        assert.equal(server.requests.length, 0);
        assert.deepEqual(await listDir(distdir), ['a.tar.gz']);
      } finally {
        sleeper.kill();
      }
    });

    it('stops waiting for another process when interrupted', async () => {
      await fs.mkdir(distdir);
      const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
      try {
        await fs.writeFile(path.join(distdir, 'a.tar.gz.partial.lock'), `${sleeper.pid} ${(await import('node:os')).hostname()}\n`);
        const controller = new AbortController();
        const progress = { ...silentProgress, waiting: () => controller.abort() };
        const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a')])], opts({ progress, signal: controller.signal }));
        assert.equal(r!.status, 'failed');
        assert.match(r!.error!, /interrupted/);
        assert.equal(server.requests.length, 0);
      } finally {
        sleeper.kill();
      }
    });

    it('does not wait for a lock held from another host (it cannot tell whether that run is alive)', async () => {
      await fs.mkdir(distdir);
      await fs.writeFile(path.join(distdir, 'a.tar.gz.partial.lock'), '4242 build-box-2\n');
      const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a')])], opts());
      assert.equal(r!.status, 'failed');
      assert.match(r!.error!, /being downloaded by process 4242 on build-box-2/);
      assert.match(r!.hint!, /another host .*delete .*a\.tar\.gz\.partial\.lock/);
      assert.equal(server.requests.length, 0);
    });

    it('taking over a stale lock never removes a lock another run took in the meantime', async () => {
      await fs.mkdir(distdir);
      const lock = path.join(distdir, 'a.tar.gz.partial.lock');
      // Both runs read the dead holder's lock; the other run was faster and replaced it with its own.
      const stale = '999999999 somehost\n';
      const fresh = `${process.pid} somehost\n`;
      await fs.writeFile(lock, fresh);
      await removeStaleLock(lock, stale);
      assert.equal(await fs.readFile(lock, 'utf8'), fresh, 'the live lock is still there');
      assert.deepEqual(await listDir(distdir), ['a.tar.gz.partial.lock']);
      await fs.writeFile(lock, stale);
      await removeStaleLock(lock, stale);
      assert.deepEqual(await listDir(distdir), [], 'the stale one is gone, and nothing is left aside');
    });

    it('takes over the lock of a process that is gone', async () => {
      await fs.mkdir(distdir);
      const gone = spawn(process.execPath, ['-e', '']);
      await new Promise((r) => gone.on('exit', r));
      await fs.writeFile(path.join(distdir, 'a.tar.gz.partial.lock'), `${gone.pid} ${(await import('node:os')).hostname()}\n`);
      server.route('/f/a', { body: payload(10) });
      const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a')])], opts());
      assert.equal(r!.status, 'fetched');
      assert.deepEqual(await listDir(distdir), ['a.tar.gz']);
    });
  });

  describe('a symlink planted in a shared distdir', () => {
    for (const withManifest of [true, false]) {
      it(`under the partial's and its meta file's names is never written through, ${withManifest ? 'with' : 'without'} a Manifest entry`, async () => {
        // Another user of a group-writable distdir points the partial names at files of ours.
        await fs.mkdir(distdir);
        const victim = path.join(scratch, 'precious.txt');
        const victimMeta = path.join(scratch, 'precious.json');
        await fs.writeFile(victim, 'precious');
        await fs.writeFile(victimMeta, '{"keep": true}');
        await fs.symlink(victim, path.join(distdir, 'a.tar.gz.partial'));
        await fs.symlink(victimMeta, path.join(distdir, 'a.tar.gz.partial.json'));
        if (!withManifest) {
          // A meta file that would let the resume go ahead, as the planted link's target.
          await fs.writeFile(victimMeta, JSON.stringify({ url: server.url('/f/a.tar.gz'), validator: '"v1"' }));
        }
        const metaBefore = await fs.readFile(victimMeta, 'utf8');
        const body = payload(200_000);
        server.route('/f/a.tar.gz', { body, etag: '"v1"' });
        const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], withManifest ? entryOf('a.tar.gz', body) : undefined)], opts());
        assert.equal(r!.status, 'fetched', r!.error);
        assert.equal(await fs.readFile(victim, 'utf8'), 'precious');
        assert.equal(await fs.readFile(victimMeta, 'utf8'), metaBefore);
        assert.deepEqual(await fs.readFile(path.join(distdir, 'a.tar.gz')), body);
        assert.deepEqual(await listDir(distdir), ['a.tar.gz']);
        assert.equal(server.requestsFor('/f/a.tar.gz')[0]!.range, undefined, 'the link was not resumed from');
      });
    }

    it('planted between the check and the open is refused by O_NOFOLLOW, not followed', async () => {
      await fs.mkdir(distdir);
      const victim = path.join(scratch, 'precious.txt');
      await fs.writeFile(victim, 'precious');
      const body = payload(50_000);
      server.route('/f/a.tar.gz', { body });
      const partial = path.join(distdir, 'a.tar.gz.partial');
      // The link appears once the response head is in: after every check, before the open.
      let planted = false;
      const progress = {
        ...silentProgress,
        downloading() {
          if (!planted) fsSync.symlinkSync(victim, partial);
          planted = true;
        },
      };
      const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts({ progress }));
      assert.equal(await fs.readFile(victim, 'utf8'), 'precious');
      assert.match(r!.attempts[0]!.outcome, /ELOOP|symbolic link/i);
      // The retry finds the link before opening anything, removes it and downloads afresh.
      assert.equal(r!.status, 'fetched', r!.error);
      assert.deepEqual(await listDir(distdir), ['a.tar.gz']);
    });
  });

  it('stops on abort, keeping the partial download', async () => {
    const body = payload(100_000);
    server.route('/f/a.tar.gz', { body, faults: [{ kind: 'stall', after: 30_000 }] });
    const controller = new AbortController();
    const progress = {
      begin() {},
      downloading() {},
      received(_: string, bytes: number) {
        if (bytes >= 30_000) controller.abort();
      },
      attemptFailed() {},
      hashing() {},
      finished() {},
      end() {},
    };
    const [r] = await ensureDistfiles(
      [need('a.tar.gz', [server.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))],
      opts({ signal: controller.signal, progress, timeoutMs: 20_000 }),
    );
    assert.equal(r!.status, 'failed');
    assert.match(r!.error!, /interrupted/);
    assert.match(r!.hint!, /Run again/);
    assert.deepEqual(await listDir(distdir), ['a.tar.gz.partial']);
    assert.equal((await fs.stat(path.join(distdir, 'a.tar.gz.partial'))).size, 30_000);
  });

  it('remembers digests of fetched files so the next run does not read them again', async () => {
    const body = payload(10_000);
    server.route('/f/a.tar.gz', { body, lastModified: new Date(Date.UTC(2024, 0, 1)).toUTCString() });
    const [first] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')])], opts());
    assert.equal(first!.status, 'fetched');
    const st = await fs.stat(path.join(distdir, 'a.tar.gz'));
    assert.equal(st.mtime.getTime(), Date.UTC(2024, 0, 1), 'mtime is the server’s Last-Modified');
    const cache = JSON.parse(await fs.readFile(path.join(scratch, 'hash-cache.json'), 'utf8')) as { entries: { [p: string]: { blake2b: string } } };
    assert.equal(cache.entries[path.join(distdir, 'a.tar.gz')]!.blake2b, first!.entry!.blake2b);
  });
});
