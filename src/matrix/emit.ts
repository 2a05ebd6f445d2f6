import { shellLine } from '../util/argv.js';
import { isDnsLabel, isDnsSubdomain, isGitUrl, isLabelKey, isLabelValue } from '../util/names.js';
import type { DeviceTable } from '../gpu/devices.js';
import { deviceIdsOf } from '../gpu/devices.js';
import type { Matrix, MatrixJob } from './plan.js';
import { toolSetup, type ToolSetup, type ToolSource } from './tool-source.js';
import { CiValueError, emitYaml } from './yaml-out.js';

/** What every engine's jobs need besides the plan. */
export interface EmitOptions {
  /** Where the jobs get rocm-ebuild: a pinned source, or the command --tool gave. */
  tool: ToolSource;
  /** The command line that regenerates the file (written in its header). */
  regenerate: string;
}

/** Actions pinned to the commit of a release tag, as GitHub's hardening guide asks. */
export const GITHUB_ACTIONS = {
  checkout: 'actions/checkout@11d5960a326750d5838078e36cf38b85af677262', // v4.4.0
  setupNode: 'actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020', // v4.4.0
  uploadArtifact: 'actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02', // v4.6.2
  downloadArtifact: 'actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093', // v4.3.0
} as const;

/** The release tag of each pinned commit, written beside it as Dependabot and Renovate write them. */
const ACTION_TAGS: Record<string, string> = {
  [GITHUB_ACTIONS.checkout]: 'v4.4.0',
  [GITHUB_ACTIONS.setupNode]: 'v4.4.0',
  [GITHUB_ACTIONS.uploadArtifact]: 'v4.6.2',
  [GITHUB_ACTIONS.downloadArtifact]: 'v4.3.0',
};

/** Inside a job's container (the Gentoo stage3): the fixed places the emitted jobs use. */
export const CI_PATHS = { pkgdir: '/var/cache/binpkgs', distdir: '/var/cache/distfiles', tree: '/var/db/repos/gentoo' } as const;

/** The seccomp profile ROCm needs; devices are the GPU's (never --privileged). */
export function dockerOptions(job: MatrixJob): string {
  return [...job.devices.map((d) => `--device ${d}`), ...(job.gpus ? ['--security-opt seccomp=unconfined'] : [])].join(' ');
}

/**
 * `rocm-ebuild test …` for one job, run in place (--engine none) in the job's
 * container, as one shell line: every word quoted by the shell quoting of the
 * argv builder, except `raw` words (a shell variable the job sets, such as
 * "$CI_PROJECT_DIR"), which are ours.
 */
export function testCommand(job: MatrixJob, tool: string, where: { overlay: string; reports: string; pkgdir?: string }): string {
  return [
    tool,
    shellLine(['test', ...job.atoms]),
    '--overlay',
    where.overlay,
    shellLine([...job.testArgs, '--engine', 'none']),
    '--pkgdir',
    where.pkgdir ?? CI_PATHS.pkgdir,
    '--distdir',
    CI_PATHS.distdir,
    '--report-dir',
    where.reports,
  ].join(' ');
}

/** What a fresh stage3 needs before rocm-ebuild runs: the tree, and Node.js (and git, when the tool comes from git) from Gentoo's binary host. */
const PREPARE_TREE = 'emerge-webrsync --quiet';
const fromBinhost = (packages: string[]) => `getuto && emerge --getbinpkg --oneshot --quiet ${packages.join(' ')}`;
const installNode = (git: boolean) => fromBinhost(['net-libs/nodejs', ...(git ? ['dev-vcs/git'] : [])]);

function header(kind: string, m: Matrix, options: EmitOptions, tool: ToolSetup): string[] {
  return [
    `${kind} for ROCm ${m.version} on ${m.gfx.join(' ')} (${m.tests} tests), ${m.jobs.length} jobs.`,
    ...tool.describe,
    'Written by rocm-ebuild; change the options and regenerate instead of editing:',
    `  ${options.regenerate}`,
    'Another rocm-ebuild for the jobs: --tool-git URL --tool-commit COMMIT,',
    '--tool-tarball URL --tool-sha256 SHA256, or --tool COMMAND.',
  ];
}

