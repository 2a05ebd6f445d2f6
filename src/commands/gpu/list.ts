import { Flags } from '#oclif';
import { BaseCommand } from '../../cli/base-command.js';
import { UserError } from '../../cli/errors.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { defaultManifestPath } from '../../paths.js';
import { cdiSpec } from '../../gpu/cdi.js';
import { formatGpuTable, listGpus, type GpuList } from '../../gpu/list.js';
import { defaultRelease, stackReleases } from '../../gpu/release.js';
import { rootsFromEnv } from '../../gpu/topology.js';
import { manifestFlag } from '../../cli/manifest-flag.js';

export default class GpuListCommand extends BaseCommand {
  static override summary = "List the host's AMD GPUs from the KFD topology, with the AMDGPU_TARGETS value for each";
  static override description = `Reads /sys/class/kfd/kfd/topology/nodes/*/properties (CPU nodes are skipped) and shows, per GPU:
its index (as ROCR_VISIBLE_DEVICES counts), gfx target (decoded from gfx_target_version), product name
(from manifest/devices.yaml), PCI address, render node, compute units, VRAM, the groups owning /dev/kfd and
the render node (what a container needs with --group-add), and whether the release's target policy
(manifest/targets.yaml) offers the gfx, i.e. the AMDGPU_TARGETS value to build with.

--format json is --json: the same object, for scripts.

--format cdi prints a Container Device Interface spec (cdiVersion 0.6.0, kind amd.com/gpu, one device per
GPU plus "all"), the same shape AMD's container toolkit writes; save it as /etc/cdi/amd.json and run
\`podman run --device amd.com/gpu=0 …\`.

For testing, ROCM_EBUILD_SYSFS_ROOT and ROCM_EBUILD_DEV_ROOT (default /) make it read another sysfs and /dev
tree.

Exit codes: 0 listed (also when there is no GPU), 2 invalid flags, manifest or target table.`;

  static override examples = [
    { description: 'The GPUs of this machine and what ROCm 6.2.2 builds for them', command: '<%= config.bin %> <%= command.id %> --version 6.2.2' },
    { description: 'A CDI spec for podman or docker', command: '<%= config.bin %> <%= command.id %> --format cdi | sudo tee /etc/cdi/amd.json' },
    { description: 'Machine-readable', command: '<%= config.bin %> <%= command.id %> --json' },
  ];

  static override flags = {
    version: Flags.string({ char: 'v', description: "ROCm release whose target policy is shown (default: the manifest's newest release)", helpValue: 'X.Y.Z' }),
    format: Flags.string({ description: 'output format: the table, JSON (the same as --json), or a CDI spec', options: ['table', 'json', 'cdi'], default: 'table' }),
    manifest: manifestFlag,
  };

  /** --format json is --json: oclif then prints what run() returns, and errors come as JSON too. */
  override jsonEnabled(): boolean {
    if (super.jsonEnabled()) return true;
    const argv = this.argv.slice(0, this.argv.includes('--') ? this.argv.indexOf('--') : undefined);
    return argv.some((a, i) => a === '--format=json' || (a === '--format' && argv[i + 1] === 'json'));
  }

  async run(): Promise<GpuList | ReturnType<typeof cdiSpec>> {
    const { flags } = await this.parse(GpuListCommand);
    const stack = await stackReleases(flags.manifest ?? defaultManifestPath);
    const release = flags.version ?? defaultRelease(stack.releases)!;
    if (!stack.releases.includes(release)) {
      throw new UserError(`release ${release} is not in the manifest ${stack.file}; it knows ${stack.releases.join(', ')}`, ExitCode.invalidInput);
    }
    const list = await listGpus({ roots: rootsFromEnv(), targetsFile: stack.targetsFile, release });
    if (flags.format === 'cdi') {
      const spec = cdiSpec({ ...list.topology, gpus: list.gpus });
      if (!this.jsonEnabled()) process.stdout.write(`${JSON.stringify(spec, null, 2)}\n`);
      return spec;
    }
    if (!this.jsonEnabled()) process.stdout.write(formatGpuTable(list));
    return list;
  }
}
