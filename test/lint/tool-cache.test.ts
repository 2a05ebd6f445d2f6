import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { shellcheck, shellcheckAll } from '../../src/lint/external-tools.js';
import { removeDir, tempDir } from '../helpers/project.js';

/**
 * shellcheck's answers are kept by the text and the program: a real shellcheck behind a
 * wrapper first on PATH that logs every file it is asked about, so the test sees which texts
 * were checked again and which were answered from the cache.
 */
describe('shellcheck answers kept between runs (tool-cache)', function () {
  this.timeout(120_000);
  let dir: string;
  let log: string;
  let wrapper: string;
  const saved = { PATH: process.env.PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, NO_CACHE: process.env.ROCM_EBUILD_NO_CACHE };
  const real = execFileSync('sh', ['-c', 'command -v shellcheck']).toString().trim();

  const clean = 'EAPI=8\nsrc_prepare() {\n\tdefault\n}\n';
  const quoting = 'EAPI=8\nsrc_install() {\n\tdoins $FOO\n}\n';
  const third = 'EAPI=8\nsrc_compile() {\n\techo "${S}"\n}\n';

  function writeWrapper(extra = ''): void {
    writeFileSync(wrapper, `#!/bin/sh\n# ${extra}\nfor a in "$@"; do case "$a" in -*|bash|json*|SC*) ;; *) echo "$a" >> '${log}';; esac; done\nexec '${real}' "$@"\n`);
    chmodSync(wrapper, 0o755);
  }
  const checked = (): number => {
    try {
      return readFileSync(log, 'utf8').split('\n').filter(Boolean).length;
    } catch {
      return 0;
    }
  };

  beforeEach(async () => {
    dir = await tempDir('rocm-ebuild-tool-cache-');
    log = path.join(dir, 'log');
    wrapper = path.join(dir, 'bin', 'shellcheck');
    execFileSync('mkdir', ['-p', path.join(dir, 'bin')]);
    writeWrapper();
    process.env.PATH = `${path.dirname(wrapper)}${path.delimiter}${saved.PATH}`;
    process.env.XDG_CACHE_HOME = path.join(dir, 'cache');
    delete process.env.ROCM_EBUILD_NO_CACHE;
  });
  afterEach(async () => {
    process.env.PATH = saved.PATH;
    if (saved.XDG_CACHE_HOME === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved.XDG_CACHE_HOME;
    if (saved.NO_CACHE !== undefined) process.env.ROCM_EBUILD_NO_CACHE = saved.NO_CACHE;
    await removeDir(dir);
  });

  it('answers a text checked before without running shellcheck, and checks only the new one', async () => {
    const first = await shellcheckAll([clean, quoting]);
    assert.equal(checked(), 2);
    assert.deepEqual(first[0], []);
    assert.ok(first[1]!.some((f) => f.code === 'SC2086'), JSON.stringify(first[1]));
    assert.deepEqual(await shellcheckAll([clean, quoting]), first);
    assert.equal(checked(), 2, 'nothing checked again');
    const mixed = await shellcheckAll([third, quoting, clean]);
    assert.equal(checked(), 3, 'only the new text');
    assert.deepEqual(mixed.slice(1), [first[1], first[0]]);
    // One text alone (lint of one ebuild) reads the same entries.
    assert.deepEqual(await shellcheck(quoting), first[1]);
    assert.equal(checked(), 3);
  });

  it('checks again for other exclusions, another shellcheck, or with ROCM_EBUILD_NO_CACHE', async () => {
    await shellcheckAll([quoting]);
    assert.equal(checked(), 1);
    assert.deepEqual(await shellcheckAll([quoting], ['SC2086']), [[]]);
    assert.equal(checked(), 2, 'other arguments, another answer');
    // An upgraded shellcheck: the program's file changed.
    writeWrapper('a newer build');
    await shellcheckAll([quoting]);
    assert.equal(checked(), 3);
    process.env.ROCM_EBUILD_NO_CACHE = '1';
    await shellcheckAll([quoting]);
    await shellcheckAll([quoting]);
    assert.equal(checked(), 5, 'the cache is off');
  });

  it('replaces a damaged entry, ignores what a killed run left, and agrees with itself under concurrent runs', async () => {
    await shellcheckAll([clean, quoting]);
    const cacheDir = path.join(process.env.XDG_CACHE_HOME!, 'rocm-ebuild', 'shellcheck');
    const entries = readdirSync(cacheDir).filter((f) => f.endsWith('.json'));
    assert.equal(entries.length, 2);
    for (const f of entries) writeFileSync(path.join(cacheDir, f), '{"half');
    // kill -9 between write and rename leaves a temporary file.
    writeFileSync(path.join(cacheDir, `${entries[0]}.123.abcd.tmp`), '[]');
    const again = await shellcheckAll([clean, quoting]);
    assert.equal(checked(), 4, 'damaged entries are checked again');
    assert.ok(again[1]!.some((f) => f.code === 'SC2086'));
    assert.deepEqual(await shellcheckAll([clean, quoting]), again);
    assert.equal(checked(), 4, 'and stored again');
    const runs = await Promise.all([shellcheckAll([third, clean]), shellcheckAll([third, quoting]), shellcheckAll([third])]);
    for (const r of runs) assert.deepEqual(r[0], runs[2]![0]);
    assert.ok(readdirSync(cacheDir).every((f) => f.endsWith('.json') || f === `${entries[0]}.123.abcd.tmp`), 'no temporary file of these runs is left');
  });
});
