import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { removeDir, root, runCli, tempDir } from '../helpers/project.js';

interface ManifestFlag {
  type: 'option' | 'boolean';
  default?: unknown;
  required?: boolean;
  multiple?: boolean;
  hidden?: boolean;
  description?: string;
}
const commands = (JSON.parse(readFileSync(path.join(root, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, { flags: Record<string, ManifestFlag> }> }).commands;

/** Flags whose absence means "not this mode", so they have no default to show. */
const NO_DEFAULT = new Set(['bump --derive-from', 'upstream:projects --against-file', 'lint --version', 'lint --overlay']);

describe('one CLI voice', function () {
  this.timeout(60_000);

  describe('a mistyped command, subcommand, flag or package', () => {
    for (const [args, expected] of [
      [['bmp', '6.2.2'], /^rocm-ebuild: bmp is not a command of rocm-ebuild; did you mean `rocm-ebuild bump 6\.2\.2`\?\n$/],
      [['help', 'bmp'], /^rocm-ebuild: bmp is not a command of rocm-ebuild; did you mean `rocm-ebuild bump`\?\n$/],
      [['bmp', '--help'], /^rocm-ebuild: bmp is not a command of rocm-ebuild; did you mean `rocm-ebuild bump`\?\n$/],
      [['upstream', 'tgs'], /^rocm-ebuild: tgs is not a command of `rocm-ebuild upstream`; did you mean `rocm-ebuild upstream tags`\?\n$/],
      [['upstream', 'zzzzzz'], /^rocm-ebuild: zzzzzz is not a command of `rocm-ebuild upstream`; its commands are diff, evidence, patches, peer, projects, tags, therock; see rocm-ebuild upstream --help\n$/],
      [['bump', '6.2.2', '--overlay', 'x', '--dropold'], /^rocm-ebuild: Nonexistent flag: --dropold; did you mean --drop-old\?\n$/],
      [['graph', '--version', '6.2.2', '--colour'], /^rocm-ebuild: Nonexistent flag: --colour; see rocm-ebuild graph --help\n$/],
      [['graph', 'rocBLASS', '--version', '6.2.2'], /^rocm-ebuild: a package name not in ROCm 6\.2\.2:\n {2}"rocBLASS" is not known; did you mean sci-libs\/rocBLAS\?\n$/],
      [['lint', 'rocBLASS', 'hipp', '--version', '6.2.2'], /^rocm-ebuild: package names not in ROCm 6\.2\.2:\n {2}"rocBLASS" is not known; did you mean sci-libs\/rocBLAS\?\n {2}"hipp" is not known; did you mean dev-util\/hip\?\n$/],
      [['graph', '--version', '6.2.2', '--format', 'json'], /^rocm-ebuild: Expected --format=json to be one of: text, dot; JSON is --json, as for every command\n$/],
    ] as const) {
      it(`${args.join(' ')}: our error format, exit 2, the nearest name`, async () => {
        const r = await runCli([...args]);
        assert.equal(r.code, 2, r.stderr);
        assert.equal(r.stdout, '');
        assert.match(r.stderr, expected);
      });
    }

    it('with --json the error is JSON on standard output, for an unknown command as for a bad flag', async () => {
      for (const args of [['bmp', '6.2.2', '--json'], ['upstream', 'tgs', '--json'], ['graph', '--version', '6.2.2', '--colour', '--json'], ['graph', 'rocBLASS', '--version', '6.2.2', '--json']]) {
        const r = await runCli(args);
        assert.equal(r.code, 2, args.join(' '));
        assert.equal(r.stderr, '', args.join(' '));
        const { error } = JSON.parse(r.stdout) as { error: { message: string; exitCode: number } };
        assert.equal(error.exitCode, 2);
        assert.match(error.message, /did you mean|see rocm-ebuild/);
      }
    });

    it('help COMMAND shows that command\'s help, help alone the list of commands', async () => {
      const [help, flag, rootHelp] = await Promise.all([runCli(['help', 'upstream', 'tags']), runCli(['upstream', 'tags', '--help']), runCli(['help'])]);
      assert.equal(help.code, 0, help.stderr);
      assert.equal(help.stdout, flag.stdout);
      assert.match(rootHelp.stdout, /^COMMANDS\n/m);
      assert.match(rootHelp.stdout, /^ {2}bump /m);
    });
  });

  it('an internal error (not a user error) says it is a bug and where to report it: package.json bugs when it names a tracker', async () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { bugs?: { url?: string } };
    const where = pkg.bugs?.url ? `at ${pkg.bugs.url}` : "where you got rocm-ebuild from (its repository's issues)";
    const dir = await tempDir('rocm-ebuild-crash-');
    try {
      // A command of the real base class whose code fails as a bug does: reading a property of undefined.
      const script = path.join(dir, 'crash.mjs');
      writeFileSync(
        script,
        `const { BaseCommand } = await import(${JSON.stringify(pathToFileURL(path.join(root, 'dist/src/cli/base-command.js')).href)});\n` +
          'class Crash extends BaseCommand { async run() { const source = undefined; return source.github; } }\n' +
          "Crash.id = 'crash';\n" +
          `try { await Crash.run(process.argv.slice(2), ${JSON.stringify(root)}); } catch (e) { process.exitCode = e.oclif?.exit ?? 99; }\n`,
      );
      for (const json of [false, true]) {
        const r = spawnSync(process.execPath, [script, ...(json ? ['--json'] : [])], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
        assert.equal(r.status, 1, r.stderr);
        const message = json ? (JSON.parse(r.stdout) as { error: { message: string } }).error.message : r.stderr;
        assert.match(message, /internal error: TypeError: Cannot read properties of undefined \(reading 'github'\)/);
        assert.ok(message.includes(`This is a bug in rocm-ebuild, not a problem with your input: please report it ${where}`), message);
        assert.match(message, /^ {2}at Crash\.run /m);
      }
    } finally {
      await removeDir(dir);
    }
  });

  it('every flag with a default shows it in --help', () => {
    const missing: string[] = [];
    for (const [id, c] of Object.entries(commands)) {
      for (const [name, f] of Object.entries(c.flags)) {
        if (f.type !== 'option' || f.required || f.multiple || f.hidden || name === 'json' || NO_DEFAULT.has(`${id} --${name}`)) continue;
        if (f.default === undefined && !/default|instead of/.test(f.description ?? '')) missing.push(`${id} --${name}`);
      }
    }
    assert.deepEqual(missing, []);
    assert.match(commands.bump!.flags.jobs!.description!, /\(default 4\)/);
  });

  it('ci k8s offers no runner labels (Kubernetes picks nodes, not runners); github and gitlab do', () => {
    for (const f of ['base-runner', 'label-scheme']) {
      assert.equal(commands['ci:k8s']!.flags[f], undefined, f);
      assert.ok(commands['ci:github']!.flags[f], f);
      assert.ok(commands['ci:gitlab']!.flags[f], f);
    }
  });

  it('JSON is --json everywhere; only gpu list, whose --format json its documentation names, takes that as --json too', () => {
    for (const [id, c] of Object.entries(commands)) {
      assert.equal(((c.flags.format as { options?: string[] } | undefined)?.options ?? []).includes('json'), id === 'gpu:list', id);
      assert.ok(c.flags.json, id);
    }
  });

  it('ci … --output FILE says what it wrote', async () => {
    const dir = await tempDir();
    try {
      const pin = ['--tool-git', 'https://github.com/example/rocm-ebuild.git', '--tool-commit', '0123456789abcdef0123456789abcdef01234567'];
      const r = await runCli(['ci', 'gitlab', '--version', '6.2.2', '--gpu', 'gfx90a', '--gpu', 'gfx1100', ...pin, '--output', 'ci/rocm.yml'], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const m = JSON.parse((await runCli(['matrix', '--version', '6.2.2', '--gpu', 'gfx90a', '--gpu', 'gfx1100', '--json'])).stdout) as { jobs: { gfx: string | null }[] };
      const tests = m.jobs.filter((j) => j.gfx !== null).length;
      assert.equal(r.stdout, `${path.join(dir, 'ci', 'rocm.yml')}: written (ROCm 6.2.2: 1 base job, ${tests} test jobs for gfx90a, gfx1100)\n`);
      assert.ok(readFileSync(path.join(dir, 'ci', 'rocm.yml'), 'utf8').length > 0);
    } finally {
      await removeDir(dir);
    }
  });

  it('graph --format dot groups packages by build-order layer and carries a legend', async () => {
    const [dot, json] = await Promise.all([runCli(['graph', '--version', '6.2.2', '--format', 'dot']), runCli(['graph', '--version', '6.2.2', '--json'])]);
    assert.equal(dot.code, 0, dot.stderr);
    const { order, layers, edges } = JSON.parse(json.stdout) as { order: string[]; layers: Record<string, number>; edges: { from: string; to: string; testOnly: boolean }[] };
    // Each package in the cluster of its layer, and a layer needs only layers before it.
    for (const n of order) {
      const cluster = new RegExp(`subgraph "cluster_layer_${layers[n]}" \\{[^}]*\\t"${n.replace('/', '\\/')}";`);
      assert.match(dot.stdout, cluster, n);
    }
    for (const e of edges) if (!e.testOnly) assert.ok(layers[e.from]! > layers[e.to]!, `${e.from} -> ${e.to}`);
    assert.equal(layers['dev-build/rocm-cmake'], 0);
    assert.match(dot.stdout, /subgraph "cluster_legend" \{[^}]*style=dashed, label="test"/);
    assert.match(dot.stdout, /label="ROCm 6\.2\.2: build order, left to right"/);
  });

  it('graph ATOM shows that package and what it needs', async () => {
    const r = await runCli(['graph', 'hipcc', '--version', '6.2.2', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const { order } = JSON.parse(r.stdout) as { order: string[] };
    assert.equal(order.at(-1), 'dev-util/hipcc');
    assert.ok(order.includes('dev-libs/rocm-device-libs'));
    assert.ok(!order.includes('sci-libs/rocBLAS'));
  });
});
