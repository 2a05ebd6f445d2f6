import { Document, stringify } from 'yaml';
import { shellWord } from '../util/argv.js';
import type { DeviceTable } from '../gpu/devices.js';
import { deviceIdsOf } from '../gpu/devices.js';
import type { Matrix, MatrixJob } from './plan.js';

/** What every engine's jobs need besides the plan. */
export interface EmitOptions {
  /** How a job runs rocm-ebuild, e.g. "npx --yes rocm-ebuild@0.1.0". */
  tool: string;
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

/** `rocm-ebuild test …` for one job, run in place (--engine none) in the job's container. */
export function testCommand(job: MatrixJob, options: EmitOptions, where: { overlay: string; reports: string; pkgdir?: string }, atoms: string = job.atoms.join(' ')): string {
  return [
    options.tool,
    'test',
    atoms,
    '--overlay',
    where.overlay,
    ...job.testArgs.map(shellWord),
    '--engine',
    'none',
    '--pkgdir',
    where.pkgdir ?? CI_PATHS.pkgdir,
    '--distdir',
    CI_PATHS.distdir,
    '--report-dir',
    where.reports,
  ].join(' ');
}

/** What a fresh stage3 needs before rocm-ebuild runs: the tree, and Node.js from Gentoo's binary host. */
const PREPARE_TREE = 'emerge-webrsync --quiet';
const INSTALL_NODE = 'getuto && emerge --getbinpkg --oneshot --quiet net-libs/nodejs';

function header(kind: string, m: Matrix, options: EmitOptions): string {
  return [
    ` ${kind} for ROCm ${m.version} on ${m.gfx.join(' ')} (${m.tests} tests), ${m.jobs.length} jobs.`,
    ` Written by rocm-ebuild; change the options and regenerate instead of editing:`,
    `   ${options.regenerate}`,
  ].join('\n');
}

/**
 * A GitHub Actions workflow: `plan` prints the matrix, `base` builds the
 * target-independent binary packages on a CPU runner and uploads them, `test`
 * runs one job per gfx (and per test shard) on self-hosted runners labelled
 * for the gfx, each in a stage3 container given the GPU devices, downloading
 * the base packages first; reports and JUnit are uploaded as artifacts.
 */
export function githubWorkflow(m: Matrix, options: EmitOptions): string {
  const base = m.jobs.find((j) => j.id === 'base')!;
  const gpuJobs = m.jobs.filter((j) => j.gfx !== null);
  const ws = '${{ github.workspace }}';
  const matrixArgs = ['matrix', '--version', m.version, '--tests', m.tests, ...m.gfx.flatMap((g) => ['--gpu', g])].join(' ');
  // A fresh object each time: YAML would turn a shared one into anchors and aliases.
  const setupNode = () => ({ uses: GITHUB_ACTIONS.setupNode, with: { 'node-version': 22 } });
  const workflow = {
    name: `rocm-ebuild test ROCm ${m.version}`,
    on: { workflow_dispatch: null, pull_request: { paths: ['**/*.ebuild', 'eclass/**', 'profiles/**'] } },
    permissions: { contents: 'read' },
    concurrency: { group: `rocm-ebuild-test-${m.version}-\${{ github.ref }}`, 'cancel-in-progress': true },
    jobs: {
      plan: {
        'runs-on': 'ubuntu-latest',
        'timeout-minutes': 10,
        steps: [setupNode(), { name: 'The job matrix', run: `${options.tool} ${matrixArgs}` }],
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
          { name: 'Build the packages without GPU targets', run: testCommand(base, options, { overlay: ws, reports: 'reports' }) },
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
              atoms: j.atoms.join(' '),
              args: j.testArgs.slice(j.testArgs.indexOf(j.gfx!) + 1).join(' '),
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
          { name: 'The base binary packages', uses: GITHUB_ACTIONS.downloadArtifact, with: { name: 'binpkgs-base', path: CI_PATHS.pkgdir } },
          {
            name: 'rocm-ebuild test',
            run: `${options.tool} test \${{ matrix.atoms }} --overlay "${ws}" --version ${m.version} --tests ${m.tests} --gpu \${{ matrix.gfx }} \${{ matrix.args }} --engine none --pkgdir ${CI_PATHS.pkgdir} --distdir ${CI_PATHS.distdir} --report-dir reports`,
          },
          { name: 'Upload the report and JUnit', if: '${{ always() }}', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'reports-${{ matrix.id }}', path: 'reports', 'if-no-files-found': 'ignore' } },
        ],
      },
    },
  };
  const doc = new Document(workflow, { aliasDuplicateObjects: false });
  doc.commentBefore = header('GitHub Actions workflow', m, options);
  // The pinned commits carry their tag as a comment, as Dependabot and Renovate write them.
  let text = doc.toString({ lineWidth: 0 });
  for (const [pin, tag] of Object.entries(ACTION_TAGS)) text = text.split(`uses: ${pin}\n`).join(`uses: ${pin} # ${tag}\n`);
  return text;
}

/**
 * A GitLab CI pipeline: the same jobs, `tags:` per gfx, the base job's binary
 * packages passed on as artifacts, JUnit reports for merge requests. The
 * runner of each gfx uses the docker executor with the GPU's devices; its
 * configuration is documented in the header.
 */
