import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { smallStackFixture } from '../helpers/bumped-overlay.js';
import { TestServer, testCert } from '../helpers/http-server.js';
import { readmeBlock } from '../helpers/readme-blocks.js';
import { bin, git, gitHome, removeDir, runCli, tempDir } from '../helpers/project.js';

/**
 * The README's recipe for a bump without network, run as written: list what
 * the distdir lacks, fetch it with curl, bump --offline. The network is the
 * one thing that cannot exist here: a local HTTPS server stands in for
 * GitHub, reached through curl's own configuration (~/.curlrc: connect-to,
 * and insecure since a stand-in cannot hold GitHub's certificate); the
 * manifest is a copy of the small test stack with a release named 7.2.4, the
 * release the recipe names, given through the config file users have.
 */
describe("README: the offline bump recipe", function () {
  this.timeout(240_000);
  let home: string;
  let work: string;
  let server: TestServer;

  before(async () => {
    const small = await smallStackFixture();
    work = await tempDir('rocm-ebuild-offline-');
    home = await gitHome({ name: 'Ada Tester', email: 'ada@example.org' });
    const manifest = path.join(work, 'manifest');
    execFileSync('cp', ['-a', small.manifest, manifest]);
    const stack = path.join(manifest, 'stack.yaml');
    await writeFile(stack, (await readFile(stack, 'utf8')).replace('"6.2.2": { llvm_slot: 18 }', '"7.2.4": { llvm_slot: 18 }'));
    await mkdir(path.join(home, '.config', 'rocm-ebuild'), { recursive: true });
    await writeFile(path.join(home, '.config', 'rocm-ebuild', 'config.toml'), `manifest = "${manifest}"\n`);
    // GitHub as a local server: every distfile the plan names, at its URL's path, with its own content.
    server = await TestServer.start({ tls: testCert() });
    const plan = await runCli(['bump', '7.2.4', '--overlay', path.join(work, 'none'), '--dry-run', '--json'], { home });
    assert.equal(plan.code, 0, plan.stderr);
    for (const p of (JSON.parse(plan.stdout) as { packages: { distfiles: { name: string; urls: string[] }[] }[] }).packages) {
      for (const d of p.distfiles) {
        const url = new URL(d.urls[0]!);
        assert.equal(url.host, 'github.com', d.urls[0]);
        server.route(url.pathname, { body: Buffer.from(`${d.name}: served by the stand-in\n`) });
      }
    }
    const port = new URL(server.url('/')).port;
    await writeFile(path.join(home, '.curlrc'), `connect-to = github.com:443:127.0.0.1:${port}\ninsecure\nsilent\nshow-error\n`);
  });
  after(async () => {
    await server.close();
    await removeDir(work);
    await removeDir(home);
  });

  it('lists what is missing, fetches it with the loop as written, and bumps offline', async () => {
    const { line, body } = readmeBlock('offline');
    const binDir = path.join(home, 'bin');
    await mkdir(binDir);
    await writeFile(path.join(binDir, 'rocm-ebuild'), `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`, { mode: 0o755 });
    const env: NodeJS.ProcessEnv = {
      PATH: `${binDir}:${process.env.PATH}`,
      HOME: home,
      CURL_HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      XDG_CACHE_HOME: path.join(home, '.cache'),
      GIT_CONFIG_NOSYSTEM: '1',
      PORTAGE_CONFIGROOT: path.join(home, 'portage-root'),
      GENTOO_MIRRORS: '',
      NO_COLOR: '1',
      LANG: 'C.UTF-8',
    };
    const r = await new Promise<{ code: number; out: string }>((resolve, reject) => {
      const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', body], { cwd: home, env });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, out }));
    });
    assert.equal(r.code, 0, `README.md:${line}\n${r.out}`);
    const listed = (await readFile(path.join(home, 'distfiles.txt'), 'utf8')).trim().split('\n');
    assert.equal(listed.length, 3, listed.join('\n'));
    for (const l of listed) assert.match(l, /^\S+\.tar\.gz https:\/\/github\.com\/\S+$/);
    assert.deepEqual((await readdir(path.join(home, 'distfiles'))).sort(), listed.map((l) => l.split(' ')[0]!).sort());
    const overlay = path.join(home, 'rocm-overlay');
    const subjects = (await git(overlay, ['log', '--format=%s'], home)).trim().split('\n');
    assert.ok(subjects.includes('sci-libs/gpulib: new package, add 7.2.4'), subjects.join('\n'));
    assert.match(await readFile(path.join(overlay, 'sci-libs/gpulib/Manifest'), 'utf8'), new RegExp(`^DIST gpulib-7\\.2\\.4\\.tar\\.gz ${'gpulib-7.2.4.tar.gz: served by the stand-in\n'.length} BLAKE2B [0-9a-f]{128} SHA512 [0-9a-f]{128}$`, 'm'));
    // Nothing is missing any more: the list is empty.
    const again = await runCli(['bump', '7.2.4', '--overlay', overlay, '--distdir', path.join(home, 'distfiles'), '--list-distfiles'], { home });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, '');
  });

  it('puts each --mirror before upstream, and says the same as JSON', async () => {
    const r = await runCli(['bump', '7.2.4', '--overlay', path.join(work, 'mirror'), '--mirror', 'http://mirror.example/distfiles/', '--list-distfiles', '--json', '--distdir', path.join(work, 'empty-distdir')], { home });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { dryRun: boolean; missingDistfiles: { name: string; urls: string[] }[] };
    assert.equal(out.dryRun, true);
    const gpulib = out.missingDistfiles.find((d) => d.name === 'gpulib-7.2.4.tar.gz')!;
    assert.deepEqual(gpulib.urls[0], 'http://mirror.example/distfiles/gpulib-7.2.4.tar.gz');
    assert.match(gpulib.urls[1]!, /^https:\/\/github\.com\//);
    assert.ok(!(await readdir(work)).includes('mirror'), 'a listing writes no overlay');
  });
});