const GITHUB_EXPRESSIONS = ['${{ github.ref }}', '${{ always() }}', '${{ matrix.runner }}', '${{ matrix.id }}', '${{ matrix.atoms }}', '${{ matrix.gfx }}', '${{ matrix.args }}'];

/**
 * A GitHub Actions workflow: `plan` prints the matrix, `base` builds the
 * target-independent binary packages on a CPU runner and uploads them, `test`
 * runs one job per gfx (and per test shard) on self-hosted runners labelled
 * for the gfx, each in a stage3 container given the GPU devices, downloading
 * the base packages first; reports and JUnit are uploaded as artifacts. The
 * matrix values reach the test step's shell through environment variables,
 * never through expressions in its script.
 */
export function githubWorkflow(m: Matrix, options: EmitOptions): string {
  const base = m.jobs.find((j) => j.id === 'base')!;
  const gpuJobs = m.jobs.filter((j) => j.gfx !== null);
  const tool = toolSetup(options.tool);
  const matrixArgs = shellLine(['matrix', '--version', m.version, '--tests', m.tests, ...m.gfx.flatMap((g) => ['--gpu', g])]);
  const setupNode = () => ({ uses: GITHUB_ACTIONS.setupNode, with: { 'node-version': 22 } });
  // In the stage3 containers git comes from Gentoo's binary host; the plan job's runner has it.
  const installTool = (stage3: boolean) =>
    tool.install.length ? [{ name: 'rocm-ebuild', run: [...(stage3 && tool.needsGit ? [fromBinhost(['dev-vcs/git'])] : []), ...tool.install].join('\n') }] : [];
  const workflow = {
    name: `rocm-ebuild test ROCm ${m.version}`,
    on: { workflow_dispatch: null, pull_request: { paths: ['**/*.ebuild', 'eclass/**', 'profiles/**'] } },
    permissions: { contents: 'read' },
    concurrency: { group: `rocm-ebuild-test-${m.version}-\${{ github.ref }}`, 'cancel-in-progress': true },
    jobs: {
      plan: {
        'runs-on': 'ubuntu-latest',
        'timeout-minutes': 30,
        steps: [setupNode(), ...installTool(false), { name: 'The job matrix', run: `${tool.run} ${matrixArgs}` }],
      },
      base: {
        needs: 'plan',
        'runs-on': base.runner,
        'timeout-minutes': base.timeoutMinutes,
        container: { image: base.image },
        steps: [
          { uses: GITHUB_ACTIONS.checkout },
          setupNode(),
          { name: '::gentoo', run: PREPARE_TREE },
          ...installTool(true),
          { name: 'Build the packages without GPU targets', run: testCommand(base, tool.run, { overlay: '"$GITHUB_WORKSPACE"', reports: 'reports' }) },
          { name: 'Upload the binary packages', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'binpkgs-base', path: CI_PATHS.pkgdir, 'retention-days': 7 } },
          { name: 'Upload the report', if: '${{ always() }}', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'reports-base', path: 'reports', 'if-no-files-found': 'ignore' } },
        ],
      },
      test: {
        needs: 'base',
        strategy: {
          'fail-fast': false,
          matrix: {
            include: gpuJobs.map((j) => ({
              id: j.id,
              gfx: j.gfx,
              runner: j.runner[j.runner.length - 1],
              atoms: shellLine(j.atoms),
              args: shellLine(j.testArgs.slice(j.testArgs.indexOf(j.gfx!) + 1)),
            })),
          },
        },
        'runs-on': ['self-hosted', 'linux', 'x64', '${{ matrix.runner }}'],
        'timeout-minutes': gpuJobs[0]?.timeoutMinutes ?? base.timeoutMinutes,
        container: { image: base.image, options: dockerOptions(gpuJobs[0] ?? base) },
        steps: [
          { uses: GITHUB_ACTIONS.checkout },
          setupNode(),
          { name: '::gentoo', run: PREPARE_TREE },
          ...installTool(true),
          { name: 'The base binary packages', uses: GITHUB_ACTIONS.downloadArtifact, with: { name: 'binpkgs-base', path: CI_PATHS.pkgdir } },
          {
            name: 'rocm-ebuild test',
            // $ATOMS and $ARGS are split into words on purpose: atoms and flags, each a plain word.
            env: { ATOMS: '${{ matrix.atoms }}', GFX: '${{ matrix.gfx }}', ARGS: '${{ matrix.args }}' },
            run: `${tool.run} test $ATOMS --overlay "$GITHUB_WORKSPACE" ${shellLine(['--version', m.version, '--tests', m.tests])} --gpu "$GFX" $ARGS --engine none --pkgdir ${CI_PATHS.pkgdir} --distdir ${CI_PATHS.distdir} --report-dir reports`,
          },
          { name: 'Upload the report and JUnit', if: '${{ always() }}', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'reports-${{ matrix.id }}', path: 'reports', 'if-no-files-found': 'ignore' } },
        ],
      },
    },
  };
  return emitYaml([{ value: workflow, comment: header('GitHub Actions workflow', m, options, tool), scalarComments: ACTION_TAGS }], { expressions: GITHUB_EXPRESSIONS });
}

