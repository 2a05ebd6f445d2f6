import { strict as assert } from 'node:assert';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { root, runCli } from '../helpers/project.js';

const commands = readdirSync(path.join(root, 'dist', 'src', 'commands'))
  .filter((f) => f.endsWith('.js'))
  .map((f) => f.replace(/\.js$/, ''))
  .sort();

describe('CLI conventions', function () {
  this.timeout(60_000);

  it('has the commands the README documents', () => {
    assert.deepEqual(commands, ['bump', 'completion', 'eclass', 'eclassdoc', 'graph', 'help', 'lint', 'manifest', 'matrix', 'render', 'set', 'test', 'validate']);
  });

  for (const command of commands) {
    it(`${command} --help shows usage, flags with descriptions, examples and --json`, async () => {
      const r = await runCli([command, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^USAGE\n {2}\$ rocm-ebuild /m);
      assert.match(r.stdout, /^EXAMPLES\n/m, `${command} --help has no examples`);
      assert.match(r.stdout, /--json\s+Format output as json\./);
      assert.match(r.stdout, /^DESCRIPTION\n/m);
    });
  }

  it('an unknown flag is a usage error (exit 2)', async () => {
    const r = await runCli(['graph', '--version', '6.2.2', '--colour']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^rocm-ebuild: Nonexistent flag: --colour; see rocm-ebuild graph --help\n$/);
  });

  it('graph prints the build order as text and as Graphviz DOT', async () => {
    const text = await runCli(['graph', '--version', '6.2.2']);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.split('\n');
    assert.match(lines[0]!, /^ {1}1\. dev-build\/rocm-cmake$/);
    assert.ok(lines.some((l) => /\. sci-libs\/rocBLAS {2}<- .*dev-util\/Tensile/.test(l)));
    const dot = await runCli(['graph', '--version', '6.2.2', '--format', 'dot']);
    assert.equal(dot.code, 0);
    assert.match(dot.stdout, /^digraph "ROCm 6\.2\.2" \{\n/);
    assert.match(dot.stdout, /\t"sci-libs\/rocBLAS" -> "dev-util\/Tensile"/);
    assert.match(dot.stdout, /\}\n$/);
    const drawn = dot.stdout.slice(0, dot.stdout.indexOf('subgraph "cluster_legend"'));
    assert.equal((drawn.match(/ -> /g) ?? []).length, (JSON.parse((await runCli(['graph', '--version', '6.2.2', '--json'])).stdout) as { edges: unknown[] }).edges.length);
  });

  it('render prints one ebuild, suggests the nearest name for a typo, and honours --json', async () => {
    const ok = await runCli(['render', 'rocBLAS', '--version', '6.2.2']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^# Copyright 1999-\d{4} Gentoo Authors\n/);
    assert.match(ok.stdout, /\nSLOT="0\/\$\(ver_cut 1-2\)"\n/);
    const typo = await runCli(['render', 'sci-libs/rocBLASS', '--version', '6.2.2']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /no package sci-libs\/rocBLASS in the 6\.2\.2 stack; did you mean sci-libs\/rocBLAS\?/);
    const json = JSON.parse((await runCli(['render', 'hip', '--version', '6.2.2', '--metadata', '--json'])).stdout) as { file: string; text: string };
    assert.equal(json.file, 'dev-util/hip/metadata.xml');
    assert.match(json.text, /<remote-id type="github">ROCm\/clr<\/remote-id>/);
  });

  it('set prints the atoms GPUs of the given targets can use, says why others are left out, and refuses a target the release lacks', async () => {
    const r = await runCli(['set', '--version', '6.3.3', '--targets', 'gfx1100, gfx1030', '--why']);
    assert.equal(r.code, 0, r.stderr);
    const atoms = r.stdout.trimEnd().split('\n');
    assert.ok(atoms.every((a) => /^[a-z-]+\/[A-Za-z0-9_+-]+$/.test(a)), r.stdout);
    assert.ok(atoms.includes('sci-libs/hipBLASLt'), 'gfx1100 can use hipBLASLt');
    assert.ok(!atoms.includes('sci-libs/hipSPARSELt'));
    assert.match(r.stderr, /^left out: sci-libs\/hipSPARSELt: built for gfx942 gfx940 gfx941 only$/m);
    const json = JSON.parse((await runCli(['set', '--version', '6.3.3', '--targets', 'gfx1030', '--json'])).stdout) as { targets: string[]; atoms: string[]; excluded: { atom: string }[] };
    assert.deepEqual(json.targets, ['gfx1030']);
    assert.ok(json.excluded.some((e) => e.atom === 'dev-util/rocm-validation-suite'));
    assert.ok(!json.atoms.includes('dev-util/rocm-validation-suite'));
    const bad = await runCli(['set', '--version', '6.3.3', '--targets', 'gfx1200']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /ROCm 6\.3\.3 offers no target gfx1200; it offers gfx906 /);
  });

  it('respects NO_COLOR and stays free of escape sequences when not a TTY', async () => {
    const r = await runCli(['validate']);
    assert.equal(r.code, 0);
    assert.doesNotMatch(r.stdout + r.stderr, /\x1b\[/);
  });
});
