import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { reportProblems, type TestReport } from '../../src/container/report.js';
import { bin, git, removeDir, runCli, tempDir, type CliResult } from '../helpers/project.js';
import { fakeHost, type FakeHost } from '../gpu/fake-host.js';
import { podmanEnv, podmanUnavailable, standInImage } from './image.js';

/**
 * `rocm-ebuild test` end to end with real podman: a real container from a
 * small image built here (busybox and a stand-in emerge, since no Gentoo
 * stage3 can be fetched), given fake device nodes as /dev/kfd and the render
 * node (real character devices: /dev/null's and /dev/zero's numbers, owned by
 * the fake host's groups, mode 0660), so the device and group options, the
 * group setup inside, exit statuses, timeouts, signals and report collection
 * are the real ones.
 */
describe('test: containers with real podman', function () {
  this.timeout(120_000);
  let env: NodeJS.ProcessEnv = {};
  let confDir = '';
  let image = '';
  let host: FakeHost;
  let work = '';
  let overlay = '';
  let skipReason: string | undefined;

  before(async function () {
    const p = await podmanEnv();
    env = p.env;
    confDir = p.dir;
    skipReason = podmanUnavailable(env);
    if (skipReason) {
      process.stderr.write(`      skipping the podman tests: ${skipReason}\n`);
      this.skip();
    }
    image = await standInImage(env);
    work = await tempDir('rocm-ebuild-e2e-');
    host = await fakeHost('workstation', { char: true, dev: path.join(work, 'host') });
    overlay = path.join(work, 'overlay');
    for (const atom of ['sci-libs/rocPRIM', 'sci-libs/hipCUB', 'sci-libs/rocRAND']) {
      mkdirSync(path.join(overlay, atom), { recursive: true });
      writeFileSync(path.join(overlay, atom, `${atom.split('/')[1]}-6.2.2.ebuild`), '# EAPI=8 (the stand-in emerge does not read it)\n');
    }
    mkdirSync(path.join(overlay, 'profiles'));
    writeFileSync(path.join(overlay, 'profiles', 'repo_name'), 'rocm\n');
    await git(overlay, ['init', '-q']);
  });

  after(async () => {
    if (work) await removeDir(work);
    if (confDir) await removeDir(confDir);
  });

  /** A ::gentoo stand-in: the stand-in emerge's behaviour per package, and the dependencies it merges. */
  function tree(name: string, behaviours: Record<string, string> = {}): string {
    const dir = path.join(work, `tree-${name}`);
    mkdirSync(path.join(dir, 'profiles'), { recursive: true });
    writeFileSync(path.join(dir, 'profiles', 'repo_name'), 'gentoo\n');
    mkdirSync(path.join(dir, 'stand-in'), { recursive: true });
    writeFileSync(path.join(dir, 'stand-in', 'deps'), 'dev-build/rocm-cmake-6.2.2\ndev-util/hip-6.2.2\n');
    for (const [atom, b] of Object.entries(behaviours)) {
      mkdirSync(path.join(dir, 'stand-in', path.dirname(atom)), { recursive: true });
      writeFileSync(path.join(dir, 'stand-in', atom), `${b}\n`);
    }
    return dir;
  }

  function args(name: string, extra: string[], behaviours: Record<string, string> = {}): string[] {
    return [
      'test',
      '--overlay', overlay,
      '--version', '6.2.2',
      '--image', image,
      '--tree', tree(name, behaviours),
      '--distdir', path.join(work, 'distfiles'),
      '--pkgdir', path.join(work, `pkgdir-${name}`),
      '--report-dir', path.join(work, `reports-${name}`),
      '--jobs', '2',
      ...extra,
    ];
  }

  const run = (a: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(a, { env: { ...env, ...host.env, ...extraEnv } });
  const report = (name: string, gfx: string): TestReport => JSON.parse(readFileSync(path.join(work, `reports-${name}`, gfx, 'report.json'), 'utf8')) as TestReport;
  const atom = (r: TestReport, a: string) => r.atoms.find((x) => x.atom === a && x.tested)!;

  function containersOf(label: string): string[] {
    const r = spawnSync('podman', ['ps', '--all', '--quiet', '--filter', `label=io.rocm-ebuild.gfx=${label}`, '--filter', 'label=io.rocm-ebuild.release=6.2.2'], { env, encoding: 'utf8' });
    return r.stdout.split('\n').filter(Boolean);
  }

  it('builds and tests on two GPUs, each container given only its GPU, the second reusing the binary packages', async () => {
    const r = await run(args('two', ['sci-libs/rocPRIM', 'hipCUB', '--gpu', 'gfx90a', '--gpu', 'gfx1100', '--tests', 'smoke', '--json']));
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { reports: TestReport[]; commands: string[] };
    assert.deepEqual(out.reports.map((x) => [x.gfx, x.result]), [['gfx90a', 'passed'], ['gfx1100', 'passed']]);
    // Only this GPU's nodes and groups: gfx90a is renderD128 (group 110), gfx1100 renderD136 (group 44).
    assert.match(out.commands[0]!, /--device=\S+\/dev\/kfd:\/dev\/kfd --device=\S+\/dev\/dri\/renderD128:\/dev\/dri\/renderD128 --group-add=110 --cap-add=SYS_NICE /);
    assert.match(out.commands[1]!, /--device=\S+\/dev\/dri\/renderD136:\/dev\/dri\/renderD136 --group-add=110 --group-add=44 /);
    for (const c of out.commands) {
      assert.doesNotMatch(c, /--privileged/);
      assert.equal(c.match(/--device=/g)!.length, 2);
    }
    for (const gfx of ['gfx90a', 'gfx1100']) {
      const rep = report('two', gfx);
      assert.deepEqual(reportProblems(rep), [], 'report.json follows schemas/test-report.schema.json');
      assert.equal(rep.amdgpuTargets, gfx);
      assert.equal(rep.tests, 'smoke');
      const prim = atom(rep, 'sci-libs/rocPRIM');
      assert.deepEqual([prim.result, prim.phase, prim.failureClass], ['passed', 'merged', null]);
      assert.deepEqual(prim.testCounts, { total: 3, failed: 0, skipped: 1 });
      // What Portage was given inside: the target of this GPU alone, FEATURES=test, the smoke filter.
      const dir = path.join(work, 'reports-two', gfx);
      const buildLog = readFileSync(path.join(dir, prim.logs.find((l) => l.startsWith('build/'))!), 'utf8');
      assert.match(buildLog, new RegExp(`AMDGPU_TARGETS: +-\\* ${gfx} FEATURES=test`));
      assert.match(readFileSync(path.join(dir, 'gtest/sci-libs/rocPRIM/rocPRIM-test.xml'), 'utf8'), /value_param="\*\/0\.\*"/);
      assert.equal(spawnSync('xmllint', ['--noout', path.join(dir, 'junit.xml')]).status, 0, 'junit.xml is well-formed');
      assert.match(readFileSync(path.join(dir, 'junit.xml'), 'utf8'), /<testsuite name="sci-libs\/rocPRIM Suite\/0" tests="3" failures="0" errors="0" skipped="1"/);
      assert.match(readFileSync(path.join(dir, 'report.md'), 'utf8'), /\| `sci-libs\/rocPRIM-6\.2\.2` \| passed \| merged \| 2\/3 passed, 1 skipped \|/);
      assert.deepEqual(containersOf(gfx), [], 'the container is gone');
    }
    const deps = (gfx: string) => report('two', gfx).atoms.filter((a) => !a.tested).map((a) => [a.atom, a.binpkg, a.result]);
    assert.deepEqual(deps('gfx90a'), [['dev-build/rocm-cmake', false, 'passed'], ['dev-util/hip', false, 'passed']]);
    assert.deepEqual(deps('gfx1100'), [['dev-build/rocm-cmake', true, 'passed'], ['dev-util/hip', true, 'passed']]);
    assert.match(readFileSync(path.join(work, 'reports-two', 'report.md'), 'utf8'), /ROCm 6\.2\.2 on gfx90a: passed[\s\S]*ROCm 6\.2\.2 on gfx1100: passed/);
  });

  it('a failing atom fails the run (exit 6): what needs it is skipped, the rest still runs', async () => {
    const r = await run(args('fail', ['rocPRIM', 'hipCUB', 'rocRAND', '--gpu', 'gfx90a'], { 'sci-libs/rocPRIM': 'compile-fail' }));
    assert.equal(r.code, 6, r.stderr);
    assert.match(r.stdout, /gfx90a: failed: sci-libs\/rocPRIM failed \[build\], sci-libs\/hipCUB skipped/);
    const rep = report('fail', 'gfx90a');
    assert.equal(rep.result, 'failed');
    assert.deepEqual(
      ['sci-libs/rocPRIM', 'sci-libs/hipCUB', 'sci-libs/rocRAND'].map((a) => [atom(rep, a).result, atom(rep, a).phase, atom(rep, a).failureClass]),
      [['failed', 'compile', 'build'], ['skipped', 'resolve', null], ['passed', 'merged', null]],
    );
    assert.match(atom(rep, 'sci-libs/rocPRIM').message!, /sci-libs\/rocPRIM-6\.2\.2::rocm failed \(compile phase\): emake failed/);
    assert.equal(atom(rep, 'sci-libs/hipCUB').message, 'not run: needs sci-libs/rocPRIM, which failed');
    const junit = readFileSync(path.join(work, 'reports-fail', 'gfx90a', 'junit.xml'), 'utf8');
    assert.match(junit, /<testcase name="compile" classname="gfx90a.sci-libs\/rocPRIM" time="[0-9.]+">\n +<failure type="build"/);
    assert.match(junit, /<testcase name="test" classname="gfx90a.sci-libs\/rocPRIM" time="0.000">\n +<skipped message="not reached: compile failed"\/>/);
  });

  it('failing tests, out of memory and an unsatisfiable dependency are told apart', async () => {
    const t = await run(args('tests', ['rocPRIM', 'rocRAND', '--gpu', 'gfx90a'], { 'sci-libs/rocPRIM': 'test-fail', 'sci-libs/rocRAND': 'oom' }));
    assert.equal(t.code, 6, t.stderr);
    const rep = report('tests', 'gfx90a');
    const prim = atom(rep, 'sci-libs/rocPRIM');
    assert.deepEqual([prim.result, prim.phase, prim.failureClass], ['failed', 'test', 'test']);
    assert.deepEqual(prim.testCounts, { total: 3, failed: 1, skipped: 1 });
    assert.match(prim.message!, /\(1 of 3 tests failed: Suite\/0\.Works\)$/);
    assert.match(readFileSync(path.join(work, 'reports-tests', 'gfx90a', 'junit.xml'), 'utf8'), /<testcase name="Works" classname="gfx90a.sci-libs\/rocPRIM.Suite\/0" time="0.200">\n +<failure type="gtest" message="Expected equality"/);
    const rand = atom(rep, 'sci-libs/rocRAND');
    assert.deepEqual([rand.result, rand.phase, rand.failureClass], ['failed', 'compile', 'oom']);

    const d = await run(args('resolve', ['rocPRIM', '--gpu', 'gfx90a'], { 'sci-libs/rocPRIM': 'resolve-fail' }));
    assert.equal(d.code, 6, d.stderr);
    const dep = report('resolve', 'gfx90a');
    assert.equal(dep.result, 'failed');
    assert.match(dep.message!, /^REQUIRED_USE not satisfied: \|\| \( amdgpu_targets_gfx906 amdgpu_targets_gfx90a \)/);
    assert.deepEqual([atom(dep, 'sci-libs/rocPRIM').phase, atom(dep, 'sci-libs/rocPRIM').failureClass], ['resolve', 'dependency']);
  });

  it('an atom that takes longer than --timeout is stopped and reported as a timeout; the next one runs', async () => {
    const r = await run(args('timeout', ['rocPRIM', 'rocRAND', '--gpu', 'gfx90a', '--timeout', '2'], { 'sci-libs/rocPRIM': 'hang' }));
    assert.equal(r.code, 6, r.stderr);
    const rep = report('timeout', 'gfx90a');
    assert.deepEqual([atom(rep, 'sci-libs/rocPRIM').result, atom(rep, 'sci-libs/rocPRIM').failureClass, atom(rep, 'sci-libs/rocPRIM').phase], ['failed', 'timeout', 'compile']);
    assert.ok(atom(rep, 'sci-libs/rocPRIM').seconds >= 2);
    assert.equal(atom(rep, 'sci-libs/rocRAND').result, 'passed');
  });

  it('user portage must reach the GPU: a render node only root may open is a gpu-access error before anything builds', async () => {
    const locked = await fakeHost('workstation', { char: true, dev: path.join(work, 'locked') });
    chmodSync(path.join(locked.dev, 'dev/dri/renderD128'), 0o600);
    const r = await run(args('locked', ['rocPRIM', '--gpu', 'gfx90a']), locked.env);
    assert.equal(r.code, 6, r.stderr);
    const rep = report('locked', 'gfx90a');
    assert.equal(rep.result, 'error');
    assert.match(rep.message!, /user portage cannot open \/dev\/dri\/renderD128 read-write/);
    assert.deepEqual([atom(rep, 'sci-libs/rocPRIM').result, atom(rep, 'sci-libs/rocPRIM').failureClass], ['not-run', 'gpu-access']);
  });

  /** The CLI in the background, resolved when its phases file shows `phase` of `atomName`. */
  async function startAndWait(name: string, a: string[], atomName: string, phase: string): Promise<{ child: ChildProcess; exit: Promise<number | null>; stderr: () => string }> {
    const child = spawn(process.execPath, [bin, ...a], { env: { ...env, ...host.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.resume();
    const exit = new Promise<number | null>((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? -1 : null))));
    const phases = path.join(work, `reports-${name}`, 'gfx90a', 'phases');
    for (let i = 0; i < 600; i++) {
      if (existsSync(phases) && readFileSync(phases, 'utf8').includes(`${atomName} ${phase}`)) return { child, exit, stderr: () => stderr };
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGKILL');
    throw new Error(`${atomName} never reached ${phase}: ${stderr}`);
  }

  it('Ctrl-C stops the container, writes the partial report and exits 130', async () => {
    const { child, exit, stderr } = await startAndWait('sigint', args('sigint', ['rocPRIM', 'rocRAND', '--gpu', 'gfx90a', '--timeout', '0'], { 'sci-libs/rocPRIM': 'hang' }), 'sci-libs/rocPRIM', 'compile');
    child.kill('SIGINT');
    assert.equal(await exit, 130, stderr());
    assert.match(stderr(), /SIGINT: stopping the container and writing the partial report/);
    const rep = report('sigint', 'gfx90a');
    assert.deepEqual(reportProblems(rep), []);
    assert.equal(rep.result, 'interrupted');
    assert.deepEqual([atom(rep, 'sci-libs/rocPRIM').result, atom(rep, 'sci-libs/rocPRIM').failureClass, atom(rep, 'sci-libs/rocPRIM').phase], ['not-run', 'interrupted', 'compile']);
    assert.deepEqual([atom(rep, 'sci-libs/rocRAND').result, atom(rep, 'sci-libs/rocRAND').failureClass], ['not-run', 'interrupted']);
    assert.deepEqual(containersOf('gfx90a'), [], 'nothing left behind');
  });

  it('SIGTERM with --keep leaves the stopped container for debugging', async () => {
    const { child, exit, stderr } = await startAndWait('keep', args('keep', ['rocPRIM', '--gpu', 'gfx90a', '--keep'], { 'sci-libs/rocPRIM': 'hang' }), 'sci-libs/rocPRIM', 'compile');
    child.kill('SIGTERM');
    assert.equal(await exit, 130, stderr());
    const rep = report('keep', 'gfx90a');
    assert.deepEqual(rep.container, { name: rep.container!.name, kept: true });
    const state = spawnSync('podman', ['inspect', '--format', '{{.State.Status}}', rep.container!.name], { env, encoding: 'utf8' });
    assert.equal(state.stdout.trim(), 'exited');
    spawnSync('podman', ['rm', '--force', rep.container!.name], { env });
  });

  it('kill -9 of rocm-ebuild: the container notices its stdin closing and stops itself', async () => {
    const { child, exit } = await startAndWait('kill9', args('kill9', ['rocPRIM', '--gpu', 'gfx90a'], { 'sci-libs/rocPRIM': 'hang' }), 'sci-libs/rocPRIM', 'compile');
    assert.equal(containersOf('gfx90a').length, 1);
    child.kill('SIGKILL');
    await exit;
    let left = containersOf('gfx90a');
    for (let i = 0; i < 150 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 200));
      left = containersOf('gfx90a');
    }
    assert.deepEqual(left, [], 'the container ended and was removed (--rm)');
    const status = readFileSync(path.join(work, 'reports-kill9', 'gfx90a', 'status'), 'utf8');
    assert.match(status, /^atom\|sci-libs\/rocPRIM\|143\|/m, 'the script recorded the stopped emerge');
  });

  it('a second run writing the same report directory is refused (exit 4) before any container starts', async () => {
    const dir = path.join(work, 'reports-busy', 'gfx90a');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, '.lock'), `${process.pid}\n`);
    const r = await run(args('busy', ['rocPRIM', '--gpu', 'gfx90a']));
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, new RegExp(`another rocm-ebuild test \\(pid ${process.pid}\\) is writing`));
    assert.deepEqual(readdirSync(dir), ['.lock']);
  });

  it('an image that is not there and cannot be pulled is exit 2, naming it', async () => {
    const a = args('noimage', ['rocPRIM', '--gpu', 'gfx90a']);
    a[a.indexOf('--image') + 1] = 'localhost/rocm-ebuild-no-such-image:1';
    const r = await run(a);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /the image localhost\/rocm-ebuild-no-such-image:1 is not present and cannot be pulled/);
  });
});
