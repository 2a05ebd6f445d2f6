import { strict as assert } from 'node:assert';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { removeDir, runCli, shippedManifest, tempDir } from '../helpers/project.js';
import { bareRepo, fixtures, stackCopy } from './support.js';

/**
 * The upstream commands read repositories nobody here wrote, and remotes that
 * may never answer. A build file's bytes reach the terminal only as visible
 * escapes; a release manifest's names are names, whatever their length; and
 * --timeout bounds the whole command against a server that accepts and
 * stalls (127.0.0.1, a real socket that never answers).
 */

/** Bytes a terminal or a YAML 1.1 reader acts on: ESC, BEL, NEL, line separator, bidi override. */
const ACTIVE = /[\x07\x1b\x85\u2028\u202e]/;

/** A TCP server that accepts every connection and never sends a byte. */
async function stallingServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('upstream: hostile repositories and remotes', function () {
  this.timeout(180_000);
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    dir = await tempDir('rocm-ebuild-upstream-hostile-');
    env = { XDG_CACHE_HOME: path.join(dir, 'cache') };
  });
  after(() => removeDir(dir));

  it('upstream diff shows escape sequences and bidi overrides from a CMake file as visible escapes, in text and Markdown', async () => {
    const trees = path.join(fixtures, 'trees');
    const hostile = path.join(dir, 'gpulib-hostile');
    cpSync(path.join(trees, 'gpulib-6.3.3'), hostile, { recursive: true });
    const cmake = path.join(hostile, 'CMakeLists.txt');
    writeFileSync(
      cmake,
      `${readFileSync(cmake, 'utf8')}\nfind_package(Evil\x1b[2J\x1b]0;pwned\x07 1.0 REQUIRED)\noption(GPULIB_\x1b[31mRED "doc" ON)\nfind_package(Flip\u202egnp 2.0)\nfind_package(Line\u0085Break\u2028Sep 3.0)\n`,
    );
    const git = path.join(dir, 'git');
    await bareRepo(path.join(git, 'ROCm', 'gpulib'), [
      { tag: 'rocm-6.2.2', tree: path.join(trees, 'gpulib-6.2.2') },
      { tag: 'rocm-6.3.3', tree: hostile },
    ]);
    await bareRepo(path.join(git, 'ROCm', 'gpulib-data'), ['rocm-6.2.2', 'rocm-6.3.3'].map((tag) => ({ tag, tree: path.join(trees, 'small', 'gpulib-data', tag) })));
    const stack = stackCopy();
    for (const format of ['text', 'markdown']) {
      const r = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'gpulib', '--manifest', stack, '--base-url', `file://${git}`, '--format', format], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, ACTIVE, `${format}: a byte from the CMake file reached the terminal as it was`);
      assert.doesNotMatch(r.stderr, ACTIVE);
      assert.match(r.stdout, format === 'text' ? /Evil\\x1b\[2J\\x1b\]0/ : /Evil\uFFFD\\\[2J\uFFFD\\\]0/);
      assert.match(r.stdout, format === 'text' ? /Flip\\u202egnp/ : /Flip\uFFFDgnp/);
    }
    // JSON keeps the bytes as read (JSON escapes them): the data is not altered, only its display.
    const json = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', 'gpulib', '--manifest', stack, '--base-url', `file://${git}`, '--json'], { env });
    assert.ok(json.stdout.includes('Evil\\u001b[2J'), json.stdout.slice(0, 400));
  });

  it('upstream projects takes project names of any length and shape: no error from a file name, names shown printable', async () => {
    const long = 'x'.repeat(400);
    // XML 1.0 allows no C0 control but NEL and the bidi overrides.
    const names = [long, `old-${long}`, 'evil\u202egnp\u0085x', '--upload-pack=touch /tmp/pwned', '../../../etc'];
    const xml = (version: string, projects: string[]) =>
      `<manifest><remote name="r" fetch="https://github.com/ROCm/"/><default remote="r" revision="refs/tags/rocm-${version}"/>${projects.map((n) => `<project name="${n}"/>`).join('')}</manifest>`;
    const before = path.join(dir, 'before.xml');
    const now = path.join(dir, 'now.xml');
    writeFileSync(before, xml('6.2.2', ['gpulib', names[1]!]));
    writeFileSync(now, xml('6.3.3', ['gpulib', names[0]!, names[2]!, names[3]!, names[4]!]));
    const stack = stackCopy();
    // Nothing listens on port 9: every repository is unreachable at once, and each is still looked up in the cache.
    const r = await runCli(['upstream', 'projects', '6.3.3', '--manifest', stack, '--file', now, '--against-file', before, '--against', '6.2.2', '--trees', '--base-url', 'http://127.0.0.1:9'], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /ENAMETOOLONG|Error:/);
    assert.doesNotMatch(`${r.stdout}${r.stderr}`, ACTIVE);
    assert.match(r.stdout, /^ {2}new +evil\\u202egnp\\x85x /m);
    assert.match(r.stdout, new RegExp(`^ {2}new +${long} `, 'm'));
  });

  describe('--timeout bounds the whole command, not each read', () => {
    let stall: Awaited<ReturnType<typeof stallingServer>>;
    before(async () => {
      stall = await stallingServer();
    });
    after(() => stall.close());
    // Each command would wait --timeout for every repository in turn; the test gives it ten times --timeout in all.
    const bound = { killAfterMs: 20_000 };

    it('upstream tags: every repository of the shipped manifest, two at a time', async () => {
      const r = await runCli(['upstream', 'tags', '--manifest', shippedManifest, '--base-url', stall.url, '--timeout', '2', '--jobs', '2', '--json'], { env, ...bound });
      assert.equal(r.code, 5, r.stderr);
      const out = JSON.parse(r.stdout) as { unreachable: { error: string }[]; repositories: unknown[] };
      assert.ok(out.repositories.length > 30);
      assert.equal(out.unreachable.length, out.repositories.length);
      assert.ok(out.unreachable.every((u) => u.error === 'not answered before the --timeout of 2 s'), JSON.stringify(out.unreachable.slice(0, 3)));
    });

    it('upstream diff from git tags, and from release tarballs through a stalling mirror', async () => {
      const git = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', '--manifest', shippedManifest, '--base-url', stall.url, '--timeout', '2', '--jobs', '2'], { env, ...bound });
      assert.equal(git.code, 5, git.stderr);
      assert.match(git.stdout, /not compared: cannot fetch rocm-6\.2\.2 from http:\/\/127\.0\.0\.1:\d+\/ROCm\/\S+: not answered before the --timeout of 2 s/);
      const distdir = await tempDir('rocm-ebuild-stall-distdir-');
      try {
        // GitHub is not reachable from the tests either: the mirror is where the time goes.
        const archive = await runCli(['upstream', 'diff', '6.2.2', '6.3.3', '--manifest', shippedManifest, '--distdir', distdir, '--mirror', stall.url, '--timeout', '2', '--jobs', '2'], {
          env: { ...env, GENTOO_MIRRORS: '', HTTPS_PROXY: stall.url, https_proxy: stall.url },
          ...bound,
        });
        assert.equal(archive.code, 5, archive.stderr);
        assert.match(archive.stdout, /not compared: cannot fetch \S+: not answered before the --timeout of 2 s/);
      } finally {
        await removeDir(distdir);
      }
    });

    it('upstream projects: the release manifests from files, every repository probed and listed', async () => {
      const xml = (v: string) => path.join(fixtures, 'release-manifests', `rocm-${v}.xml`);
      const r = await runCli(
        ['upstream', 'projects', '6.3.3', '--manifest', shippedManifest, '--file', xml('6.3.3'), '--against', '6.2.2', '--against-file', xml('6.2.2'), '--trees', '--base-url', stall.url, '--timeout', '2', '--jobs', '2', '--json'],
        { env, ...bound },
      );
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { problems: string[] };
      assert.ok(out.problems.length > 0);
      assert.ok(out.problems.every((p) => /not answered before the --timeout of 2 s/.test(p)), JSON.stringify(out.problems.slice(0, 3)));
    });
  });
});
