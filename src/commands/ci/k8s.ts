import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { writtenLine } from '../../cli/ci-output.js';
import { ciFlags, planFlags, TOOL_PIN_HELP } from '../../cli/matrix-flags.js';
import { loadManifestOrFail, stackFor } from '../../cli/stack.js';
import { deviceTablePath, loadDeviceTable } from '../../gpu/devices.js';
import { emitOptions } from '../../matrix/ci-command.js';
import { checkK8sOptions, k8sJobs } from '../../matrix/k8s.js';
import { MATRIX_DEFAULTS, matrixOptions, writeOutput } from '../../matrix/flags.js';
import { matrixPlan } from '../../matrix/plan.js';

export default class CiK8s extends BaseCommand {
  static override summary = 'Write Kubernetes Jobs that test the release on GPU nodes, one Job per gfx target';
  static override description = `A ReadWriteMany PersistentVolumeClaim (--claim, --claim-size) for binary packages, distfiles and reports, then one
batch/v1 Job for the base (no GPU) and one per gfx target and test shard. Each gfx pod asks for amd.com/gpu: 1
(AMD's device plugin gives it /dev/kfd and one render node) and runs non-privileged under the runtime's default
seccomp profile with CAP_SYS_NICE added (ROCr's NUMA memory calls need it), without a service account token; it
is placed on a node whose amd.com/gpu.device-id (AMD's node labeller) is one of its gfx's device ids from
manifest/devices.yaml, or on a node carrying --node-label=<gfx>. Every container runs the stage3 image (--image),
no helper image: it gets git and Node.js from Gentoo's binary host and fetches the overlay (--repo, a git URL)
at one commit (--repo-commit, a full commit id), and the gfx pods wait (an init container) until the base Job
has marked its binary packages done.

${TOOL_PIN_HELP} Values that reach the file are checked: the image is an image
reference, --claim a Kubernetes object name, --claim-size a quantity, --repo-commit a full commit id, --namespace a DNS label, --node-label a label key, --repo a git URL,
and no value may hold a line break, a control character or a \${{ }} expression; every value is written as a
YAML scalar.

Exit codes: 0 written, 2 invalid flags, manifest, release or gfx, or no pinned rocm-ebuild.`;

  static override examples = [
    {
      description: 'Jobs for two targets, nodes found by device id',
      command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --gpu gfx90a --gpu gfx1100 --repo https://github.com/me/rocm-overlay.git --repo-commit 89abcdef0123456789abcdef0123456789abcdef --tool-git https://github.com/me/rocm-ebuild.git --tool-commit 0123456789abcdef0123456789abcdef01234567 --output rocm-jobs.yaml',
    },
    { description: 'Nodes labelled by hand (rocm.gentoo.org/gfx=gfx1100)', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --repo https://example.org/overlay.git --repo-commit 89abcdef0123456789abcdef0123456789abcdef --node-label rocm.gentoo.org/gfx --tool-git https://github.com/me/rocm-ebuild.git --tool-commit 0123456789abcdef0123456789abcdef01234567' },
  ];

  static override flags = {
    ...planFlags,
    repo: Flags.string({ description: "the overlay's git URL (https, ssh or git), fetched by each pod at --repo-commit", required: true, helpValue: 'URL' }),
    'repo-commit': Flags.string({ description: 'the full commit id of the overlay the pods test (no default: a branch can move between two pods)', required: true, helpValue: 'COMMIT' }),
    'node-label': Flags.string({ description: 'select nodes by this label (value: the gfx) (default: by amd.com/gpu.device-id, the device plugin\'s label)', helpValue: 'KEY' }),
    claim: Flags.string({ description: 'the ReadWriteMany PersistentVolumeClaim the file creates for binary packages, distfiles and reports (a Kubernetes object name)', default: 'rocm-ebuild', helpValue: 'NAME' }),
    'claim-size': Flags.string({ description: 'the storage the claim requests (a Kubernetes quantity)', default: '200Gi', helpValue: 'SIZE' }),
    namespace: Flags.string({ description: 'namespace of the Jobs (default: none written, so kubectl applies them to its current namespace)', helpValue: 'NAME' }),
    ...ciFlags,
  };

  async run(): Promise<{ file: string | null; text: string }> {
    const { flags } = await this.parse(CiK8s);
    // Flags first: a typo must not cost loading the manifest.
    const emit = emitOptions(flags, ['ci', 'k8s', ...this.argv]);
    // Kubernetes picks nodes, not runners: the runner flags keep their defaults.
    const options = matrixOptions({ ...flags, 'label-scheme': MATRIX_DEFAULTS.labelScheme, 'base-runner': MATRIX_DEFAULTS.baseRunner });
    const k8s = {
      repo: flags.repo,
      commit: flags['repo-commit'],
      claim: flags.claim,
      claimSize: flags['claim-size'],
      ...(flags['node-label'] !== undefined ? { nodeLabel: flags['node-label'] } : {}),
      ...(flags.namespace !== undefined ? { namespace: flags.namespace } : {}),
    };
    checkK8sOptions(k8s);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const devices = await loadDeviceTable(deviceTablePath(manifest.targetsFile));
    const plan = matrixPlan(model, options);
    const text = k8sJobs(plan, emit, { ...k8s, devices });
    const file = flags.output ? await writeOutput(flags.output, text) : null;
    if (!this.jsonEnabled()) {
      if (file) this.log(writtenLine(file, plan));
      else process.stdout.write(text);
    }
    return { file, text };
  }
}
