import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDistfiles, type DistfileNeed, type DistfileResult, type EnsureOptions } from '../../src/distfiles/index.js';
import { TestServer, testCert } from '../helpers/http-server.js';
import { entryOf, listDir, need, payload, tempDir } from './support.js';

/**
 * A distfile is installed only from bytes that were served as one file, or
 * that match digests known before the download: a mirror that changes a
 * file's content under the same ETag and length between a cut and the
 * resume must not yield a file stitched from two versions. And a download
 * asked for over https never continues over http.
 */

const child = fileURLToPath(new URL('../helpers/distfiles-child.js', import.meta.url));

/** The engine in a process of its own, with its own environment (a CA to trust), until it exits. */
function inChild(needs: DistfileNeed[], options: EnsureOptions, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; results: DistfileResult[]; stderr: string }> {
  const proc = spawn(process.execPath, [child, JSON.stringify({ needs, options })], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => proc.on('close', (code) => resolve({ code, results: out ? (JSON.parse(out) as DistfileResult[]) : [], stderr: err })));
}

describe('distfiles: a resume keeps only bytes proven to belong to the file it completes', function () {
  this.timeout(60_000);
  let server: TestServer;
  let distdir: string;
  const opts = (extra: Partial<EnsureOptions> = {}): EnsureOptions => ({ distdir, hashCacheFile: false, retryDelayMs: 5, timeoutMs: 2000, ...extra });
  // The same length, and the same bytes but for the first and the last kilobyte: nothing near the cut can tell them
  // apart, and a file stitched of the two (v1 before the cut, v2 after) is neither.
  const v1 = payload(300_000);
  const v2 = Buffer.concat([payload(1000), v1.subarray(1000, -1000), payload(1000)]);
  const CUT = 200_000;

  beforeEach(async () => {
    server = await TestServer.start();
    distdir = await tempDir('resume-proof');
  });
  afterEach(async () => {
    await server.close();
    await fs.rm(distdir, { recursive: true, force: true });
  });

  /** Whole, then resumed where the cut left the partial file, then whole again once: the stitched file was refused. */
  const assertResumedThenWhole = (requests: { range?: string }[]) =>
    assert.deepEqual(requests.map((q) => q.range), [undefined, `bytes=${CUT}-`, undefined], 'resumed with If-Range, then fetched whole once');

  /**
   * v1 cut after CUT bytes, then the mirror serves v2 under the same ETag (Range and If-Range
   * honoured). The cut is a stall the attempt's idle timeout ends: every byte sent has arrived and is
   * kept, where a reset or an early close may drop what the client had not read yet on a loaded machine.
   */
  const changedAfterTheCut = (p: string) =>
    server.route(p, { body: v1, etag: '"same"', lastModified: 'Mon, 01 Jun 2026 00:00:00 GMT', faults: [{ kind: 'stall', after: CUT }, { kind: 'swap', body: v2 }] });

  it('a new distfile (no Manifest entry): fetched again whole after the cut, its Manifest line made from v2 as served', async () => {
    changedAfterTheCut('/f/new.tar.gz');
    const [r] = await ensureDistfiles([need('new.tar.gz', [server.url('/f/new.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched', r!.error);
    assert.deepEqual(r!.entry, entryOf('new.tar.gz', v2));
    assert.deepEqual(await fs.readFile(path.join(distdir, 'new.tar.gz')), v2);
    assert.deepEqual(server.requestsFor('/f/new.tar.gz').map((q) => q.range), [undefined, undefined], 'never resumed');
  });

  it('the Manifest lists v1: the stitched file is refused, and so is v2 fetched whole; nothing is installed', async () => {
    changedAfterTheCut('/f/known.tar.gz');
    const [r] = await ensureDistfiles([need('known.tar.gz', [server.url('/f/known.tar.gz')], entryOf('known.tar.gz', v1))], opts());
    assert.equal(r!.status, 'failed');
    assert.equal(r!.failure?.cause, 'content');
    const requests = server.requestsFor('/f/known.tar.gz');
    assertResumedThenWhole(requests);
    assert.equal(requests[1]!.ifRange, '"same"');
    assert.ok(!(await listDir(distdir)).includes('known.tar.gz'), 'no file made of two versions, nor of the wrong one');
  });

  it('the Manifest lists v2 (the mirror served a stale v1 first): the stitched file is refused, v2 fetched whole is installed', async () => {
    changedAfterTheCut('/f/fresh.tar.gz');
    const [r] = await ensureDistfiles([need('fresh.tar.gz', [server.url('/f/fresh.tar.gz')], entryOf('fresh.tar.gz', v2))], opts());
    assert.equal(r!.status, 'fetched', r!.error);
    assert.deepEqual(await fs.readFile(path.join(distdir, 'fresh.tar.gz')), v2);
    assertResumedThenWhole(server.requestsFor('/f/fresh.tar.gz'));
    assert.deepEqual(await listDir(distdir), ['fresh.tar.gz'], 'no partial left behind');
  });

  it('kill -9 in the middle of a new distfile, the content changed, then a second run: fetched whole, not resumed', async () => {
    // Large enough that the first MiB is written (in 1 MiB batches) before the kill.
    const big1 = payload(3 << 20);
    const big2 = Buffer.concat([payload(1000), big1.subarray(1000, -1000), payload(1000)]);
    server.route('/f/killed.tar.gz', { body: big1, etag: '"same"', faults: [{ kind: 'hold', after: 2 << 20 }] });
    const first = spawn(process.execPath, [child, JSON.stringify({ needs: [need('killed.tar.gz', [server.url('/f/killed.tar.gz')])], options: opts({ timeoutMs: 20_000 }) })], { stdio: 'ignore' });
    try {
      await server.whenHeld();
      for (let i = 0; (await fs.stat(path.join(distdir, 'killed.tar.gz.partial')).catch(() => ({ size: 0 }))).size < 1 << 20; i++) {
        if (i > 600) throw new Error('the partial file never got its first MiB');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      first.kill('SIGKILL');
      await new Promise((r) => first.once('close', r));
    }
    server.route('/f/killed.tar.gz', { body: big2, etag: '"same"' });
    const [r] = await ensureDistfiles([need('killed.tar.gz', [server.url('/f/killed.tar.gz')])], opts());
    assert.equal(r!.status, 'fetched', r!.error);
    assert.deepEqual(r!.entry, entryOf('killed.tar.gz', big2));
    assert.equal(server.requestsFor('/f/killed.tar.gz').at(-1)!.range, undefined, 'the second run asked for the whole file');
    assert.deepEqual(await listDir(distdir), ['killed.tar.gz']);
  });
});

describe('distfiles: an https download never continues over http', function () {
  this.timeout(60_000);
  let plain: TestServer;
  let secure: TestServer;
  let distdir: string;
  let ca: string;
  before(async () => {
    distdir = await tempDir('https-only');
    ca = path.join(distdir, '..', `${path.basename(distdir)}-ca.pem`);
    await fs.writeFile(ca, testCert().cert);
  });
  after(async () => {
    await fs.rm(distdir, { recursive: true, force: true });
    await fs.rm(ca, { force: true });
  });
  beforeEach(async () => {
    plain = await TestServer.start();
    secure = await TestServer.start({ tls: testCert() });
  });
  afterEach(async () => {
    await plain.close();
    await secure.close();
  });

  const options = (): EnsureOptions => ({ distdir, hashCacheFile: false, retryDelayMs: 5, timeoutMs: 5000, retries: 0 });

  it('a patch fetched by URL whose https URL redirects to http:// is refused; the http server is never asked', async () => {
    const patch = Buffer.from('--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n');
    plain.route('/patches/fix.patch', { body: patch });
    secure.route('/ROCm/rocBLAS/commit/abc.patch', { body: Buffer.alloc(0), faults: [{ kind: 'redirect', to: plain.url('/patches/fix.patch') }] });
    const r = await inChild([need('rocBLAS-fix.patch', [secure.url('/ROCm/rocBLAS/commit/abc.patch')])], options(), { NODE_EXTRA_CA_CERTS: ca });
    assert.equal(r.code, 5, r.stderr);
    assert.equal(r.results[0]!.status, 'failed');
    assert.match(r.results[0]!.attempts[0]!.outcome, /redirect from https to http:\/\/127\.0\.0\.1:\d+\/patches\/fix\.patch refused: an https download never continues over http/);
    assert.equal(plain.requests.length, 0, 'nothing was asked in clear text');
    assert.ok(!(await listDir(distdir)).includes('rocBLAS-fix.patch'));
  });

  it('an https redirect to https is followed (the CA is trusted: the refusal above is the downgrade, not TLS)', async () => {
    const patch = Buffer.from('--- a/y\n+++ b/y\n');
    secure.route('/patches/y.patch', { body: patch });
    secure.route('/ROCm/rocBLAS/commit/def.patch', { body: Buffer.alloc(0), faults: [{ kind: 'redirect', to: secure.url('/patches/y.patch') }] });
    const r = await inChild([need('rocBLAS-y.patch', [secure.url('/ROCm/rocBLAS/commit/def.patch')])], options(), { NODE_EXTRA_CA_CERTS: ca });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await fs.readFile(path.join(distdir, 'rocBLAS-y.patch')), patch);
  });
});
