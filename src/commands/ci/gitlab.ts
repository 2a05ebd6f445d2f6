import { BaseCommand } from '../../cli/base-command.js';
import { writtenLine } from '../../cli/ci-output.js';
import { ciFlags, matrixFlags, TOOL_PIN_HELP } from '../../cli/matrix-flags.js';
import { loadManifestOrFail, stackFor } from '../../cli/stack.js';
import { emitOptions } from '../../matrix/ci-command.js';
import { gitlabPipeline } from '../../matrix/gitlab.js';
import { matrixOptions, writeOutput } from '../../matrix/flags.js';
import { matrixPlan } from '../../matrix/plan.js';

export default class CiGitlab extends BaseCommand {
  static override summary = 'Write a GitLab CI pipeline that tests the release on GPU runners';
  static override description = `The same jobs as \`rocm-ebuild matrix\`: a plan job, a base job (runner tag rocm-cpu) whose binary
packages pass to the others as artifacts, then one job per gfx target (tag rocm-<gfx>, see --label-scheme) and per
test shard, each running \`rocm-ebuild test --engine none --gpu <gfx>\` in the stage3 image and publishing the JUnit
reports. Jobs are created for the project's branches and tags only, never in a merge request pipeline (where a
fork's merge request would run on the project's runners). The header documents the docker-executor runner each
GPU needs: a project runner of this project only, /dev/kfd and that GPU's render node, group_add, CAP_SYS_NICE
under the engine's default seccomp profile, no-new-privileges.

${TOOL_PIN_HELP} Values that reach the file are checked: the image is an image
reference, runner labels are plain labels, and no value may hold a line break, a control character or a
\${{ }} expression; every value is written as a YAML scalar.

Exit codes: 0 written, 2 invalid flags, manifest, release or gfx, or no pinned rocm-ebuild.`;

  static override examples = [
    { description: 'The pipeline for two targets', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --gpu gfx90a --gpu gfx1100 --tool-git https://github.com/me/rocm-ebuild.git --tool-commit 0123456789abcdef0123456789abcdef01234567 --output .gitlab-ci.yml' },
  ];

  static override flags = {
    ...matrixFlags,
    ...ciFlags,
  };

  async run(): Promise<{ file: string | null; text: string }> {
    const { flags } = await this.parse(CiGitlab);
    // Flags first: a typo must not cost loading the manifest.
    const emit = emitOptions(flags, ['ci', 'gitlab', ...this.argv]);
    const options = matrixOptions(flags);
    const model = await stackFor(await loadManifestOrFail(flags.manifest), flags.version);
    const plan = matrixPlan(model, options);
    const text = gitlabPipeline(plan, emit);
    const file = flags.output ? await writeOutput(flags.output, text) : null;
    if (!this.jsonEnabled()) {
      if (file) this.log(writtenLine(file, plan));
      else process.stdout.write(text);
    }
    return { file, text };
  }
}
