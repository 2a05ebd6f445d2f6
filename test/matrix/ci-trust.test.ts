import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { parse, parseAllDocuments } from 'yaml';
import { TEST_TIERS, type TestTier } from '../../src/container/plan.js';
import { deviceTablePath, loadDeviceTable, type DeviceTable } from '../../src/gpu/devices.js';
import { gfxTargetVersion } from '../../src/gpu/gfx.js';
import type { Manifest } from '../../src/manifest/load.js';
import type { EmitOptions } from '../../src/matrix/emit.js';
import { githubWorkflow, SAME_REPOSITORY_ONLY } from '../../src/matrix/github.js';
import { gitlabPipeline } from '../../src/matrix/gitlab.js';
import { k8sJobs } from '../../src/matrix/k8s.js';
import { DEFAULT_BASE_RUNNER, DEFAULT_CI_IMAGE, matrixPlan, type Matrix } from '../../src/matrix/plan.js';
import type { ToolSource } from '../../src/matrix/tool-source.js';
import type { StackModel } from '../../src/model/resolve.js';
import { loadManifest, stackFor } from '../../src/stack-check/index.js';
import { podmanEnv, podmanUnavailable, standInImage } from '../container/image.js';
import { fakeHost } from '../gpu/fake-host.js';
import { removeDir, root, runCli, shippedManifest, tempDir } from '../helpers/project.js';
import { FULL, sample } from '../helpers/sample.js';

/**
 * What each generated CI file trusts, checked on the files themselves for
 * every combination of the flags that shape them (a sample by default, all
 * with ROCM_EBUILD_TEST_FULL=1): a fork's pull request never reaches a
 * self-hosted runner, the token is read-only, a GPU job gets one render node
 * and the engine's seccomp profile, Kubernetes creates the claim it uses and
 * fetches the overlay at a pinned commit. The GitHub jobs' host scripts are
 * run for real: the render node chosen on fake hosts, the container started
 * by podman standing in for docker.
 */

const schemas = path.join(root, 'test', 'fixtures', 'ci-schemas');
const compile = (file: string) => new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(path.join(schemas, file), 'utf8')) as object);

const TOOLS: ToolSource[] = [
  { kind: 'git', url: 'https://github.com/example/rocm-ebuild.git', commit: '0123456789abcdef0123456789abcdef01234567' },
  { kind: 'tarball', url: 'https://example.org/rocm-ebuild.tar.gz', sha256: 'ab'.repeat(32) },
  { kind: 'command', command: 'node /opt/rocm-ebuild/bin/run.js' },
];
const GFX_SETS: (string[] | undefined)[] = [['gfx90a'], ['gfx1100', 'gfx942'], undefined];
const LABELS = ['rocm-{gfx}', 'gpu.{gfx}_runner'];
const BASE_RUNNERS = [DEFAULT_BASE_RUNNER, ['ubuntu-latest'], ['self-hosted', 'linux', 'x64', 'rocm-cpu']];
const IMAGES = [DEFAULT_CI_IMAGE, 'registry.example.org/gentoo/stage3:amd64-systemd'];
const TIMEOUTS = [1, 720];

interface Combination {
  tool: ToolSource;
  gfx: string[] | undefined;
  tests: TestTier;
  labelScheme: string;
  baseRunner: string[];
  image: string;
  timeout: number;
}

function combinations(): Combination[] {
  const out: Combination[] = [];
  for (const tool of TOOLS)
    for (const gfx of GFX_SETS)
      for (const tests of TEST_TIERS)
        for (const labelScheme of LABELS)
          for (const baseRunner of BASE_RUNNERS)
            for (const image of IMAGES) for (const timeout of TIMEOUTS) out.push({ tool, gfx, tests, labelScheme, baseRunner, image, timeout });
  return out;
}

const K8S_EXTRA = [
  { nodeLabel: undefined, namespace: undefined, claim: 'rocm-ebuild', claimSize: '200Gi' },
  { nodeLabel: 'rocm.gentoo.org/gfx', namespace: 'ci', claim: 'shared.cache', claimSize: '1.5Ti' },
];

