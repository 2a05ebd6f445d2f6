import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { classify } from '../../src/container/classify.js';
import { runCommand, type RunSpec } from '../../src/container/command.js';
import { shellLine, shellWord } from '../../src/util/argv.js';
import { gtestCounts, parseGtestXml } from '../../src/container/gtest.js';
import { junitXml } from '../../src/container/junit.js';
import { markdownReport } from '../../src/container/markdown.js';
import { resolveAtoms, testPlan, type TestPlan } from '../../src/container/plan.js';
import { emergeAtom, makeConfValue, portageFiles, type ContainerJob } from '../../src/container/portage.js';
import { containerPaths } from '../../src/container/layout.js';
import { emergedPackages, parsePhases, parseStatus, phasesBySegment, splitConsole, splitCpv } from '../../src/container/records.js';
import { buildReport, reportFileName, reportProblems, type ReportMeta, type RunOutcome } from '../../src/container/report.js';
import { parseDuration } from '../../src/container/run.js';
import { TestProgress } from '../../src/container/progress.js';
import { containerScript } from '../../src/container/script.js';
import { selectGpus } from '../../src/container/select.js';
import { readTopology } from '../../src/gpu/topology.js';
import { deviceTablePath, loadDeviceTable } from '../../src/gpu/devices.js';
import { defaultTargetsPath } from '../../src/paths.js';
import { loadManifest } from '../../src/stack-check/index.js';
import { loadPolicies } from '../../src/model/targets.js';
import { releaseModel, resolveStack, type StackModel } from '../../src/model/resolve.js';
import { UserError } from '../../src/util/errors.js';
import { git, removeDir, runCli, shippedManifest, tempDir } from '../helpers/project.js';
import { BASE_FILES, fixtureManifest } from '../helpers/fixture-manifest.js';
import { fakeHost, type FakeHost } from '../gpu/fake-host.js';

let model: StackModel;
before(async function () {
  this.timeout(60_000);
  const manifest = await loadManifest(shippedManifest);
  const policies = await loadPolicies(manifest);
  if ('issues' in policies) throw new Error('policies');
  model = resolveStack(manifest, releaseModel(manifest, '6.2.2', policies.byRelease.get('6.2.2')!)!);
});

function job(plan: TestPlan, over: Partial<ContainerJob> = {}): ContainerJob {
  return { plan, gfx: 'gfx90a', paths: containerPaths('rocm'), testEnv: {}, repoName: 'rocm', jobs: 8, timeoutSeconds: 3600, gids: [110, 44], devices: ['/dev/kfd', '/dev/dri/renderD128'], userpriv: true, ...over };
}

const spec: RunSpec = {
  engine: 'podman',
  name: 'rocm-ebuild-622-gfx90a-abc123',
  image: 'docker.io/gentoo/stage3:amd64-openrc',
  devices: [
    { host: '/dev/kfd', container: '/dev/kfd' },
    { host: '/dev/dri/renderD129', container: '/dev/dri/renderD129' },
  ],
  groups: [110, 44, 110],
  capabilities: ['SYS_NICE'],
  mounts: [
    { host: '/home/me/rocm-overlay', container: '/var/db/repos/rocm', readOnly: true },
    { host: '/var/cache/binpkgs', container: '/var/cache/binpkgs', readOnly: false },
  ],
  labels: { 'io.rocm-ebuild.gfx': 'gfx90a' },
  remove: true,
  command: ['/bin/sh', '/rocm-ebuild/run.sh'],
};

describe('container: manifest values that reach the container', () => {
  it('the schema refuses smoke settings that could expand or break quoting', async () => {
    const dir = await fixtureManifest({
      'components/gpulib.yaml': BASE_FILES['components/gpulib.yaml']!.replace('tests:\n  gpu: true\n', 'tests:\n  gpu: true\n  smoke:\n    gtest_filter: "*\\" ; rm -rf /"\n    env: { X: "$(id)" }\n'),
    });
    try {
      const r = await runCli(['validate', path.join(dir, 'stack.yaml')]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /\$\.tests\.smoke\.gtest_filter/);
      assert.match(r.stderr, /\$\.tests\.smoke\.env\.X/);
    } finally {
      await removeDir(dir);
    }
  });
});

describe('container: engine command lines', () => {
  it('podman: only the GPU, its groups, the mounts; no --privileged', () => {
    assert.deepEqual(runCommand(spec), [
      'podman', 'run', '--interactive', '--name=rocm-ebuild-622-gfx90a-abc123', '--pull=never', '--rm',
      '--label=io.rocm-ebuild.gfx=gfx90a',
      '--device=/dev/kfd', '--device=/dev/dri/renderD129',
      '--group-add=110', '--group-add=44',
      '--cap-add=SYS_NICE',
      '--volume=/home/me/rocm-overlay:/var/db/repos/rocm:ro', '--volume=/var/cache/binpkgs:/var/cache/binpkgs',
      '--', 'docker.io/gentoo/stage3:amd64-openrc', '/bin/sh', '/rocm-ebuild/run.sh',
    ]);
  });

  it('docker takes the same options', () => {
    const argv = runCommand({ ...spec, engine: 'docker' });
    assert.deepEqual(argv, ['docker', ...runCommand(spec).slice(1)]);
  });

  it('rootless podman keeps the host groups; --keep drops --rm; no capability without GPU tests; another dev root maps the nodes', () => {
    const argv = runCommand({ ...spec, groups: 'keep-groups', remove: false, capabilities: [], devices: [{ host: '/tmp/x/dev/kfd', container: '/dev/kfd' }] });
    assert.ok(argv.join(' ').includes('--device=/tmp/x/dev/kfd:/dev/kfd --group-add=keep-groups --volume'));
    assert.ok(!argv.includes('--rm'));
    assert.ok(!argv.some((a) => a.startsWith('--security-opt')));
  });

  it('refuses paths -v cannot carry, and quotes what a shell would split', () => {
    assert.throws(() => runCommand({ ...spec, mounts: [{ host: '/a:b', container: '/x', readOnly: true }] }), /cannot be bind-mounted/);
    assert.throws(() => runCommand({ ...spec, mounts: [{ host: 'relative', container: '/x', readOnly: true }] }), /cannot be bind-mounted/);
    assert.equal(shellLine(['podman', 'run', '--label', 'a=b c', "it's"]), "podman run --label 'a=b c' 'it'\\''s'");
    assert.throws(() => runCommand({ ...spec, image: '--privileged' }), /is not an image reference/);
  });
});