/**
 * A GitLab CI pipeline: the same jobs, `tags:` per gfx, the base job's binary
 * packages passed on as artifacts, JUnit reports for merge requests. The
 * runner of each gfx uses the docker executor with the GPU's devices; its
 * configuration is documented in the header. Every job runs in the stage3
 * image the user named: no other image is pulled.
 */
export function gitlabPipeline(m: Matrix, options: EmitOptions): string {
  const dir = '"$CI_PROJECT_DIR"';
  const pkgdir = '"$CI_PROJECT_DIR/.rocm-ebuild/binpkgs"';
  const tool = toolSetup(options.tool);
  const jobs: Record<string, unknown> = {};
  for (const j of m.jobs) {
    jobs[j.id === 'base' ? 'base' : `test:${j.id}`] = {
      extends: '.rocm-ebuild',
      stage: j.gfx === null ? 'base' : j.shard ? 'shards' : 'test',
      ...(j.gfx === null ? { tags: ['rocm-cpu'] } : { tags: [j.runner[j.runner.length - 1]], needs: j.needs.map((n) => (n === 'base' ? 'base' : `test:${n}`)) }),
      timeout: `${j.timeoutMinutes} minutes`,
      script: [testCommand(j, tool.run, { overlay: dir, reports: '"$CI_PROJECT_DIR/.rocm-ebuild/reports"', pkgdir })],
      artifacts: {
        when: 'always',
        expire_in: '1 week',
        paths: j.gfx === null ? ['.rocm-ebuild/binpkgs/', '.rocm-ebuild/reports/'] : ['.rocm-ebuild/reports/'],
        reports: { junit: '.rocm-ebuild/reports/*/junit.xml' },
      },
    };
  }
  const pipeline = {
    stages: ['plan', 'base', 'test', ...(m.jobs.some((j) => j.shard) ? ['shards'] : [])],
    variables: { ROCM_EBUILD_IN_CONTAINER: 'gitlab' },
    '.rocm-ebuild': {
      image: m.jobs[0]!.image,
      before_script: [PREPARE_TREE, installNode(tool.needsGit), ...tool.install],
    },
    plan: {
      stage: 'plan',
      image: m.jobs[0]!.image,
      before_script: [installNode(tool.needsGit), ...tool.install],
      script: [`${tool.run} ${shellLine(['matrix', '--version', m.version, '--tests', m.tests, ...m.gfx.flatMap((g) => ['--gpu', g])])}`],
    },
    ...jobs,
  };
  const gfxRunners = m.jobs.filter((j) => j.gfx !== null && !j.shard);
  const comment = [
    ...header('GitLab CI pipeline', m, options, tool),
    '',
    'Runners: one per GPU, with the docker executor, tagged rocm-<gfx> (and one',
    'CPU runner tagged rocm-cpu for the base job). The GPU runner gets only its',
    "GPU: /dev/kfd and that GPU's render node (see `rocm-ebuild gpu list`), the",
    "host's groups of both, and the seccomp profile ROCm needs. In config.toml:",
    '',
    ...gfxRunners.flatMap((j) => [
      '  [[runners]]',
      `    name = "${j.runner[j.runner.length - 1]}"`,
      '    executor = "docker"',
      '    [runners.docker]',
      `      image = "${j.image}"`,
      '      devices = ["/dev/kfd", "/dev/dri/renderD128"]  # this GPU\'s render node',
      '      group_add = ["video", "render"]                # or the numbers `ls -ln /dev/kfd /dev/dri` shows',
      '      security_opt = ["seccomp=unconfined"]',
      '',
    ]),
    'Register each with: gitlab-runner register --tag-list rocm-<gfx> --executor docker …',
  ];
  return emitYaml([{ value: pipeline, comment }]);
}

