import { shellLine } from '../util/argv.js';
import { gfxTargetVersion } from '../gpu/gfx.js';
import { CI_PATHS, header, installNode, matrixCommand, PREPARE_TREE, testCommand, type EmitOptions } from './emit.js';
import { hostContainerScript, REMOVE_HOST_CONTAINER, RENDER_NODE_VARIABLE, renderNodeScript, type HostContainer } from './gpu-access.js';
import type { Matrix } from './plan.js';
import { toolSetup, type ToolSetup } from './tool-source.js';
import { emitYaml } from './yaml-out.js';

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

/**
 * The condition of every job that runs on a self-hosted runner: a manual run
 * (workflow_dispatch, which needs write access), or a pull request whose head
 * is a branch of this repository. A fork's pull request is skipped: its code
 * never reaches the GPU machines. (A deleted head repository is null: skipped.)
 */
export const SAME_REPOSITORY_ONLY = "github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository";

const GITHUB_EXPRESSIONS = [
  '${{ github.ref }}',
  '${{ always() }}',
  '${{ matrix.runner }}',
  '${{ matrix.id }}',
  '${{ matrix.atoms }}',
  '${{ matrix.gfx }}',
  '${{ matrix.gfx_version }}',
  '${{ matrix.args }}',
];

/** Where a job keeps what it copies into and out of its container, beside the checkout (in the job's directory). */
const OUT = '.rocm-ebuild';
/** The checkout of the overlay, in the job's directory. */
const OVERLAY = 'overlay';
/**
 * Inside the container: paths the stage3 does not have, so that `docker cp`
 * of a directory creates them (an existing one would receive the directory
 * inside it, as docker and podman both copy).
 */
const IN = { overlay: '/overlay', out: '/rocm-ebuild', pkgdir: '/rocm-ebuild/binpkgs', reports: '/rocm-ebuild/reports' } as const;

function trusts(): string[] {
  return [
    'What it trusts: the branches of this repository and whoever can push to them',
    'or run the workflow (write access). The jobs on self-hosted runners (base,',
    'test) run for workflow_dispatch and for pull requests whose head is a branch',
    "of this repository; a fork's pull request never reaches them (they are",
    'skipped). To test one, read it, push its head to a branch here and run the',
    'workflow on that branch. GITHUB_TOKEN: contents: read for the jobs that check',
    'out (no credentials kept), nothing for the others.',
    "Each job starts its own stage3 container on the runner's host, with no Docker",
    'socket and no host directory inside (files go in and out with docker cp). A GPU',
    "job gets /dev/kfd and one render node, chosen on the host: the runner's",
    `${RENDER_NODE_VARIABLE} (set it in the runner's .env on a host with several GPUs`,
    "of one gfx), else the host's one GPU of the job's gfx; the groups of both; the",
    "engine's default seccomp profile with CAP_SYS_NICE (ROCr's NUMA memory calls);",
    'no-new-privileges; never --privileged.',
  ];
}

/** The lines the stage3 container runs: the tree, Node.js and git, the pinned rocm-ebuild, then the job. */
function containerScript(tool: ToolSetup, job: string): string {
  return ['set -e', 'mkdir -p /work', 'cd /work', PREPARE_TREE, installNode(tool.needsGit), ...tool.install, job].join('\n');
}

/**
 * A GitHub Actions workflow: `plan` prints the matrix on a GitHub-hosted
 * runner, `base` builds the target-independent binary packages on a CPU
 * runner and uploads them, `test` runs one job per gfx (and per test shard)
 * on self-hosted runners labelled for the gfx, downloading the base packages
 * first; reports and JUnit are uploaded as artifacts. base and test run only
 * for this repository's own branches (SAME_REPOSITORY_ONLY), each in a stage3
 * container it starts itself (gpu-access.ts). The matrix values reach the
 * shell through environment variables, never through expressions in a
 * script.
 */
