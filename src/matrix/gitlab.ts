import { header, installNode, matrixCommand, PREPARE_TREE, testCommand, type EmitOptions } from './emit.js';
import { GPU_CAPABILITIES } from './gpu-access.js';
import type { Matrix } from './plan.js';
import { toolSetup } from './tool-source.js';
import { emitYaml } from './yaml-out.js';

/**
 * When a job of the pipeline is created: never in a merge request pipeline
 * (GitLab runs a fork's merge request there, in this project and on its
 * runners, once anyone with the Developer role presses "Run pipeline"), nor
 * for an external pull request; for branches and tags of this project (a
 * push by a member, a scheduled or manual run). A merge request from a
 * branch of this project is tested by that branch's pipeline.
 */
export const GITLAB_RULES = [
  { if: '$CI_PIPELINE_SOURCE == "merge_request_event" || $CI_PIPELINE_SOURCE == "external_pull_request_event"', when: 'never' },
  { if: '$CI_COMMIT_BRANCH || $CI_COMMIT_TAG' },
];

function trusts(m: Matrix): string[] {
  const gfxRunners = m.jobs.filter((j) => j.gfx !== null && !j.shard);
  return [
    'What it trusts: the branches and tags of this project and whoever can push to',
    'them (the Developer role) or run a pipeline. No job is created in a merge',
    "request pipeline, where a fork's merge request would run in this project on",
    'its runners: a merge request from a branch here is tested by that branch\'s',
    "pipeline; one from a fork is not tested here (read it, push its head to a",
    'branch of this project, and that branch\'s pipeline tests it).',
    '',
    'Runners: one per GPU, with the docker executor, tagged rocm-<gfx> (and one',
    'CPU runner tagged rocm-cpu for the base job), each a project runner of this',
    'project only (not shared with other projects or the group), run_untagged',
    'false. To let only protected branches reach the GPU machines, register them',
    'with --access-level ref_protected and test on protected branches. A GPU runner',
    "gets only its GPU: /dev/kfd and that GPU's render node (renderD<N>:",
    '`rocm-ebuild gpu list` shows N for each GPU), the groups of both, the',
    "engine's default seccomp profile with CAP_SYS_NICE (ROCr's NUMA memory",
    'calls), no-new-privileges, never privileged. In config.toml:',
    '',
    ...gfxRunners.flatMap((j) => [
      '  [[runners]]',
      `    name = "${j.runner[j.runner.length - 1]}"`,
      '    executor = "docker"',
      '    [runners.docker]',
      `      image = "${j.image}"`,
      '      privileged = false',
      '      devices = ["/dev/kfd", "/dev/dri/renderD<N>"]  # this GPU\'s render node',
      '      group_add = ["video", "render"]                # or the numbers `ls -ln /dev/kfd /dev/dri` shows',
      `      cap_add = [${GPU_CAPABILITIES.map((c) => `"${c}"`).join(', ')}]`,
      '      security_opt = ["no-new-privileges"]',
      '',
    ]),
    'Register each with: gitlab-runner register --tag-list rocm-<gfx> --executor docker …',
  ];
}

/**
 * A GitLab CI pipeline: the same jobs, `tags:` per gfx, the base job's binary
 * packages passed on as artifacts, JUnit reports. The runner of each gfx
 * uses the docker executor with its GPU's devices; its configuration is
 * documented in the header. Every job runs in the stage3 image the user
 * named: no other image is pulled. Jobs exist only for this project's own
 * branches and tags (GITLAB_RULES).
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
      rules: GITLAB_RULES,
      before_script: [PREPARE_TREE, installNode(tool.needsGit), ...tool.install],
    },
    plan: {
      stage: 'plan',
      image: m.jobs[0]!.image,
      rules: GITLAB_RULES,
      before_script: [installNode(tool.needsGit), ...tool.install],
      script: [`${tool.run} ${matrixCommand(m)}`],
    },
    ...jobs,
  };
  return emitYaml([{ value: pipeline, comment: header('GitLab CI pipeline', m, options, tool, trusts(m)) }]);
}
