import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { MAN_PAGE, manPageOf } from '../../src/cli/man-page.js';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

const run = promisify(execFile);
const ids = Object.keys((JSON.parse(readFileSync(path.join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, unknown> }).commands);

describe('shell completion and the man page', function () {
  this.timeout(60_000);

  describe('completion bash, run by real bash', () => {
    let dir: string;
    let script: string;
    before(async () => {
      dir = await tempDir('rocm-ebuild-completion-');
      const r = await runCli(['completion', 'bash']);
      assert.equal(r.code, 0, r.stderr);
      script = path.join(dir, 'rocm-ebuild.bash');
      writeFileSync(script, r.stdout);
    });
    after(() => removeDir(dir));

    /** What bash offers for the words typed so far (the last one being completed). */
    async function complete(...typed: string[]): Promise<string[]> {
      const words = ['rocm-ebuild', ...typed].map((w) => `'${w}'`).join(' ');
      const { stdout } = await run('bash', ['-c', `source "$1"; COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _rocm_ebuild; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', script]);
      return stdout.split('\n').filter(Boolean);
    }

    it('completes commands, topics and subcommands', async () => {
      assert.deepEqual(await complete('b'), ['bump']);
      assert.deepEqual(await complete('ci', 'g'), ['github', 'gitlab']);
      assert.deepEqual(await complete('upstream', ''), ['diff', 'evidence', 'patches', 'peer', 'projects', 'tags', 'therock']);
      assert.deepEqual(await complete('help', 'up'), ['upstream']);
      // Every command is reachable word by word.
      for (const id of ids) {
        const w = id.split(':');
        assert.ok((await complete(...w.slice(0, -1), w.at(-1)!)).includes(w.at(-1)!), id);
      }
    });

    it("completes a command's flags and the choices of a flag, after arguments too", async () => {
      assert.deepEqual(await complete('graph', '--f'), ['--format']);
      assert.deepEqual(await complete('graph', 'rocBLAS', '--version', '6.2.2', '--format', ''), ['text', 'dot']);
      assert.deepEqual(await complete('ci', 'k8s', '--base'), []);
      assert.ok((await complete('bump', '6.2.2', '--')).includes('--drop-old'));
      // A flag taking a path leaves it to the shell's file names.
      assert.deepEqual(await complete('bump', '6.2.2', '--overlay', ''), []);
    });
  });

  it('zsh loads the bash completion through bashcompinit; fish gets one complete line per command and flag', async () => {
    const [zsh, fish] = await Promise.all([runCli(['completion', 'zsh']), runCli(['completion', 'fish'])]);
    assert.match(zsh.stdout, /^#compdef rocm-ebuild\n/);
    assert.match(zsh.stdout, /\nautoload -U \+X bashcompinit && bashcompinit\n/);
    assert.match(zsh.stdout, /\ncomplete -o default -F _rocm_ebuild rocm-ebuild\n/);
    assert.match(fish.stdout, /^complete -c rocm-ebuild -n '__fish_seen_subcommand_from graph' -l format -x -a 'text dot' -d 'output format'$/m);
    assert.match(fish.stdout, /^complete -c rocm-ebuild -n '__fish_seen_subcommand_from ci; and not __fish_seen_subcommand_from github gitlab k8s' -a github /m);
    const unknown = await runCli(['completion', 'tcsh']);
    assert.equal(unknown.code, 2);
  });

  it(`${MAN_PAGE} is what the commands say (npm run man rewrites it), and groff reads it without a warning`, async () => {
    const committed = readFileSync(path.join(root, MAN_PAGE), 'utf8');
    assert.equal(committed, await manPageOf(), `${MAN_PAGE} is stale: run npm run man`);
    for (const id of ids) assert.ok(committed.includes(`.SS "rocm\\-ebuild ${id.replaceAll(':', ' ').replaceAll('-', '\\-')}"`), id);
    const { stderr } = await run('groff', ['-man', '-Tutf8', '-ww', '-z', path.join(root, MAN_PAGE)]);
    assert.equal(stderr, '');
  });
});