export function githubWorkflow(m: Matrix, options: EmitOptions): string {
  const base = m.jobs.find((j) => j.id === 'base')!;
  const gpuJobs = m.jobs.filter((j) => j.gfx !== null);
  const tool = toolSetup(options.tool);
  const checkout = { uses: GITHUB_ACTIONS.checkout, with: { path: OVERLAY, 'persist-credentials': false } };
  const clean = { name: 'An empty output directory', run: shellLine(['rm', '-rf', '--', OUT]) };
  const removeContainer = (id: string) => ({ name: 'Remove the container', if: '${{ always() }}', env: { JOB_ID: id }, run: REMOVE_HOST_CONTAINER });
  const inContainer = (c: Omit<HostContainer, 'image' | 'scriptVariable'>): HostContainer => ({ ...c, image: base.image, scriptVariable: 'ROCM_EBUILD_JOB' });
  const testLine = `${tool.run} test $ATOMS --overlay ${IN.overlay} ${shellLine(['--version', m.version, '--tests', m.tests])} --gpu "$GFX" $ARGS --engine none --pkgdir ${IN.pkgdir} --distdir ${CI_PATHS.distdir} --report-dir ${IN.reports}`;
  const workflow = {
    name: `rocm-ebuild test ROCm ${m.version}`,
    on: { workflow_dispatch: null, pull_request: { paths: ['**/*.ebuild', 'eclass/**', 'profiles/**'] } },
    permissions: {},
    concurrency: { group: `rocm-ebuild-test-${m.version}-\${{ github.ref }}`, 'cancel-in-progress': true },
    jobs: {
      plan: {
        'runs-on': 'ubuntu-latest',
        'timeout-minutes': 30,
        steps: [
          { uses: GITHUB_ACTIONS.setupNode, with: { 'node-version': 22 } },
          ...(tool.install.length ? [{ name: 'rocm-ebuild', run: tool.install.join('\n') }] : []),
          { name: 'The job matrix', run: `${tool.run} ${matrixCommand(m)}` },
        ],
      },
      base: {
        needs: 'plan',
        if: SAME_REPOSITORY_ONLY,
        permissions: { contents: 'read' },
        'runs-on': base.runner,
        'timeout-minutes': base.timeoutMinutes,
        steps: [
          checkout,
          clean,
          {
            name: 'Build the packages without GPU targets, in a stage3 container',
            env: {
              JOB_ID: 'base',
              ROCM_EBUILD_JOB: containerScript(tool, testCommand(base, tool.run, { overlay: IN.overlay, reports: IN.reports, pkgdir: IN.pkgdir })),
            },
            run: hostContainerScript(
              inContainer({
                gpu: false,
                passEnv: [],
                env: { ROCM_EBUILD_IN_CONTAINER: 'github' },
                copyIn: [[OVERLAY, IN.overlay]],
                copyOut: [
                  [IN.reports, OUT],
                  [IN.pkgdir, OUT],
                ],
              }),
            ),
          },
          { name: 'Upload the binary packages', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'binpkgs-base', path: `${OUT}/binpkgs`, 'retention-days': 7 } },
          { name: 'Upload the report', if: '${{ always() }}', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'reports-base', path: `${OUT}/reports`, 'if-no-files-found': 'ignore' } },
          removeContainer('base'),
        ],
      },
      test: {
        needs: 'base',
        if: SAME_REPOSITORY_ONLY,
        permissions: { contents: 'read' },
        strategy: {
          'fail-fast': false,
          matrix: {
            include: gpuJobs.map((j) => ({
              id: j.id,
              gfx: j.gfx,
              gfx_version: String(gfxTargetVersion(j.gfx!)),
              runner: j.runner[j.runner.length - 1],
              atoms: shellLine(j.atoms),
              args: shellLine(j.testArgs.slice(j.testArgs.indexOf(j.gfx!) + 1)),
            })),
          },
        },
        'runs-on': ['self-hosted', 'linux', 'x64', '${{ matrix.runner }}'],
        'timeout-minutes': gpuJobs[0]?.timeoutMinutes ?? base.timeoutMinutes,
        steps: [
          checkout,
          clean,
          { name: 'The base binary packages', uses: GITHUB_ACTIONS.downloadArtifact, with: { name: 'binpkgs-base', path: `${OUT}/binpkgs` } },
          { name: "The render node of this runner's GPU", env: { GFX: '${{ matrix.gfx }}', GFX_VERSION: '${{ matrix.gfx_version }}' }, run: renderNodeScript() },
          {
            name: 'rocm-ebuild test, in a stage3 container given that GPU',
            // $ATOMS and $ARGS are split into words on purpose: atoms and flags, each a plain word.
            env: { JOB_ID: '${{ matrix.id }}', ATOMS: '${{ matrix.atoms }}', GFX: '${{ matrix.gfx }}', ARGS: '${{ matrix.args }}', ROCM_EBUILD_JOB: containerScript(tool, testLine) },
            run: hostContainerScript(
              inContainer({
                gpu: true,
                passEnv: ['ATOMS', 'GFX', 'ARGS'],
                env: { ROCM_EBUILD_IN_CONTAINER: 'github' },
                copyIn: [
                  [OVERLAY, IN.overlay],
                  [OUT, IN.out],
                ],
                copyOut: [[IN.reports, OUT]],
              }),
            ),
          },
          { name: 'Upload the report and JUnit', if: '${{ always() }}', uses: GITHUB_ACTIONS.uploadArtifact, with: { name: 'reports-${{ matrix.id }}', path: `${OUT}/reports`, 'if-no-files-found': 'ignore' } },
          removeContainer('${{ matrix.id }}'),
        ],
      },
    },
  };
  return emitYaml([{ value: workflow, comment: header('GitHub Actions workflow', m, options, tool, trusts()), scalarComments: ACTION_TAGS }], { expressions: GITHUB_EXPRESSIONS });
}
