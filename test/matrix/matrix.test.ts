import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { parse, parseAllDocuments } from 'yaml';
import { loadTargetTable } from '../../src/eclass/table.js';
import { matrixPlan, DEFAULT_BASE_RUNNER, DEFAULT_CI_IMAGE, DEFAULT_LABEL_SCHEME, type Matrix } from '../../src/matrix/plan.js';
import { buildGraph } from '../../src/plan/graph.js';
import type { Manifest } from '../../src/manifest/load.js';
import { loadManifest } from '../../src/stack-check/index.js';
import { releaseModel, resolveStack } from '../../src/model/resolve.js';
import { git, removeDir, root, runCli, shippedManifest, tempDir } from '../helpers/project.js';
import { fakeHost, type FakeHost } from '../gpu/fake-host.js';

const fixtures = path.join(root, 'test', 'fixtures');
const update = process.env.UPDATE_GOLDEN === '1';
const TWO = ['gfx90a', 'gfx1100'];
/** ROCm 6.2's six default-on targets. */
const SIX = ['gfx906', 'gfx908', 'gfx90a', 'gfx942', 'gfx1030', 'gfx1100'];

function schema(file: string): (data: unknown) => boolean {
  const ajv = new Ajv({ allErrors: true, strict: false });
  return ajv.compile(JSON.parse(readFileSync(path.join(fixtures, 'ci-schemas', file), 'utf8')) as object);
}