export interface K8sOptions {
  /** The overlay's git URL, cloned by each pod. */
  repo: string;
  /** Select nodes by this label (value: the gfx) instead of amd.com/gpu.device-id. */
  nodeLabel?: string;
  devices: DeviceTable;
  /** ReadWriteMany claim holding binary packages, distfiles and reports. */
  claim: string;
  namespace?: string;
}

/**
 * Kubernetes batch/v1 Jobs: the base and one per gfx (and shard). Each gfx
 * pod asks for one `amd.com/gpu` (AMD's device plugin gives it /dev/kfd and
 * one render node), runs non-privileged with the seccomp profile AMD
 * documents, on a node selected by the device ids of its gfx (AMD's node
 * labeller has no gfx label) or by a label the user names. Binary packages
 * live on a shared volume; gfx jobs wait for the base job's mark there. Every
 * container runs the stage3 image the user named: the overlay is cloned and
 * the wait is done in it, so no other image (a floating alpine/git or
 * busybox tag) runs on the GPU nodes.
 */
export function k8sJobs(m: Matrix, options: EmitOptions, k8s: K8sOptions): string {
  const release = m.version.replace(/\./g, '');
  const mark = `${CI_PATHS.pkgdir}/.rocm-ebuild-base-${m.version}`;
  const tool = toolSetup(options.tool);
  const docs = m.jobs.map((j) => {
    const name = `rocm-ebuild-${release}-${j.id}`.toLowerCase();
    // Job names become the pods' job-name label: a DNS subdomain that is also a label value.
    if (!isDnsSubdomain(name) || !isLabelValue(name)) throw new CiValueError(`the Job of ${j.id}`, name, 'not a valid Kubernetes Job name (63 characters at most, lower-case letters, digits and -)');
    const labels = { 'app.kubernetes.io/name': 'rocm-ebuild', 'rocm-ebuild/release': m.version, 'rocm-ebuild/job': j.id };
    for (const [k, v] of Object.entries(labels)) if (!isLabelKey(k) || !isLabelValue(v)) throw new CiValueError(`label ${k}`, v, 'not a valid Kubernetes label value');
    const script = [
      PREPARE_TREE,
      installNode(true),
      shellLine(['git', 'clone', '-q', '--depth=1', '--', k8s.repo, '/work/overlay']),
      ...tool.install,
      testCommand(j, tool.run, { overlay: '/work/overlay', reports: `/shared/reports/${m.version}` }),
      ...(j.gfx === null ? [shellLine(['touch', '--', mark])] : []),
    ];
    const ids = j.gfx ? deviceIdsOf(k8s.devices, j.gfx) : [];
    let placement: Record<string, unknown> = {};
    if (j.gfx && k8s.nodeLabel) placement = { nodeSelector: { [k8s.nodeLabel]: j.gfx } };
    else if (j.gfx && ids.length) {
      placement = {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'amd.com/gpu.device-id', operator: 'In', values: ids }] }],
            },
          },
        },
      };
    }
    const securityContext = { privileged: false, allowPrivilegeEscalation: false, seccompProfile: { type: 'Unconfined' } };
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, ...(k8s.namespace ? { namespace: k8s.namespace } : {}), labels },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: j.timeoutMinutes * 60,
        ttlSecondsAfterFinished: 7 * 24 * 3600,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            ...placement,
            ...(j.gfx === null
              ? {}
              : {
                  initContainers: [
                    {
                      name: 'wait-for-base',
                      image: j.image,
                      command: ['sh', '-c', `until [ -e ${mark} ]; do sleep 60; done`],
                      securityContext: { privileged: false, allowPrivilegeEscalation: false },
                      volumeMounts: [{ name: 'shared', mountPath: CI_PATHS.pkgdir, subPath: 'binpkgs' }],
                    },
                  ],
                }),
            containers: [
              {
                name: 'test',
                image: j.image,
                workingDir: '/work',
                command: ['sh', '-c', script.join(' && ')],
                env: [{ name: 'ROCM_EBUILD_IN_CONTAINER', value: 'kubernetes' }],
                resources: j.gpus ? { limits: { 'amd.com/gpu': 1 } } : { requests: { cpu: '4', memory: '16Gi' } },
                // AMD's example of a non-privileged GPU pod.
                securityContext,
                volumeMounts: [
                  { name: 'work', mountPath: '/work' },
                  { name: 'shared', mountPath: CI_PATHS.pkgdir, subPath: 'binpkgs' },
                  { name: 'shared', mountPath: CI_PATHS.distdir, subPath: 'distfiles' },
                  { name: 'shared', mountPath: '/shared/reports', subPath: 'reports' },
                ],
              },
            ],
            volumes: [
              { name: 'work', emptyDir: {} },
              { name: 'shared', persistentVolumeClaim: { claimName: k8s.claim } },
            ],
          },
        },
      },
    };
  });
  const comment = [
    ...header('Kubernetes Jobs', m, options, tool),
    `The claim ${k8s.claim} (ReadWriteMany) holds binary packages, distfiles and reports;`,
    'the gfx jobs wait until the base job has marked its binary packages done.',
    `kubectl apply -f this file; kubectl wait --for=condition=complete job -l rocm-ebuild/release=${m.version}`,
  ];
  return emitYaml(
    docs.map((value, i) => ({ value, ...(i === 0 ? { comment } : {}) })),
    { documentMarkers: true },
  );
}

/** The names Kubernetes constrains, checked before anything is generated (exit 2 naming the flag). */
export function checkK8sOptions(k8s: Omit<K8sOptions, 'devices'>): void {
  const bad = (flag: string, value: string, what: string) => new CiValueError(flag, value, `not ${what}`);
  if (!isGitUrl(k8s.repo)) throw bad('--repo', k8s.repo, 'a git URL the pods can clone (https://, ssh://, git:// or user@host:path)');
  if (!isDnsSubdomain(k8s.claim)) throw bad('--claim', k8s.claim, 'a PersistentVolumeClaim name (lower-case letters, digits, - and ., at most 253)');
  if (k8s.namespace !== undefined && !isDnsLabel(k8s.namespace)) throw bad('--namespace', k8s.namespace, 'a namespace name (lower-case letters, digits and -, at most 63)');
  if (k8s.nodeLabel !== undefined && !isLabelKey(k8s.nodeLabel)) throw bad('--node-label', k8s.nodeLabel, 'a label key such as rocm.gentoo.org/gfx');
}