type Json = Record<string, unknown>;
type Step = { uses?: string; run?: string; if?: string; name?: string; env?: Record<string, string>; with?: Record<string, unknown> };
type GithubJob = { if?: string; permissions?: Json; 'runs-on': string | string[]; container?: unknown; services?: unknown; steps: Step[]; strategy?: { matrix: { include: Record<string, string>[] } } };

function parsesEverywhere(text: string, label: string): unknown[] {
  let docs: unknown[] = [];
  for (const version of ['1.1', '1.2'] as const) {
    const parsed = parseAllDocuments(text, { version });
    assert.ok(parsed.every((d) => d.errors.length === 0), `${label} YAML ${version}: ${parsed.flatMap((d) => d.errors).join('; ')}`);
    docs = parsed.map((d) => d.toJS() as unknown);
  }
  return docs;
}

/** The `docker create` line of a host script, or fails. */
function createLine(script: string, label: string): string {
  const line = script.split('\n').find((l) => l.startsWith('docker create '));
  assert.ok(line, `${label}: no docker create`);
  return line;
}

function checkContainerOptions(line: string, gpu: boolean, label: string): void {
  assert.doesNotMatch(line, /--privileged|seccomp=unconfined|--volume|\s-v\s|--mount|docker\.sock|--network[= ]host|--pid|--ipc|--cap-add (?!SYS_NICE\b)/, label);
  assert.match(line, /--security-opt no-new-privileges/, label);
  if (gpu) {
    assert.match(line, /--device "\$dev\/dev\/kfd:\/dev\/kfd" --device "\$dev\$RENDER_NODE:\$RENDER_NODE" /, label);
    assert.equal(line.match(/--device /g)?.length, 2, `${label}: /dev/kfd and one render node, nothing else`);
    assert.match(line, /--cap-add SYS_NICE/, label);
  } else {
    assert.doesNotMatch(line, /--device|--cap-add|--group-add/, label);
  }
}

function checkGithub(text: string, m: Matrix, label: string, validate: ReturnType<typeof compile>): void {
  const [wf] = parsesEverywhere(text, label) as [{ on: Json; permissions: Json; jobs: Record<string, GithubJob> }];
  assert.ok(validate(wf), `${label}: ${JSON.stringify(validate.errors)?.slice(0, 500)}`);
  assert.deepEqual(Object.keys(wf.on).sort(), ['pull_request', 'workflow_dispatch'], `${label}: no pull_request_target, no push`);
  assert.deepEqual(wf.permissions, {}, `${label}: the workflow's token has no permission`);
  assert.deepEqual(Object.keys(wf.jobs), ['plan', 'base', 'test'], label);
  for (const [name, job] of Object.entries(wf.jobs)) {
    const where = `${label} ${name}`;
    const selfHosted = ([] as string[]).concat(job['runs-on']).includes('self-hosted');
    if (name !== 'plan') assert.equal(job.if, SAME_REPOSITORY_ONLY, `${where}: the fork gate`);
    else assert.ok(!selfHosted, `${where}: plan runs on a GitHub-hosted runner`);
    if (selfHosted) assert.equal(job.if, SAME_REPOSITORY_ONLY, `${where}: a self-hosted job without the fork gate`);
    assert.ok(job.permissions === undefined || JSON.stringify(job.permissions) === '{"contents":"read"}', `${where}: ${JSON.stringify(job.permissions)}`);
    assert.equal(job.container, undefined, `${where}: a job container would get the runner's Docker socket`);
    assert.equal(job.services, undefined, where);
    for (const s of job.steps) {
      if (s.uses) assert.match(s.uses, /^actions\/[a-z-]+@[0-9a-f]{40}$/, where);
      if (s.uses?.startsWith('actions/checkout@')) assert.equal(s.with?.['persist-credentials'], false, `${where}: checkout keeps the token`);
    }
  }
  const base = wf.jobs.base!;
  const baseRun = base.steps.find((s) => s.run?.includes('docker create'))!;
  checkContainerOptions(createLine(baseRun.run!, `${label} base`), false, `${label} base`);
  const test = wf.jobs.test!;
  const choose = test.steps.findIndex((s) => s.run?.includes('RENDER_NODE=$1'));
  const run = test.steps.findIndex((s) => s.run?.includes('docker create'));
  assert.ok(choose >= 0 && choose < run, `${label}: the render node is chosen on the host before the container starts`);
  checkContainerOptions(createLine(test.steps[run]!.run!, `${label} test`), true, `${label} test`);
  for (const job of [base, test]) assert.ok(job.steps.at(-1)!.if === '${{ always() }}' && /^docker rm --force /.test(job.steps.at(-1)!.run ?? ''), `${label}: the container is removed whatever happens`);
  const entries = test.strategy!.matrix.include;
  assert.deepEqual(entries.map((e) => e.id), m.jobs.filter((j) => j.gfx).map((j) => j.id), label);
  for (const e of entries) assert.equal(e.gfx_version, String(gfxTargetVersion(e.gfx!)), `${label} ${e.id}`);
  assert.doesNotMatch(text, /seccomp=unconfined|\/dev\/dri(?!\/renderD)/, label);
}