describe('container: the test plan', () => {
  it('atoms under test in build order, each with the atoms under test it needs through any path', () => {
    const plan = testPlan(model, resolveAtoms(model, ['hipBLAS', 'sci-libs/rocBLAS', 'rocPRIM', 'hipCUB']), 'full');
    assert.deepEqual(plan.atoms.map((a) => a.atom), ['sci-libs/rocBLAS', 'sci-libs/rocPRIM', 'sci-libs/hipCUB', 'sci-libs/hipBLAS']);
    assert.deepEqual(plan.atoms.find((a) => a.atom === 'sci-libs/hipCUB')!.needs, ['sci-libs/rocPRIM']);
    // hipBLAS needs rocSOLVER, which needs rocPRIM: not a direct dependency, still a reason to skip.
    assert.deepEqual(plan.atoms.find((a) => a.atom === 'sci-libs/hipBLAS')!.needs, ['sci-libs/rocBLAS', 'sci-libs/rocPRIM']);
    assert.equal(plan.stack.length, model.components.length);
  });

  it('a component 10.0.0 holds at its own version is asked for as that release holds it: PV 7.2.4 and any revision, SLOT 0/10.0, never a glob', async () => {
    const manifest = await loadManifest(shippedManifest);
    const policies = await loadPolicies(manifest);
    if ('issues' in policies) throw new Error('policies');
    const ten = resolveStack(manifest, releaseModel(manifest, '10.0.0', policies.byRelease.get('10.0.0')!)!);
    const plan = testPlan(ten, resolveAtoms(ten, ['migraphx']), 'none');
    const mx = plan.atoms.find((a) => a.atom === 'sci-libs/migraphx')!;
    assert.deepEqual([mx.version, mx.slot], ['7.2.4', '0/10.0']);
    assert.equal(emergeAtom(mx, 'rocm'), '~sci-libs/migraphx-7.2.4:0/10.0::rocm');
    // A package of the release itself: its PV, PV's sub-slot.
    const hip = plan.atoms.find((a) => a.atom === 'dev-util/hip') ?? testPlan(ten, resolveAtoms(ten, ['dev-util/hip']), 'none').atoms[0]!;
    assert.equal(emergeAtom(hip, 'rocm'), `~dev-util/hip-${ten.byAtom.get('dev-util/hip')!.version}:0/10.0::rocm`);
  });

  it('the tiers: smoke runs only packages with tests.smoke, with their settings; none runs no tests', () => {
    const atoms = resolveAtoms(model, ['rocPRIM', 'rocBLAS', 'rocFFT', 'rocm-cmake']);
    const smoke = testPlan(model, atoms, 'smoke');
    const by = (p: TestPlan, a: string) => p.atoms.find((x) => x.atom === a)!;
    assert.deepEqual(by(smoke, 'sci-libs/rocPRIM').testEnv, { GTEST_FILTER: '*/0.*' });
    assert.equal(by(smoke, 'sci-libs/rocBLAS').runTests, true);
    assert.deepEqual([by(smoke, 'sci-libs/rocFFT').runTests, by(smoke, 'sci-libs/rocFFT').noTests], [false, 'no smoke tier in the manifest (tests.smoke)']);
    assert.match(by(smoke, 'dev-build/rocm-cmake').noTests!, /RESTRICT="test"/);
    const full = testPlan(model, atoms, 'full');
    assert.deepEqual([by(full, 'sci-libs/rocFFT').runTests, by(full, 'sci-libs/rocPRIM').testEnv], [true, {}]);
    assert.ok(testPlan(model, atoms, 'none').atoms.every((a) => !a.runTests));
    assert.equal(testPlan(model, undefined, 'full').atoms.length, model.components.length);
  });

  it('an unknown atom is a usage error with a suggestion', () => {
    assert.throws(() => resolveAtoms(model, ['rocBLASS']), (e: unknown) => e instanceof UserError && e.exitCode === 2 && /did you mean sci-libs\/rocBLAS\?/.test(e.message));
    assert.deepEqual(resolveAtoms(model, ['=sci-libs/rocBLAS-6.2.2', 'rocBLAS']), ['sci-libs/rocBLAS']);
  });
});

