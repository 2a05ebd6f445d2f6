import { strict as assert } from 'node:assert';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { readmeBlock } from './helpers/readme-blocks.js';
import { gitHome, removeDir, root } from './helpers/project.js';

/**
 * The README's Install block, its first result and its test command, as a
 * new user runs them: a fresh account (an empty HOME with a git identity and
 * nothing else: no ~/.local, no PATH entry for it, no XDG variables), the
 * install lines run as written by bash -e, then the first-result block with
 * the PATH the README tells users to set up.
 *
 * Two things stand in for what cannot exist here. The repository's address
 * is a placeholder: git's own url.<base>.insteadOf sends it to this
 * checkout (its committed HEAD, what a clone gets). The npm registry is
 * reachable, but downloading every package again is minutes for nothing:
 * npm's cache of this machine is lent to the account (npm_config_cache, with
 * prefer-offline), so `npm ci` installs the locked tarballs from it and
 * builds, as it would from the registry.
 *
 * `npm test`, the README's test command, is run as written too, on a PATH
 * without shellcheck and xmllint: its first step, the check of the tools the
 * suite needs, must stop it at once with the programs and the apt-get line.
 * The suite itself is what this test is part of; running it again inside
 * itself would prove nothing more.
 */
describe('README: install, first result and test command in a fresh account', function () {
  this.timeout(900_000);
  let home: string;
  let clone: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    home = await gitHome({ name: 'Ada Tester', email: 'ada@example.org' });
    execFileSync('git', ['config', '--file', path.join(home, '.gitconfig'), `url.${root}.insteadOf`, 'https://example.org/rocm-ebuild.git']);
    clone = path.join(home, 'rocm-ebuild');
    const cache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
    env = {
      HOME: home,
      USER: 'ada',
      LANG: 'C.UTF-8',
      // Node and npm where this test found them, then the system's programs: nothing of ~/.local yet.
      PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
      GIT_CONFIG_NOSYSTEM: '1',
      npm_config_cache: cache,
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
      // An empty Portage configuration: the first result says what happens on any machine.
      PORTAGE_CONFIGROOT: path.join(home, 'no-portage'),
      NO_COLOR: '1',
    };
  });
  after(() => removeDir(home));

  function bash(script: string, cwd: string, extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: { ...env, ...extra } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, out }));
    });
  }

  it('installs as written: the command on ~/.local/bin, its man page and bash completion', async () => {
    const { line, body } = readmeBlock('install');
    assert.match(body, /^git clone https:\/\/example\.org\/rocm-ebuild\.git rocm-ebuild$/m, 'the block starts from a clone');
    const r = await bash(body, home);
    assert.equal(r.code, 0, `README.md:${line}\n${r.out.slice(-4000)}`);
    const link = path.join(home, '.local', 'bin', 'rocm-ebuild');
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readlinkSync(link), path.join(clone, 'bin', 'run.js'));
    const withPath = { PATH: `${path.join(home, '.local', 'bin')}:${env.PATH}` };
    const version = spawnSync('rocm-ebuild', ['--version'], { env: { ...env, ...withPath }, encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.match(version.stdout, /^rocm-ebuild\/\d+\.\d+\.\d+ /);
    // bash-completion loads ~/.local/share/bash-completion/completions/<command> by itself; sourced here as it would be.
    const completion = path.join(home, '.local', 'share', 'bash-completion', 'completions', 'rocm-ebuild');
    const loaded = spawnSync('bash', ['-c', 'source "$1" && complete -p rocm-ebuild', 'bash', completion], { env: { ...env, ...withPath }, encoding: 'utf8' });
    assert.equal(loaded.stdout.trim(), 'complete -o default -F _rocm_ebuild rocm-ebuild', loaded.stderr);
    assert.deepEqual(readdirSync(path.join(home, '.local', 'share', 'man', 'man1')), ['rocm-ebuild.1']);
    // man finds the page through the PATH entry the README asks for (man-db looks in ../share/man of each).
    const man = spawnSync('sh', ['-c', 'command -v man'], { encoding: 'utf8' });
    if (man.status === 0) {
      const where = spawnSync('man', ['-w', 'rocm-ebuild'], { env: { ...env, ...withPath, MANPATH: '' }, encoding: 'utf8' });
      assert.equal(where.stdout.trim(), path.join(home, '.local', 'share', 'man', 'man1', 'rocm-ebuild.1'), where.stderr);
    }
  });

  it('gives the first result as written, with rocm-ebuild from ~/.local/bin', async () => {
    const { line, body } = readmeBlock('first-result');
    const r = await bash(body, home, { PATH: `${path.join(home, '.local', 'bin')}:${env.PATH}` });
    assert.equal(r.code, 0, `README.md:${line}\n${r.out.slice(-4000)}`);
    assert.match(readFileSync(path.join(home, 'rocBLAS-7.2.4.ebuild'), 'utf8'), /^EAPI=8$/m);
  });

  it('npm test, as written, says first which tools are missing and how to get them', async () => {
    const { body } = readmeBlock('test');
    const command = body.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
    assert.deepEqual(command, ['npm test']);
    // This account's PATH without shellcheck and xmllint: links to every other program.
    const bare = path.join(home, 'bare-bin');
    mkdirSync(bare);
    for (const dir of env.PATH!.split(':')) {
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const n of names) {
        if (n === 'shellcheck' || n === 'xmllint') continue;
        try {
          symlinkSync(path.join(dir, n), path.join(bare, n));
        } catch {
          // the first of a name wins, as on PATH
        }
      }
    }
    const started = Date.now();
    const r = await bash(command[0]!, clone, { PATH: bare });
    assert.notEqual(r.code, 0);
    assert.match(r.out, /^npm test: the tests need programs that are not installed: shellcheck \(.*\); xmllint \(.*\)\.$/m);
    assert.match(r.out, /^Install them \(Debian, Ubuntu\): (sudo )?apt-get install shellcheck libxml2-utils( \S+)*$/m);
    assert.match(r.out, /^Nothing was built or tested\./m);
    assert.ok(Date.now() - started < 60_000, 'the check comes before the build');
    // With the tools, the check passes and npm test goes on to the build (which the install above already ran).
    const check = spawnSync(process.execPath, ['test/check-tools.mjs'], { cwd: clone, env, encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr);
  });
});
