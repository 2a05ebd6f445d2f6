import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { createProgress, ensureDistfiles, type DistfileResult } from '../../src/distfiles/index.js';
import { TestServer } from '../helpers/http-server.js';
import { need, payload, tempDir } from './support.js';

function fakeStream(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  let out = '';
  const stream = {
    isTTY,
    columns: 100,
    write(chunk: string) {
      out += chunk;
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, text: () => out };
}

const fetched: DistfileResult = {
  name: 'rocBLAS-6.2.2.tar.gz',
  status: 'fetched',
  entry: { name: 'rocBLAS-6.2.2.tar.gz', size: 2 * 1024 * 1024, blake2b: 'a'.repeat(128), sha512: 'b'.repeat(128) },
  source: 'https://example.invalid/rocBLAS.tar.gz',
  attempts: [],
  neededBy: [],
};

describe('distfiles: progress display', () => {
  it('prints plain lines when not a TTY, with a periodic total', () => {
    const { stream, text } = fakeStream(false);
    let now = 0;
    const p = createProgress({ stream, now: () => now, intervalMs: 1000 });
    p.begin({ files: 2, downloads: [{ name: 'rocBLAS-6.2.2.tar.gz', size: 2 * 1024 * 1024 }] });
    p.downloading('rocBLAS-6.2.2.tar.gz', { url: 'https://example.invalid/rocBLAS.tar.gz', offset: 0, size: 2 * 1024 * 1024 });
    now = 500;
    p.received('rocBLAS-6.2.2.tar.gz', 512 * 1024);
    now = 1500;
    p.received('rocBLAS-6.2.2.tar.gz', 1024 * 1024);
    p.attemptFailed('rocBLAS-6.2.2.tar.gz', { url: 'https://example.invalid/rocBLAS.tar.gz', outcome: 'HTTP 503' }, 2000);
    now = 2000;
    p.finished(fetched);
    p.finished({ name: 'gone.tar.gz', status: 'failed', error: 'could not fetch gone.tar.gz: HTTP 404', attempts: [], neededBy: [] });
    p.end();
    const lines = text().split('\n');
    assert.equal(lines[0], 'distfiles: 2 files, 1 to download (2.0 MiB known)');
    assert.equal(lines[1], 'fetch   rocBLAS-6.2.2.tar.gz (2.0 MiB) from https://example.invalid/rocBLAS.tar.gz');
    assert.match(lines[2]!, /^ {8}0\/2 files, 1\.0 MiB of 2\.0 MiB, 682\.7 KiB\/s, ETA 2s$/);
    assert.equal(lines[3], 'retry   rocBLAS-6.2.2.tar.gz: HTTP 503 (https://example.invalid/rocBLAS.tar.gz); trying again in 2s');
    assert.match(lines[4]!, /^ok {6}rocBLAS-6\.2\.2\.tar\.gz fetched 2\.0 MiB in 2s, 1\.0 MiB\/s from https:/);
    assert.equal(lines[5], 'FAILED  gone.tar.gz — could not fetch gone.tar.gz: HTTP 404');
    assert.equal(lines[6], 'distfiles: 1 fetched, 1 failed');
    assert.doesNotMatch(text(), /\x1b/, 'no escape sequences in logs');
  });

  it('counts files that were simply present in the closing line instead of logging each', () => {
    const { stream, text } = fakeStream(false);
    const p = createProgress({ stream });
    p.begin({ files: 2, downloads: [] });
    p.finished({ ...fetched, status: 'present', source: undefined });
    p.finished({ ...fetched, name: 'other.tar.gz', status: 'present', source: undefined });
    p.end();
    assert.equal(text(), 'distfiles: 2 files, 0 to download\ndistfiles: 2 present\n');
  });

  it('redraws a live block on a TTY and leaves only the total behind', () => {
    const { stream, text } = fakeStream(true);
    let now = 0;
    const p = createProgress({ stream, now: () => now, color: false, intervalMs: 60_000 });
    p.begin({ files: 1, downloads: [{ name: 'a.tar.gz', size: 1000 }] });
    p.downloading('a.tar.gz', { url: 'http://x/a', offset: 0, size: 1000 });
    now = 1000;
    p.received('a.tar.gz', 500);
    p.attemptFailed('a.tar.gz', { url: 'http://x/a', outcome: 'connection reset' }, 1000);
    p.finished({ ...fetched, name: 'a.tar.gz', entry: { ...fetched.entry!, name: 'a.tar.gz', size: 1000 } });
    p.end();
    const out = text();
    assert.match(out, /\x1b\[J/, 'erases its block before printing');
    assert.match(out, /! a\.tar\.gz: connection reset \(http:\/\/x\/a\); trying again in 1s\n/);
    assert.match(out, /✓ a\.tar\.gz fetched/);
    assert.match(out, /a\.tar\.gz +█{10}░{10}  50%/);
    assert.ok(out.endsWith('1/1 files, 1000 B of 1000 B\n') || /1\/1 files, 1000 B of 1000 B.*\n$/.test(out));
  });

  it('colours only when asked', () => {
    const { stream, text } = fakeStream(true);
    const p = createProgress({ stream, color: true, intervalMs: 60_000 });
    p.begin({ files: 1, downloads: [] });
    p.finished({ name: 'x', status: 'failed', error: 'boom', attempts: [], neededBy: [] });
    p.end();
    assert.match(text(), /\x1b\[31m✗\x1b\[0m x boom/);
  });

  it('is silent when quiet', () => {
    const { stream, text } = fakeStream(true);
    const p = createProgress({ stream, quiet: true });
    p.begin({ files: 1, downloads: [] });
    p.finished(fetched);
    p.end();
    assert.equal(text(), '');
  });

  it('follows a real run line by line', async () => {
    const server = await TestServer.start();
    const distdir = await tempDir('progress');
    try {
      server.route('/a.tar.gz', { body: payload(1000), faults: [{ kind: 'status', status: 500 }] });
      const { stream, text } = fakeStream(false);
      await ensureDistfiles([need('a.tar.gz', [server.url('/a.tar.gz')]), need('b.tar.gz', [server.url('/b.tar.gz')])], {
        distdir,
        hashCacheFile: false,
        retryDelayMs: 1,
        progress: createProgress({ stream }),
      });
      const lines = text().trim().split('\n');
      assert.equal(lines[0], 'distfiles: 2 files, 2 to download');
      assert.ok(lines.some((l) => /^retry {3}a\.tar\.gz: HTTP 500 /.test(l)));
      assert.ok(lines.some((l) => /^skip {4}b\.tar\.gz: HTTP 404 /.test(l)));
      assert.ok(lines.some((l) => /^ok {6}a\.tar\.gz fetched 1000 B/.test(l)));
      assert.ok(lines.some((l) => /^FAILED {2}b\.tar\.gz — could not fetch b\.tar\.gz: HTTP 404/.test(l)));
    } finally {
      await server.close();
      await fs.rm(distdir, { recursive: true, force: true });
    }
  });
});