function checkGitlab(text: string, label: string, validate: ReturnType<typeof compile>): void {
  const [pipeline] = parsesEverywhere(text, label) as [Record<string, { tags?: string[]; extends?: string; rules?: { if?: string; when?: string }[] }>];
  assert.ok(validate(pipeline), `${label}: ${JSON.stringify(validate.errors)?.slice(0, 500)}`);
  for (const gate of [pipeline['.rocm-ebuild']!, pipeline.plan!]) {
    assert.equal(gate.rules![0]!.when, 'never', label);
    assert.match(gate.rules![0]!.if!, /\$CI_PIPELINE_SOURCE == "merge_request_event"/, `${label}: no job in a merge request pipeline (a fork's)`);
  }
  for (const [name, job] of Object.entries(pipeline)) {
    if (!job || typeof job !== 'object' || !('tags' in job)) continue;
    assert.equal(job.extends, '.rocm-ebuild', `${label} ${name}`);
    assert.equal(job.rules, undefined, `${label} ${name}: its own rules would replace the gate`);
  }
  assert.doesNotMatch(text, /seccomp=unconfined|privileged = true/, label);
  assert.match(text, /devices = \["\/dev\/kfd", "\/dev\/dri\/renderD<N>"\]/, label);
}

function checkK8s(text: string, label: string, extra: (typeof K8S_EXTRA)[number], commit: string, repo: string): void {
  const docs = parsesEverywhere(text, label) as Json[];
  const [claim, ...jobs] = docs as [Json & { metadata: Json; spec: { accessModes: string[]; resources: { requests: { storage: string } } } }, ...Json[]];
  assert.equal(claim.kind, 'PersistentVolumeClaim', label);
  assert.doesNotThrow(() => new PersistentVolumeClaim(claim as unknown as ConstructorParameters<typeof PersistentVolumeClaim>[0]).validate(), label);
  assert.equal(claim.metadata.name, extra.claim, label);
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteMany'], label);
  assert.equal(claim.spec.resources.requests.storage, extra.claimSize, label);
  for (const d of docs) assert.equal((d.metadata as Json).namespace, extra.namespace, `${label}: every document in the namespace`);
  for (const job of jobs) {
    assert.doesNotThrow(() => new Job(job as unknown as ConstructorParameters<typeof Job>[0]).validate(), label);
    type Container = { command: string[]; securityContext: Json & { capabilities?: { add?: string[] } }; resources: { limits?: Json } };
    const spec = (job as { spec: { template: { spec: { automountServiceAccountToken: boolean; volumes: { persistentVolumeClaim?: { claimName: string } }[]; containers: Container[]; initContainers?: Container[] } } } }).spec.template.spec;
    assert.equal(spec.automountServiceAccountToken, false, `${label}: no token for the cluster`);
    assert.deepEqual(spec.volumes.flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : [])), [extra.claim], `${label}: the claim the file creates`);
    for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
      assert.equal(c.securityContext.privileged, false, label);
      assert.equal(c.securityContext.allowPrivilegeEscalation, false, label);
      assert.deepEqual(c.securityContext.seccompProfile, { type: 'RuntimeDefault' }, label);
      const gpu = c.resources?.limits?.['amd.com/gpu'] === 1;
      assert.deepEqual(c.securityContext.capabilities?.add ?? [], gpu ? ['SYS_NICE'] : [], label);
    }
    const script = spec.containers[0]!.command[2]!;
    assert.ok(script.includes(`fetch -q --depth=1 -- ${repo} ${commit} && git -C /work/overlay checkout -q --detach ${commit} --`), `${label}: the overlay at its commit`);
    assert.doesNotMatch(script, /git clone/, label);
  }
  assert.doesNotMatch(text, /Unconfined/, label);
}

