import { strict as assert } from 'node:assert';
import { copyFile, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { buildCommandManifest, MANIFEST_FILE, manifestText } from '../../src/cli/command-manifest.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

/** A copy of the package whose bin/run.js sees `manifest` (or none) as its oclif.manifest.json. */
async function packageWith(manifest: string | undefined): Promise<{ dir: string; bin: string }> {
  const dir = await tempDir('rocm-ebuild-oclif-');
  await mkdir(path.join(dir, 'bin'));
  await copyFile(path.join(root, 'bin', 'run.js'), path.join(dir, 'bin', 'run.js'));
  await copyFile(path.join(root, 'package.json'), path.join(dir, 'package.json'));
  for (const d of ['dist', 'node_modules', 'manifest', 'schemas', 'ebuild-templates', 'eclass']) await symlink(path.join(root, d), path.join(dir, d));
  if (manifest !== undefined) await writeFile(path.join(dir, MANIFEST_FILE), manifest);
  return { dir, bin: path.join(dir, 'bin', 'run.js') };
}

describe('oclif command manifest', function () {
  this.timeout(120_000);
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await removeDir(d);
  });

  it('is current: the one on disk is what the compiled commands give (run `npm run build` after changing a command)', async () => {
    const onDisk = await readFile(path.join(root, MANIFEST_FILE), 'utf8').catch(() => undefined);
    assert.ok(onDisk !== undefined, `${MANIFEST_FILE} is missing: run npm run build`);
    assert.equal(onDisk, manifestText(await buildCommandManifest(root)), `${MANIFEST_FILE} is stale: run npm run build`);
  });

  it('lists every command file', async () => {
    const files = readdirSync(path.join(root, 'dist', 'src', 'commands'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.js'))
      .map((f) => f.replace(/\.js$/, '').split(path.sep).join(':'))
      .sort();
    const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8')) as { commands: Record<string, unknown> };
    assert.deepEqual(Object.keys(manifest.commands).sort(), files);
  });

  it('gives the help oclif gives without it, byte for byte', async () => {
    const without = await packageWith(undefined);
    dirs.push(without.dir);
    for (const args of [['--help'], ['bump', '--help'], ['upstream', 'tags', '--help'], ['upstream', '--help']]) {
      const fast = await runCli(args, { env: { COLUMNS: '100' } });
      const slow = await runCli(args, { env: { COLUMNS: '100' }, bin: without.bin });
      assert.equal(fast.code, 0, fast.stderr);
      assert.equal(fast.stdout, slow.stdout, args.join(' '));
      assert.equal(fast.stderr, slow.stderr);
    }
  });

  it('is ignored when it does not list the command files on disk: a command compiled since is still found', async () => {
    const manifest = JSON.parse(await readFile(path.join(root, MANIFEST_FILE), 'utf8')) as { commands: Record<string, unknown> };
    delete manifest.commands.graph;
    const stale = await packageWith(JSON.stringify(manifest));
    dirs.push(stale.dir);
    const r = await runCli(['graph', '--version', '6.2.2'], { bin: stale.bin });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {1}1\. dev-build\/rocm-cmake$/m);
    const help = await runCli(['--help'], { bin: stale.bin });
    assert.match(help.stdout, /\n {2}graph /);
  });
});
