import { strict as assert } from 'node:assert';
import { cp, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isHelpRequest } from '../../src/cli/help-memo.js';
import { COMMAND_BUNDLE_DIR } from '../../src/paths.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

/**
 * A help request's text is kept from the run that printed it and printed
 * again, without loading oclif, for the same request in the same setting
 * (src/cli/help-memo.ts): byte for byte what oclif prints, never for another
 * width, environment or build, never for a request that failed.
 */
describe('help text kept between runs', function () {
  this.timeout(240_000);
  let work: string;
  let env: NodeJS.ProcessEnv;
  let log: string;
  before(async () => {
    work = await tempDir('rocm-ebuild-help-memo-');
    const hooks = path.join(work, 'hooks.mjs');
    // The modules a run resolves go to a file: a write to stderr would be output of the run, and make it one not kept.
    log = path.join(work, 'resolved.log');
    await writeFile(hooks, `import { appendFileSync } from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }\n`);
    const register = path.join(work, 'register.mjs');
    await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    env = { NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, XDG_CACHE_HOME: path.join(work, 'cache') };
  });
  after(() => removeDir(work));

  /** A run's stdout, and whether it loaded oclif. */
  async function help(args: string[], extra: NodeJS.ProcessEnv = {}, bin?: string) {
    await writeFile(log, '');
    const r = await runCli(args, { env: { ...env, ...extra }, ...(bin ? { bin } : {}) });
    const resolved = (await readFile(log, 'utf8')).split('\n');
    return { code: r.code, stdout: r.stdout, other: r.stderr, oclif: resolved.some((l) => l.includes('oclif-core')) };
  }

  it('tells a help request from a command', () => {
    for (const a of [[], ['--help'], ['-h'], ['help'], ['help', 'bump'], ['bump', '--help'], ['upstream', 'tags', '-h']]) assert.ok(isHelpRequest(a), a.join(' '));
    for (const a of [['bump', '7.2.4'], ['validate'], ['render', 'x', '--', '--help'], ['--version']]) assert.ok(!isHelpRequest(a), a.join(' '));
  });

  for (const args of [['--help'], ['bump', '--help'], ['help', 'upstream', 'tags'], []]) {
    it(`prints what oclif prints for \`${args.join(' ')}\`, the second time without loading oclif`, async () => {
      const fresh = await help(args, { ROCM_EBUILD_NO_CACHE: '1' });
      assert.equal(fresh.code, 0, fresh.other);
      assert.ok(fresh.oclif);
      const first = await help(args);
      const second = await help(args);
      assert.equal(first.stdout, fresh.stdout);
      assert.ok(first.oclif, 'the first run loads oclif');
      assert.equal(second.code, 0, second.other);
      assert.equal(second.stdout, fresh.stdout);
      assert.equal(second.oclif, false, 'the second run does not');
    });
  }

  it('keeps a text per width and environment, and nothing of a failed request', async () => {
    const narrow = await help(['bump', '--help'], { OCLIF_COLUMNS: '50' });
    const wide = await help(['bump', '--help'], { OCLIF_COLUMNS: '120' });
    assert.ok(narrow.oclif && wide.oclif, 'neither is the 80-column text');
    assert.notEqual(narrow.stdout, wide.stdout);
    assert.equal((await help(['bump', '--help'], { OCLIF_COLUMNS: '50' })).stdout, narrow.stdout);
    for (let i = 0; i < 2; i++) {
      const typo = await help(['bmp', '--help']);
      assert.equal(typo.code, 2);
      assert.match(typo.other, /bmp is not a command of rocm-ebuild; did you mean `rocm-ebuild bump`\?/);
      assert.ok(typo.oclif, 'a failed request is never replayed');
    }
  });

  it('reads a damaged entry as none, and writes it again', async () => {
    const dir = path.join(work, 'cache', 'rocm-ebuild', 'help');
    const before = await help(['graph', '--help']);
    for (const f of await readdir(dir)) await writeFile(path.join(dir, f), '{"key": "x", "stdout": 1');
    const damaged = await help(['graph', '--help']);
    assert.ok(damaged.oclif);
    assert.equal(damaged.stdout, before.stdout);
    assert.equal((await help(['graph', '--help'])).oclif, false);
  });

  it('stays whole with several runs writing it at once, and leaves no temporary file', async () => {
    const dir = path.join(work, 'cache', 'rocm-ebuild', 'help');
    const fresh = await help(['lint', '--help'], { ROCM_EBUILD_NO_CACHE: '1' });
    const runs = await Promise.all([0, 1, 2, 3].map(() => runCli(['lint', '--help'], { env })));
    for (const r of runs) assert.equal(r.stdout, fresh.stdout);
    assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.tmp')), []);
    const again = await help(['lint', '--help']);
    assert.equal(again.oclif, false);
    assert.equal(again.stdout, fresh.stdout);
  });

  it('never prints the text of another build: an edited package.json, command manifest or help class is a new text', async () => {
    // A copy of the package as installed (manifest and bundles current).
    const dir = path.join(work, 'pkg');
    await mkdir(path.join(dir, 'dist'), { recursive: true });
    await cp(path.join(root, 'bin'), path.join(dir, 'bin'), { recursive: true });
    for (const f of ['package.json', 'oclif.manifest.json']) await cp(path.join(root, f), path.join(dir, f));
    for (const d of ['node_modules', 'manifest', 'schemas', 'ebuild-templates', 'eclass']) await symlink(path.join(root, d), path.join(dir, d));
    await symlink(path.join(root, 'dist', 'vendor'), path.join(dir, 'dist', 'vendor'));
    await cp(path.join(root, 'dist', 'src'), path.join(dir, 'dist', 'src'), { recursive: true, preserveTimestamps: true });
    await cp(path.join(root, COMMAND_BUNDLE_DIR), path.join(dir, COMMAND_BUNDLE_DIR), { recursive: true, preserveTimestamps: true });
    const bin = path.join(dir, 'bin', 'run.js');
    const first = await help(['--help'], {}, bin);
    assert.equal((await help(['--help'], {}, bin)).oclif, false);
    const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { description: string };
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, description: 'An edited description' }, null, 2));
    const edited = await help(['--help'], {}, bin);
    assert.ok(edited.oclif);
    assert.match(edited.stdout, /^An edited description$/m);
    assert.notEqual(edited.stdout, first.stdout);
    const manifest = path.join(dir, 'oclif.manifest.json');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace('Print a shell completion script for bash, zsh or fish', 'Print a completion script'));
    const renamed = await help(['--help'], {}, bin);
    assert.ok(renamed.oclif);
    assert.match(renamed.stdout, /completion +Print a completion script$/m);
    // `npx tsc` after an edit of the help class: the bundles stay current, the help changes.
    await help(['bump', '--help'], {}, bin);
    assert.equal((await help(['bump', '--help'], {}, bin)).oclif, false);
    const helpClass = path.join(dir, 'dist', 'src', 'cli', 'help.js');
    const text = await readFile(helpClass, 'utf8');
    assert.ok(text.includes('return layoutHelp('));
    await writeFile(helpClass, text.replace('return layoutHelp(', "return 'Edited. ' + layoutHelp("));
    const reworded = await help(['bump', '--help'], {}, bin);
    assert.ok(reworded.oclif);
    assert.match(reworded.stdout, /Edited\. /);
  });
});