export function gitlabPipeline(m: Matrix, options: EmitOptions): string {
  const dir = '$CI_PROJECT_DIR';
  const pkgdir = `${dir}/.rocm-ebuild/binpkgs`;
  const jobs: Record<string, unknown> = {};
  const scriptOf = (j: MatrixJob) => [testCommand(j, options, { overlay: `"${dir}"`, reports: `"${dir}/.rocm-ebuild/reports"`, pkgdir: `"${pkgdir}"` })];
  for (const j of m.jobs) {
    jobs[j.id === 'base' ? 'base' : `test:${j.id}`] = {
      extends: '.rocm-ebuild',
      stage: j.gfx === null ? 'base' : j.shard ? 'shards' : 'test',
      ...(j.gfx === null ? { tags: ['rocm-cpu'] } : { tags: [j.runner[j.runner.length - 1]], needs: j.needs.map((n) => (n === 'base' ? 'base' : `test:${n}`)) }),
      timeout: `${j.timeoutMinutes} minutes`,
      script: scriptOf(j),
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
      before_script: [PREPARE_TREE, INSTALL_NODE],
    },
    plan: {
      stage: 'plan',
      image: 'docker.io/library/node:22',
      script: [`${options.tool} ${['matrix', '--version', m.version, '--tests', m.tests, ...m.gfx.flatMap((g) => ['--gpu', g])].join(' ')}`],
    },
    ...jobs,
  };
  const doc = new Document(pipeline, { aliasDuplicateObjects: false });
  const gfxRunners = m.jobs.filter((j) => j.gfx !== null && !j.shard);
  doc.commentBefore = [
    header('GitLab CI pipeline', m, options),
    '',
    ' Runners: one per GPU, with the docker executor, tagged rocm-<gfx> (and one',
    ' CPU runner tagged rocm-cpu for the base job). The GPU runner gets only its',
    " GPU: /dev/kfd and that GPU's render node (see `rocm-ebuild gpu list`), the",
    " host's groups of both, and the seccomp profile ROCm needs. In config.toml:",
    '',
    ...gfxRunners.flatMap((j) => [
      '   [[runners]]',
      `     name = "rocm-${j.gfx}"`,
      '     executor = "docker"',
      '     [runners.docker]',
      `       image = "${j.image}"`,
      '       devices = ["/dev/kfd", "/dev/dri/renderD128"]  # this GPU\'s render node',
      '       group_add = ["video", "render"]                # or the numbers `ls -ln /dev/kfd /dev/dri` shows',
      '       security_opt = ["seccomp=unconfined"]',
      '',
    ]),
    ` Register each with: gitlab-runner register --tag-list rocm-<gfx> --executor docker …`,
  ].join('\n');
  return doc.toString({ lineWidth: 0 });
}

export interface K8sOptions {
  /** The overlay's git URL, cloned by an init container. */
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
 * live on a shared volume; gfx jobs wait for the base job's mark there.
 */
export function k8sJobs(m: Matrix, options: EmitOptions, k8s: K8sOptions): string {
  const release = m.version.replace(/\./g, '');
  const mark = `${CI_PATHS.pkgdir}/.rocm-ebuild-base-${m.version}`;
  const docs = m.jobs.map((j) => {
    const name = `rocm-ebuild-${release}-${j.id}`.toLowerCase();
    const labels = { 'app.kubernetes.io/name': 'rocm-ebuild', 'rocm-ebuild/release': m.version, 'rocm-ebuild/job': j.id };
    const command = [PREPARE_TREE, INSTALL_NODE, `${testCommand(j, options, { overlay: '/work/overlay', reports: `/shared/reports/${m.version}` })}`];
    if (j.gfx === null) command.push(`touch ${mark}`);
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
    const job = {
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
            initContainers: [
              { name: 'overlay', image: 'docker.io/alpine/git:latest', args: ['clone', '--depth=1', k8s.repo, '/work/overlay'], volumeMounts: [{ name: 'work', mountPath: '/work' }] },
              ...(j.gfx === null
                ? []
                : [
                    {
                      name: 'wait-for-base',
                      image: 'docker.io/library/busybox:stable',
                      command: ['sh', '-c', `until [ -e ${mark} ]; do sleep 60; done`],
                      volumeMounts: [{ name: 'shared', mountPath: CI_PATHS.pkgdir, subPath: 'binpkgs' }],
                    },
                  ]),
            ],
            containers: [
              {
                name: 'test',
                image: j.image,
                command: ['sh', '-c', command.join(' && ')],
                env: [{ name: 'ROCM_EBUILD_IN_CONTAINER', value: 'kubernetes' }],
                resources: j.gpus ? { limits: { 'amd.com/gpu': 1 } } : { requests: { cpu: '4', memory: '16Gi' } },
                // AMD's example of a non-privileged GPU pod.
                securityContext: { privileged: false, allowPrivilegeEscalation: false, seccompProfile: { type: 'Unconfined' } },
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
    return job;
  });
  const head = header('Kubernetes Jobs', m, options)
    .split('\n')
    .map((l) => `#${l}`)
    .join('\n');
  const notes = [
    `# The claim ${k8s.claim} (ReadWriteMany) holds binary packages, distfiles and reports;`,
    '# the gfx jobs wait until the base job has marked its binary packages done.',
    '# kubectl apply -f this file; kubectl wait --for=condition=complete job -l rocm-ebuild/release=' + m.version,
  ].join('\n');
  return `${head}\n${notes}\n${docs.map((d) => `---\n${stringify(d, { lineWidth: 0, aliasDuplicateObjects: false })}`).join('')}`;
}
