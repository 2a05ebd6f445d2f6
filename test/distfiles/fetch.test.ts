import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ensureDistfiles, type EnsureOptions } from '../../src/distfiles/index.js';
import { TestServer } from '../helpers/http-server.js';
import { entryOf, listDir, need, payload, tempDir } from './support.js';

/**
 * Downloads against a real HTTP server on 127.0.0.1. Whatever the fault, the
 * distdir ends with either the exact file or nothing under its name, and no
 * entry is produced for bytes that were not verified.
 */
describe('distfiles: fetching', () => {
  let server: TestServer;
  let distdir: string;
  const opts = (extra: Partial<EnsureOptions> = {}): EnsureOptions => ({
    distdir,
    hashCacheFile: false,
    retryDelayMs: 5,
    timeoutMs: 2000,
    ...extra,
  });

  beforeEach(async () => {
    server = await TestServer.start();
    distdir = await tempDir('fetch');
  });
  afterEach(async () => {
    await server.close();
    await fs.rm(distdir, { recursive: true, force: true });
  });

  async function assertInstalled(name: string, body: Buffer): Promise<void> {
    assert.deepEqual(await fs.readFile(path.join(distdir, name)), body);
    assert.deepEqual(await listDir(distdir), [name], 'nothing but the finished file is left');
  }

  it('fetches a plain file and reports its Manifest entry', async () => {
    const body = payload(300_000);
    server.route('/f/plain.tar.gz', { body });
    const [r] = await ensureDistfiles([need('plain.tar.gz', [server.url('/f/plain.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.deepEqual(r!.entry, entryOf('plain.tar.gz', body));
    assert.equal(r!.source, server.url('/f/plain.tar.gz'));
    assert.equal(r!.path, path.join(distdir, 'plain.tar.gz'));
    await assertInstalled('plain.tar.gz', body);
    assert.equal(server.requests[0]!.acceptEncoding, 'identity');
  });

  it('follows redirects, as GitHub archive URLs need', async () => {
    const body = payload(50_000);
    server.route('/ROCm/rocFoo/archive/rocm-6.2.2.tar.gz', { body: Buffer.alloc(0), faults: [{ kind: 'redirect', to: '/codeload/step' }] });
    server.route('/codeload/step', { body: Buffer.alloc(0), faults: [{ kind: 'redirect', to: '/codeload/rocFoo-6.2.2.tar.gz', status: 301 }] });
    server.route('/codeload/rocFoo-6.2.2.tar.gz', { body });
    const [r] = await ensureDistfiles(
      [need('rocFoo-6.2.2.tar.gz', [server.url('/ROCm/rocFoo/archive/rocm-6.2.2.tar.gz')], entryOf('rocFoo-6.2.2.tar.gz', body))],
      opts(),
    );
    assert.equal(r!.status, 'fetched');
    assert.equal(r!.source, server.url('/codeload/rocFoo-6.2.2.tar.gz'));
    await assertInstalled('rocFoo-6.2.2.tar.gz', body);
  });

  it('resumes with Range after the connection is cut mid-body', async () => {
    const body = payload(400_000);
    server.route('/f/cut.tar.gz', { body, faults: [{ kind: 'cut', after: 150_000 }] });
    const [r] = await ensureDistfiles([need('cut.tar.gz', [server.url('/f/cut.tar.gz')], entryOf('cut.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    await assertInstalled('cut.tar.gz', body);
    const reqs = server.requestsFor('/f/cut.tar.gz');
    assert.equal(reqs.length, 2);
    assert.equal(reqs[0]!.range, undefined);
    assert.match(reqs[1]!.range ?? '', /^bytes=\d+-$/);
    const resumedAt = Number(/\d+/.exec(reqs[1]!.range!)![0]);
    assert.ok(resumedAt > 0 && resumedAt <= 150_000, `resumed at ${resumedAt}`);
    assert.match(r!.attempts.at(-1)!.outcome, /resumed at/);
  });

  it('retries after HTTP 500 and succeeds', async () => {
    const body = payload(10_000);
    server.route('/f/flaky.tar.gz', { body, faults: [{ kind: 'status', status: 500 }, { kind: 'status', status: 503 }] });
    const [r] = await ensureDistfiles([need('flaky.tar.gz', [server.url('/f/flaky.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.deepEqual(r!.entry, entryOf('flaky.tar.gz', body));
    assert.deepEqual(
      r!.attempts.map((a) => a.outcome),
      ['HTTP 500', 'HTTP 503', 'ok'],
    );
    await assertInstalled('flaky.tar.gz', body);
  });

  it('gives up on a URL that keeps failing with 5xx after the configured retries', async () => {
    server.route('/f/down.tar.gz', {
      body: payload(10),
      faults: Array.from({ length: 10 }, () => ({ kind: 'status' as const, status: 502 })),
    });
    const [r] = await ensureDistfiles([need('down.tar.gz', [server.url('/f/down.tar.gz')])], opts({ retries: 2 }));
    assert.equal(r!.status, 'failed');
    assert.equal(server.requestsFor('/f/down.tar.gz').length, 3);
    assert.match(r!.hint!, /Network trouble/);
    assert.deepEqual(await listDir(distdir), []);
  });

  it('fails a permanent 404 without retrying, naming the URL, the ebuild and what to do', async () => {
    const [r] = await ensureDistfiles([need('gone.tar.gz', [server.url('/f/gone.tar.gz')])], opts());
    assert.equal(r!.status, 'failed');
    assert.equal(server.requestsFor('/f/gone.tar.gz').length, 1);
    assert.deepEqual(r!.attempts, [{ url: server.url('/f/gone.tar.gz'), outcome: 'HTTP 404', cause: 'http' }]);
    assert.match(r!.error!, /HTTP 404/);
    assert.match(r!.error!, /gone\.tar\.gz/);
    assert.match(r!.hint!, /SRC_URI of rocFoo-6\.2\.2\.ebuild/);
    assert.deepEqual(r!.neededBy, [{ atom: 'sci-libs/rocFoo', ebuild: 'rocFoo-6.2.2.ebuild' }]);
    assert.equal(r!.entry, undefined);
    assert.deepEqual(await listDir(distdir), []);
  });

  it('tries the next URL when one is gone', async () => {
    const body = payload(1000);
    server.route('/second/x.tar.gz', { body });
    const [r] = await ensureDistfiles([need('x.tar.gz', [server.url('/first/x.tar.gz'), server.url('/second/x.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.equal(r!.source, server.url('/second/x.tar.gz'));
    assert.equal(r!.attempts[0]!.outcome, 'HTTP 404');
  });

  it('detects a body shorter than its Content-Length and resumes it', async () => {
    const body = payload(200_000);
    server.route('/f/short.tar.gz', { body, faults: [{ kind: 'truncate', after: 70_000 }] });
    const [r] = await ensureDistfiles([need('short.tar.gz', [server.url('/f/short.tar.gz')], entryOf('short.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    await assertInstalled('short.tar.gz', body);
    assert.match(r!.attempts[0]!.outcome, /Content-Length|closed|ended/);
  });

  it('starts over when the server ignores Range after a truncated body', async () => {
    const body = payload(200_000);
    server.route('/f/norange.tar.gz', { body, ranges: false, faults: [{ kind: 'truncate', after: 70_000 }] });
    const [r] = await ensureDistfiles([need('norange.tar.gz', [server.url('/f/norange.tar.gz')], entryOf('norange.tar.gz', body))], opts());
    assert.equal(r!.status, 'fetched');
    await assertInstalled('norange.tar.gz', body);
  });

  it('never lets a truncated body without a Manifest entry become a distfile', async () => {
    const body = payload(100_000);
    server.route('/f/new.tar.gz', {
      body,
      faults: Array.from({ length: 5 }, () => ({ kind: 'truncate' as const, after: 1000 })),
      ranges: false,
    });
    const [r] = await ensureDistfiles([need('new.tar.gz', [server.url('/f/new.tar.gz')])], opts({ retries: 1 }));
    assert.equal(r!.status, 'failed');
    assert.equal(r!.entry, undefined);
    assert.ok(!(await listDir(distdir)).includes('new.tar.gz'));
  });

  it('detects a chunked body cut before its last chunk and fetches it again', async () => {
    const body = payload(120_000);
    server.route('/f/chunked.tar.gz', { body, contentLength: false, ranges: false, faults: [{ kind: 'truncate', after: 50_000 }] });
    const [r] = await ensureDistfiles([need('chunked.tar.gz', [server.url('/f/chunked.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.deepEqual(r!.entry, entryOf('chunked.tar.gz', body), 'the Manifest line describes the whole file');
    await assertInstalled('chunked.tar.gz', body);
  });

  it('gives no Manifest entry for a chunked body that is always cut', async () => {
    server.route('/f/cutchunks.tar.gz', {
      body: payload(120_000),
      contentLength: false,
      ranges: false,
      faults: Array.from({ length: 5 }, () => ({ kind: 'truncate' as const, after: 50_000 })),
    });
    const [r] = await ensureDistfiles([need('cutchunks.tar.gz', [server.url('/f/cutchunks.tar.gz')])], opts({ retries: 1 }));
    assert.equal(r!.status, 'failed');
    assert.equal(r!.entry, undefined);
    assert.ok(!(await listDir(distdir)).includes('cutchunks.tar.gz'));
  });

  it('rejects wrong content against the Manifest and never installs it', async () => {
    const body = payload(30_000);
    const wrong = payload(30_000);
    server.route('/f/evil.tar.gz', { body: wrong });
    const [r] = await ensureDistfiles([need('evil.tar.gz', [server.url('/f/evil.tar.gz')], entryOf('evil.tar.gz', body))], opts());
    assert.equal(r!.status, 'failed');
    assert.equal(r!.entry, undefined);
    assert.match(r!.attempts[0]!.outcome, /does not match the Manifest.*BLAKE2B/);
    assert.match(r!.hint!, /delete the DIST evil\.tar\.gz line from sci-libs\/rocFoo\/Manifest/);
    assert.deepEqual(await listDir(distdir), []);
  });

  it('falls back to the next URL after wrong content', async () => {
    const body = payload(30_000);
    server.route('/bad/y.tar.gz', { body: payload(30_000) });
    server.route('/good/y.tar.gz', { body });
    const [r] = await ensureDistfiles(
      [need('y.tar.gz', [server.url('/bad/y.tar.gz'), server.url('/good/y.tar.gz')], entryOf('y.tar.gz', body))],
      opts(),
    );
    assert.equal(r!.status, 'fetched');
    assert.equal(r!.source, server.url('/good/y.tar.gz'));
    await assertInstalled('y.tar.gz', body);
  });

  it('refuses a body of the wrong size before downloading it', async () => {
    const body = payload(5000);
    server.route('/f/size.tar.gz', { body: payload(6000) });
    const [r] = await ensureDistfiles([need('size.tar.gz', [server.url('/f/size.tar.gz')], entryOf('size.tar.gz', body))], opts());
    assert.equal(r!.status, 'failed');
    assert.match(r!.attempts[0]!.outcome, /serves 6000 bytes, the Manifest says 5000/);
    assert.deepEqual(await listDir(distdir), []);
  });

  it('stops reading a chunked body that grows past the Manifest size', async () => {
    const body = payload(5000);
    server.route('/f/grow.tar.gz', { body: payload(80_000), contentLength: false });
    const [r] = await ensureDistfiles([need('grow.tar.gz', [server.url('/f/grow.tar.gz')], entryOf('grow.tar.gz', body))], opts());
    assert.equal(r!.status, 'failed');
    assert.match(r!.attempts[0]!.outcome, /more than the 5000 bytes/);
    assert.deepEqual(await listDir(distdir), []);
  });

  it('times out a stalled body and resumes it', async () => {
    const body = payload(100_000);
    server.route('/f/slow.tar.gz', { body, faults: [{ kind: 'stall', after: 40_000 }] });
    const [r] = await ensureDistfiles(
      [need('slow.tar.gz', [server.url('/f/slow.tar.gz')], entryOf('slow.tar.gz', body))],
      opts({ timeoutMs: 300 }),
    );
    assert.equal(r!.status, 'fetched');
    assert.match(r!.attempts[0]!.outcome, /timed out/);
    assert.match(server.requestsFor('/f/slow.tar.gz')[1]!.range ?? '', /^bytes=[1-9]\d*-$/);
    await assertInstalled('slow.tar.gz', body);
  });

  it('fails a body that always stalls, keeping the partial download for next time', async () => {
    const body = payload(100_000);
    server.route('/f/stuck.tar.gz', { body, ranges: true, faults: [{ kind: 'stall', after: 10_000 }, { kind: 'stall', after: 0 }] });
    const [r] = await ensureDistfiles(
      [need('stuck.tar.gz', [server.url('/f/stuck.tar.gz')], entryOf('stuck.tar.gz', body))],
      opts({ timeoutMs: 200, retries: 0 }),
    );
    assert.equal(r!.status, 'failed');
    assert.match(r!.error!, /timed out/);
    assert.match(r!.hint!, /resumed/);
    assert.deepEqual(await listDir(distdir), ['stuck.tar.gz.partial']);
    // The next run picks up where this one stopped.
    const [again] = await ensureDistfiles([need('stuck.tar.gz', [server.url('/f/stuck.tar.gz')], entryOf('stuck.tar.gz', body))], opts());
    assert.equal(again!.status, 'fetched');
    assert.equal(server.requestsFor('/f/stuck.tar.gz').at(-1)!.range, 'bytes=10000-');
    await assertInstalled('stuck.tar.gz', body);
  });

  it('fetches many files at once within --jobs', async () => {
    const files = Array.from({ length: 40 }, (_, i) => ({ name: `many-${i}.tar.gz`, body: payload(20_000 + i * 997) }));
    // Responses wait until 6 requests are in flight: only a fetcher that really runs 6 at once gets them.
    for (const f of files) server.route(`/m/${f.name}`, { body: f.body, faults: [{ kind: 'gate', count: 6 }] });
    const results = await ensureDistfiles(
      files.map((f) => need(f.name, [server.url(`/m/${f.name}`)], entryOf(f.name, f.body))),
      opts({ jobs: 6 }),
    );
    assert.deepEqual(results.map((r) => r.status), files.map(() => 'fetched'));
    assert.deepEqual(results.map((r) => r.name), files.map((f) => f.name));
    assert.ok(server.maxActive <= 6, `at most 6 at once, saw ${server.maxActive}`);
    assert.equal(server.maxActive, 6, 'six downloads ran at once');
    assert.deepEqual(await listDir(distdir), files.map((f) => f.name).sort());
  });

  it('stores the bytes as sent even when the server claims Content-Encoding: gzip', async () => {
    const body = payload(4096);
    server.route('/f/enc.tar.gz', { body, contentEncoding: 'gzip' });
    const [r] = await ensureDistfiles([need('enc.tar.gz', [server.url('/f/enc.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched');
    assert.deepEqual(r!.entry, entryOf('enc.tar.gz', body));
  });
});
