import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ensureDistfiles, type EnsureOptions } from '../../src/distfiles/index.js';
import { TestServer } from '../helpers/http-server.js';
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

  describe('resuming a new distfile (no Manifest entry) whose server kept the ETag', () => {
    const partialOf = async (name: string, bytes: Buffer, validator: string, url: string) => {
      await fs.writeFile(path.join(distdir, `${name}.partial`), bytes);
      await fs.writeFile(path.join(distdir, `${name}.partial.json`), JSON.stringify({ url, validator }));
    };

    it('starts over when the bytes before the resume point changed, never mixing two versions', async () => {
      const v1 = payload(300_000);
      const v2 = payload(300_000);
      const url = server.url('/f/changed.tar.gz');
      await partialOf('changed.tar.gz', v1.subarray(0, 100_000), '"same"', url);
      // The server now has other content under the same strong ETag, so If-Range lets the resume through.
      server.route('/f/changed.tar.gz', { body: v2, etag: '"same"' });
      const [r] = await ensureDistfiles([need('changed.tar.gz', [url])], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      assert.deepEqual(r!.entry, entryOf('changed.tar.gz', v2), 'the Manifest line describes one version');
      await assertInstalled('changed.tar.gz', v2);
      const reqs = server.requestsFor('/f/changed.tar.gz');
      assert.equal(reqs.length, 2);
      assert.match(reqs[0]!.range ?? '', /^bytes=\d+-$/);
      assert.ok(Number(/\d+/.exec(reqs[0]!.range!)![0]) < 100_000, 'the resume re-fetches bytes it already has, to compare');
      assert.equal(reqs[1]!.range, undefined, 'then downloads the whole file again');
      assert.match(r!.attempts[0]!.outcome, /changed on the server/);
    });

    it('starts over when the total size changed, even if the compared bytes agree', async () => {
      const v1 = payload(300_000);
      const v2 = Buffer.concat([payload(20_000), v1.subarray(20_000), payload(10)]);
      const url = server.url('/f/longer.tar.gz');
      await partialOf('longer.tar.gz', v1.subarray(0, 100_000), '"same"', url);
      await fs.writeFile(path.join(distdir, 'longer.tar.gz.partial.json'), JSON.stringify({ url, validator: '"same"', size: 300_000 }));
      server.route('/f/longer.tar.gz', { body: v2, etag: '"same"' });
      const [r] = await ensureDistfiles([need('longer.tar.gz', [url])], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      await assertInstalled('longer.tar.gz', v2);
      assert.equal(server.requestsFor('/f/longer.tar.gz').at(-1)!.range, undefined);
    });

    it('resumes when the compared bytes agree', async () => {
      const body = payload(300_000);
      const url = server.url('/f/same.tar.gz');
      await partialOf('same.tar.gz', body.subarray(0, 100_000), '"same"', url);
      server.route('/f/same.tar.gz', { body, etag: '"same"' });
      const [r] = await ensureDistfiles([need('same.tar.gz', [url])], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      await assertInstalled('same.tar.gz', body);
      assert.equal(server.requestsFor('/f/same.tar.gz').length, 1, 'one request: the resume');
      assert.match(r!.attempts.at(-1)!.outcome, /resumed at 100000 bytes/);
    });
  });
});
