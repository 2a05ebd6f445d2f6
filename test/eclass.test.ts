import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../src/paths.js';
import { loadManifest } from '../src/stack-check/index.js';
import { shippedManifest } from './helpers/project.js';
import {
  checkEclassDoc,
  sourcedVariableProblems,
  eclassGlobals,
  loadTargetTable,
  parseTargetTable,
  policyFor,
  planGeneratedFiles,
  renderAmdgpuTargetsDesc,
  renderAmdgpuTargetsDescFor,
  targetsOfReleases,
  renderMan,
  renderMarkdown,
  scanCode,
  TargetTableError,
  type TargetTable,
} from '../src/eclass/index.js';

const testsDir = path.join(projectRoot, 'test', 'eclass');
const eclassFile = path.join(projectRoot, 'eclass', 'rocm.eclass');
const cli = path.join(projectRoot, 'bin', 'run.js');

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(command, args, { encoding: 'utf8', cwd: options.cwd ?? projectRoot, env: { ...process.env, ...options.env } });
  if (r.error) throw new Error(`cannot run ${command}: ${r.error.message} (is it installed?)`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface TapResult {
  ok: boolean;
  name: string;
  diagnostics: string[];
}

/** Run a bash test script in TAP mode; every result becomes a mocha test. */
function runTapSuite(script: string): { results: TapResult[]; plan: number; status: number | null; stderr: string } {
  const r = run('bash', [path.join(testsDir, script)], { env: { ECLASS_TEST_TAP: '1' } });
  const results: TapResult[] = [];
  let diagnostics: string[] = [];
  let plan = -1;
  for (const line of r.stdout.split('\n')) {
    const result = /^(not )?ok \d+ - (.*)$/.exec(line);
    if (result) {
      results.push({ ok: !result[1], name: result[2]!, diagnostics });
      diagnostics = [];
    } else if (line.startsWith('# ')) {
      diagnostics.push(line.slice(2));
    } else if (/^1\.\.\d+$/.test(line)) {
      plan = Number(line.slice(3));
    }
  }
  return { results, plan, status: r.status, stderr: r.stderr };
}

describe('rocm.eclass', function () {
  describe('bash suite test/eclass/rocm.sh (real bash, real eclass)', function () {
    const suite = runTapSuite('rocm.sh');

    it('runs to completion, every planned test reported, exit status 0', function () {
      assert.ok(suite.results.length >= 80, `only ${suite.results.length} results:\n${suite.stderr}`);
      assert.equal(suite.plan, suite.results.length, 'TAP plan and results disagree');
      assert.equal(suite.status, 0, `bash suite failed:\n${suite.stderr}`);
    });

    for (const result of suite.results) {
      it(result.name, function () {
        assert.ok(result.ok, result.diagnostics.join('\n') || 'failed (run bash test/eclass/rocm.sh for details)');
      });
    }
  });

  describe('shellcheck', function () {
    it('finds nothing in eclass/rocm.eclass', function () {
      const r = run('shellcheck', ['--shell=bash', '--severity=style', eclassFile]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });

    it('finds nothing in the bash test scripts', function () {
      const r = run('shellcheck', ['--external-sources', '--severity=style', 'tests-common.sh', 'rocm.sh', 'probe.sh'], { cwd: testsDir });
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });
  });

  describe('generated files', function () {
    let table: TargetTable;
    before(async function () {
      table = await loadTargetTable();
    });

    it('the committed eclass table and amdgpu_targets.desc are what `rocm-ebuild eclass` writes', async function () {
      // The desc describes the targets of the releases the shipped manifest generates.
      const releases = Object.keys((await loadManifest(shippedManifest)).stack.releases);
      const files = await planGeneratedFiles(table, projectRoot, new Date().getFullYear(), releases);
      assert.deepEqual(
        files.map((f) => [f.path, f.status]),
        [
          ['eclass/rocm.eclass', 'unchanged'],
          ['profiles/desc/amdgpu_targets.desc', 'unchanged'],
        ],
        'run `rocm-ebuild eclass` and commit the result',
      );
    });

    it('`rocm-ebuild eclass --check` passes on the project and fails (exit 6) on a stale overlay', function () {
      const ok = run(process.execPath, [cli, 'eclass', '--check']);
      assert.equal(ok.status, 0, ok.stderr);

      const overlay = mkdtempSync(path.join(tmpdir(), 'rocm-ebuild-overlay-'));
      try {
        const written = run(process.execPath, [cli, 'eclass', '--output', overlay, '--json']);
        assert.equal(written.status, 0, written.stderr);
        assert.deepEqual(
          (JSON.parse(written.stdout) as { files: { status: string }[] }).files.map((f) => f.status),
          ['created', 'created'],
        );
        assert.equal(readFileSync(path.join(overlay, 'eclass/rocm.eclass'), 'utf8'), readFileSync(eclassFile, 'utf8'));

        const desc = path.join(overlay, 'profiles/desc/amdgpu_targets.desc');
        writeFileSync(desc, readFileSync(desc, 'utf8').replace('gfx1030 - RDNA2', 'gfx1030 - RDNA 2'));
        const stale = run(process.execPath, [cli, 'eclass', '--output', overlay, '--check']);
        assert.equal(stale.status, 6, stale.stderr);
        assert.match(stale.stderr, /profiles\/desc\/amdgpu_targets\.desc: out of date/);
        assert.match(stale.stderr, /\+ gfx1030 - RDNA2 GPU, codename navi21/);
      } finally {
        rmSync(overlay, { recursive: true, force: true });
      }
    });

    it('--output takes an existing directory or a new one in an existing directory, and refuses the rest at once', function () {
      const work = mkdtempSync(path.join(tmpdir(), 'rocm-ebuild-eclass-out-'));
      try {
        const file = path.join(work, 'a-file');
        writeFileSync(file, 'x');
        for (const [output, message] of [
          [file, /--output .*a-file: not a directory/],
          [path.join(work, 'no', 'such', 'overlay'), /no\/such is not an existing directory; create it first/],
          // Node's recursive mkdir never returns here; this must end, with an error.
          ['/proc/x', /cannot create \/proc\/x/],
        ] as const) {
          const r = spawnSync(process.execPath, [cli, 'eclass', '--output', output], { encoding: 'utf8', cwd: projectRoot, timeout: 30_000 });
          assert.equal(r.error, undefined, `${output}: ${String(r.error)}`);
          assert.equal(r.status, 2, `${output}: ${r.stderr}`);
          assert.match(r.stderr, message);
        }
        assert.ok(!existsSync(path.join(work, 'no')));
        const fresh = run(process.execPath, [cli, 'eclass', '--output', path.join(work, 'new-overlay')]);
        assert.equal(fresh.status, 0, fresh.stderr);
        assert.ok(existsSync(path.join(work, 'new-overlay', 'eclass', 'rocm.eclass')));
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });

    it('an installed rocm-ebuild writes its eclass only to an --output directory, never into its own package', function () {
      const pkg = mkdtempSync(path.join(tmpdir(), 'rocm-ebuild-installed-'));
      try {
        // A copy of the package as npm installs it: no .git; its eclass and profiles copied, the rest linked.
        for (const f of ['bin', 'package.json', 'oclif.manifest.json', 'eclass', 'profiles']) cpSync(path.join(projectRoot, f), path.join(pkg, f), { recursive: true });
        for (const d of ['src', 'vendor', 'cli']) cpSync(path.join(projectRoot, 'dist', d), path.join(pkg, 'dist', d), { recursive: true, preserveTimestamps: true });
        for (const d of ['node_modules', 'manifest', 'schemas', 'ebuild-templates']) symlinkSync(path.join(projectRoot, d), path.join(pkg, d));
        const installed = path.join(pkg, 'eclass', 'rocm.eclass');
        writeFileSync(installed, readFileSync(installed, 'utf8').replace(/^# Copyright \d{4}/m, '# Copyright 1999'));
        const before = readFileSync(installed, 'utf8');
        const r = run(process.execPath, [path.join(pkg, 'bin', 'run.js'), 'eclass'], { cwd: pkg });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /without --output, eclass rewrites rocm-ebuild's own eclass, which only a source checkout may do; .*--output DIR/);
        assert.equal(readFileSync(installed, 'utf8'), before);
        const check = run(process.execPath, [path.join(pkg, 'bin', 'run.js'), 'eclass', '--check', '--json'], { cwd: pkg });
        assert.notEqual(check.status, 2, check.stderr);
      } finally {
        rmSync(pkg, { recursive: true, force: true });
      }
    });

    it('regenerating a changed table rewrites only the generated section and moves the copyright year', async function () {
      const dir = mkdtempSync(path.join(tmpdir(), 'rocm-ebuild-eclass-'));
      try {
        cpSync(path.join(projectRoot, 'eclass'), path.join(dir, 'eclass'), { recursive: true });
        const changed: TargetTable = { ...table, live: '6.4.3+' };
        const [eclass] = await planGeneratedFiles(changed, dir, 2031);
        assert.equal(eclass!.status, 'updated');
        assert.match(eclass!.content, /^# Copyright 2022-2031 Gentoo Authors$/m);
        assert.match(eclass!.content, /^_ROCM_LIVE_POLICY=6\.4\.3\+$/m);
        const before = readFileSync(eclassFile, 'utf8').split('\n');
        const after = eclass!.content.split('\n');
        const differing = after.filter((l, i) => l !== before[i]);
        assert.deepEqual(differing, ['# Copyright 2022-2031 Gentoo Authors', '_ROCM_LIVE_POLICY=6.4.3+']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('amdgpu_targets.desc describes the targets some policy offers, or those asked for', function () {
      const desc = renderAmdgpuTargetsDesc(table, 2026);
      const lines = desc.split('\n');
      assert.equal(lines[0], '# Copyright 1999-2026 Gentoo Authors');
      assert.equal(lines[1], '# Distributed under the terms of the GNU General Public License v2');
      assert.ok(lines.includes('gfx1030 - RDNA2 GPU, codename navi21, including Radeon RX 6800/6800 XT/6900 XT/6950 XT, Radeon Pro W6800/V620'));
      const described = lines.filter((l) => /^gfx/.test(l)).map((l) => l.split(' ')[0]);
      assert.equal(described.length, 29);
      assert.ok(!described.includes('gfx90c') && !described.includes('gfx1250'), 'no policy offers gfx90c or gfx1250');
      const only = renderAmdgpuTargetsDesc(table, 2026, ['gfx90a', 'gfx1100']);
      assert.deepEqual(only.split('\n').filter((l) => /^gfx/.test(l)).map((l) => l.split(' ')[0]), ['gfx90a', 'gfx1100']);
    });

    it('an overlay of 6.2 releases describes only the targets its ebuilds offer (pkgcheck UnusedGlobalUseExpand)', function () {
      const targets = (text: string) => text.split('\n').filter((l) => /^gfx/.test(l)).map((l) => l.split(' ')[0]);
      const desc = targets(renderAmdgpuTargetsDescFor(table, ['6.2.2'], 2026));
      assert.deepEqual(desc, targetsOfReleases(table, ['6.2.0', '6.2.4']));
      // What pkgcheck reported as unused in the 6.2.2 overlay.
      for (const t of ['gfx950', 'gfx1103', 'gfx1150', 'gfx1151', 'gfx1200', 'gfx1201']) assert.ok(!desc.includes(t), t);
      assert.equal(desc.length, 16);
      // Adding a release adds its targets.
      assert.ok(targets(renderAmdgpuTargetsDescFor(table, ['6.2.2', '7.0.0'], 2026)).includes('gfx1201'));
      // The project's own copy is the manifest's releases' (6.2 to 10.0; a release is a flow entry or a block one).
      const all = readFileSync(path.join(projectRoot, 'manifest', 'stack.yaml'), 'utf8').match(/^ {2}"(\d+\.\d+\.\d+)":(?: \{ llvm_slot|\n {4}llvm_slot)/gm)!.map((l) => l.split('"')[1]!);
      assert.deepEqual(targets(readFileSync(path.join(projectRoot, 'profiles/desc/amdgpu_targets.desc'), 'utf8')), targetsOfReleases(table, all));
    });

    it('rejects a target table with errors, each at file:line:column', function () {
      const text = readFileSync(path.join(projectRoot, 'manifest', 'targets.yaml'), 'utf8')
        .replace('gfx_target_version: 90010', 'gfx_target_version: 90100')
        // 6.1 now ends after 6.2 starts: series may leave gaps (7.3 to 7.8), never overlap.
        .replace('until: "6.2.0"', 'until: "6.2.1"');
      assert.throws(
        () => parseTargetTable(text, 'targets.yaml'),
        (err: unknown) => {
          assert.ok(err instanceof TargetTableError);
          assert.deepEqual(
            err.issues.map((i) => `${i.line}:${i.column} ${i.path}`),
            ['55:25 $.targets[4].gfx_target_version', '57:5 $.targets[5]', '153:11 $.policies[3].from'],
          );
          assert.match(err.issues[0]!.hint!, /write 90010/);
          return true;
        },
      );
    });
  });

  describe('sources cleanly for every release series in targets.yaml', function () {
    let table: TargetTable;
    before(async function () {
      table = await loadTargetTable();
    });

    it('from the first version, as X.Y and from the last patch of each series', function () {
      const cases: { version: string; series: string }[] = [];
      for (const p of table.policies) {
        const [fx, fy, fz] = p.from.split('.').map(Number) as [number, number, number];
        const [ux, uy, uz] = p.until.split('.').map(Number) as [number, number, number];
        cases.push({ version: p.from, series: p.series });
        // X.Y is the release line from X.Y.0 on: this series and those continuing it.
        if (fz === 0) cases.push({ version: `${fx}.${fy}`, series: policyFor(table, `${fx}.${fy}`).policy.series });
        // the last version before `until`
        const last = uz > 0 ? `${ux}.${uy}.${uz - 1}` : `${fx}.${uy - 1 >= fy ? uy - 1 : fy}.99`;
        cases.push({ version: last, series: p.series });
      }
      const r = run('bash', [path.join(testsDir, 'probe.sh'), ...cases.map((c) => c.version)]);
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.replace(/\n$/, '').split('\n');
      assert.equal(lines.length, cases.length);
      lines.forEach((line, i) => {
        const [version, status, policy, iuse, requiredUse, usedep, qa, died, errors] = line.split('\t');
        const c = cases[i]!;
        assert.equal(version, c.version);
        assert.deepEqual({ status, qa, died, errors }, { status: '0', qa: '', died: '', errors: '' }, `ROCM_VERSION=${c.version}`);
        assert.equal(policy, c.series, `ROCM_VERSION=${c.version}`);
        const expected = eclassGlobals(table, policyFor(table, c.version).policy);
        assert.deepEqual({ iuse, requiredUse, usedep }, { iuse: expected.iuse, requiredUse: expected.requiredUse, usedep: expected.usedep });
      });
    });
  });

  describe('eclassdoc', function () {
    const fixtures = path.join(testsDir, 'fixtures');

    it('finds every function and variable of rocm.eclass documented', function () {
      const { doc, problems } = checkEclassDoc(readFileSync(eclassFile, 'utf8'), 'eclass/rocm.eclass');
      assert.deepEqual(problems, []);
      assert.deepEqual(
        doc.functions.filter((f) => !f.internal).map((f) => f.name),
        ['get_amdgpu_flags', 'rocm_use_hipcc', 'rocm_use_clang', 'rocm_add_sandbox', 'check_amdgpu'],
      );
      const v = (name: string) => doc.variables.find((x) => x.name === name)!;
      assert.ok(v('ROCM_VERSION').required && v('ROCM_VERSION').preInherit);
      assert.ok(v('ROCM_SUPPORTED_TARGETS').preInherit && v('ROCM_SUPPORTED_TARGETS').defaultUnset);
      assert.ok(v('ROCM_USEDEP').outputVariable && v('ROCM_USE_DEP').outputVariable && v('ROCM_REQUIRED_USE').outputVariable);
      // ::gentoo's ebuilds set HIP_VISIBLE_DEVICES for their tests (rocSOLVER, rocFFT, rocWMMA, …): a @USER_VARIABLE
      // would make pkgcheck report EclassUserVariableUsage on each. The runtime's variables are told in check_amdgpu.
      assert.deepEqual(doc.variables.filter((x) => x.userVariable).map((x) => x.name), []);
      assert.match(doc.functions.find((f) => f.name === 'check_amdgpu')!.description.flatMap((p) => p.lines).join('\n'), /HIP_VISIBLE_DEVICES/);
      assert.ok(v('_ROCM_DEVICE_ROOT').internal);
      assert.equal(doc.functions.find((f) => f.name === 'check_amdgpu')!.returns, '0 when every GPU to test on is usable; dies otherwise');
      assert.equal(doc.functions.find((f) => f.name === 'get_amdgpu_flags')!.usage, '[separator]');
      assert.deepEqual(doc.supportedEapis, ['8']);
      assert.equal(doc.example.filter((b) => b.kind === 'code').length, 2, 'a library and a consumer example');
    });

    it('the committed docs/rocm.eclass.md and docs/rocm.eclass.5 are what `rocm-ebuild eclassdoc` writes', function () {
      const { doc } = checkEclassDoc(readFileSync(eclassFile, 'utf8'), 'eclass/rocm.eclass');
      const options = { source: 'eclass/rocm.eclass' };
      assert.equal(readFileSync(path.join(projectRoot, 'docs', 'rocm.eclass.md'), 'utf8'), renderMarkdown(doc, options), 'run `rocm-ebuild eclassdoc --output docs/rocm.eclass.md`');
      assert.equal(readFileSync(path.join(projectRoot, 'docs', 'rocm.eclass.5'), 'utf8'), renderMan(doc, options), 'run `rocm-ebuild eclassdoc --format man --output docs/rocm.eclass.5`');
      const r = run(process.execPath, [cli, 'eclassdoc', '--check', '--output', 'docs/rocm.eclass.md']);
      assert.equal(r.status, 0, r.stderr);
    });

    it('renders public items, links names and keeps examples as code', function () {
      const { doc } = checkEclassDoc(readFileSync(eclassFile, 'utf8'), 'eclass/rocm.eclass');
      const md = renderMarkdown(doc);
      assert.match(md, /^### `get_amdgpu_flags \[separator\]`$/m);
      assert.match(md, /^\*required; set before inherit\*$/m);
      assert.match(md, /with \[`ROCM_USEDEP`\]\(#rocm_usedep\)/);
      assert.match(md, /^-DCMAKE_HIP_ARCHITECTURES="\$\(get_amdgpu_flags ";"\)"$/m);
      assert.doesNotMatch(md, /_ROCM_DEVICE_ROOT|_rocm_gpu_devices/);
      assert.match(renderMarkdown(doc, { internal: true }), /^### `_ROCM_DEVICE_ROOT`$/m);
      const man = renderMan(doc);
      assert.match(man, /^\.TH "ROCM\.ECLASS" 5 /m);
      assert.match(man, /^\\fBrocm_add_sandbox\\fR \[\\-w\]$/m);
    });

    it('scans code the way eclasses are written: one-line functions, here-documents, multi-line strings', function () {
      const facts = scanCode(
        [
          'if [[ -z ${_FOO_ECLASS} ]]; then',
          '_FOO_ECLASS=1',
          'FOO_LIST=(',
          '\tBAR=1 baz',
          ')',
          'foo_one() { :; }',
          'FOO_AFTER=1',
          'foo_two() {',
          '\tlocal inner=1',
          '\tcat <<-EOF',
          '\t\tnot_a_function() {',
          '\t\tFOO_IN_HEREDOC=1',
          '\tEOF',
          '\techo "a multi-line',
          '\t\tFOO_IN_STRING=1 string"',
          '\tFOO_GLOBAL_FROM_FUNCTION=1',
          '}',
          '# foo_commented() {',
          'fi',
        ].join('\n'),
        'FOO',
      );
      assert.equal(facts.guard, '_FOO_ECLASS');
      assert.deepEqual(facts.functions.map((f) => f.name), ['foo_one', 'foo_two']);
      assert.deepEqual(facts.globals.map((g) => g.name), ['_FOO_ECLASS', 'FOO_LIST', 'FOO_AFTER']);
      assert.deepEqual(facts.prefixed.map((g) => g.name), ['_FOO_ECLASS', 'FOO_LIST', 'FOO_AFTER', 'FOO_GLOBAL_FROM_FUNCTION']);
    });

    it('accepts a documented fixture', function () {
      const file = path.join(fixtures, 'documented.eclass');
      const { problems, doc } = checkEclassDoc(readFileSync(file, 'utf8'), file);
      assert.deepEqual(problems, []);
      assert.equal(doc.variables[0]!.default, undefined);
      const r = run(process.execPath, [cli, 'eclassdoc', file, '--format', 'man']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^\\fBdocumented_greet\\fR <name>$/m);
    });

    it('rejects an undocumented function and variables, with their positions (exit 6)', function () {
      const file = path.join(fixtures, 'undocumented.eclass');
      const { problems } = checkEclassDoc(readFileSync(file, 'utf8'), file);
      assert.deepEqual(
        problems.map((p) => `${p.line}:${p.column} ${p.kind} ${p.name}`),
        ['31:1 undocumented-function undocumented_helper', '32:2 undocumented-variable UNDOCUMENTED_STATE', '35:1 undocumented-variable UNDOCUMENTED_LEVEL'],
      );
      const r = run(process.execPath, [cli, 'eclassdoc', file]);
      assert.equal(r.status, 6);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /undocumented\.eclass:31:1: undocumented-function: function undocumented_helper has no eclassdoc; add a "# @FUNCTION: undocumented_helper" block/);
    });

    it('rejects documentation errors: missing header tags, stale @FUNCTION, unknown tags', function () {
      const text = [
        '# @ECLASS: broken.eclass',
        '# @MAINTAINER:',
        '# Someone <someone@example.org>',
        '# @DESCRIPTION:',
        '# Broken.',
        '',
        '# @FUNCTION: broken_gone',
        '# @COLOUR: red',
        '# @DESCRIPTION:',
        '# Not defined any more.',
        '',
        '# @ECLASS_VARIABLE: BROKEN_X',
        '# @REQUIRED',
        '# @DEFAULT_UNSET',
        '',
        'BROKEN_X=1',
      ].join('\n');
      const { problems } = checkEclassDoc(text, '/x/broken.eclass');
      assert.deepEqual(
        problems.map((p) => `${p.line} ${p.kind}: ${p.message}`),
        [
          '1 doc-error: the @ECLASS block lacks @BLURB',
          '1 doc-error: the @ECLASS block lacks @SUPPORTED_EAPIS',
          '7 stale-doc: @FUNCTION broken_gone documents a function the eclass does not define; remove the block or fix the name',
          '8 doc-error: @COLOUR is not allowed in the documentation of broken_gone',
          '12 doc-error: BROKEN_X: @DESCRIPTION is missing or empty',
          '12 doc-error: BROKEN_X cannot be both @REQUIRED and @DEFAULT_UNSET',
        ],
      );
    });

    it('holds tags to the order eclass-to-manpage reads them in (@INTERNAL before @USAGE loses both)', function () {
      const text = [
        '# @ECLASS: order.eclass',
        '# @MAINTAINER:',
        '# Someone <someone@example.org>',
        '# @BLURB: Tag order',
        '# @SUPPORTED_EAPIS: 8',
        '# @DESCRIPTION:',
        '# Order.',
        '',
        '# @FUNCTION: order_one',
        '# @INTERNAL',
        '# @USAGE: <x>',
        '# @DESCRIPTION:',
        '# One.',
        'order_one() { :; }',
        '',
        '# @ECLASS_VARIABLE: ORDER_X',
        '# @DEFAULT_UNSET',
        '# @DESCRIPTION:',
        '# X.',
        '# @USER_VARIABLE',
        '',
        '# @ECLASS_VARIABLE: ORDER_Y',
        '# @DEFAULT_UNSET',
        '# @USER_VARIABLE',
        '# @OUTPUT_VARIABLE',
        '# @DESCRIPTION:',
        '# Y.',
      ].join('\n');
      const { problems } = checkEclassDoc(text, '/x/order.eclass');
      assert.deepEqual(
        problems.map((p) => `${p.line}: ${p.message.replace(/: eclass-to-manpage.*/, '')}`),
        [
          '5: @SUPPORTED_EAPIS must come before @BLURB in the @ECLASS block',
          '11: @USAGE must come before @INTERNAL in the documentation of order_one',
          '20: @USER_VARIABLE must come before @DESCRIPTION in the documentation of ORDER_X',
          '22: ORDER_Y: only one of @INTERNAL, @PRE_INHERIT, @USER_VARIABLE and @OUTPUT_VARIABLE (eclass-to-manpage fails on more)',
        ],
      );
    });

    it('sourced in a bare bash as pkgcheck does, rocm.eclass leaves no undocumented global (EclassDocMissingVar)', async function () {
      const text = readFileSync(eclassFile, 'utf8');
      const { doc } = checkEclassDoc(text, 'eclass/rocm.eclass');
      assert.deepEqual(await sourcedVariableProblems(eclassFile, text, doc), []);
    });

    it('reports what sourcing leaves behind: BASH_REMATCH of =~, FUNCNAME of an aborted function, a stray global', async function () {
      const dir = mkdtempSync(path.join(tmpdir(), 'rocm-ebuild-eclass-'));
      after(() => rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'leaky.eclass');
      const text = [
        '# @ECLASS: leaky.eclass',
        '# @MAINTAINER:',
        '# Someone <someone@example.org>',
        '# @SUPPORTED_EAPIS: 8',
        '# @BLURB: Leaks',
        '# @DESCRIPTION:',
        '# Leaks.',
        '',
        '# @FUNCTION: _leaky_parse',
        '# @INTERNAL',
        '# @DESCRIPTION:',
        '# Dies on an empty version.',
        '_leaky_parse() {',
        '\t[[ ${1} =~ ^([0-9]+) ]]',
        '\tlocal major=$(( 10#${BASH_REMATCH[1]} ))',
        '\tSTRAY=${major}',
        '\tIUSE="leaky"',
        '}',
        '_leaky_parse ""',
      ].join('\n');
      writeFileSync(file, text);
      const { doc, problems } = checkEclassDoc(text, file);
      assert.deepEqual(problems, []);
      const sourced = await sourcedVariableProblems(file, text, doc);
      assert.deepEqual(sourced.map((p) => p.name), ['BASH_REMATCH', 'FUNCNAME']);
      assert.match(sourced[0]!.message, /pkgcheck EclassDocMissingVar/);
      writeFileSync(file, text.replace('$(( 10#${BASH_REMATCH[1]} ))', '1'));
      assert.deepEqual((await sourcedVariableProblems(file, text, doc)).map((p) => p.name), ['BASH_REMATCH', 'STRAY']);
    });
  });
});

describe('rocm.eclass names real maintainers', () => {
  it("the shipped eclass names the stack's maintainers and no placeholder address", async () => {
    const { eclassForMaintainers } = await import('../src/eclass/index.js');
    const text = readFileSync(eclassFile, 'utf8');
    assert.doesNotMatch(text, /\.(example|invalid|test)>/);
    const manifest = await loadManifest(shippedManifest);
    const stack = manifest.stack.defaults?.maintainers ?? [];
    assert.ok(stack.length > 0);
    // What bump writes for an overlay maintained by the stack's maintainers is the file itself.
    assert.equal(eclassForMaintainers(text, stack), text);
  });

  it("an overlay's copy names the overlay's maintainers, and only that differs", async () => {
    const { eclassForMaintainers, sameEclassCode } = await import('../src/eclass/index.js');
    const text = readFileSync(eclassFile, 'utf8');
    const mine = eclassForMaintainers(text, [{ name: 'Ada Tester', email: 'ada@example.org' }, { email: 'overlay@example.org' }]);
    assert.match(mine, /\n# @MAINTAINER:\n# Ada Tester <ada@example\.org>\n# overlay@example\.org\n# @AUTHOR:\n/);
    assert.equal(mine.split('\n').length, text.split('\n').length + 1);
    assert.ok(sameEclassCode(mine, text));
    assert.ok(!sameEclassCode(`${mine}# a local change\n`, text));
    // eclassdoc still reads it.
    const checked = checkEclassDoc(mine, 'rocm.eclass');
    assert.deepEqual(checked.problems, []);
    assert.deepEqual(checked.doc.maintainers, ['Ada Tester <ada@example.org>', 'overlay@example.org']);
  });
});