describe('container: Portage configuration and script', function () {
  this.timeout(60_000);

  it('writes the gfx, the stack keywords, FEATURES=test per atom under test and the smoke settings', () => {
    const plan = testPlan(model, resolveAtoms(model, ['rocPRIM', 'rocFFT']), 'smoke');
    const files = portageFiles(job(plan));
    assert.match(files['make.conf']!, /^AMDGPU_TARGETS="gfx90a"$/m);
    assert.match(files['make.conf']!, /^FEATURES="buildpkg binpkg-multi-instance -news"$/m);
    assert.match(files['make.conf']!, /^PORT_LOGDIR="\/var\/log\/rocm-ebuild\/build"$/m);
    assert.match(files['conf/package.use']!, /^\*\/\* AMDGPU_TARGETS: -\* gfx90a$/m);
    assert.equal(files['conf/package.accept_keywords']!.split('\n').filter((l) => l.endsWith(' ~amd64')).length, model.components.length);
    assert.match(files['conf/package.env']!, /^sci-libs\/rocPRIM rocm-ebuild\/sci-libs_rocPRIM\.conf$/m);
    assert.doesNotMatch(files['conf/package.env']!, /rocFFT/, 'no smoke tier, no FEATURES=test');
    assert.equal(
      files['env/rocm-ebuild/sci-libs_rocPRIM.conf'],
      '# Written by rocm-ebuild test: ROCm 6.2.2 on gfx90a.\nFEATURES="test"\nGTEST_OUTPUT="xml:/var/log/rocm-ebuild/gtest/sci-libs/rocPRIM/"\nGTEST_FILTER="*/0.*"\n',
    );
    assert.match(files['conf/repos.conf']!, /^\[gentoo\]\nlocation = \/var\/db\/repos\/gentoo\n\n\[rocm\]\nlocation = \/var\/db\/repos\/rocm\n/m);
    assert.match(files['sandbox.conf']!, /^SANDBOX_WRITE="\/var\/log\/rocm-ebuild\/"$/m);
    assert.match(portageFiles(job(plan, { userpriv: false }))['make.conf']!, /FEATURES="buildpkg binpkg-multi-instance -news -userpriv -usersandbox"/);
  });

  it('refuses make.conf values that could expand', () => {
    assert.equal(makeConfValue('a b*/0.*'), '"a b*/0.*"');
    for (const bad of ['$(rm -rf /)', 'a"b', 'a\\b', '`x`', 'a\nb']) assert.throws(() => makeConfValue(bad), /refusing a make.conf value/);
    assert.equal(shellWord("a'b"), `'a'\\''b'`);
  });

  it('the script passes shellcheck as POSIX sh, and bash -n and busybox sh -n read it', async () => {
    const dir = await tempDir();
    try {
      const variants: [string, ContainerJob][] = [
        ['full', job(testPlan(model, resolveAtoms(model, ['hipBLAS', 'rocBLAS', 'hipCUB']), 'full'))],
        ['rootless-smoke-no-timeout', job(testPlan(model, resolveAtoms(model, ['rocPRIM']), 'smoke'), { userpriv: false, timeoutSeconds: 0, gids: [] })],
        ['whole-stack-none', job(testPlan(model, undefined, 'none'))],
      ];
      for (const [name, j] of variants) {
        const file = path.join(dir, `${name}.sh`);
        writeFileSync(file, containerScript(j));
        const sc = spawnSync('shellcheck', ['-s', 'sh', file], { encoding: 'utf8' });
        assert.equal(sc.status, 0, `${name}: ${sc.stdout}`);
        assert.equal(spawnSync('bash', ['-n', file]).status, 0, name);
        const bb = spawnSync('busybox', ['sh', '-n', file]);
        if (!bb.error) assert.equal(bb.status, 0, `${name}: busybox sh -n`);
      }
      const text = containerScript(variants[0]![1]);
      assert.match(text, /^atom sci-libs\/hipBLAS '~sci-libs\/hipBLAS-6\.2\.2:0\/6\.2::rocm' sci-libs\/rocBLAS$/m);
      assert.match(text, /^for gid in 110 44; do setup_group/m);
      assert.match(text, /^gpu_check \/dev\/kfd \/dev\/dri\/renderD128$/m);
      assert.match(containerScript(variants[1]![1]), /if ! \{ test -r "\$node" && test -w "\$node"; \}; then/);
    } finally {
      await removeDir(dir);
    }
  });
});