function golden(name: string, text: string): void {
  const file = path.join(fixtures, 'ci-golden', name);
  if (update || !existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  assert.equal(text, readFileSync(file, 'utf8'), `${name} differs (UPDATE_GOLDEN=1 rewrites it after an intended change)`);
}

const errors = (v: { errors?: unknown }) => JSON.stringify(v.errors, null, 1)?.slice(0, 2000);

describe('matrix and ci: emitted pipelines', function () {
  this.timeout(120_000);
  const out: Record<string, string> = {};

  before(async () => {
    for (const [n, gfx] of [['2', TWO], ['6', SIX]] as const) {
      const gpus = gfx.flatMap((g) => ['--gpu', g]);
      const runs = await Promise.all([
        runCli(['ci', 'github', '--version', '6.2.2', ...gpus]),
        runCli(['ci', 'gitlab', '--version', '6.2.2', ...gpus]),
        runCli(['ci', 'k8s', '--version', '6.2.2', ...gpus, '--repo', 'https://example.org/rocm-overlay.git']),
      ]);
      for (const [i, engine] of ['github', 'gitlab', 'k8s'].entries()) {
        assert.equal(runs[i]!.code, 0, runs[i]!.stderr);
        out[`${engine}-${n}`] = runs[i]!.stdout;
      }
    }
  });

  for (const n of ['2', '6']) {
    it(`GitHub, ${n} targets: golden, and valid against the public workflow schema`, () => {
      golden(`github-${n}gfx.yml`, out[`github-${n}`]!);
      const wf = parse(out[`github-${n}`]!) as { jobs: Record<string, { 'runs-on': unknown; strategy?: { 'fail-fast': boolean; matrix: { include: { gfx: string }[] } }; steps: { uses?: string }[] }> };
      const validate = schema('github-workflow.json');
      assert.ok(validate(wf), errors(validate as { errors?: unknown }));
      assert.deepEqual(Object.keys(wf.jobs), ['plan', 'base', 'test']);
      assert.equal(wf.jobs.test!.strategy!['fail-fast'], false);
      assert.deepEqual(wf.jobs.test!['runs-on'], ['self-hosted', 'linux', 'x64', '${{ matrix.runner }}']);
      assert.deepEqual([...new Set(wf.jobs.test!.strategy!.matrix.include.map((e) => e.gfx))], n === '2' ? TWO : SIX);
      for (const job of Object.values(wf.jobs)) for (const s of job.steps) if (s.uses) assert.match(s.uses, /^actions\/[a-z-]+@[0-9a-f]{40}$/, 'actions are pinned to commits');
    });

    it(`GitLab, ${n} targets: golden, and valid against GitLab's CI schema`, () => {
      golden(`gitlab-${n}gfx.yml`, out[`gitlab-${n}`]!);
      const pipeline = parse(out[`gitlab-${n}`]!) as Record<string, { tags?: string[]; needs?: string[] }>;
      const validate = schema('gitlab-ci.json');
      assert.ok(validate(pipeline), errors(validate as { errors?: unknown }));
      assert.deepEqual(pipeline['test:gfx90a']!.tags, ['rocm-gfx90a']);
      assert.deepEqual(pipeline['test:gfx90a']!.needs, ['base']);
      assert.match(out[`gitlab-${n}`]!, /# +devices = \["\/dev\/kfd", "\/dev\/dri\/renderD128"\]/);
      assert.match(out[`gitlab-${n}`]!, /# +group_add = /);
    });

    it(`Kubernetes, ${n} targets: golden, and every document a valid batch/v1 Job`, () => {
      golden(`k8s-${n}gfx.yaml`, out[`k8s-${n}`]!);
      const docs = parseAllDocuments(out[`k8s-${n}`]!).map((d) => d.toJS() as { apiVersion: string; kind: string; spec: { template: { spec: { containers: { resources: { limits?: Record<string, number> }; securityContext: Record<string, unknown> }[]; affinity?: unknown } } } });
      for (const d of docs) {
        assert.doesNotThrow(() => new Job(d as unknown as ConstructorParameters<typeof Job>[0]).validate());
        assert.deepEqual([d.apiVersion, d.kind], ['batch/v1', 'Job']);
        const c = d.spec.template.spec.containers[0]!;
        assert.equal(c.securityContext.privileged, false);
        assert.ok(!c.resources.limits || c.resources.limits['amd.com/gpu'] === 1);
      }
      // The validator does refuse a broken Job.
      assert.throws(() => new Job({ ...(docs[0] as object), spec: { ...docs[0]!.spec, backoffLimit: 'never' } } as unknown as ConstructorParameters<typeof Job>[0]).validate(), /backoffLimit must be integer/);
      const gfx90a = docs.find((d) => JSON.stringify(d).includes('"rocm-ebuild/job":"gfx90a"'))!;
      assert.match(JSON.stringify(gfx90a.spec.template.spec.affinity), /"key":"amd.com\/gpu.device-id","operator":"In","values":\["7408","740c","740f"\]/);
    });
  }

  it('Kubernetes nodes can be chosen by a label the user names; a file is written whole with --output', async () => {
    const dir = await tempDir();
    try {
      const r = await runCli(['ci', 'k8s', '--version', '6.2.2', '--gpu', 'gfx1100', '--repo', 'https://example.org/o.git', '--node-label', 'rocm.gentoo.org/gfx', '--output', 'jobs/rocm.yaml', '--json'], { cwd: dir });
      assert.equal(r.code, 0, r.stderr);
      const text = readFileSync(path.join(dir, 'jobs', 'rocm.yaml'), 'utf8');
      assert.equal((JSON.parse(r.stdout) as { text: string }).text, text);
      assert.match(text, /nodeSelector:\n +rocm\.gentoo\.org\/gfx: gfx1100/);
    } finally {
      await removeDir(dir);
    }
  });

  it('ci and matrix refuse a gfx outside the target policy and a label scheme without {gfx}', async () => {
    const r = await runCli(['matrix', '--version', '6.2.2', '--gpu', 'gfx1200']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /gfx1200 is not in ROCm 6\.2\.2's target policy/);
    const l = await runCli(['ci', 'github', '--version', '6.2.2', '--label-scheme', 'gpu']);
    assert.equal(l.code, 2);
    assert.match(l.stderr, /must contain \{gfx\}/);
    for (const c of [['matrix'], ['ci', 'github'], ['ci', 'gitlab'], ['ci', 'k8s']]) {
      const h = await runCli([...c, '--help']);
      assert.match(h.stdout, /^EXAMPLES\n/m, c.join(' '));
      assert.match(h.stdout, /--json\s+Format output as json\./);
    }
  });

  it('matrix --json gives version and jobs with id, gfx, atoms and needs', async () => {
    const r = await runCli(['matrix', '--version', '6.2.2', '--gpu', 'gfx90a', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const m = JSON.parse(r.stdout) as Matrix;
    assert.equal(m.version, '6.2.2');
    assert.deepEqual(m.jobs.slice(0, 2).map((j) => [j.id, j.gfx, j.needs]), [['base', null, []], ['gfx90a', 'gfx90a', ['base']]]);
    assert.ok(m.jobs[0]!.atoms.includes('dev-util/hip'));
    assert.ok(m.jobs[1]!.atoms.includes('sci-libs/rocBLAS'));
  });
});

describe('matrix: properties for every target policy the manifest knows', function () {
  this.timeout(60_000);
  let manifest: Manifest;
  before(async () => {
    manifest = await loadManifest(shippedManifest);
  });

  it('each atom once per pipeline (base or its gfx job), after its dependencies; no job with more than one GPU; under 256 jobs', async () => {
    const table = await loadTargetTable(manifest.targetsFile);
    for (const p of table.policies) {
      const model = resolveStack(manifest, releaseModel(manifest, '6.2.2', { default: p.defaultOn, optional: p.optional })!);
      const gfx = [...p.defaultOn, ...p.optional];
      const m = matrixPlan(model, { gfx, tests: 'full', image: DEFAULT_CI_IMAGE, labelScheme: DEFAULT_LABEL_SCHEME, baseRunner: DEFAULT_BASE_RUNNER, timeoutMinutes: 60 });
      assert.ok(m.jobs.length < 256, `${p.series}: ${m.jobs.length} jobs (GitHub's limit is 256)`);
      assert.ok(m.jobs.every((j) => j.gpus <= 1 && (j.gpus === 0) === (j.gfx === null)), p.series);
      const graph = buildGraph(model);
      const needs = new Map<string, string[]>();
      for (const e of graph.edges) needs.set(e.from, [...(needs.get(e.from) ?? []), e.to]);
      const base = m.jobs[0]!;
      for (const g of gfx) {
        const job = m.jobs.find((j) => j.id === g)!;
        const pipeline = [...base.atoms, ...job.atoms];
        assert.equal(new Set(pipeline).size, pipeline.length, `${p.series} ${g}: an atom twice`);
        const left = new Set(job.excluded.map((x) => x.atom));
        assert.deepEqual([...pipeline, ...left].sort(), [...graph.order].sort(), `${p.series} ${g}: every atom of the release is in the base, the gfx job or left out with a reason`);
        pipeline.forEach((a, i) => {
          for (const d of needs.get(a) ?? []) assert.ok(pipeline.indexOf(d) < i && pipeline.includes(d), `${p.series} ${g}: ${a} before its dependency ${d}`);
        });
        for (const s of m.jobs.filter((j) => j.shard && j.gfx === g)) assert.deepEqual(s.needs, [g]);
      }
    }
  });
});

describe('ci github: the emitted test step is a command rocm-ebuild accepts', function () {
  this.timeout(120_000);
  let host: FakeHost;
  let work: string;
  before(async () => {
    host = await fakeHost('workstation');
    work = await tempDir();
    const order = (JSON.parse((await runCli(['graph', '--version', '6.2.2', '--json'])).stdout) as { order: string[] }).order;
    for (const atom of order) {
      mkdirSync(path.join(work, 'overlay', atom), { recursive: true });
      writeFileSync(path.join(work, 'overlay', atom, `${atom.split('/')[1]}-6.2.2.ebuild`), '');
    }
    mkdirSync(path.join(work, 'overlay', 'profiles'));
    writeFileSync(path.join(work, 'overlay', 'profiles', 'repo_name'), 'rocm\n');
    await git(path.join(work, 'overlay'), ['init', '-q']);
  });
  after(async () => {
    await removeDir(work);
    await removeDir(host.dev);
  });

  it('every matrix entry of the test job, and the base job, pass test --dry-run', async () => {
    const r = await runCli(['ci', 'github', '--version', '6.2.2', '--gpu', 'gfx90a', '--gpu', 'gfx1100', '--tool', `${process.execPath} ${path.join(root, 'bin', 'run.js')}`]);
    assert.equal(r.code, 0, r.stderr);
    const wf = parse(r.stdout) as { jobs: { base: { steps: { run?: string; name?: string }[] }; test: { strategy: { matrix: { include: Record<string, string>[] } }; steps: { run?: string; name?: string }[] } } };
    const step = wf.jobs.test.steps.find((s) => s.name === 'rocm-ebuild test')!.run!;
    const baseStep = wf.jobs.base.steps.find((s) => s.run?.includes(' test '))!.run!;
    const lines: { label: string; line: string }[] = wf.jobs.test.strategy.matrix.include.map((entry) => ({
      label: entry.id!,
      line: step.replace(/\$\{\{ matrix\.(\w+) \}\}/g, (_, k: string) => entry[k] ?? ''),
    }));
    lines.push({ label: 'base', line: baseStep });
    for (const { label, line } of lines) {
      const command = `${line.replace(/\$\{\{ github\.workspace \}\}/g, path.join(work, 'overlay'))} --tree ${path.join(work, 'overlay')}/.. --dry-run`;
      // The tree stand-in: a directory whose profiles/repo_name says gentoo.
      mkdirSync(path.join(work, 'profiles'), { recursive: true });
      writeFileSync(path.join(work, 'profiles', 'repo_name'), 'gentoo\n');
      const res = spawnSync('bash', ['-c', command], { cwd: work, env: { ...process.env, ...host.env, NO_COLOR: '1' }, encoding: 'utf8' });
      assert.equal(res.status, 0, `${label}: ${command}\n${res.stderr}`);
      assert.match(res.stdout.trim().split('\n').filter((l) => !l.startsWith('#')).join('\n'), /^\/bin\/sh \S+\/reports\/(gfx90a|gfx1100|no-gpu)\/setup\/run\.sh$/, label);
    }
  });
});
