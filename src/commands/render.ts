import { Args, Flags } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { loadManifestOrFail, manifestFlag, stackFor } from '../cli/stack.js';
import { closest } from '../manifest/schema-validator.js';
import { renderEbuild, renderMetadata } from '../render/index.js';
import { describeEvidence, type PackageEvidence } from '../model/evidence.js';

export default class Render extends BaseCommand {
  static override summary = 'Print the ebuild (or metadata.xml) of one package for a release';
  static override description =
    'Renders what `bump` would write for one package, to stdout, without touching any overlay. ' +
    'The atom may be category/PN or just PN. Exit codes: 0 rendered, 2 unknown atom, release or invalid manifest.';

  static override examples = [
    { description: 'The rocBLAS ebuild for ROCm 6.2.2', command: '<%= config.bin %> <%= command.id %> sci-libs/rocBLAS --version 6.2.2' },
    { description: "hip's metadata.xml", command: '<%= config.bin %> <%= command.id %> hip --version 6.2.2 --metadata' },
  ];

  static override args = {
    atom: Args.string({ ignoreStdin: true, description: 'package: category/PN or PN', required: true }),
  };

  static override flags = {
    version: Flags.string({ char: 'v', description: 'ROCm release', required: true, helpValue: 'X.Y.Z' }),
    manifest: manifestFlag,
    metadata: Flags.boolean({ description: 'print metadata.xml instead of the ebuild' }),
    year: Flags.integer({ description: 'copyright year in the header (default: this year, or SOURCE_DATE_EPOCH)' }),
  };

  async run(): Promise<{ atom: string; version: string; file: string; text: string; evidence: PackageEvidence }> {
    const { args, flags } = await this.parse(Render);
    const manifest = await loadManifestOrFail(flags.manifest);
    const model = await stackFor(manifest, flags.version);
    const c =
      model.byAtom.get(args.atom) ?? model.components.find((x) => x.pn === args.atom || x.name === args.atom);
    if (!c) {
      const near = closest(args.atom, [...model.byAtom.keys(), ...model.components.map((x) => x.pn)]);
      throw new UserError(
        `no package ${args.atom} in the ${flags.version} stack${near ? `; did you mean ${near}?` : ''}`,
        ExitCode.invalidInput,
      );
    }
    const text = flags.metadata
      ? renderMetadata(c, model)
      : renderEbuild(c, model, flags.year !== undefined ? { year: flags.year } : {});
    const file = flags.metadata ? `${c.atom}/metadata.xml` : `${c.atom}/${c.pn}-${c.version}.ebuild`;
    if (!this.jsonEnabled()) {
      process.stdout.write(text);
      // On stderr, so that the ebuild on stdout can be redirected as it is (the schema keeps evidence text printable).
      process.stderr.write(`evidence for ${c.atom}-${c.version}${c.held ? ` (at its own version in ROCm ${c.release})` : ''}: ${describeEvidence(c.evidence)}\n`);
    }
    return { atom: c.atom, version: c.version, file, text, evidence: c.evidence };
  }
}