describe('container: what the container leaves behind', () => {
  it('parses status, phases and console into segments', () => {
    assert.deepEqual(parseStatus('setup||0|0|\natom|sci-libs/a|-|0|needs x, which failed\natom|sci-libs/b|1|12|timeout\nbroken\n'), [
      { step: 'setup', atom: '', status: 0, seconds: 0, note: '' },
      { step: 'atom', atom: 'sci-libs/a', status: null, seconds: 0, note: 'needs x, which failed' },
      { step: 'atom', atom: 'sci-libs/b', status: 1, seconds: 12, note: 'timeout' },
    ]);
    const phases = phasesBySegment(parsePhases('1 - step:deps\n2 dev-util/hip compile\n3 - atom:sci-libs/a\n4 sci-libs/a test\nnoise\n'));
    assert.deepEqual([...phases.keys()], ['deps', 'atom:sci-libs/a']);
    assert.deepEqual(phases.get('atom:sci-libs/a'), [{ time: 4, atom: 'sci-libs/a', phase: 'test' }]);
    const segments = splitConsole('x\n@@rocm-ebuild step resolve\nr1\n@@rocm-ebuild atom sci-libs/a\na1\na2\n');
    assert.deepEqual(Object.fromEntries(segments), { setup: ['x'], resolve: ['r1'], 'atom:sci-libs/a': ['a1', 'a2', ''] });
  });

  it('reads what emerge merged, from binary packages or built, and what failed in which phase', () => {
    const lines = [
      '>>> Emerging binary (1 of 3) dev-util/hip-6.2.2-r1::rocm',
      '>>> Completed (1 of 3) dev-util/hip-6.2.2-r1::rocm',
      '>>> Emerging (2 of 3) llvm-core/llvm-18.1.8_rc1::gentoo',
      ' * ERROR: llvm-core/llvm-18.1.8_rc1::gentoo failed (compile phase):',
      '>>> Failed to emerge llvm-core/llvm-18.1.8_rc1, Log file:',
      '>>> Emerging (3 of 3) dev-libs/x-1::gentoo',
    ];
    assert.deepEqual(emergedPackages(lines), [
      { atom: 'dev-util/hip', version: '6.2.2-r1', binpkg: true, done: true },
      { atom: 'llvm-core/llvm', version: '18.1.8_rc1', binpkg: false, done: false, failedPhase: 'compile' },
      { atom: 'dev-libs/x', version: '1', binpkg: false, done: false },
    ]);
    assert.deepEqual(splitCpv('dev-python/foo-bar-2.0.1-r3'), { atom: 'dev-python/foo-bar', version: '2.0.1-r3' });
    assert.equal(splitCpv('not-a-cpv'), undefined);
  });

  it('classifies failures from the evidence, most specific first', () => {
    const c = (e: Partial<Parameters<typeof classify>[0]>) => classify({ step: 'atom', status: 1, timedOut: false, interrupted: false, text: '', ...e });
    const table: [Partial<Parameters<typeof classify>[0]>, string, RegExp][] = [
      [{ timedOut: true, phase: 'test' }, 'timeout', /timed out in the test phase/],
      [{ interrupted: true }, 'interrupted', /interrupted/],
      [{ step: 'resolve', text: 'The following REQUIRED_USE flag constraints are unsatisfied:\n    amdgpu_targets_gfx90a? ( x )' }, 'dependency', /REQUIRED_USE not satisfied: amdgpu_targets_gfx90a\? \( x \)/],
      [{ step: 'resolve', text: '!!! All ebuilds that could satisfy "dev-libs/foo" have been masked.' }, 'dependency', /dev-libs\/foo is masked/],
      [{ step: 'resolve', text: 'The following USE changes are necessary to proceed:' }, 'dependency', /USE dependency/],
      [{ step: 'resolve', text: '[blocks B      ] dev-util/hipcc' }, 'dependency', /block/],
      [{ step: 'resolve', text: 'emerge: there are no ebuilds to satisfy "dev-libs/nope".' }, 'dependency', /nothing satisfies dev-libs\/nope/],
      [{ phase: 'fetch', text: "!!! Couldn't download 'rocBLAS-6.2.2.tar.gz'. Aborting." }, 'fetch', /fetch failed: rocBLAS-6\.2\.2\.tar\.gz/],
      [{ phase: 'compile', text: 'x86_64-pc-linux-gnu-g++: fatal error: Killed signal terminated program cc1plus' }, 'oom', /compiler was killed/],
      [{ phase: 'compile', status: 137 }, 'oom', /OOM killer/],
      [{ phase: 'test', text: 'hipErrorNoDevice' }, 'gpu-access', /no usable GPU \(hipErrorNoDevice\)/],
      [{ step: 'gpu', text: 'rocm-ebuild: user portage cannot open /dev/kfd read-write: crw-------' }, 'gpu-access', /user portage cannot open \/dev\/kfd/],
      [{ phase: 'test', text: ' * ERROR: sci-libs/a-1::rocm failed (test phase):\n *   ctest failed' }, 'test', /failed \(test phase\): ctest failed/],
      [{ phase: 'configure', text: ' * ERROR: sci-libs/a-1::rocm failed (configure phase):\n *   cmake failed' }, 'build', /configure phase\): cmake failed/],
      [{ status: 2 }, 'unknown', /exit status 2/],
    ];
    for (const [evidence, klass, message] of table) {
      const got = c(evidence);
      assert.equal(got.failureClass, klass, JSON.stringify(evidence));
      assert.match(got.message, message);
    }
  });

  it('reads gtest XML, counts failures and skips, and ignores a truncated file', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" failures="1" disabled="0" errors="0" time="0.02" name="AllTests">
  <testsuite name="Scan/0" tests="3" failures="1" disabled="0" skipped="1" errors="0" time="0.02">
    <testcase name="A" status="run" result="completed" time="0.01" classname="Scan/0"/>
    <testcase name="B" status="run" result="completed" time="0.01" classname="Scan/0"><failure message="x == y" type=""><![CDATA[scan.cpp:7
Expected: x == y]]></failure></testcase>
    <testcase name="C" status="run" result="skipped" time="0" classname="Scan/0"><skipped message=""/></testcase>
  </testsuite>
</testsuites>`;
    const r = parseGtestXml(xml, 'gtest/sci-libs/a/t.xml')!;
    assert.equal(r.suites[0]!.cases[1]!.failure, 'x == y\nscan.cpp:7\nExpected: x == y');
    assert.deepEqual(gtestCounts([r]), { total: 3, failed: 1, skipped: 1 });
    assert.equal(parseGtestXml('<?xml version="1.0"?><testsuites><testsuite name="x"><testcase', 'x'), undefined);
    // Cut after a whole test case (the binary was killed between two writes):
    // counting the cases it finished would report a partial run as complete.
    const cut = xml.slice(0, xml.indexOf('<testcase name="C"'));
    assert.equal(parseGtestXml(cut, 'x'), undefined);
    // A lone <testsuite> root (some gtest builds write one) is a report too.
    const lone = parseGtestXml('<testsuite name="S"><testcase name="A" classname="S"/><testcase name="E"><error message="boom"/></testcase></testsuite>', 'x')!;
    assert.deepEqual(gtestCounts([lone]), { total: 2, failed: 1, skipped: 0 });
    assert.equal(lone.suites[0]!.cases[1]!.classname, 'S');
  });
});

describe('container: reports', function () {
  this.timeout(60_000);
  const meta: ReportMeta = {
    tool: { name: 'rocm-ebuild', version: '0.1.0' },
    gfx: 'gfx90a',
    amdgpuTargets: 'gfx90a',
    device: { gfx: 'gfx90a', renderNode: '/dev/dri/renderD128', name: 'AMD Instinct MI210' },
    engine: { name: 'podman', version: '4.3.1' },
    image: 'docker.io/gentoo/stage3:amd64-openrc',
    started: '2024-10-01T10:00:00.000Z',
    ended: '2024-10-01T11:02:00.000Z',
  };
  const outcome = (o: Partial<RunOutcome>): RunOutcome => ({ status: [], phases: [], console: '', buildLogs: [], gtest: [], interrupted: false, engineStatus: 0, tail: async () => '', ...o });

  it('a failed dependency leaves the atoms under test not run, saying why', async () => {
    const plan = testPlan(model, resolveAtoms(model, ['rocPRIM']), 'full');
    const report = await buildReport(meta, plan, outcome({
      status: parseStatus('setup||0|0|\ngpu||0|0|\nresolve||0|3|\ndeps||1|600|\n'),
      console: '@@rocm-ebuild step deps\n>>> Emerging (1 of 1) llvm-core/llvm-18.1.8::gentoo\n * ERROR: llvm-core/llvm-18.1.8::gentoo failed (compile phase):\n *   ninja failed\n>>> Failed to emerge llvm-core/llvm-18.1.8, Log file:\n',
      buildLogs: ['build/llvm-core:llvm-18.1.8:20241001-100000.log'],
      tail: async () => 'c++: fatal error: Killed signal terminated program cc1plus',
    }));
    assert.deepEqual(reportProblems(report), []);
    assert.equal(report.result, 'failed');
    const llvm = report.atoms[0]!;
    assert.deepEqual([llvm.atom, llvm.tested, llvm.result, llvm.phase, llvm.failureClass], ['llvm-core/llvm', false, 'failed', 'compile', 'oom']);
    assert.deepEqual(llvm.logs, ['build/llvm-core:llvm-18.1.8:20241001-100000.log', 'console.log']);
    const prim = report.atoms[1]!;
    assert.deepEqual([prim.result, prim.failureClass], ['not-run', 'oom']);
    assert.match(prim.message!, /^not run: dependency llvm-core\/llvm-18\.1\.8 failed: the compiler was killed/);
    const md = markdownReport(report);
    assert.match(md, /^#### ROCm 6\.2\.2 on gfx90a: failed\n\nAMD Instinct MI210, podman 4\.3\.1, `docker\.io\/gentoo\/stage3:amd64-openrc`, full tests, 1 h 02 min\n/);
    assert.match(md, /\| `llvm-core\/llvm-18\.1\.8` \(dependency\) \| \*\*failed\*\* \| compile \|/);
    const dir = await tempDir();
    try {
      writeFileSync(path.join(dir, 'junit.xml'), junitXml(report, []));
      assert.equal(spawnSync('xmllint', ['--noout', path.join(dir, 'junit.xml')]).status, 0);
    } finally {
      await removeDir(dir);
    }
  });

  it('an in-place run (--engine none) writes report.json under the contract; a GPU-less build stays outside it', async () => {
    const plan = testPlan(model, resolveAtoms(model, ['rocPRIM']), 'full');
    const report = await buildReport({ ...meta, engine: { name: 'none', version: 'in place' } }, plan, outcome({}));
    assert.deepEqual(reportProblems(report), []);
    assert.equal(reportFileName(report), 'report.json');
    assert.equal(reportFileName({ gfx: null, engine: report.engine }), 'build-report.json');
    assert.notDeepEqual(reportProblems({ ...report, gfx: null }), []);
    assert.deepEqual(reportProblems({ ...report, gfx: null }, { relaxed: true }), []);
  });

  it('checks reports with the validation code generated at build time: ajv itself is not loaded, only its runtime helpers', async () => {
    const plan = testPlan(model, resolveAtoms(model, ['rocPRIM']), 'full');
    const report = await buildReport(meta, plan, outcome({}));
    const url = (m: string) => JSON.stringify(new URL(`../../src/${m}`, import.meta.url).href);
    const script = `
      import { createRequire } from 'node:module';
      const { reportProblems } = await import(${url('container/report.js')});
      const { loadTestReports } = await import(${url('pr/test-reports.js')});
      const report = JSON.parse(process.argv[1]);
      const problems = [reportProblems(report), reportProblems({ ...report, gfx: null }).length > 0, reportProblems({ ...report, gfx: null }, { relaxed: true })];
      const file = process.argv[2];
      (await import('node:fs')).writeFileSync(file, JSON.stringify(report));
      await loadTestReports([file]);
      const cache = Object.keys(createRequire(import.meta.url).cache);
      process.stdout.write(JSON.stringify({ problems, ajv: cache.filter((k) => k.includes('/node_modules/ajv/') && !k.includes('/node_modules/ajv/dist/runtime/')) }));`;
    const dir = await tempDir();
    try {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(report), path.join(dir, 'report.json')], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { problems: [[], true, []], ajv: [] });
    } finally {
      await removeDir(dir);
    }
  });

  it('an engine that cannot start the container is an error of the run, with its words', async () => {
    const plan = testPlan(model, resolveAtoms(model, ['rocPRIM']), 'full');
    const report = await buildReport(meta, plan, outcome({ engineStatus: 125, engineError: 'podman could not run the container (exit 125): Error: stat /dev/kfd: no such file or directory' }));
    assert.deepEqual(reportProblems(report), []);
    assert.equal(report.result, 'error');
    assert.match(report.message!, /stat \/dev\/kfd/);
    assert.equal(report.atoms[0]!.result, 'not-run');
  });

  it('junit and markdown survive hostile text from build logs', () => {
    const report = {
      schemaVersion: 1 as const, ...meta, release: '6.2.2', tests: 'full' as const, result: 'failed' as const,
      atoms: [{ atom: 'sci-libs/a', version: '1', tested: true, phase: 'test' as const, result: 'failed' as const, seconds: 5, failureClass: 'test' as const, message: 'a | b <x> & "q" \u0007bell\nnext', logs: [] }],
    };
    const xml = junitXml(report, []);
    assert.match(xml, /message="a \| b &lt;x&gt; &amp; &quot;q&quot; bell\nnext"/);
    assert.match(markdownReport(report), /\| test: a \\\| b <x> & "q" \u0007bell next \|/);
  });
});

describe('container: progress', () => {
  const stream = (tty: boolean) => {
    const out = { text: '', isTTY: tty, columns: 120, write: (t: string) => ((out.text += t), true) };
    return out as unknown as NodeJS.WriteStream & { text: string };
  };

  it('plain lines only when something changes, off a terminal', () => {
    const s = stream(false);
    const p = new TestProgress({ quiet: false, stream: s });
    p.start();
    p.update('gfx90a', 0, 2, 'dependencies');
    p.update('gfx90a', 0, 2, 'dependencies');
    p.update('gfx90a', 1, 2, 'sci-libs/hipCUB compile');
    p.stop();
    assert.equal(s.text, '[0/2] gfx90a dependencies\n[1/2] gfx90a sci-libs/hipCUB compile\n');
  });

  it('one redrawn line with the elapsed time on a terminal; nothing with --json', () => {
    const s = stream(true);
    const p = new TestProgress({ quiet: false, stream: s });
    p.update('gfx90a', 1, 2, 'sci-libs/hipCUB test');
    p.note('gfx90a: passed');
    p.stop();
    assert.match(s.text, /^\[1\/2\] gfx90a sci-libs\/hipCUB test 0 s\r\x1b\[2Kgfx90a: passed\n$/);
    const q = stream(true);
    const quiet = new TestProgress({ quiet: true, stream: q });
    quiet.update('x', 0, 1, 'y');
    quiet.stop();
    assert.equal(q.text, '');
  });
});

describe('container: choosing GPUs', function () {
  this.timeout(30_000);
  const hosts: FakeHost[] = [];
  after(async () => {
    for (const h of hosts) await removeDir(h.dev);
  });
  const topo = async (s: string) => {
    const h = await fakeHost(s);
    hosts.push(h);
    return readTopology(h, await loadDeviceTable(deviceTablePath(defaultTargetsPath)));
  };
  const policy = () => model.release.policy;

  it('auto: one GPU per distinct gfx the release offers', async () => {
    const t = await topo('mi300x-cpx');
    assert.deepEqual(selectGpus(t, [], policy(), '6.2.2').selected.map((s) => [s.gpu.index, s.label]), [[0, 'gfx942']]);
    assert.deepEqual(selectGpus(t, ['all'], policy(), '6.2.2').selected.map((s) => s.label), ['gfx942-gpu0', 'gfx942-gpu1', 'gfx942-gpu2', 'gfx942-gpu3', 'gfx942-gpu4']);
    const w = await topo('workstation');
    assert.deepEqual(selectGpus(w, ['auto'], policy(), '6.2.2').selected.map((s) => s.label), ['gfx90a', 'gfx1100', 'gfx1030']);
    assert.deepEqual(selectGpus(w, ['2', 'gfx90a', '0'], policy(), '6.2.2').selected.map((s) => s.gpu.index), [2, 0]);
  });

  it('says what is wrong before any container starts', async () => {
    const w = await topo('workstation');
    const err = (f: () => unknown, re: RegExp) => assert.throws(f, (e: unknown) => e instanceof UserError && e.exitCode === 2 && re.test(e.message));
    err(() => selectGpus(w, ['gfx942'], policy(), '6.2.2'), /--gpu gfx942: no gfx942 GPU on this host; it has gfx90a \(GPU 0, AMD Instinct MI210\), gfx1100 \(GPU 1, /);
    err(() => selectGpus(w, ['7'], policy(), '6.2.2'), /--gpu 7: there is no GPU 7/);
    err(() => selectGpus(w, ['gfx1100'], { default: ['gfx90a'], optional: [] }, '6.2.2'), /gfx1100 \(GPU 1, .*\) is not in ROCm 6\.2\.2's target policy \(default-on: gfx90a; optional: \)/);
    const apu = await topo('apu');
    err(() => selectGpus(apu, [], policy(), '6.2.2'), /none of this host's GPUs \(gfx90c \(GPU 0\)\) is in ROCm 6\.2\.2's target policy/);
    const broken = await topo('incomplete');
    err(() => selectGpus(broken, ['1'], policy(), '6.2.2'), /--gpu 1: gfx1100 \(GPU 1, .*\) cannot be used: KFD reports no render node/);
    const cpuOnly = await topo('cpu-only');
    err(() => selectGpus(cpuOnly, [], policy(), '6.2.2'), /no AMD GPU found: looked at .*sys\/class\/kfd\/kfd\/topology\/nodes \(1 CPU node, 0 GPU nodes\)/);
  });

  it('--timeout takes seconds, minutes or hours', () => {
    assert.deepEqual(['0', '45', '45s', '90m', '6h'].map(parseDuration), [0, 45, 45, 5400, 21600]);
    assert.throws(() => parseDuration('soon'), /--timeout soon/);
  });
});

describe('container: test --dry-run', function () {
  this.timeout(60_000);
  let host: FakeHost;
  let work: string;
  /** A PATH with git but neither podman nor docker. */
  let noEngine: string;
  before(async () => {
    host = await fakeHost('workstation');
    work = await tempDir();
    noEngine = await tempDir();
    symlinkSync(spawnSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).stdout.trim(), path.join(noEngine, 'git'));
    mkdirSync(path.join(work, 'tree', 'profiles'), { recursive: true });
    writeFileSync(path.join(work, 'tree', 'profiles', 'repo_name'), 'gentoo\n');
    for (const a of ['sci-libs/rocPRIM']) {
      mkdirSync(path.join(work, 'overlay', a), { recursive: true });
      writeFileSync(path.join(work, 'overlay', a, 'rocPRIM-6.2.2-r1.ebuild'), '');
    }
    mkdirSync(path.join(work, 'overlay', 'profiles'));
    writeFileSync(path.join(work, 'overlay', 'profiles', 'repo_name'), 'rocm\n');
    await git(path.join(work, 'overlay'), ['init', '-q']);
  });
  after(async () => {
    await removeDir(work);
    await removeDir(noEngine);
    await removeDir(host.dev);
  });
  const base = () => ['test', 'rocPRIM', '--overlay', path.join(work, 'overlay'), '--version', '6.2.2', '--tree', path.join(work, 'tree'), '--report-dir', path.join(work, 'reports'), '--dry-run'];

  it('prints one engine command line per container and runs nothing, even with no engine installed', async () => {
    const r = await runCli([...base(), '--gpu', 'all'], { env: { ...host.env, PATH: noEngine } });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').filter((l) => !l.startsWith('#'));
    assert.equal(lines.length, 3);
    assert.ok(lines.every((l) => l.startsWith('podman run --interactive --name=rocm-ebuild-622-gfx')));
    assert.match(r.stderr, /podman is not installed: the commands are shown/);
    assert.match(lines[1]!, /--device=\S+\/dev\/dri\/renderD136:\/dev\/dri\/renderD136 /);
    assert.deepEqual(spawnSync('ls', [path.join(work)]).stdout.toString().trim().split('\n'), ['overlay', 'tree'], 'nothing written');
  });

  it('takes an overlay that is not a git repository: Portage reads it as a directory', async () => {
    const copy = await tempDir();
    try {
      await cp(path.join(work, 'overlay'), copy, { recursive: true, filter: (src) => path.basename(src) !== '.git' });
      const a = base();
      a[a.indexOf('--overlay') + 1] = copy;
      const r = await runCli([...a, '--gpu', 'gfx1030'], { env: { ...host.env, PATH: noEngine } });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes(` --volume=${copy}:/var/db/repos/rocm:ro `), r.stdout);
    } finally {
      await removeDir(copy);
    }
  });

  it('--engine docker prints docker lines', async () => {
    const r = await runCli([...base(), '--engine', 'docker', '--gpu', 'gfx1030', '--json'], { env: { ...host.env, PATH: noEngine } });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { commands: string[]; dryRun: boolean; engine: { name: string } };
    assert.equal(out.dryRun, true);
    assert.equal(out.engine.name, 'docker');
    assert.match(out.commands[0]!, /^docker run --interactive --name=rocm-ebuild-622-gfx1030-[0-9a-f]{6} --pull=never --rm /);
  });

  it('runs not even the engine: with podman installed, --dry-run picks it from PATH and never executes it', async () => {
    const fakeEngine = await tempDir();
    try {
      const calls = path.join(fakeEngine, 'calls');
      // Every call is recorded; a version query would be one.
      writeFileSync(path.join(fakeEngine, 'podman'), `#!/bin/sh\necho "$*" >> '${calls}'\necho 4.3.1\n`, { mode: 0o755 });
      symlinkSync(path.join(noEngine, 'git'), path.join(fakeEngine, 'git'));
      const r = await runCli([...base(), '--gpu', 'gfx90a', '--json'], { env: { ...host.env, PATH: fakeEngine } });
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { commands: string[]; engine: { name: string; version: string } };
      assert.deepEqual(out.engine, { name: 'podman', version: 'not asked (--dry-run)', rootless: process.geteuid?.() !== 0 });
      assert.match(out.commands[0]!, /^podman run /);
      assert.equal(existsSync(calls), false, 'podman was run');
      assert.doesNotMatch(r.stderr, /not installed/);
    } finally {
      await removeDir(fakeEngine);
    }
  });

  it('--dry-run needs no ::gentoo tree (it mounts nothing) and shows the files each container would get', async () => {
    const a = base();
    a[a.indexOf('--tree') + 1] = path.join(work, 'no-such-tree');
    const r = await runCli([...a, '--gpu', 'gfx1100'], { env: { ...host.env, PATH: noEngine } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /no-such-tree is not a ::gentoo checkout .*: a real run refuses it/);
    const commands = r.stdout.trim().split('\n').filter((l) => !l.startsWith('#'));
    assert.equal(commands.length, 1);
    assert.match(r.stdout, /^# --- setup\/make\.conf: appended to \/etc\/portage\/make\.conf ---\n(#.*\n)*# {3}AMDGPU_TARGETS="gfx1100"$/m);
    assert.match(r.stdout, /^# --- setup\/conf\/package\.use: \/etc\/portage\/package\.use\/rocm-ebuild ---\n(#.*\n)*# {3}\*\/\* AMDGPU_TARGETS: -\* gfx1100$/m);
    assert.match(r.stdout, /^# --- setup\/conf\/package\.env: .* ---\n(#.*\n)*# {3}sci-libs\/rocPRIM rocm-ebuild\/sci-libs_rocPRIM\.conf$/m);
    assert.match(r.stdout, /^# --- setup\/env\/rocm-ebuild\/sci-libs_rocPRIM\.conf: \/etc\/portage\/env\/rocm-ebuild\/sci-libs_rocPRIM\.conf ---\n# {3}#.*\n# {3}FEATURES="test"$/m);
    assert.match(r.stdout, /^# --- setup\/run\.sh: the script the container runs ---$/m);
    const json = JSON.parse((await runCli([...a, '--gpu', 'gfx1100', '--json'], { env: { ...host.env, PATH: noEngine } })).stdout) as { containers: { setup: Record<string, string> }[] };
    assert.match(json.containers[0]!.setup['make.conf']!, /^AMDGPU_TARGETS="gfx1100"$/m);
    assert.deepEqual(spawnSync('ls', [path.join(work)]).stdout.toString().trim().split('\n'), ['overlay', 'tree'], 'nothing written');
  });

  it('an --image that is not an image reference never reaches the engine, in a dry run or a real one (exit 2)', async () => {
    const fakeEngine = await tempDir();
    try {
      const calls = path.join(fakeEngine, 'calls');
      writeFileSync(path.join(fakeEngine, 'podman'), `#!/bin/sh\nprintf '%s\\037' "$@" >> '${calls}'\nprintf '\\036' >> '${calls}'\necho 4.3.1\n`, { mode: 0o755 });
      symlinkSync(path.join(noEngine, 'git'), path.join(fakeEngine, 'git'));
      for (const image of ['--privileged', '--privileged=true', '-v/:/host', 'docker.io/gentoo/stage3 --privileged', 'Gentoo/Stage3']) {
        for (const dry of [true, false]) {
          const a = base().filter((x) => dry || x !== '--dry-run');
          const r = await runCli([...a, '--gpu', 'gfx90a', `--image=${image}`], { env: { ...host.env, PATH: fakeEngine } });
          assert.equal(r.code, 2, `${JSON.stringify(image)} ${dry ? 'dry' : 'real'}: ${r.stdout}${r.stderr}`);
          // oclif itself refuses a value that looks like a short option; every other one is ours to refuse.
          assert.match(r.stderr, image.startsWith('-v') ? /Flag --image expects a value/ : /is not an image reference such as docker\.io\/gentoo\/stage3:amd64-openrc/);
          assert.doesNotMatch(r.stdout, /privileged/);
        }
      }
      assert.equal(existsSync(calls), false, 'the engine was run');
    } finally {
      await removeDir(fakeEngine);
    }
  });

  it('the engine gets what the README promises: one GPU, no privileges, the image after --', async () => {
    const fakeEngine = await tempDir();
    try {
      const calls = path.join(fakeEngine, 'calls');
      writeFileSync(path.join(fakeEngine, 'podman'), `#!/bin/sh\nprintf '%s\\037' "$@" >> '${calls}'\nprintf '\\036' >> '${calls}'\necho 4.3.1\n`, { mode: 0o755 });
      symlinkSync(path.join(noEngine, 'git'), path.join(fakeEngine, 'git'));
      const a = base().filter((x) => x !== '--dry-run');
      a[a.indexOf('--report-dir') + 1] = path.join(fakeEngine, 'reports');
      const r = await runCli([...a, '--gpu', 'gfx1100'], { env: { ...host.env, PATH: fakeEngine } });
      assert.ok(r.code === 0 || r.code === 6, `${r.code}: ${r.stderr}`);
      const argvs = readFileSync(calls, 'utf8').split('\x1e').filter(Boolean).map((c) => c.split('\x1f').slice(0, -1));
      const exists = argvs.find((v) => v[0] === 'image');
      assert.deepEqual(exists, ['image', 'exists', '--', 'docker.io/gentoo/stage3:amd64-openrc']);
      const run = argvs.find((v) => v[0] === 'run')!;
      const end = run.indexOf('--');
      assert.deepEqual(run.slice(end + 1), ['docker.io/gentoo/stage3:amd64-openrc', '/bin/sh', '/rocm-ebuild/run.sh']);
      const options = run.slice(1, end);
      assert.ok(options.every((o) => /^--[a-z-]+(=|$)/.test(o)), `a value as a word of its own: ${JSON.stringify(options)}`);
      assert.deepEqual(options.filter((o) => o.startsWith('--device')).map((o) => o.replace(host.dev, '$DEV')), ['--device=$DEV/dev/kfd:/dev/kfd', '--device=$DEV/dev/dri/renderD136:/dev/dri/renderD136']);
      assert.ok(!options.some((o) => /^--(privileged|cap-add=(?!SYS_NICE$)|pid|ipc|network=host|userns|security-opt)/.test(o)), JSON.stringify(options));
      assert.deepEqual(options.filter((o) => o.startsWith('--volume')).map((o) => o.split(':').slice(1).join(':')), [
        '/var/db/repos/rocm:ro', '/var/db/repos/gentoo:ro', '/var/cache/distfiles', '/var/cache/binpkgs', '/var/log/rocm-ebuild', '/rocm-ebuild:ro',
      ]);
    } finally {
      await removeDir(fakeEngine);
    }
  });

  it('without --dry-run, no container engine is exit 2 before anything starts', async () => {
    const a = base().filter((x) => x !== '--dry-run');
    const r = await runCli(a, { env: { ...host.env, PATH: noEngine } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /no container engine: neither podman nor docker is on PATH/);
  });

  it('a report directory that is a symbolic link is refused: a root container writes there', async () => {
    const target = await tempDir();
    try {
      mkdirSync(path.join(work, 'linked'), { recursive: true });
      symlinkSync(target, path.join(work, 'linked', 'gfx90a'));
      const a = base().filter((x) => x !== '--dry-run');
      a[a.indexOf('--report-dir') + 1] = path.join(work, 'linked');
      const fakeEngine = await tempDir();
      // An engine that answers every query, so the run gets as far as the report directory.
      writeFileSync(path.join(fakeEngine, 'podman'), '#!/bin/sh\necho 4.3.1\n', { mode: 0o755 });
      symlinkSync(path.join(noEngine, 'git'), path.join(fakeEngine, 'git'));
      const r = await runCli([...a, '--gpu', 'gfx90a'], { env: { ...host.env, PATH: fakeEngine } });
      await removeDir(fakeEngine);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /gfx90a is a symbolic link/);
      assert.deepEqual(spawnSync('ls', ['-A', target]).stdout.toString(), '');
    } finally {
      await removeDir(target);
    }
  });

  it('refuses what would fail later: not a Portage repository or an invalid repository name (4), missing ebuilds (4), no ::gentoo tree (2), a bad --gpu (2)', async () => {
    const noRepo = await tempDir();
    try {
      const a = base();
      a[a.indexOf('--overlay') + 1] = noRepo;
      const r = await runCli(a, { env: host.env });
      assert.equal(r.code, 4);
      assert.match(r.stderr, /is not a Portage repository \(no profiles\/repo_name\); create it with `rocm-ebuild bump 6\.2\.2/);
    } finally {
      await removeDir(noRepo);
    }
    // A name that would climb out of /var/db/repos or add a section to repos.conf, and names PMS
    // refuses that bump refuses too: Portage would read "a+b" as another name than the atoms' ::a+b.
    for (const name of ['../../etc', 'x\n[gentoo]\nlocation = /tmp', 'x]', '-x', 'a+b', 'rocm-7.2']) {
      const hostile = await tempDir();
      try {
        await cp(path.join(work, 'overlay'), hostile, { recursive: true });
        writeFileSync(path.join(hostile, 'profiles', 'repo_name'), `${name}\n`);
        const a = base();
        a[a.indexOf('--overlay') + 1] = hostile;
        const r = await runCli(a, { env: host.env });
        assert.equal(r.code, 4, `${JSON.stringify(name)}: ${r.stdout}`);
        assert.match(r.stderr, /invalid repository name in profiles\/repo_name/);
        assert.equal(r.stdout, '', 'no command line printed');
      } finally {
        await removeDir(hostile);
      }
    }
    const missing = await runCli([...base(), 'hipCUB'], { env: host.env });
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /lacks the ebuilds under test: sci-libs\/hipCUB-6\.2\.2/);
    const a = base().filter((x) => x !== '--dry-run');
    a[a.indexOf('--tree') + 1] = work;
    const tree = await runCli(a, { env: host.env });
    assert.equal(tree.code, 2);
    assert.match(tree.stderr, /is not a ::gentoo checkout/);
    const gpu = await runCli([...base(), '--gpu', 'fast'], { env: host.env });
    assert.equal(gpu.code, 2);
    assert.match(gpu.stderr, /--gpu fast: expected auto, all, a GPU index or a gfx name/);
  });
});
