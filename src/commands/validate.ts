import { Args } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { loadManifestOrFail } from '../cli/stack.js';
import { knownReleases } from '../model/resolve.js';
import { UserError } from '../cli/errors.js';
import type { ManifestIssue } from '../manifest/issues.js';

export default class Validate extends BaseCommand {
  static override summary = 'Check a stack manifest against the schemas and its cross-references';
  static override description =
    'Validates the stack file, every component, the external package lists and the target table: ' +
    'YAML and schema errors, nonexistent or unslotted dependencies, self-dependencies, packages both in ' +
    'the stack and external, GPU target coherence, undeclared USE flags, values that would reach bash ' +
    'unsafely (including the test environment allow-list and phase code that is not complete bash), ' +
    'distfile names fetched from two places, dependency cycles and AMD projects left unaccounted for or ' +
    'claimed twice, in every release the manifest knows. Every problem is reported in one run, as ' +
    'file:line:column, JSON path and a hint; parts with schema errors are set aside and only the checks ' +
    'that depend on them are skipped. Exit codes: 0 valid, 2 invalid.';

  static override examples = [
    { description: 'Validate the manifest shipped with rocm-ebuild', command: '<%= config.bin %> <%= command.id %>' },
    { description: 'Validate your own manifest', command: '<%= config.bin %> <%= command.id %> ./my-stack/stack.yaml' },
    { description: 'Machine-readable result', command: '<%= config.bin %> <%= command.id %> --json' },
  ];

  static override args = {
    manifest: Args.string({ ignoreStdin: true, description: 'stack.yaml, or the directory holding it (default: the shipped manifest)' }),
  };

  async run(): Promise<{ valid: true; file: string; releases: string[]; components: number }> {
    const { args } = await this.parse(Validate);
    const manifest = await loadManifestOrFail(args.manifest).catch((err: unknown) => {
      throw err instanceof UserError ? positionalHints(err) : err;
    });
    const releases = knownReleases(manifest);
    this.log(`${manifest.file}: valid (${manifest.components.length} components, releases ${releases.join(', ')})`);
    return { valid: true, file: manifest.file, releases, components: manifest.components.length };
  }
}

/**
 * The loader's hint for a file it cannot read names --manifest, the flag of every other command;
 * here the path is validate's argument.
 */
function positionalHints(err: UserError): UserError {
  const fix = (text: string) => text.replaceAll('check the path given with --manifest or listed under', 'check the MANIFEST path given to validate, or the files listed under');
  const details = err.details as { issues?: ManifestIssue[] } | undefined;
  const issues = details?.issues?.map((i) => (i.hint ? { ...i, hint: fix(i.hint) } : i));
  return new UserError(fix(err.message), err.exitCode, issues ? { ...details, issues } : err.details);
}
