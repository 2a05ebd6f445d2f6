import { Flags } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { packageSet, PackageSetError, type PackageSet } from '../stack-check/package-set.js';

export default class SetCommand extends BaseCommand {
  static override summary = 'Print the packages of a release that GPUs of the given targets can use';
  static override description =
    'The package set "everything my GPUs can use": every package of the release that Portage can merge ' +
    'with AMDGPU_TARGETS set to --targets under default USE, one atom per line (for /etc/portage/sets/ or ' +
    '`emerge`). A package is left out when it is built only for other targets, or needs one that is; ' +
    '--why prints those with the reason on standard error. Overlays written by `bump` carry the same sets ' +
    'as @rocm-<target>. Exit codes: 0 printed, 2 invalid manifest, unknown release or target.';

  static override examples = [
    { description: 'What a Radeon RX 6800 and an RX 7900 can use in ROCm 6.3.3', command: '<%= config.bin %> <%= command.id %> --version 6.3.3 --targets "gfx1030 gfx1100"' },
    {
      description: 'Keep it as a Portage set and merge it',
      command: '<%= config.bin %> <%= command.id %> --version 6.3.3 --targets gfx1030 > /etc/portage/sets/rocm && emerge --ask @rocm',
    },
    { description: 'Why packages are left out for an MI210', command: '<%= config.bin %> <%= command.id %> --version 6.2.2 --targets gfx90a --why' },
  ];

  static override flags = {
    version: Flags.string({ char: 'v', description: 'ROCm release', required: true, helpValue: 'X.Y.Z' }),
    targets: Flags.string({
      char: 't',
      description: 'the gfx targets of your GPUs, separated by spaces or commas (`rocm-ebuild gpu list` shows them)',
      required: true,
      helpValue: '"gfx1030 gfx1100"',
    }),
    why: Flags.boolean({ description: 'also print the packages left out, with the reason, on standard error' }),
    manifest: manifestFlag,
  };

  async run(): Promise<PackageSet> {
    const { flags } = await this.parse(SetCommand);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const targets = [...new Set(flags.targets.split(/[\s,]+/).filter(Boolean))];
    let set: PackageSet;
    try {
      set = packageSet(model, targets);
    } catch (err) {
      if (err instanceof PackageSetError) throw new UserError(err.message, ExitCode.invalidInput);
      throw err;
    }
    if (!this.jsonEnabled()) {
      process.stdout.write(set.atoms.map((a) => `${a}\n`).join(''));
      if (flags.why) {
        for (const e of set.excluded) process.stderr.write(`left out: ${e.atom}: ${e.reason}\n`);
        for (const u of set.userFlags) process.stderr.write(`needs a flag you set: ${u.atom}: ${u.clause} (CPU_FLAGS_X86, see app-portage/cpuid2cpuflags)\n`);
      }
    }
    return set;
  }
}
