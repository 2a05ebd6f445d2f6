import { BaseCommand } from '../../cli/base-command.js';
import { writtenLine } from '../../cli/ci-output.js';
import { ciFlags, matrixFlags, TOOL_PIN_HELP } from '../../cli/matrix-flags.js';
import { loadManifestOrFail, stackFor } from '../../cli/stack.js';
import { emitOptions } from '../../matrix/ci-command.js';
import { githubWorkflow } from '../../matrix/github.js';
import { matrixOptions, writeOutput } from '../../matrix/flags.js';
import { matrixPlan } from '../../matrix/plan.js';

export default class CiGithub extends BaseCommand {
  static override summary = 'Write a GitHub Actions workflow that tests the release on self-hosted GPU runners';
  static override description = `A plan job prints the matrix; a base job on a CPU runner builds the packages without GPU targets and
uploads them as binary packages; a test job (fail-fast off) runs one job per gfx target and per test shard on
runners labelled [self-hosted, linux, x64, rocm-<gfx>] (see --label-scheme), running \`rocm-ebuild test --engine
none --gpu <gfx>\`; reports and JUnit are uploaded as artifacts. Actions are pinned to release commits.

The jobs on self-hosted runners run only for workflow_dispatch and for pull requests from branches of the
repository itself: a fork's pull request never reaches them. Each starts its own stage3 container on the
runner's host (no Docker socket, no host directory inside): a GPU job gives it /dev/kfd and the render node of
one GPU, chosen on the host (ROCM_EBUILD_RENDER_NODE in the runner's environment, else the host's one GPU of the
job's gfx), the groups of both, and CAP_SYS_NICE under the engine's default seccomp profile (ROCr's NUMA memory
calls need it); never seccomp=unconfined, never --privileged. The token is read-only. Register one runner per
GPU with the label of its gfx (\`rocm-ebuild gpu list\` tells which).

${TOOL_PIN_HELP} Values that reach the file are checked: the image is an image
reference, runner labels are plain labels, and no value may hold a line break, a control character or a
\${{ }} expression; every value is written as a YAML scalar.

Exit codes: 0 written, 2 invalid flags, manifest, release or gfx, or no pinned rocm-ebuild.`;

  static override examples = [
    { description: 'Into the overlay, for two targets', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --gpu gfx90a --gpu gfx1100 --tool-git https://github.com/me/rocm-ebuild.git --tool-commit 0123456789abcdef0123456789abcdef01234567 --output .github/workflows/rocm-test.yml' },
    { description: 'Runners labelled gpu-<gfx>', command: "<%= config.bin %> <%= command.id %> --version 6.2.2 --label-scheme 'gpu-{gfx}' --tool 'node /opt/rocm-ebuild/bin/run.js'" },
  ];

  static override flags = {
    ...matrixFlags,
    ...ciFlags,
  };

  async run(): Promise<{ file: string | null; text: string }> {
    const { flags } = await this.parse(CiGithub);
    // Flags first: a typo must not cost loading the manifest.
    const emit = emitOptions(flags, ['ci', 'github', ...this.argv]);
    const options = matrixOptions(flags);
    const model = await stackFor(await loadManifestOrFail(flags.manifest), flags.version);
    const plan = matrixPlan(model, options);
    const text = githubWorkflow(plan, emit);
    const file = flags.output ? await writeOutput(flags.output, text) : null;
    if (!this.jsonEnabled()) {
      if (file) this.log(writtenLine(file, plan));
      else process.stdout.write(text);
    }
    return { file, text };
  }
}
