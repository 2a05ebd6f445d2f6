import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { layoutPath, mirrorsFromEnv, parseLayoutConf, resolveDistdir } from '../../src/distfiles/index.js';
import { Limiter } from '../../src/util/limiter.js';
import { backoffDelay, classifyError, classifyResponse, classifyStatus, DEFAULT_RETRY_POLICY, parseRetryAfter } from '../../src/distfiles/retry-policy.js';

describe('distfiles: mirrors, locations and retry policy', () => {
  describe('GLEP 75 layouts', () => {
    it('reads the first usable layout of [structure]', () => {
      assert.deepEqual(parseLayoutConf('[structure]\n0=filename-hash BLAKE2B 8\n1=flat\n'), {
        kind: 'filename-hash',
        algorithm: 'BLAKE2B',
        cutoffs: [8],
      });
      assert.deepEqual(parseLayoutConf('# comment\n[structure]\n1=flat\n0=content-hash SHA512 8:8:8\n'), { kind: 'flat' });
      assert.deepEqual(parseLayoutConf('[structure]\n0=filename-hash BLAKE2B 6\n1=filename-hash SHA512 8:8\n'), {
        kind: 'filename-hash',
        algorithm: 'SHA512',
        cutoffs: [8, 8],
      });
      assert.deepEqual(parseLayoutConf(''), { kind: 'flat' });
      assert.deepEqual(parseLayoutConf('[other]\n0=filename-hash BLAKE2B 8\n'), { kind: 'flat' });
    });

    it('places files by the BLAKE2B of their name, as b2sum computes it', () => {
      const name = 'rocBLAS-6.2.2.tar.gz';
      const digest = execFileSync('b2sum', { input: name, encoding: 'utf8' }).split(/\s/)[0]!;
      assert.equal(layoutPath({ kind: 'filename-hash', algorithm: 'BLAKE2B', cutoffs: [8] }, name), `${digest.slice(0, 2)}/${name}`);
      assert.equal(
        layoutPath({ kind: 'filename-hash', algorithm: 'BLAKE2B', cutoffs: [8, 4] }, name),
        `${digest.slice(0, 2)}/${digest.slice(2, 3)}/${name}`,
      );
      assert.equal(layoutPath({ kind: 'flat' }, 'a+b.tar.gz'), 'a%2Bb.tar.gz');
    });

    it('turns GENTOO_MIRRORS into distfiles directories, HTTP(S) only', () => {
      assert.deepEqual(
        mirrorsFromEnv({ GENTOO_MIRRORS: ' https://a.example/gentoo/  ftp://b.example/ http://c.example rsync://d ' }),
        ['https://a.example/gentoo/distfiles', 'http://c.example/distfiles'],
      );
      assert.deepEqual(mirrorsFromEnv({}), []);
    });
  });

  describe('resolveDistdir', () => {
    it('prefers the flag, then $DISTDIR, then the XDG cache', () => {
      assert.equal(resolveDistdir('/x/flag', { DISTDIR: '/x/env' }), '/x/flag');
      assert.equal(resolveDistdir(undefined, { DISTDIR: '/x/env', XDG_CACHE_HOME: '/x/cache' }), '/x/env');
      assert.equal(resolveDistdir(undefined, { XDG_CACHE_HOME: '/x/cache' }), '/x/cache/rocm-ebuild/distfiles');
      assert.equal(resolveDistdir(undefined, { HOME: '/home/u' }), '/home/u/.cache/rocm-ebuild/distfiles');
      assert.equal(resolveDistdir(undefined, { HOME: '/home/u', XDG_CACHE_HOME: 'relative' }), '/home/u/.cache/rocm-ebuild/distfiles');
      assert.equal(resolveDistdir('rel', {}), path.resolve('rel'));
    });
  });

  describe('retry policy', () => {
    it('retries 5xx, 408 and 429, and gives up on other 4xx at once', () => {
      for (const s of [500, 502, 503, 504, 408, 429]) assert.equal(classifyStatus(s).kind, 'transient', String(s));
      for (const s of [400, 401, 403, 404, 410]) assert.equal(classifyStatus(s).kind, 'wrong-url', String(s));
    });

    it('classifies network and disk errors', () => {
      const err = (code: string) => Object.assign(new Error(code), { code });
      assert.equal(classifyError(err('ECONNRESET')).kind, 'transient');
      assert.equal(classifyError(err('UND_ERR_BODY_TIMEOUT')).kind, 'transient');
      assert.equal(classifyError({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } }).kind, 'transient');
      assert.equal(classifyError(err('ENOTFOUND')).kind, 'wrong-url');
      assert.equal(classifyError(err('ENOSPC')).kind, 'fatal');
      assert.equal(classifyError(Object.assign(new Error('x'), { name: 'AbortError' })).outcome, 'aborted');
    });

    it("tells the proxy's refusals from the server's answers and from the run's own abort", () => {
      assert.equal(classifyResponse(403, {}).cause, 'http');
      assert.equal(classifyResponse(403, { 'proxy-status': 'squid; error=destination_ip_prohibited' }).cause, 'proxy');
      assert.equal(classifyResponse(403, { 'x-squid-error': 'ERR_ACCESS_DENIED 0' }).cause, 'proxy');
      assert.equal(classifyResponse(200, { 'proxy-status': 'squid' }).cause, 'http');
      assert.deepEqual(classifyResponse(407, {}), { kind: 'wrong-url', summary: 'the proxy refused the request: HTTP 407', outcome: 'the proxy refused the request: HTTP 407', cause: 'proxy' });
      const tunnel = classifyError(Object.assign(new Error('Proxy response (403) !== 200 when HTTP Tunneling'), { name: 'AbortError', code: 'UND_ERR_ABORTED' }));
      assert.deepEqual([tunnel.kind, tunnel.cause, tunnel.summary], ['wrong-url', 'proxy', 'the proxy refused the connection: HTTP 403']);
      assert.equal(classifyError(Object.assign(new Error('Proxy response (502) !== 200 when HTTP Tunneling'), { name: 'AbortError' })).kind, 'transient');
      assert.equal(classifyError(new Error('Proxy Authentication Required (407)')).cause, 'proxy');
      assert.deepEqual(classifyError(Object.assign(new Error('x'), { name: 'AbortError', code: 'ABORT_ERR' })).cause, 'interrupted');
      assert.equal(classifyError(Object.assign(new Error('x'), { code: 'ENOTFOUND' })).cause, 'dns');
      assert.equal(classifyError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).cause, 'connect');
    });

    it('backs off exponentially with jitter, capped, and obeys Retry-After', () => {
      const p = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1000, maxDelayMs: 8000 };
      assert.equal(backoffDelay(p, 1, undefined, () => 0), 500);
      assert.equal(backoffDelay(p, 1, undefined, () => 1), 1000);
      assert.equal(backoffDelay(p, 3, undefined, () => 1), 4000);
      assert.equal(backoffDelay(p, 10, undefined, () => 1), 8000);
      assert.equal(backoffDelay(p, 1, 5000, () => 0), 5000);
      assert.equal(backoffDelay(p, 1, 10_000_000, () => 0), 120_000);
      assert.equal(parseRetryAfter('7'), 7000);
      assert.equal(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1)), 10_000);
      assert.equal(parseRetryAfter('soon'), undefined);
    });
  });

  it('Limiter never runs more than its limit, even when slots are handed over', async () => {
    const limiter = new Limiter(3);
    let active = 0;
    let peak = 0;
    const task = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setImmediate(r));
      active--;
    };
    await Promise.all(Array.from({ length: 30 }, () => limiter.run(task)));
    assert.equal(peak, 3);
  });
});
