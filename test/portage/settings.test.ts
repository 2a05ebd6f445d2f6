import { strict as assert } from 'node:assert';
import { existsSync } from 'node:fs';
import { chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MakeConfError, readMakeConf } from '../../src/portage/make-conf.js';
import { portageSettings } from '../../src/portage/settings.js';
import { distfileSettings } from '../../src/portage/distfile-settings.js';
import { smallStackFixture } from '../helpers/bumped-overlay.js';
import { removeDir, runCli, tempDir, writeTree } from '../helpers/project.js';

/** Portage's settings: portageq when installed, else make.conf read (never run), the environment winning. */
describe('Portage settings: make.conf and portageq', function () {
  this.timeout(60_000);
  let dir: string;
  const values = (file: string, outer: Record<string, string> = {}) =>
    Object.fromEntries([...readMakeConf(file, { outer: new Map(Object.entries(outer)) })].map(([k, v]) => [k, v.value]));

  before(async () => {
    dir = await tempDir('rocm-ebuild-portage-');
  });
  after(() => removeDir(dir));

  describe('make.conf as Portage reads it', () => {
    it('assignments, quotes, expansion, export, comments, continuations, source (relative to the file), the directory form', async () => {
      const root = path.join(dir, 'syntax');
      await writeTree(root, {
        'etc/portage/make.conf': [
          '# a comment',
          'BASE=/var/cache',
          'export DISTDIR="${BASE}/distfiles" # trailing comment',
          "LITERAL='${BASE} $(not run)'",
          'GENTOO_MIRRORS="https://a.example/gentoo \\',
          '\thttps://b.example/gentoo"',
          'MULTI="one',
          'two"',
          'ESCAPED="a \\"quoted\\" \\$HOME"',
          'FROM_ENV=$HOME/x',
          'source extra.conf',
          '',
        ].join('\n'),
        'etc/portage/extra.conf': 'EXTRA=${DISTDIR}/more; OTHER=1\n',
      });
      assert.deepEqual(values(path.join(root, 'etc/portage/make.conf'), { HOME: '/home/ada' }), {
        BASE: '/var/cache',
        DISTDIR: '/var/cache/distfiles',
        LITERAL: '${BASE} $(not run)',
        GENTOO_MIRRORS: 'https://a.example/gentoo \thttps://b.example/gentoo',
        MULTI: 'one\ntwo',
        ESCAPED: 'a "quoted" $HOME',
        FROM_ENV: '/home/ada/x',
        EXTRA: '/var/cache/distfiles/more',
        OTHER: '1',
      });
      const d = path.join(dir, 'dirform/etc/portage/make.conf');
      await writeTree(d, { '10-base': 'DISTDIR=/srv/a\n', '20-override': 'DISTDIR=/srv/b\n', '.hidden': 'DISTDIR=/hidden\n', '30-backup~': 'DISTDIR=/backup\n' });
      assert.deepEqual(values(d), { DISTDIR: '/srv/b' });
      assert.deepEqual(values(path.join(dir, 'absent/make.conf')), {});
    });

    it('hostile input: nothing is ever run, every refusal names file:line:column', async () => {
      const marker = path.join(dir, 'ran');
      const cases: [string, RegExp][] = [
        [`DISTDIR="$(touch ${marker})"\n`, /:1:10: a command substitution \$\(…\) is not run/],
        [`DISTDIR=\`touch ${marker}\`\n`, /:1:9: a command substitution `…` is not run/],
        [`DISTDIR="\`touch ${marker}\`"\n`, /:1:10: a command substitution `…` is not run/],
        [`OK=1\nDISTDIR=/x; touch ${marker}\n`, /:2:13: expected NAME=value, export or source/],
        [`DISTDIR=/x && touch ${marker}\n`, /:1:12: unexpected "&& touch/],
        ['DISTDIR="${X:-/tmp}"\n', /:1:10: \$\{X:-\/tmp\} is not a plain variable reference/],
        ['DISTDIR="/unterminated\n', /:1:9: unterminated " quote/],
        ["DISTDIR='/unterminated\n", /:1:9: unterminated ' quote/],
        ['DISTDIR=${UNCLOSED\n', /:1:9: unterminated \$\{/],
        ['DISTDIR=/a\u0000b\n', /holds a NUL byte/],
        [`eval touch ${marker}\n`, /:1:1: expected NAME=value, export or source, not "eval touch/],
        ['source\n', /expected NAME=value, export or source/],
        ["DISTDIR=$'\\x2ftmp'\n", /:1:9: \$'…' is bash quoting make\.conf does not have \(Portage would not read it as bash does\)/],
        ['DISTDIR=$"/tmp"\n', /:1:9: \$"…" is bash quoting make\.conf does not have/],
      ];
      for (const [text, re] of cases) {
        const file = path.join(dir, 'hostile.conf');
        await writeFile(file, text);
        assert.throws(() => readMakeConf(file), (err: unknown) => err instanceof MakeConfError && re.test(err.message), JSON.stringify(text));
      }
      assert.ok(!existsSync(marker), 'make.conf text was run');
    });

    it('source: cycles, depth, non-regular files and oversized files are refused', async () => {
      const root = path.join(dir, 'sources');
      await writeTree(root, { 'a.conf': 'A=1\nsource b.conf\n', 'b.conf': 'source a.conf\n', 'big.conf': `X="${'x'.repeat(1024 * 1024)}"\n` });
      assert.throws(() => readMakeConf(path.join(root, 'a.conf')), /a cycle: .*a\.conf → .*b\.conf → .*a\.conf/);
      await writeFile(path.join(root, 'zero.conf'), 'source /dev/zero\n');
      assert.throws(() => readMakeConf(path.join(root, 'zero.conf')), /\/dev\/zero is not a regular file/);
      assert.throws(() => readMakeConf(path.join(root, 'big.conf')), /over 1 MiB is not read/);
      const chain: Record<string, string> = {};
      for (let i = 0; i < 20; i++) chain[`c${i}.conf`] = `source c${i + 1}.conf\n`;
      chain['c20.conf'] = 'END=1\n';
      await writeTree(path.join(root, 'chain'), chain);
      assert.throws(() => readMakeConf(path.join(root, 'chain/c0.conf')), /nests over 16 files deep/);
      await symlink('/dev/null', path.join(root, 'null.conf'));
      await writeFile(path.join(root, 'to-null.conf'), 'source null.conf\n');
      assert.throws(() => readMakeConf(path.join(root, 'to-null.conf')), /is not a regular file/);
    });
  });

  describe('a make.conf directory holding what is not a file', () => {
    it('a dangling symbolic link, a link loop and a subdirectory are passed over, as Portage does; the files are read', async () => {
      const conf = path.join(dir, 'make.conf.d');
      await writeTree(conf, { '00-base': 'DISTDIR=/var/cache/distfiles\n', '20-more': 'FEATURES="test"\n', 'sub/ignored': 'DISTDIR=/nowhere\n' });
      await symlink(path.join(dir, 'no-such-file'), path.join(conf, '10-dangling'));
      await symlink('15-loop', path.join(conf, '15-loop'));
      assert.deepEqual(values(conf), { DISTDIR: '/var/cache/distfiles', FEATURES: 'test' });
      // As /etc/portage/make.conf of a configuration root, where the commands look.
      const root = path.join(dir, 'configroot');
      await mkdir(path.join(root, 'etc', 'portage'), { recursive: true });
      await symlink(conf, path.join(root, 'etc', 'portage', 'make.conf'));
      const d = await distfileSettings({}, { env: { PORTAGE_CONFIGROOT: root, PATH: '/nonexistent' }, check: false });
      assert.equal(d.distdir, '/var/cache/distfiles');
      assert.match(d.distdirFrom, /make\.conf\/00-base:1$/);
    });
  });

  describe('which value wins', () => {
    it('the environment over make.conf; make.conf under PORTAGE_CONFIGROOT when there is no portageq', async () => {
      const root = path.join(dir, 'root-env');
      await writeTree(root, { 'etc/portage/make.conf': 'DISTDIR=/from/make.conf\nGENTOO_MIRRORS="https://m.example/gentoo ftp://old.example"\n' });
      const env = { PATH: '/nonexistent', PORTAGE_CONFIGROOT: root };
      const s = await portageSettings(env);
      assert.deepEqual(s.values.DISTDIR, { value: '/from/make.conf', from: `${root}/etc/portage/make.conf:1` });
      assert.equal(s.source, path.join(root, 'etc/portage/make.conf'));
      const won = await portageSettings({ ...env, DISTDIR: '/from/env' });
      assert.deepEqual(won.values.DISTDIR, { value: '/from/env', from: 'the environment' });
      const d = await distfileSettings({}, { env, check: false });
      assert.equal(d.distdir, '/from/make.conf');
      assert.deepEqual(d.mirrors, ['https://m.example/gentoo/distfiles']);
      assert.match(d.mirrorsFrom, /GENTOO_MIRRORS from .*make\.conf:2/);
      assert.equal((await distfileSettings({ distdir: '/flag' }, { env, check: false })).distdirFrom, '--distdir');
    });

    it('portageq when installed (a stand-in on PATH: Portage itself cannot be installed here)', async () => {
      const bin = path.join(dir, 'bin');
      await mkdir(bin);
      const args = path.join(dir, 'portageq-args');
      await writeFile(path.join(bin, 'portageq'), `#!/bin/sh\necho "$@" > '${args}'\nprintf '/var/cache/distfiles\\nhttps://p.example/gentoo\\n'\n`);
      await chmod(path.join(bin, 'portageq'), 0o755);
      const s = await portageSettings({ PATH: bin, PORTAGE_CONFIGROOT: path.join(dir, 'root-env') });
      assert.equal(s.source, 'portageq');
      assert.deepEqual(s.values.DISTDIR, { value: '/var/cache/distfiles', from: 'portageq' });
      assert.deepEqual(s.values.GENTOO_MIRRORS, { value: 'https://p.example/gentoo', from: 'portageq' });
      const { readFile } = await import('node:fs/promises');
      assert.equal((await readFile(args, 'utf8')).trim(), 'envvar DISTDIR GENTOO_MIRRORS');
      // Asked only for what the environment leaves open.
      await writeFile(path.join(bin, 'portageq'), `#!/bin/sh\necho "$@" > '${args}'\nprintf 'https://p.example/gentoo\\n'\n`);
      const only = await portageSettings({ PATH: bin, DISTDIR: '/env' });
      assert.equal((await readFile(args, 'utf8')).trim(), 'envvar GENTOO_MIRRORS');
      assert.equal(only.values.DISTDIR?.from, 'the environment');
    });
  });

  describe('bump uses them', () => {
    it("finds the distfiles in make.conf's DISTDIR and says once where it took it from", async () => {
      const small = await smallStackFixture();
      const root = path.join(dir, 'root-bump');
      await writeTree(root, { 'etc/portage/make.conf': `DISTDIR="${small.distdir}"\n` });
      const flags = small.flags.filter((f, i, all) => f !== '--distdir' && all[i - 1] !== '--distdir');
      const overlay = path.join(dir, 'overlay');
      const r = await runCli(['bump', '6.2.2', '--overlay', overlay, ...flags], {
        home: small.home,
        env: { PORTAGE_CONFIGROOT: root, DISTDIR: undefined, GENTOO_MIRRORS: undefined },
      });
      assert.equal(r.code, 0, r.stderr);
      const said = r.stderr.split('\n').filter((l) => l.startsWith('distdir: '));
      assert.deepEqual(said, [`distdir: ${small.distdir} (DISTDIR from ${root}/etc/portage/make.conf:1); mirrors: none (upstream URLs only)`]);
      const bad = await runCli(['bump', '6.2.2', '--overlay', path.join(dir, 'overlay-bad'), ...flags], {
        home: small.home,
        env: { PORTAGE_CONFIGROOT: path.join(dir, 'root-bad'), DISTDIR: undefined, GENTOO_MIRRORS: undefined },
      }).catch((e: unknown) => e as never);
      assert.equal(bad.code, 3, 'without make.conf the default distdir (empty) is used');
      // A make.conf directory holding a dangling link and a link loop: read past them, never an internal error (exit 1).
      const linked = path.join(dir, 'root-links');
      await writeTree(linked, { 'etc/portage/make.conf/00-distdir': `DISTDIR="${small.distdir}"\n` });
      await symlink(path.join(dir, 'gone'), path.join(linked, 'etc/portage/make.conf/10-gone'));
      await symlink('20-loop', path.join(linked, 'etc/portage/make.conf/20-loop'));
      const links = await runCli(['bump', '6.2.2', '--overlay', path.join(dir, 'overlay-links'), ...flags], {
        home: small.home,
        env: { PORTAGE_CONFIGROOT: linked, DISTDIR: undefined, GENTOO_MIRRORS: undefined },
      });
      assert.equal(links.code, 0, links.stderr);
      assert.match(links.stderr, /^distdir: .* \(DISTDIR from .*make\.conf\/00-distdir:1\)/m);
    });
  });
});
