import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { createProgress, describeProblems, ensureDistfiles, type EnsureOptions } from '../../src/distfiles/index.js';
import { TestServer, testCert } from '../helpers/http-server.js';
import { entryOf, listDir, need, payload, tempDir } from './support.js';

describe('distfiles: server faults', () => {
  let server: TestServer;
  let distdir: string;
  const opts = (extra: Partial<EnsureOptions> = {}): EnsureOptions => ({
    distdir,
    hashCacheFile: false,
    retryDelayMs: 5,
    timeoutMs: 5000,
    ...extra,
  });

  beforeEach(async () => {
    server = await TestServer.start();
    distdir = await tempDir('faults');
  });
  afterEach(async () => {
    await server.close();
    await fs.rm(distdir, { recursive: true, force: true });
  });

  async function assertInstalled(name: string, body: Buffer): Promise<void> {
    assert.deepEqual(await fs.readFile(path.join(distdir, name)), body);
    assert.deepEqual(await listDir(distdir), [name], 'nothing but the finished file is left');
  }

  describe('a response ended with a FIN (undici issue 5360)', () => {
    // A little more than undici's 64 KiB body buffer arrives, then the FIN, while
    // the downloader is still opening the partial file: the parser is paused
    // when the socket ends, which crashed undici 7 (assert(!this.paused)).
    const size = 200_000;
    const cut = 80_000;

    for (const withManifest of [true, false]) {
      it(`Connection: close cut mid-body is retried, ${withManifest ? 'with' : 'without'} a Manifest entry`, async () => {
        const body = payload(size);
        server.route('/f/a.tar.gz', { body, etag: '"v1"', faults: [{ kind: 'fin', after: cut }, { kind: 'fin', after: cut * 2 }] });
        const [r] = await ensureDistfiles([need('a.tar.gz', [server.url('/f/a.tar.gz')], withManifest ? entryOf('a.tar.gz', body) : undefined)], opts());
        assert.equal(r!.status, 'fetched', r!.error);
        assert.match(r!.attempts[0]!.outcome, /shorter than its Content-Length|closed/);
        await assertInstalled('a.tar.gz', body);
      });
    }

    it('Connection: close with the whole body, then a FIN', async () => {
      const body = payload(cut);
      server.route('/f/b.tar.gz', { body, faults: [{ kind: 'fin', after: cut }] });
      const [r] = await ensureDistfiles([need('b.tar.gz', [server.url('/f/b.tar.gz')])], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      await assertInstalled('b.tar.gz', body);
    });

    it('HTTP/1.0 with Content-Length, cut, then whole', async () => {
      const body = payload(size);
      server.route('/f/c.tar.gz', { body, faults: [{ kind: 'http10', after: cut }, { kind: 'http10' }] });
      const [r] = await ensureDistfiles([need('c.tar.gz', [server.url('/f/c.tar.gz')], entryOf('c.tar.gz', body))], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      assert.match(r!.attempts[0]!.outcome, /shorter than its Content-Length|closed/);
      await assertInstalled('c.tar.gz', body);
    });

    it('HTTP/1.0 without Content-Length: the body ends with the connection', async () => {
      const body = payload(cut);
      server.route('/f/d.tar.gz', { body, contentLength: false, ranges: false, faults: [{ kind: 'http10' }] });
      const [r] = await ensureDistfiles([need('d.tar.gz', [server.url('/f/d.tar.gz')], entryOf('d.tar.gz', body))], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      await assertInstalled('d.tar.gz', body);
    });
  });

  describe('a new distfile (no Manifest entry) is never stitched from two versions', () => {
    const partialOf = async (name: string, bytes: Buffer, validator: string, url: string, size?: number) => {
      await fs.writeFile(path.join(distdir, `${name}.partial`), bytes);
      await fs.writeFile(path.join(distdir, `${name}.partial.json`), JSON.stringify({ url, validator, ...(size !== undefined ? { size } : {}) }));
    };

    it('content changed under the same ETag and length, far before the cut: fetched whole, never resumed', async () => {
      const v1 = payload(300_000);
      // The same length, and the same bytes everywhere but the first kilobyte: no check near the cut can see it.
      const v2 = Buffer.concat([payload(1000), v1.subarray(1000)]);
      const url = server.url('/f/changed.tar.gz');
      await partialOf('changed.tar.gz', v1.subarray(0, 200_000), '"same"', url, v1.length);
      server.route('/f/changed.tar.gz', { body: v2, etag: '"same"' });
      const [r] = await ensureDistfiles([need('changed.tar.gz', [url])], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      assert.deepEqual(r!.entry, entryOf('changed.tar.gz', v2), 'the Manifest line describes what was served whole');
      await assertInstalled('changed.tar.gz', v2);
      assert.deepEqual(server.requestsFor('/f/changed.tar.gz').map((q) => q.range), [undefined], 'one request, for the whole file');
    });

    it('a cut download is fetched again from the first byte', async () => {
      const body = payload(300_000);
      server.route('/f/cut.tar.gz', { body, etag: '"v1"', faults: [{ kind: 'cut', after: 100_000 }] });
      const [r] = await ensureDistfiles([need('cut.tar.gz', [server.url('/f/cut.tar.gz')])], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      await assertInstalled('cut.tar.gz', body);
      assert.deepEqual(server.requestsFor('/f/cut.tar.gz').map((q) => q.range), [undefined, undefined]);
    });

    it('a distfile the Manifest describes is still resumed: its size and hashes check the result', async () => {
      const body = payload(300_000);
      const url = server.url('/f/known.tar.gz');
      await partialOf('known.tar.gz', body.subarray(0, 100_000), '"same"', url);
      server.route('/f/known.tar.gz', { body, etag: '"same"' });
      const [r] = await ensureDistfiles([need('known.tar.gz', [url], entryOf('known.tar.gz', body))], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      await assertInstalled('known.tar.gz', body);
      assert.deepEqual(server.requestsFor('/f/known.tar.gz').map((q) => q.range), ['bytes=100000-']);
    });
  });

  describe('mirrors are retried per file', () => {
    it('a mirror that answered one 500 is still asked for the next file', async () => {
      const a = payload(5000);
      const b = payload(6000);
      server.route('/mirror/a.tar.gz', { body: a, faults: [{ kind: 'status', status: 500 }] });
      server.route('/mirror/b.tar.gz', { body: b });
      server.route('/up/a.tar.gz', { body: a });
      server.route('/up/b.tar.gz', { body: b });
      const results = await ensureDistfiles(
        [need('a.tar.gz', [server.url('/up/a.tar.gz')]), need('b.tar.gz', [server.url('/up/b.tar.gz')])],
        opts({ mirrors: [server.url('/mirror')], retries: 0, jobs: 1 }),
      );
      assert.deepEqual(results.map((r) => r.status), ['fetched', 'fetched']);
      assert.equal(results[0]!.source, server.url('/up/a.tar.gz'));
      assert.equal(results[1]!.source, server.url('/mirror/b.tar.gz'), 'the mirror was not dropped for one 500');
    });

    it('a layout.conf that answered 500 is asked again for the next file, not taken as flat', async () => {
      const name1 = 'one.tar.gz';
      const name2 = 'two.tar.gz';
      const dirOf = (n: string) => createHash('blake2b512').update(n).digest('hex').slice(0, 2);
      const b1 = payload(100);
      const b2 = payload(200);
      server.route('/gentoo/layout.conf', { body: Buffer.from('[structure]\n0=filename-hash BLAKE2B 8\n'), faults: [{ kind: 'status', status: 500 }] });
      server.route(`/gentoo/${dirOf(name1)}/${name1}`, { body: b1 });
      server.route(`/gentoo/${dirOf(name2)}/${name2}`, { body: b2 });
      server.route(`/up/${name1}`, { body: b1 });
      const results = await ensureDistfiles(
        [need(name1, [server.url(`/up/${name1}`)]), need(name2, [])],
        opts({ mirrors: [server.url('/gentoo')], jobs: 1 }),
      );
      assert.deepEqual(results.map((r) => r.status), ['fetched', 'fetched']);
      assert.equal(results[1]!.source, server.url(`/gentoo/${dirOf(name2)}/${name2}`));
      assert.equal(server.requestsFor('/gentoo/layout.conf').length, 2);
    });
  });

  describe('a proxy (HTTP_PROXY, HTTPS_PROXY): a real one on 127.0.0.1', () => {
    const saved: { [k: string]: string | undefined } = {};
    const vars = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
    beforeEach(() => {
      for (const v of vars) {
        saved[v] = process.env[v];
        delete process.env[v];
      }
    });
    afterEach(() => {
      for (const v of vars) {
        if (saved[v] === undefined) delete process.env[v];
        else process.env[v] = saved[v];
      }
    });

    it('an https URL whose CONNECT the proxy refuses: the proxy and its status are named, not an abort', async () => {
      server.proxyStatus = 403;
      process.env.HTTPS_PROXY = server.origin;
      // Nothing listens for TLS here: the proxy answers before any.
      const [r] = await ensureDistfiles([need('a.tar.gz', ['https://127.0.0.1:9/f/a.tar.gz'])], opts());
      assert.equal(r!.status, 'failed');
      assert.deepEqual(server.tunnels, ['127.0.0.1:9']);
      assert.match(r!.attempts[0]!.outcome, /^the proxy refused the connection: HTTP 403$/);
      assert.equal(r!.failure?.cause, 'proxy');
      assert.doesNotMatch(`${r!.error} ${r!.hint}`, /aborted|space|permission/i);
      assert.match(r!.hint!, /The proxy refused to connect to 127\.0\.0\.1:9 \(HTTP 403\)/);
    });

    it('an http URL goes to the proxy as a plain request, as curl and wget send it, and its refusal is the proxy\'s', async () => {
      // A Squid-like proxy: CONNECT only to 443; http URLs must be forwarded, not tunnelled.
      const target = await TestServer.start();
      try {
        target.route('/f/a.tar.gz', { body: payload(100) });
        server.proxyStatus = 403;
        process.env.HTTP_PROXY = server.origin;
        const [r] = await ensureDistfiles([need('a.tar.gz', [target.url('/f/a.tar.gz')])], opts());
        assert.equal(r!.status, 'failed');
        assert.equal(target.requests.length, 0, 'the proxy did not let the request through');
        assert.deepEqual(server.tunnels, [], 'no CONNECT for an http URL');
        assert.equal(server.forwarded.length, 1);
        assert.match(r!.attempts[0]!.outcome, /^the proxy refused the request: HTTP 403/);
        assert.equal(r!.failure?.cause, 'proxy');
        assert.match(r!.hint!, /The proxy refused to connect to 127\.0\.0\.1:\d+/);
      } finally {
        await target.close();
      }
    });

    it('an https URL is tunnelled with CONNECT to its own host, and TLS runs end to end through the tunnel', async () => {
      // The target's certificate is self-signed, so the client refuses it: proof that the TLS
      // handshake was the target's, inside the tunnel, and that a TLS failure is not blamed on the proxy.
      const target = await TestServer.start({ tls: testCert() });
      try {
        target.route('/f/a.tar.gz', { body: payload(100) });
        target.route('/f/b.tar.gz', { body: payload(100) });
        const host = new URL(target.origin).host;
        server.proxyStatus = (to) => (to === host ? 200 : 403);
        process.env.HTTPS_PROXY = server.origin;
        const [a, b] = await ensureDistfiles(
          [need('a.tar.gz', [target.url('/f/a.tar.gz')]), need('b.tar.gz', [target.url('/f/b.tar.gz')])],
          opts({ jobs: 1 }),
        );
        assert.deepEqual(server.tunnels, [host], 'one CONNECT, to the target; the second file skipped the host');
        assert.deepEqual(server.forwarded, [], 'nothing went to the proxy in clear');
        assert.equal(target.connections, 1, 'the tunnel reached the target');
        assert.equal(target.requests.length, 0, 'no request over a connection the client does not trust');
        assert.deepEqual(a!.failure, { cause: 'tls', host, summary: 'self-signed TLS certificate' });
        assert.match(a!.hint!, /The TLS connection to 127\.0\.0\.1:\d+ failed .*NODE_EXTRA_CA_CERTS/);
        assert.doesNotMatch(a!.hint!, /proxy refused/);
        assert.match(b!.attempts[0]!.outcome, /^skipped: 127\.0\.0\.1:\d+ failed earlier in this run \(self-signed TLS certificate\)$/);
        assert.equal(b!.failure?.cause, 'tls');
      } finally {
        await target.close();
      }
    });

    it('a proxy refusing one host (403 to its CONNECT) does not stop the next URL on a host it allows', async () => {
      const target = await TestServer.start();
      try {
        const body = payload(50_000);
        target.route('/f/a.tar.gz', { body });
        server.proxyStatus = (to) => (to === new URL(target.origin).host ? 200 : 403);
        process.env.HTTPS_PROXY = server.origin;
        process.env.HTTP_PROXY = server.origin;
        const [r] = await ensureDistfiles([need('a.tar.gz', ['https://github.invalid/a.tar.gz', target.url('/f/a.tar.gz')])], opts());
        assert.equal(r!.status, 'fetched', r!.error);
        assert.deepEqual(server.tunnels, ['github.invalid:443'], 'the https URL asked for a tunnel');
        assert.deepEqual(server.forwarded, [target.url('/f/a.tar.gz')], 'the http URL was forwarded as a plain request');
        assert.deepEqual(r!.attempts[0], { url: 'https://github.invalid/a.tar.gz', outcome: 'the proxy refused the connection: HTTP 403', cause: 'proxy' });
        await assertInstalled('a.tar.gz', body);
      } finally {
        await target.close();
      }
    });

    it('goes through a proxy that lets it', async () => {
      const target = await TestServer.start();
      try {
        const body = payload(100_000);
        target.route('/f/a.tar.gz', { body, faults: [{ kind: 'cut', after: 30_000 }] });
        server.proxyStatus = 200;
        process.env.HTTP_PROXY = server.origin;
        const [r] = await ensureDistfiles([need('a.tar.gz', [target.url('/f/a.tar.gz')], entryOf('a.tar.gz', body))], opts());
        assert.equal(r!.status, 'fetched', r!.error);
        assert.equal(server.forwarded.length, 2, 'the cut and the resume, both through the proxy');
        assert.match(target.requests[1]!.range ?? '', /^bytes=[1-9]\d*-$/);
        await assertInstalled('a.tar.gz', body);
      } finally {
        await target.close();
      }
    });
  });

  describe('a size cap on downloads without a Manifest entry', () => {
    it('cuts an endless body at the cap and keeps nothing of it', async () => {
      server.route('/f/endless.tar.gz', { body: Buffer.alloc(0), faults: [{ kind: 'endless' }] });
      const [r] = await ensureDistfiles([need('endless.tar.gz', [server.url('/f/endless.tar.gz')])], opts({ maxSize: 3 * 1024 * 1024 }));
      assert.equal(r!.status, 'failed');
      assert.match(r!.attempts[0]!.outcome, /more than the 3\.0 MiB .*--max-size/);
      assert.match(r!.hint!, /--max-size/);
      assert.deepEqual(await listDir(distdir), []);
      assert.equal(server.requestsFor('/f/endless.tar.gz').length, 1, 'not retried: it would only do it again');
    });

    it('refuses a Content-Length beyond the cap before reading the body', async () => {
      server.route('/f/big.tar.gz', { body: payload(2 * 1024 * 1024) });
      const [r] = await ensureDistfiles([need('big.tar.gz', [server.url('/f/big.tar.gz')])], opts({ maxSize: 1024 * 1024 }));
      assert.equal(r!.status, 'failed');
      assert.match(r!.attempts[0]!.outcome, /2\.0 MiB, more than the 1\.0 MiB .*--max-size/);
      assert.deepEqual(await listDir(distdir), []);
    });

    it('does not cap a file the Manifest sizes, nor one within the cap', async () => {
      const big = payload(2 * 1024 * 1024);
      const small = payload(500_000);
      server.route('/f/big.tar.gz', { body: big });
      server.route('/f/small.tar.gz', { body: small, contentLength: false });
      const results = await ensureDistfiles(
        [need('big.tar.gz', [server.url('/f/big.tar.gz')], entryOf('big.tar.gz', big)), need('small.tar.gz', [server.url('/f/small.tar.gz')])],
        opts({ maxSize: 1024 * 1024 }),
      );
      assert.deepEqual(results.map((r) => r.status), ['fetched', 'fetched']);
    });
  });

  describe('one unreachable host', () => {
    function logStream(): { stream: NodeJS.WriteStream; lines: () => string[] } {
      let out = '';
      const stream = { isTTY: false, columns: 100, write: (c: string) => ((out += c), true) } as unknown as NodeJS.WriteStream;
      return { stream, lines: () => out.trim().split('\n') };
    }

    it('is reported once, grouped, with advice for the cause, and costs only the first files their retries', async () => {
      const closed = await TestServer.start();
      const dead = closed.url('');
      await closed.close();
      const needs = Array.from({ length: 30 }, (_, i) => need(`rocFoo${i}-6.2.2.tar.gz`, [`${dead}/ROCm/rocFoo${i}/archive/rocm-6.2.2.tar.gz`]));
      const { stream, lines } = logStream();
      const results = await ensureDistfiles(needs, opts({ retries: 1, jobs: 3, progress: createProgress({ stream }) }));
      assert.deepEqual(new Set(results.map((r) => r.status)), new Set(['failed']));
      const host = new URL(dead).host;
      // Per-file results keep everything (--json prints them).
      for (const r of results) {
        assert.deepEqual(r.failure, { cause: 'connect', host, summary: 'connection refused' });
        assert.ok(r.attempts.length >= 1);
      }
      const tried = results.filter((r) => r.attempts.some((a) => !a.outcome.startsWith('skipped')));
      assert.ok(tried.length <= 3, `only the files in flight when the host failed tried it (${tried.length})`);

      const report = describeProblems(results, { distdir }).split('\n');
      assert.equal(report.length, 2, report.join('\n'));
      assert.match(report[0]!, new RegExp(`^${host.replace(/\./g, '\\.')}: connection refused \\(30 files: rocFoo0-6\\.2\\.2\\.tar\\.gz, .*, … and 25 more\\)$`));
      assert.match(report[1]!, /what to do: .*cannot be reached.*--mirror.*--distdir .* --offline/);

      // The log names the host's failure once and counts the rest.
      const log = lines();
      assert.ok(log.length <= 15, `a short log:\n${log.join('\n')}`);
      assert.equal(log.filter((l) => l.startsWith('FAILED')).length, 1, log.join('\n'));
      assert.match(log.at(-1)!, /^distfiles: 30 failed \(29 more failures of .*: connection refused, not listed\)$/);
    });

    it('a name that does not resolve (a real lookup of a reserved .invalid name): one group, DNS advice', async () => {
      // No proxy may answer for it: the lookup must be this process's own.
      const vars = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy'];
      const saved = vars.map((v) => [v, process.env[v]] as const);
      for (const v of vars) delete process.env[v];
      try {
        const host = 'rocm-ebuild-test.invalid';
        const needs = Array.from({ length: 12 }, (_, i) => need(`rocBar${i}.tar.gz`, [`https://${host}/ROCm/rocBar${i}.tar.gz`]));
        const results = await ensureDistfiles(needs, opts({ retries: 1, jobs: 2 }));
        const causes = new Set(results.map((r) => `${r.status} ${r.failure?.cause} ${r.failure?.host}`));
        assert.deepEqual(causes, new Set([`failed dns ${host}`]));
        const report = describeProblems(results, { distdir }).split('\n');
        assert.equal(report.length, 2, report.join('\n'));
        assert.match(report[0]!, /^rocm-ebuild-test\.invalid: name not resolved.* \(12 files: /);
        assert.match(report[1]!, /what to do: rocm-ebuild-test\.invalid cannot be resolved .*--mirror URL.*--offline/);
      } finally {
        for (const [v, value] of saved) if (value !== undefined) process.env[v] = value;
      }
    });

    it('keeps files that failed for reasons of their own in their own blocks', async () => {
      const closed = await TestServer.start();
      const dead = closed.url('');
      await closed.close();
      const results = await ensureDistfiles(
        [need('a.tar.gz', [`${dead}/a.tar.gz`]), need('b.tar.gz', [`${dead}/b.tar.gz`]), need('gone.tar.gz', [server.url('/gone.tar.gz')])],
        opts({ retries: 0, jobs: 1 }),
      );
      const report = describeProblems(results, { distdir });
      assert.match(report, /: connection refused \(2 files: a\.tar\.gz, b\.tar\.gz\)/);
      assert.match(report, /^failed: gone\.tar\.gz\n {2}could not fetch gone\.tar\.gz: HTTP 404/m);
      assert.match(report, /what to do: No URL has gone\.tar\.gz: check SRC_URI/);
    });

    it('groups missing files of an offline run', () => {
      const missing = Array.from({ length: 8 }, (_, i) => ({ name: `m${i}.tar.gz`, status: 'missing' as const, attempts: [], neededBy: [] }));
      const report = describeProblems(missing, { distdir: '/var/cache/distfiles', offline: true }).split('\n');
      assert.deepEqual(report, [
        'missing from /var/cache/distfiles: 8 files: m0.tar.gz, m1.tar.gz, m2.tar.gz, m3.tar.gz, m4.tar.gz, … and 3 more',
        '  what to do: copy them into /var/cache/distfiles (or point --distdir at a directory that has them), or run without --offline to download them.',
      ]);
    });

    it('advises by cause: name resolution, proxy, TLS', () => {
      const failed = (cause: 'dns' | 'proxy' | 'tls', summary: string) =>
        Array.from({ length: 3 }, (_, i) => ({
          name: `f${i}`,
          status: 'failed' as const,
          attempts: [],
          neededBy: [],
          failure: { cause, host: 'github.com', summary },
        }));
      const dns = describeProblems(failed('dns', 'name not resolved'), { distdir: '/d' });
      assert.match(dns, /^github\.com: name not resolved \(3 files: f0, f1, f2\)\n {2}what to do: github\.com cannot be resolved .*--mirror URL.*--distdir \/d --offline/);
      assert.match(describeProblems(failed('proxy', 'the proxy refused the connection: HTTP 403'), { distdir: '/d' }), /what to do: The proxy refused to connect to github\.com .*NO_PROXY/);
      assert.match(describeProblems(failed('tls', 'TLS certificate expired'), { distdir: '/d' }), /what to do: The TLS connection to github\.com failed .*clock.*NODE_EXTRA_CA_CERTS/);
    });
  });
});
