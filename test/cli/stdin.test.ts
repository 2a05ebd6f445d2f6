import { strict as assert } from 'node:assert';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, runCli } from '../helpers/project.js';

/**
 * oclif reads a positional argument the command line left out from standard
 * input when that is not a terminal, waiting up to 10 ms for it: piped into
 * `rocm-ebuild validate`, "/nonexistent" became the manifest, and what a slow
 * producer wrote after 10 ms was not. Every argument of ours says
 * ignoreStdin; standard input is never an argument.
 */
describe('cli: standard input is never an argument', function () {
  this.timeout(60_000);

  it('every argument of every command sets ignoreStdin', async () => {
    const manifest = JSON.parse(await readFile(path.join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> };
    let args = 0;
    for (const id of Object.keys(manifest.commands)) {
      const file = path.join(root, 'dist', 'src', 'commands', ...id.split(':')) + '.js';
      const mod = (await import(pathToFileURL(file).href)) as { default: { args?: Record<string, { ignoreStdin?: boolean }> } };
      for (const [name, arg] of Object.entries(mod.default.args ?? {})) {
        assert.equal(arg.ignoreStdin, true, `${id} ${name}`);
        args++;
      }
    }
    assert.ok(args >= 10, `${args} arguments seen`);
  });

  it('validate keeps the shipped manifest and render still wants its ATOM when something is piped in', async () => {
    const v = await runCli(['validate'], { input: '/nonexistent\n' });
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /manifest\/stack\.yaml: valid/);
    const r = await runCli(['render', '--version', '6.2.2'], { input: 'hip\n' });
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /^rocm-ebuild: missing ATOM /);
  });
});
