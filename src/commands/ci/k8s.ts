import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { writtenLine } from '../../cli/ci-output.js';
import { planFlags } from '../../cli/matrix-flags.js';
import { loadManifestOrFail, stackFor } from '../../cli/stack.js';
import { deviceTablePath, loadDeviceTable } from '../../gpu/devices.js';
import { emitOptions } from '../../matrix/ci-command.js';
import { k8sJobs } from '../../matrix/emit.js';
import { MATRIX_DEFAULTS, matrixOptions, writeOutput } from '../../matrix/flags.js';
import { matrixPlan } from '../../matrix/plan.js';

export default class CiK8s extends BaseCommand {
  static override summary = 'Write Kubernetes Jobs that test the release on GPU nodes, one Job per gfx target';
  static override description = `One batch/v1 Job for the base (no GPU) and one per gfx target and test shard. Each gfx pod asks for
amd.com/gpu: 1 (AMD's device plugin gives it /dev/kfd and one render node) and runs non-privileged with the
seccomp profile AMD documents; it is placed on a node whose amd.com/gpu.device-id (AMD's node labeller) is one of
its gfx's device ids from manifest/devices.yaml, or on a node carrying --node-label=<gfx>. An init container
clones the overlay (--repo); binary packages, distfiles and reports live on a shared ReadWriteMany claim
(--claim), and the gfx pods wait until the base Job has marked its binary packages done.

Exit codes: 0 written, 2 invalid flags, manifest, release or gfx.`;

  static override examples = [
    {
      description: 'Jobs for two targets, nodes found by device id',
      command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --gpu gfx90a --gpu gfx1100 --repo https://github.com/me/rocm-overlay.git --output rocm-jobs.yaml',
    },
    { description: 'Nodes labelled by hand (rocm.gentoo.org/gfx=gfx1100)', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --repo https://example.org/overlay.git --node-label rocm.gentoo.org/gfx' },
  ];

  static override flags = {
    ...planFlags,
    repo: Flags.string({ description: "the overlay's git URL, cloned into each pod", required: true, helpValue: 'URL' }),
    'node-label': Flags.string({ description: 'select nodes by this label (value: the gfx) (default: by amd.com/gpu.device-id, the device plugin\'s label)', helpValue: 'KEY' }),
    claim: Flags.string({ description: 'ReadWriteMany PersistentVolumeClaim for binary packages, distfiles and reports', default: 'rocm-ebuild', helpValue: 'NAME' }),
    namespace: Flags.string({ description: 'namespace of the Jobs (default: none written, so kubectl applies them to its current namespace)', helpValue: 'NAME' }),
    output: Flags.string({ char: 'o', description: 'file to write (default: print to standard output)', helpValue: 'FILE' }),
    tool: Flags.string({ description: 'how jobs run rocm-ebuild (default: npx --yes rocm-ebuild@<this version>)', helpValue: 'COMMAND' }),
  };

  async run(): Promise<{ file: string | null; text: string }> {
    const { flags } = await this.parse(CiK8s);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const devices = await loadDeviceTable(deviceTablePath(manifest.targetsFile));
    const plan = matrixPlan(model, matrixOptions({ ...flags, 'label-scheme': MATRIX_DEFAULTS.labelScheme, 'base-runner': MATRIX_DEFAULTS.baseRunner }));
    const text = k8sJobs(plan, emitOptions(flags.tool, this.config.version, ['ci', 'k8s', ...this.argv]), {
      repo: flags.repo,
      devices,
      claim: flags.claim,
      ...(flags['node-label'] ? { nodeLabel: flags['node-label'] } : {}),
      ...(flags.namespace ? { namespace: flags.namespace } : {}),
    });
    const file = flags.output ? await writeOutput(flags.output, text) : null;
    if (!this.jsonEnabled()) {
      if (file) this.log(writtenLine(file, plan));
      else process.stdout.write(text);
    }
    return { file, text };
  }
}
