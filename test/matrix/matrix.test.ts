import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
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
/** The rocm-ebuild the generated jobs install: a git repository at a full commit id. */
const PIN = ['--tool-git', 'https://github.com/example/rocm-ebuild.git', '--tool-commit', '0123456789abcdef0123456789abcdef01234567'];
/** The overlay commit the Kubernetes pods fetch. */
const OVERLAY_PIN = ['--repo', 'https://example.org/rocm-overlay.git', '--repo-commit', '89abcdef0123456789abcdef0123456789abcdef'];
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
        runCli(['ci', 'github', '--version', '6.2.2', ...gpus, ...PIN]),
        runCli(['ci', 'gitlab', '--version', '6.2.2', ...gpus, ...PIN]),
        runCli(['ci', 'k8s', '--version', '6.2.2', ...gpus, ...OVERLAY_PIN, ...PIN]),
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
      assert.match(out[`gitlab-${n}`]!, /# +devices = \["\/dev\/kfd", "\/dev\/dri\/renderD<N>"\]/);
      assert.match(out[`gitlab-${n}`]!, /# +cap_add = \["SYS_NICE"\]/);
      assert.doesNotMatch(out[`gitlab-${n}`]!, /seccomp=unconfined/);
      assert.match(out[`gitlab-${n}`]!, /# +group_add = /);
    });

    it(`Kubernetes, ${n} targets: golden, and every document a valid batch/v1 Job`, () => {
      golden(`k8s-${n}gfx.yaml`, out[`k8s-${n}`]!);
      const all = parseAllDocuments(out[`k8s-${n}`]!).map((d) => d.toJS() as { apiVersion: string; kind: string; spec: { template: { spec: { containers: { resources: { limits?: Record<string, number> }; securityContext: Record<string, unknown> }[]; affinity?: unknown } } } });
      assert.deepEqual([all[0]!.apiVersion, all[0]!.kind], ['v1', 'PersistentVolumeClaim'], 'the claim the Jobs use is created first');
      assert.doesNotThrow(() => new PersistentVolumeClaim(all[0] as unknown as ConstructorParameters<typeof PersistentVolumeClaim>[0]).validate());
      const docs = all.slice(1);
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
      const r = await runCli(['ci', 'k8s', '--version', '6.2.2', '--gpu', 'gfx1100', ...OVERLAY_PIN, '--node-label', 'rocm.gentoo.org/gfx', '--output', 'jobs/rocm.yaml', '--json', ...PIN], { cwd: dir });
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
    const l = await runCli(['ci', 'github', '--version', '6.2.2', '--label-scheme', 'gpu', ...PIN]);
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
    type Step = { run?: string; name?: string; env?: Record<string, string> };
    const wf = parse(r.stdout) as { jobs: { base: { steps: Step[] }; test: { strategy: { matrix: { include: Record<string, string>[] } }; steps: Step[] } } };
    // The container's script is the step's ROCM_EBUILD_JOB; its last line runs rocm-ebuild (the lines before install it in a stage3).
    const lastLine = (s: Step) => s.env!.ROCM_EBUILD_JOB!.split('\n').at(-1)!;
    const step = wf.jobs.test.steps.find((s) => s.env?.ROCM_EBUILD_JOB !== undefined)!;
    const baseStep = wf.jobs.base.steps.find((s) => s.env?.ROCM_EBUILD_JOB !== undefined)!;
    // GitHub puts the matrix values into the step's environment; the shell splits $ATOMS and $ARGS.
    const lines: { label: string; line: string; env: Record<string, string> }[] = wf.jobs.test.strategy.matrix.include.map((entry) => ({
      label: entry.id!,
      line: lastLine(step),
      env: Object.fromEntries(Object.entries(step.env!).map(([k, v]) => [k, v.replace(/\$\{\{ matrix\.(\w+) \}\}/, (_, m: string) => entry[m] ?? '')])),
    }));
    lines.push({ label: 'base', line: lastLine(baseStep), env: {} });
    for (const { label, line, env } of lines) {
      assert.doesNotMatch(line, /\$\{\{/, 'an expression in a script');
      assert.match(line, / --overlay \/overlay .* --pkgdir \/rocm-ebuild\/binpkgs .* --report-dir \/rocm-ebuild\/reports$/, label);
      // The container's /overlay and /rocm-ebuild are this test's directories.
      const here = line.replace(' --overlay /overlay ', ` --overlay ${path.join(work, 'overlay')} `).replace(/\/rocm-ebuild\//g, `${work}/`);
      const command = `${here} --tree ${path.join(work, 'overlay')}/.. --dry-run`;
      const res = spawnSync('bash', ['-c', command], { cwd: work, env: { ...process.env, ...host.env, ...env, NO_COLOR: '1' }, encoding: 'utf8' });
      assert.equal(res.status, 0, `${label}: ${command}\n${res.stderr}`);
      assert.match(res.stdout.trim().split('\n').filter((l) => !l.startsWith('#')).join('\n'), /^\/bin\/sh \S+\/reports\/(gfx90a|gfx1100|no-gpu)\/setup\/run\.sh$/, label);
    }
  });
});

describe('ci: values from flags and the manifest never shape the generated definitions', function () {
  this.timeout(180_000);
  const GFX = ['--version', '6.2.2', '--gpu', 'gfx90a'];
  const REPO = OVERLAY_PIN;
  const engines: [string, string[]][] = [
    ['github', []],
    ['gitlab', []],
    ['k8s', REPO],
  ];

  it('refuses to generate without a pinned rocm-ebuild, and names the ways to pin one (exit 2)', async () => {
    for (const [engine, extra] of engines) {
      const r = await runCli(['ci', engine, ...GFX, ...extra]);
      assert.equal(r.code, 2, `${engine}: ${r.stdout}`);
      assert.match(r.stderr, /the jobs need rocm-ebuild, and no source for it was given; pin the rocm-ebuild the jobs run: --tool-git URL --tool-commit COMMIT/);
      assert.equal(r.stdout, '');
    }
    const refusals: [string[], RegExp][] = [
      [['--tool-git', 'https://github.com/example/rocm-ebuild.git'], /--tool-commit is missing/],
      [['--tool-git', 'https://github.com/example/rocm-ebuild.git', '--tool-commit', 'main'], /--tool-commit "main": the full commit id/],
      [['--tool-git', 'https://github.com/example/rocm-ebuild.git', '--tool-commit', '0123456'], /the full commit id/],
      [['--tool-git', '--upload-pack=touch /tmp/x', '--tool-commit', PIN[3]!], /is not a git URL/],
      [['--tool-git', 'ext::sh -c touch% /tmp/x', '--tool-commit', PIN[3]!], /is not a git URL/],
      [['--tool-tarball', 'https://example.org/rocm-ebuild.tar.gz'], /--tool-sha256 is missing/],
      [['--tool-tarball', 'http://example.org/rocm-ebuild.tar.gz', '--tool-sha256', 'a'.repeat(64)], /is not an https URL/],
      [['--tool-commit', PIN[3]!], /--tool-commit needs --tool-git/],
      [['--tool', 'rocm-ebuild', ...PIN], /name two sources of rocm-ebuild/],
      [['--tool', 'rocm-ebuild ${{ github.token }}'], /without control characters or \$\{\{ \}\} expressions/],
      [['--tool', 'rocm-ebuild\u2028evil: true'], /without control characters/],
    ];
    for (const [flags, message] of refusals) {
      const r = await runCli(['ci', 'github', ...GFX, ...flags]);
      assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, message, flags.join(' '));
    }
  });

  it('the header says what the jobs run and how to change it; a pinned tarball is checked before it is unpacked', async () => {
    const sha = 'ab'.repeat(32);
    const r = await runCli(['ci', 'gitlab', ...GFX, '--tool-tarball', 'https://example.org/rocm-ebuild-0123456.tar.gz', '--tool-sha256', sha]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^# Jobs run rocm-ebuild from https:\/\/example\.org\/rocm-ebuild-0123456\.tar\.gz \(SHA-256 (ab){32}\),$/m);
    assert.match(r.stdout, /^# Another rocm-ebuild for the jobs: --tool-git URL --tool-commit COMMIT,$/m);
    const pipeline = parse(r.stdout) as { '.rocm-ebuild': { before_script: string[] } };
    const steps = pipeline['.rocm-ebuild'].before_script;
    const fetched = steps.findIndex((s) => s.startsWith('wget '));
    const checked = steps.findIndex((s) => s.includes('sha256sum -c -'));
    const unpacked = steps.findIndex((s) => s.startsWith('tar '));
    assert.ok(fetched >= 0 && fetched < checked && checked < unpacked, JSON.stringify(steps));
    assert.equal(steps[fetched], 'wget -q -O .rocm-ebuild-tool.tar.gz -- https://example.org/rocm-ebuild-0123456.tar.gz');
    assert.doesNotMatch(r.stdout, /npx|rocm-ebuild@/);
    const git = await runCli(['ci', 'k8s', ...GFX, ...REPO, ...PIN]);
    assert.match(git.stdout, /^# Jobs run rocm-ebuild from https:\/\/github\.com\/example\/rocm-ebuild\.git at commit 0123456789abcdef0123456789abcdef01234567,$/m);
    assert.match(git.stdout, /git -C \.rocm-ebuild-tool fetch -q --depth=1 -- https:\/\/github\.com\/example\/rocm-ebuild\.git 0123456789abcdef0123456789abcdef01234567 && git -C \.rocm-ebuild-tool checkout -q --detach 0123456789abcdef0123456789abcdef01234567 -- && npm --prefix \.rocm-ebuild-tool ci/);
  });

  it('hostile flag values are refused before anything is written (exit 2), with no line of YAML on stdout', async () => {
    const pod = '\n---\napiVersion: v1\nkind: Pod\nmetadata: { name: x }\nspec: { hostPID: true, containers: [{ name: x, image: busybox, securityContext: { privileged: true } }] }\n';
    const cases: [string, string[]][] = [
      ['k8s', ['--claim', `rocm-ebuild${pod}`]],
      ['k8s', ['--claim', 'rocm-ebuild\u2028x']],
      ['k8s', ['--namespace', `ci${pod}`]],
      ['k8s', ['--node-label', 'rocm.gentoo.org/gfx\u0085x: y']],
      ['k8s', ['--repo', '--upload-pack=touch /tmp/pwned']],
      ['k8s', ['--repo', '-ccore.sshCommand=touch /tmp/pwned']],
      ['k8s', ['--repo', 'https://example.org/o.git; touch /tmp/pwned']],
      ['k8s', ['--repo', 'ext::sh -c touch% /tmp/pwned']],
      ['k8s', ['--repo-commit', 'main']],
      ['k8s', ['--repo-commit', '89abcdef; touch /tmp/pwned']],
      ['k8s', ['--claim-size', '200Gi\n---\nkind: Pod']],
      ['k8s', ['--claim-size', 'lots']],
      ['github', ['--image', '${{ secrets.GITHUB_TOKEN }}']],
      ['github', ['--image', 'docker.io/gentoo/stage3:amd64-openrc\u2028  evil: true']],
      ['github', ['--image', '--privileged']],
      ['github', ['--label-scheme', 'rocm-{gfx}\u0085']],
      ['github', ['--label-scheme', '${{ github.actor }}-{gfx}']],
      ['github', ['--base-runner', 'self-hosted,linux\u2028x']],
      ['gitlab', ['--image', 'docker.io/gentoo/stage3:amd64-openrc\u0085evil: true']],
      ['gitlab', ['--tool', 'rocm-ebuild\u0085job: {script: [id]}']],
      ['gitlab', ['--base-runner', 'rocm cpu']],
    ];
    for (const [engine, flags] of cases) {
      const extra = engine === 'k8s' ? (flags.includes('--repo') ? OVERLAY_PIN.slice(2) : flags.includes('--repo-commit') ? OVERLAY_PIN.slice(0, 2) : REPO) : [];
      const r = await runCli(['ci', engine, ...GFX, ...extra, ...PIN.filter((_, i) => !(flags.includes('--tool') && i < 4)), ...flags]);
      assert.equal(r.code, 2, `${engine} ${JSON.stringify(flags)}: ${r.stdout.slice(0, 300)}`);
      assert.equal(r.stdout, '', `${engine} ${JSON.stringify(flags)}`);
      assert.doesNotMatch(r.stderr, /[\u0085\u2028]|\n---\n/, 'the value reached the terminal as it was');
    }
  });

  it('a comment cannot be left: the header holds every flag, escaped, and parses as one document to YAML 1.1 and 1.2', async () => {
    // A flag whose value is not checked (a manifest path) still reaches the header's regenerate line.
    const odd = path.join(await tempDir(), 'man\u2028ifest\u0085dir');
    mkdirSync(odd, { recursive: true });
    for (const f of ['stack.yaml', 'targets.yaml', 'devices.yaml', 'external', 'components', 'patches']) execFileSync('cp', ['-r', path.join(root, 'manifest', f), odd]);
    try {
      for (const [engine, extra] of engines) {
        const r = await runCli(['ci', engine, ...GFX, ...extra, ...PIN, '--manifest', odd]);
        assert.equal(r.code, 0, `${engine}: ${r.stderr}`);
        assert.doesNotMatch(r.stdout, /[\u0085\u2028\u2029]/, engine);
        assert.match(r.stdout, /^# {3}rocm-ebuild ci \S+ .*man\\u2028ifest\\x85dir/m);
        for (const version of ['1.1', '1.2'] as const) {
          const docs = parseAllDocuments(r.stdout, { version });
          assert.ok(docs.every((d) => d.errors.length === 0), `${engine} YAML ${version}: ${docs.flatMap((d) => d.errors).join('; ')}`);
          assert.equal(docs.length, engine === 'k8s' ? 7 : 1, `${engine} YAML ${version}`);
        }
      }
    } finally {
      await removeDir(path.dirname(odd));
    }
  });

  it('what the jobs run: only the stage3 image, git after --, expressions only where the emitter puts them', async () => {
    const k8s = parseAllDocuments((await runCli(['ci', 'k8s', ...GFX, ...REPO, ...PIN])).stdout).map((d) => d.toJS() as { spec: { template: { spec: { initContainers?: { image: string; command: string[] }[]; containers: { image: string; command: string[] }[] } } } });
    for (const d of k8s.slice(1)) {
      const containers = [...(d.spec.template.spec.initContainers ?? []), ...d.spec.template.spec.containers];
      assert.deepEqual([...new Set(containers.map((c) => c.image))], ['docker.io/gentoo/stage3:amd64-openrc'], 'a helper image runs on the GPU nodes');
      const script = d.spec.template.spec.containers[0]!.command[2]!;
      assert.match(script, / && git -C \/work\/overlay fetch -q --depth=1 -- https:\/\/example\.org\/rocm-overlay\.git 89abcdef0123456789abcdef0123456789abcdef && git -C \/work\/overlay checkout -q --detach 89abcdef0123456789abcdef0123456789abcdef -- && /);
      assert.doesNotMatch(script, /git clone/, 'the overlay is fetched at its pinned commit, never cloned at whatever a branch says');
    }
    const gl = parse((await runCli(['ci', 'gitlab', ...GFX, ...PIN])).stdout) as Record<string, { image?: string }>;
    assert.deepEqual([...new Set(Object.values(gl).map((j) => j?.image).filter(Boolean))], ['docker.io/gentoo/stage3:amd64-openrc'], 'a job runs another image');
    const gh = (await runCli(['ci', 'github', ...GFX, ...PIN])).stdout;
    const places: string[] = [];
    const walk = (v: unknown, at: string): void => {
      if (typeof v === 'string' && v.includes('${{')) places.push(at);
      else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}[${i}]`));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${at}.${k}`);
    };
    walk(parse(gh), '$');
    for (const p of places) assert.match(p, /^\$\.(concurrency\.group|jobs\.test\.runs-on\[3\]|jobs\.\w+\.steps\[\d+\]\.(if|env\.(JOB_ID|ATOMS|GFX|GFX_VERSION|ARGS)|with\.name))$/, `an expression at ${p}`);
    assert.ok(!places.some((p) => p.endsWith('.run')), 'an expression inside a script');
  });

  it('a device table with a hostile id is a located manifest error (exit 2), not an internal one', async () => {
    const dir = await tempDir();
    try {
      execFileSync('cp', ['-r', `${path.join(root, 'manifest')}/.`, dir]);
      const devices = readFileSync(path.join(dir, 'devices.yaml'), 'utf8');
      for (const id of ['"740f\\n"', '"${{ github.token }}"', "'740f\\u2028'"]) {
        writeFileSync(path.join(dir, 'devices.yaml'), devices.replace(/id: "?740f"?/, `id: ${id}`));
        const r = await runCli(['ci', 'k8s', ...GFX, ...REPO, ...PIN, '--manifest', dir]);
        assert.equal(r.code, 2, `${id}: ${r.stderr}`);
        assert.match(r.stderr, /devices\.yaml:\d+:\d+: \$\.devices\[\d+\]\.id: /);
        assert.doesNotMatch(r.stderr, /DeviceTableError|internal error/);
      }
    } finally {
      await removeDir(dir);
    }
  });
});
