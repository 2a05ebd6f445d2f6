import { BaseCommand } from '../cli/base-command.js';
import { matrixFlags } from '../cli/matrix-flags.js';
import { loadManifestOrFail, stackFor } from '../cli/stack.js';
import { matrixOptions } from '../matrix/flags.js';
import { formatMatrix, matrixPlan, type Matrix } from '../matrix/plan.js';

export default class MatrixCommand extends BaseCommand {
  static override summary = 'The CI job plan of a release: one base job, then one job per gfx target';
  static override description = `Engine-neutral: a base job builds every package that needs no GPU target (nor depends on one) once,
as binary packages, without a GPU; then one job per gfx builds the target-specific packages for it in build order
and runs their tests on one GPU. Packages whose test suites the manifest splits (tests.shards) get shard jobs
(GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS). Each job has its id, gfx, atoms, needs, runner labels, image, devices,
timeout and the \`rocm-ebuild test\` arguments it runs. \`rocm-ebuild ci github|gitlab|k8s\` writes it for an engine.

Exit codes: 0 shown, 2 invalid manifest, unknown release or a gfx outside the release's target policy.`;

  static override examples = [
    { description: "The jobs for ROCm 6.2.2's default-on targets", command: '<%= config.bin %> <%= command.id %> --version 6.2.2' },
    { description: 'Two targets, as JSON', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --gpu gfx90a --gpu gfx1100 --json' },
  ];

  static override flags = matrixFlags;

  async run(): Promise<Matrix> {
    const { flags } = await this.parse(MatrixCommand);
    const model = await stackFor(await loadManifestOrFail(flags.manifest), flags.version);
    const m = matrixPlan(model, matrixOptions(flags));
    if (!this.jsonEnabled()) process.stdout.write(formatMatrix(m));
    return m;
  }
}
