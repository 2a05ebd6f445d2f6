import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDistfiles, type DistfileNeed, type DistfileResult, type EnsureOptions } from '../../src/distfiles/index.js';
import { TestServer } from '../helpers/http-server.js';
import { entryOf, listDir, need, payload, tempDir } from './support.js';

const child = fileURLToPath(new URL('../helpers/distfiles-child.js', import.meta.url));

interface Run {
  proc: ChildProcess;
  stderr: () => string;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; results?: DistfileResult[] }>;
}

/** The real engine in a process of its own (see test/helpers/distfiles-child.ts). */
function run(needs: DistfileNeed[], options: EnsureOptions): Run {
  const proc = spawn(process.execPath, [child, JSON.stringify({ needs, options })], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; results?: DistfileResult[] }>((resolve) =>
    proc.on('close', (code, signal) => resolve({ code, signal, ...(out ? { results: JSON.parse(out) as DistfileResult[] } : {}) })),
  );
  return { proc, stderr: () => err, done };
}

/** Polls until `check` holds; a wait, not a timing assertion (gives up after 30 s so a test fails instead of hanging). */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; !(await check()); i++) {
    if (i > 600) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function sizeOf(file: string): Promise<number> {
  return (await fs.stat(file).catch(() => ({ size: -1 }))).size;
}

describe('distfiles: real processes sharing a distdir', function () {
  this.timeout(60_000);
  let server: TestServer;
  let distdir: string;
  const children: ChildProcess[] = [];
  const opts = (): EnsureOptions => ({ distdir, hashCacheFile: false, retryDelayMs: 5, timeoutMs: 20_000 });

  beforeEach(async () => {
    server = await TestServer.start();
    distdir = await tempDir('processes');
  });
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await server.close();
    await fs.rm(distdir, { recursive: true, force: true });
  });

  for (const withManifest of [true, false]) {
    it(`kill -9 in the middle of a download, ${withManifest ? 'with' : 'without'} a Manifest entry: the next run takes over and ${withManifest ? 'resumes' : 'fetches it whole'}`, async () => {
      // More than one write batch (1 MiB) arrives before the server holds the rest, so bytes are on disk.
      const body = payload(3 * 1024 * 1024);
      const held = 1536 * 1024;
      server.route('/f/a.tar.gz', { body, etag: '"v1"', faults: [{ kind: 'hold', after: held }] });
      const n = need('a.tar.gz', [server.url('/f/a.tar.gz')], withManifest ? entryOf('a.tar.gz', body) : undefined);
      const first = run([n], opts());
      children.push(first.proc);
      const partial = path.join(distdir, 'a.tar.gz.partial');
      await server.whenHeld(1);
      await until('a MiB of the partial file on disk', async () => (await sizeOf(partial)) >= 1024 * 1024);
      first.proc.kill('SIGKILL');
      assert.equal((await first.done).signal, 'SIGKILL');

      // What a kill -9 leaves: the partial, its resume data and a lock naming a dead process. Never a distfile.
      assert.deepEqual(await listDir(distdir), ['a.tar.gz.partial', 'a.tar.gz.partial.json', 'a.tar.gz.partial.lock']);
      assert.equal(await fs.readFile(path.join(distdir, 'a.tar.gz.partial.lock'), 'utf8'), `${first.proc.pid} ${os.hostname()}\n`);
      const kept = await sizeOf(partial);
      assert.ok(kept >= 1024 * 1024 && kept <= held, `${kept} bytes kept`);

      const [r] = await ensureDistfiles([n], opts());
      assert.equal(r!.status, 'fetched', r!.error);
      assert.deepEqual(r!.entry, entryOf('a.tar.gz', body));
      assert.deepEqual(await fs.readFile(path.join(distdir, 'a.tar.gz')), body);
      assert.deepEqual(await listDir(distdir), ['a.tar.gz'], 'the stale lock and the partial are gone');
      const reqs = server.requestsFor('/f/a.tar.gz');
      assert.equal(reqs.length, 2);
      if (withManifest) {
        assert.equal(reqs[1]!.range, `bytes=${kept}-`, 'one resume, not a second whole download');
        assert.equal(reqs[1]!.ifRange, '"v1"');
      } else {
        // Its Manifest line is made from these bytes: they come from one response, never from two.
        assert.equal(reqs[1]!.range, undefined);
      }
    });
  }

  it('two runs fetching the same files into one distdir: the second waits for the first, both succeed, nothing is downloaded twice', async () => {
    const big = payload(400_000);
    const small = Array.from({ length: 5 }, (_, i) => payload(20_000 + i));
    server.route('/f/big.tar.gz', { body: big, faults: [{ kind: 'hold', after: 100_000 }] });
    small.forEach((b, i) => server.route(`/f/s${i}.tar.gz`, { body: b }));
    const needs = [
      need('big.tar.gz', [server.url('/f/big.tar.gz')], entryOf('big.tar.gz', big)),
      // Some with Manifest entries, some new: both kinds are locked the same way.
      ...small.map((b, i) => need(`s${i}.tar.gz`, [server.url(`/f/s${i}.tar.gz`)], i % 2 === 0 ? entryOf(`s${i}.tar.gz`, b) : undefined)),
    ];
    const a = run(needs, opts());
    children.push(a.proc);
    await server.whenHeld(1);
    const b = run(needs, opts());
    children.push(b.proc);
    await until('the second run waits for big.tar.gz', () => /^wait +big\.tar\.gz: being downloaded by process \d+/m.test(b.stderr()));
    assert.match(b.stderr(), new RegExp(`being downloaded by process ${a.proc.pid} on `));
    server.release();

    const [ra, rb] = await Promise.all([a.done, b.done]);
    assert.equal(ra.code, 0, a.stderr());
    assert.equal(rb.code, 0, b.stderr());
    assert.deepEqual(ra.results!.find((r) => r.name === 'big.tar.gz')!.status, 'fetched');
    assert.deepEqual(rb.results!.find((r) => r.name === 'big.tar.gz')!.status, 'present', 'the second run found it installed and verified it');
    for (const [i, body] of [big, ...small].entries()) {
      const name = i === 0 ? 'big.tar.gz' : `s${i - 1}.tar.gz`;
      assert.deepEqual(await fs.readFile(path.join(distdir, name)), body, name);
      assert.equal(server.requestsFor(`/f/${name}`).length, 1, `${name} was downloaded once`);
      // Both runs report the same digests for it.
      assert.deepEqual(ra.results!.find((r) => r.name === name)!.entry, entryOf(name, body));
      assert.deepEqual(rb.results!.find((r) => r.name === name)!.entry, entryOf(name, body));
    }
    assert.deepEqual(await listDir(distdir), ['big.tar.gz', ...small.map((_, i) => `s${i}.tar.gz`)], 'no partial, lock or stale file left');
  });
});
