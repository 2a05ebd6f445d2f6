import { BaseCommand } from '../../cli/base-command.js';
import { writtenLine } from '../../cli/ci-output.js';
import { ciFlags, matrixFlags, TOOL_PIN_HELP } from '../../cli/matrix-flags.js';
import { loadManifestOrFail, stackFor } from '../../cli/stack.js';
import { emitOptions } from '../../matrix/ci-command.js';
import { githubWorkflow } from '../../matrix/emit.js';
import { matrixOptions, writeOutput } from '../../matrix/flags.js';
import { matrixPlan } from '../../matrix/plan.js';

export default class CiGithub extends BaseCommand {
  static override summary = 'Write a GitHub Actions workflow that tests the release on self-hosted GPU runners';
  static override description = `A plan job prints the matrix; a base job on a CPU runner builds the packages without GPU targets and
uploads them as binary packages; a test job (fail-fast off) runs one job per gfx target and per test shard on
runners labelled [self-hosted, linux, x64, rocm-<gfx>] (see --label-scheme), each in a stage3 container given
/dev/kfd and /dev/dri with ROCm's seccomp profile, running \`rocm-ebuild test --engine none --gpu <gfx>\`; reports
and JUnit are uploaded as artifacts. Actions are pinned to release commits. Register one runner per GPU with the
label of its gfx (\`rocm-ebuild gpu list\` tells which).

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
