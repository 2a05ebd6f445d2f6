import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ensureDistfiles } from '../../src/distfiles/index.js';
import { TestServer, type Fault } from '../helpers/http-server.js';
import { entryOf, listDir, need, payload, tempDir } from './support.js';

/**
 * Whatever the server does, after a run either the file under its name is
 * exactly what the result's entry says (checked with b2sum and sha512sum), or
 * there is no file under that name and no entry. With a Manifest entry given,
 * an entry in the result is that entry.
 */
describe('distfiles: nothing unverified reaches the distdir or a Manifest', () => {
  const body = payload(64_000);
  const faults: [string, Fault[]][] = [
    ['clean', []],
    ['cut connection', [{ kind: 'cut', after: 20_000 }]],
    ['truncated body', [{ kind: 'truncate', after: 20_000 }]],
    ['Connection: close cut with a FIN', [{ kind: 'fin', after: 20_000 }]],
    ['HTTP/1.0 cut with a FIN', [{ kind: 'http10', after: 20_000 }]],
    ['endless body', [{ kind: 'endless' }]],
    ['stalled body', [{ kind: 'stall', after: 20_000 }]],
    ['wrong content', [{ kind: 'content', body: payload(64_000) }]],
    ['wrong size', [{ kind: 'content', body: payload(1000) }]],
    ['HTTP 500 twice', [{ kind: 'status', status: 500 }, { kind: 'status', status: 500 }]],
    ['HTTP 404', [{ kind: 'status', status: 404 }]],
    ['redirect loop', Array.from({ length: 30 }, () => ({ kind: 'redirect' as const, to: '/f/file.tar.gz' }))],
  ];

  for (const withManifest of [true, false]) {
    for (const [label, sequence] of faults) {
      it(`${label}, ${withManifest ? 'with' : 'without'} a Manifest entry`, async () => {
        const server = await TestServer.start();
        const distdir = await tempDir('invariant');
        try {
          server.route('/f/file.tar.gz', { body, faults: sequence });
          const expected = withManifest ? entryOf('file.tar.gz', body) : undefined;
          const [r] = await ensureDistfiles([need('file.tar.gz', [server.url('/f/file.tar.gz')], expected)], {
            distdir,
            hashCacheFile: false,
            retries: 1,
            retryDelayMs: 1,
            timeoutMs: 300,
            maxSize: 1024 * 1024,
          });
          const files = await listDir(distdir);
          const file = path.join(distdir, 'file.tar.gz');
          if (r!.entry) {
            assert.ok(r!.status === 'fetched', `status ${r!.status}`);
            assert.ok(files.includes('file.tar.gz'));
            const b2 = execFileSync('b2sum', [file], { encoding: 'utf8' }).split(' ')[0];
            const sha = execFileSync('sha512sum', [file], { encoding: 'utf8' }).split(' ')[0];
            assert.equal(r!.entry.blake2b, b2);
            assert.equal(r!.entry.sha512, sha);
            assert.equal(r!.entry.size, (await fs.stat(file)).size);
            if (expected) assert.deepEqual(r!.entry, expected);
          } else {
            assert.equal(r!.status, 'failed');
            assert.ok(!files.includes('file.tar.gz'), `no file under its name: ${files.join(', ')}`);
            assert.ok(r!.error && r!.hint, 'a failure says what and what to do');
          }
          for (const f of files) assert.match(f, /^file\.tar\.gz(\.partial(\.json)?)?$/);
        } finally {
          await server.close();
          await fs.rm(distdir, { recursive: true, force: true });
        }
      });
    }
  }
});