describe('ci: what each generated file trusts, for every combination of its flags', function () {
  this.timeout(FULL ? 1_200_000 : 180_000);
  let manifest: Manifest;
  let model: StackModel;
  let devices: DeviceTable;
  before(async () => {
    manifest = await loadManifest(shippedManifest);
    model = await stackFor(manifest, '6.2.2');
    devices = await loadDeviceTable(deviceTablePath(manifest.targetsFile));
  });

  const plan = (c: Combination) =>
    matrixPlan(model, { ...(c.gfx ? { gfx: c.gfx } : {}), tests: c.tests, image: c.image, labelScheme: c.labelScheme, baseRunner: c.baseRunner, timeoutMinutes: c.timeout });
  const emit = (c: Combination): EmitOptions => ({ tool: c.tool, regenerate: 'rocm-ebuild ci …' });

  it('GitHub: parses, holds its structure, gates forks on every self-hosted job, read-only token, one render node', () => {
    const validate = compile('github-workflow.json');
    for (const c of sample(combinations(), 24, 'ci github combinations')) {
      const m = plan(c);
      checkGithub(githubWorkflow(m, emit(c)), m, JSON.stringify(c), validate);
    }
  });

  it('GitLab: parses, validates, no job in a merge request pipeline, runners documented without unconfined seccomp', () => {
    const validate = compile('gitlab-ci.json');
    for (const c of sample(combinations(), 24, 'ci gitlab combinations')) checkGitlab(gitlabPipeline(plan(c), emit(c)), JSON.stringify(c), validate);
  });

  it('Kubernetes: the claim it uses is created, the overlay fetched at its commit, every pod confined and tokenless', () => {
    const all = combinations().flatMap((c) => K8S_EXTRA.map((extra) => ({ c, extra })));
    const repo = 'https://example.org/rocm-overlay.git';
    const commit = '89abcdef0123456789abcdef0123456789abcdef';
    for (const { c, extra } of sample(all, 24, 'ci k8s combinations')) {
      const text = k8sJobs(plan(c), emit(c), { repo, commit, devices, claim: extra.claim, claimSize: extra.claimSize, ...(extra.nodeLabel ? { nodeLabel: extra.nodeLabel } : {}), ...(extra.namespace ? { namespace: extra.namespace } : {}) });
      checkK8s(text, JSON.stringify({ ...c, ...extra }), extra, commit, repo);
    }
  });

  it('the command line writes the same files: a fork gate in each GitHub workflow, none of the old unconfined settings', async () => {
    const PIN = ['--tool-git', 'https://github.com/example/rocm-ebuild.git', '--tool-commit', '0123456789abcdef0123456789abcdef01234567'];
    const gh = await runCli(['ci', 'github', '--version', '6.2.2', '--gpu', 'gfx1100', ...PIN]);
    assert.equal(gh.code, 0, gh.stderr);
    assert.match(gh.stdout, /^# What it trusts: /m);
    checkGithub(gh.stdout, plan({ tool: TOOLS[0]!, gfx: ['gfx1100'], tests: 'full', labelScheme: 'rocm-{gfx}', baseRunner: DEFAULT_BASE_RUNNER, image: DEFAULT_CI_IMAGE, timeout: 720 }), 'cli', compile('github-workflow.json'));
    const missing = await runCli(['ci', 'k8s', '--version', '6.2.2', '--repo', 'https://example.org/o.git', ...PIN]);
    assert.equal(missing.code, 2, 'the overlay commit is required');
    assert.match(missing.stderr, /repo-commit/);
  });
});

describe('ci github: the host side of a GPU job, run for real', function () {
  this.timeout(300_000);
  let steps: Step[];
  let entries: Record<string, string>[];
  let work: string;
  before(async () => {
    work = await tempDir('rocm-ebuild-ci-host-');
    const r = await runCli(['ci', 'github', '--version', '6.2.2', '--gpu', 'gfx1100', '--gpu', 'gfx942', '--tool', 'rocm-ebuild']);
    assert.equal(r.code, 0, r.stderr);
    const wf = parse(r.stdout) as { jobs: { test: GithubJob } };
    steps = wf.jobs.test.steps;
    entries = wf.jobs.test.strategy!.matrix.include;
  });
  after(() => removeDir(work));

  /** The matrix entry's values in place of ${{ matrix.* }}, as GitHub puts them into a step's environment. */
  const envOf = (step: Step, entry: Record<string, string>) =>
    Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, v.replace(/\$\{\{ matrix\.(\w+) \}\}/g, (_, m: string) => entry[m] ?? '')]));

  function chooseRenderNode(scenario: { sysfs: string }, entry: Record<string, string>, pinned?: string): { status: number | null; out: string; githubEnv: string } {
    const step = steps.find((s) => s.run?.includes('RENDER_NODE=$1'))!;
    const githubEnv = path.join(work, `github-env-${Math.random().toString(16).slice(2)}`);
    writeFileSync(githubEnv, '');
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, ...envOf(step, entry), ROCM_EBUILD_SYSFS_ROOT: scenario.sysfs, GITHUB_ENV: githubEnv, ...(pinned ? { ROCM_EBUILD_RENDER_NODE: pinned } : {}) };
    // GitHub runs a step's script with bash -e.
    const res = spawnSync('bash', ['-e', '-c', step.run!], { env, encoding: 'utf8' });
    return { status: res.status, out: res.stdout + res.stderr, githubEnv: readFileSync(githubEnv, 'utf8') };
  }

  it("chooses the one render node of the job's GPU on the host, or stops with what to set", async () => {
    const workstation = await fakeHost('workstation');
    const mi300 = await fakeHost('mi300x-cpx');
    try {
      const gfx1100 = entries.find((e) => e.id === 'gfx1100')!;
      const gfx942 = entries.find((e) => e.id === 'gfx942')!;
      const one = chooseRenderNode(workstation, gfx1100);
      assert.equal(one.status, 0, one.out);
      assert.equal(one.githubEnv, 'RENDER_NODE=/dev/dri/renderD136\n');
      const none = chooseRenderNode(workstation, gfx942);
      assert.equal(none.status, 1);
      assert.match(none.out, /::error::this host has no gfx942 GPU/);
      assert.equal(none.githubEnv, '');
      const several = chooseRenderNode(mi300, gfx942);
      assert.equal(several.status, 1);
      assert.match(several.out, /::error::this host has 5 gfx942 GPUs \(\/dev\/dri\/renderD128 .*\): set ROCM_EBUILD_RENDER_NODE in the runner's \.env/);
      const pinned = chooseRenderNode(mi300, gfx942, '/dev/dri/renderD130');
      assert.equal(pinned.status, 0, pinned.out);
      assert.equal(pinned.githubEnv, 'RENDER_NODE=/dev/dri/renderD130\n');
      const wrong = chooseRenderNode(workstation, gfx1100, '/dev/dri/renderD128');
      assert.equal(wrong.status, 1, 'renderD128 is the gfx90a of that host');
      assert.match(wrong.out, /::error::ROCM_EBUILD_RENDER_NODE=\/dev\/dri\/renderD128 is not a gfx1100 GPU of this host/);
    } finally {
      await removeDir(workstation.dev);
      await removeDir(mi300.dev);
    }
  });

  it('starts the container with podman as docker: only its render node, the seccomp filter on, no new privileges, files copied in and out', async function () {
    const { env: podman, dir } = await podmanEnv();
    const why = podmanUnavailable(podman);
    if (why) {
      await removeDir(dir);
      this.skip();
    }
    const host = await fakeHost('workstation', { char: true });
    const image = await standInImage(podman);
    try {
      const r = await runCli(['ci', 'github', '--version', '6.2.2', '--gpu', 'gfx1100', '--tool', 'rocm-ebuild', '--image', image]);
      assert.equal(r.code, 0, r.stderr);
      const test = (parse(r.stdout) as { jobs: { test: GithubJob } }).jobs.test;
      const entry = test.strategy!.matrix.include[0]!;
      const run = test.steps.find((s) => s.run?.includes('docker create'))!;
      const cleanup = test.steps.at(-1)!;
      const job = path.join(dir, 'job');
      mkdirSync(path.join(job, 'overlay', 'profiles'), { recursive: true });
      writeFileSync(path.join(job, 'overlay', 'profiles', 'repo_name'), 'rocm\n');
      mkdirSync(path.join(job, '.rocm-ebuild', 'binpkgs', 'sci-libs'), { recursive: true });
      writeFileSync(path.join(job, '.rocm-ebuild', 'binpkgs', 'sci-libs', 'base.gpkg.tar'), 'base package\n');
      const shim = path.join(dir, 'bin');
      mkdirSync(shim);
      symlinkSync(spawnSync('sh', ['-c', 'command -v podman'], { encoding: 'utf8' }).stdout.trim(), path.join(shim, 'docker'));
      // In place of the stage3's script: what the container sees, written where the job copies reports from.
      const probe = [
        'mkdir -p /rocm-ebuild/reports',
        '{ ls /dev/dri; ls /dev/kfd; grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/self/status; id -G; cat /overlay/profiles/repo_name; cat /rocm-ebuild/binpkgs/sci-libs/base.gpkg.tar; echo "atoms=$ATOMS gfx=$GFX"; } > /rocm-ebuild/reports/probe.txt 2>&1',
        'exit 3',
      ].join('\n');
      const env: NodeJS.ProcessEnv = {
        ...podman,
        PATH: `${shim}:${process.env.PATH}`,
        ...envOf(run, entry),
        ROCM_EBUILD_JOB: probe,
        RENDER_NODE: '/dev/dri/renderD136',
        ROCM_EBUILD_DEV_ROOT: host.dev,
        GITHUB_RUN_ID: String(process.pid),
        GITHUB_RUN_ATTEMPT: '1',
      };
      const res = spawnSync('bash', ['-e', '-c', run.run!], { cwd: job, env, encoding: 'utf8' });
      assert.equal(res.status, 3, `the container's exit is the step's: ${res.stderr}`);
      const seen = readFileSync(path.join(job, '.rocm-ebuild', 'reports', 'probe.txt'), 'utf8');
      assert.match(seen, /^renderD136\n\/dev\/kfd\n/, `only the job's render node: ${seen}`);
      assert.match(seen, /^Seccomp:\s+2$/m, 'the seccomp filter is on (0 would be unconfined)');
      assert.match(seen, /^NoNewPrivs:\s+1$/m);
      const capEff = BigInt(`0x${/^CapEff:\s+([0-9a-f]+)$/m.exec(seen)![1]}`);
      assert.ok(capEff & (1n << 23n), 'CAP_SYS_NICE (23), for ROCr\'s NUMA memory calls');
      assert.ok(!(capEff & (1n << 21n)), 'not CAP_SYS_ADMIN');
      for (const gid of new Set([host.gids['/dev/kfd'], host.gids['/dev/dri/renderD136']])) assert.match(seen, new RegExp(`\\b${gid}\\b`), `the group of the device nodes (${gid})`);
      assert.match(seen, /^rocm\n/m, 'the overlay was copied in');
      assert.match(seen, /^base package$/m, "the base job's packages were copied in");
      assert.match(seen, /atoms=.*sci-libs\/rocBLAS.* gfx=gfx1100/);
      const name = `rocm-ebuild-${process.pid}-1-${entry.id}`;
      const clean = spawnSync('bash', ['-e', '-c', cleanup.run!], { env: { ...env, ...envOf(cleanup, entry) }, encoding: 'utf8' });
      assert.equal(clean.status, 0, clean.stderr);
      assert.notEqual(spawnSync('podman', ['container', 'exists', name], { env: podman }).status, 0, 'the cleanup step removed the container');
    } finally {
      await removeDir(host.dev);
      await removeDir(dir);
    }
  });
});
