import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Flags } from '#oclif';
import { formatIssue } from '../manifest/issues.js';
import { BaseCommand } from '../cli/base-command.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { projectRoot } from '../paths.js';
import { makeDirectories, outputDirectory, runsFromCheckout } from '../cli/output-dir.js';
import { loadManifestOrFail, manifestFlag } from '../cli/stack.js';
import {
  changedLines,
  EclassTableError,
  loadTargetTable,
  planGeneratedFiles,
  TargetTableError,
  type GeneratedFile,
  type TargetTable,
} from '../eclass/index.js';

interface EclassResult {
  check: boolean;
  outputDir: string;
  targets: string;
  files: { path: string; status: GeneratedFile['status'] }[];
}

export default class Eclass extends BaseCommand {
  static override summary = "Regenerate rocm.eclass's target table and amdgpu_targets.desc";
  static override description =
    'Reads the target table (manifest/targets.yaml: every gfx target and the default-on and optional ' +
    'targets of each ROCm release series) and rewrites the generated section of eclass/rocm.eclass ' +
    '(between the "BEGIN/END GENERATED AMDGPU TARGET TABLE" lines) and profiles/desc/amdgpu_targets.desc ' +
    'under the output directory. The rest of the eclass is kept as it is; an overlay without the eclass ' +
    "gets rocm-ebuild's own. A file's copyright year is moved to the current year only when its content " +
    'changes. Without --output the files are those of rocm-ebuild itself, which only a source checkout of it ' +
    'may rewrite: an installed copy checks them with --check and writes only to an --output directory (one that ' +
    'exists, or a new one in an existing directory). ' +
    'Exit codes: 0 done (or, with --check, up to date), 2 invalid target table, eclass or output directory, ' +
    '6 with --check when a file differs.';

  static override examples = [
    { description: "Regenerate the project's own eclass table and desc file", command: '<%= config.bin %> <%= command.id %>' },
    { description: 'Fail (exit 6) when the committed files are out of date, as CI does', command: '<%= config.bin %> <%= command.id %> --check' },
    { description: 'Install or update the eclass and desc file in an overlay', command: '<%= config.bin %> <%= command.id %> --output ~/overlays/rocm' },
    { description: 'Use another target table and report as JSON', command: '<%= config.bin %> <%= command.id %> --targets ./targets.yaml --check --json' },
  ];

  static override flags = {
    check: Flags.boolean({
      description: 'write nothing; exit 6 and list the differences when a file is not what would be written',
      default: false,
    }),
    output: Flags.string({
      char: 'o',
      description: 'directory holding eclass/ and profiles/desc/, e.g. an overlay (default: the rocm-ebuild source checkout it runs from)',
      helpValue: 'DIR',
    }),
    manifest: manifestFlag,
    targets: Flags.string({
      char: 't',
      description: 'target table to read (default: manifest/targets.yaml of rocm-ebuild)',
      helpValue: 'FILE',
    }),
  };

  async run(): Promise<EclassResult> {
    const { flags } = await this.parse(Eclass);
    if (flags.output === undefined && !flags.check && !runsFromCheckout()) {
      throw new UserError(
        `without --output, eclass rewrites rocm-ebuild's own eclass, which only a source checkout may do; this rocm-ebuild is installed at ${projectRoot}. ` +
          'Name the overlay to write to with --output DIR (or check the shipped files with --check)',
        ExitCode.invalidInput,
      );
    }
    const outputDir = flags.output === undefined ? projectRoot : (await outputDirectory(flags.output)).dir;
    const table = await loadTable(flags.targets);

    let files: GeneratedFile[];
    try {
      // amdgpu_targets.desc lists the targets of the releases the manifest generates.
      files = await planGeneratedFiles(table, outputDir, new Date().getFullYear(), Object.keys((await loadManifestOrFail(flags.manifest)).stack.releases));
    } catch (err) {
      if (err instanceof EclassTableError) {
        throw new UserError(`${path.join(outputDir, 'eclass/rocm.eclass')}: ${err.message}`, ExitCode.invalidInput);
      }
      throw err;
    }
    const result: EclassResult = {
      check: flags.check,
      outputDir,
      targets: table.file,
      files: files.map((f) => ({ path: f.path, status: f.status })),
    };

    if (flags.check) {
      const stale = files.filter((f) => f.status !== 'unchanged');
      if (stale.length > 0) {
        const { readFile } = await import('node:fs/promises');
        const lines: string[] = [];
        for (const f of stale) {
          const before = f.status === 'created' ? '' : await readFile(f.absolute, 'utf8');
          lines.push(`${f.path}: ${f.status === 'created' ? 'missing' : 'out of date'}`);
          if (f.status !== 'created') lines.push(...changedLines(before, f.content).map((l) => `  ${l}`));
        }
        throw new UserError(
          `${stale.length} generated file${stale.length === 1 ? ' differs' : 's differ'} from ${table.file}; run "rocm-ebuild eclass${flags.output ? ` --output ${flags.output}` : ''}":\n${lines.join('\n')}`,
          ExitCode.qaFailed,
          result,
        );
      }
      this.log(`${outputDir}: ${files.map((f) => f.path).join(' and ')} are up to date`);
      return result;
    }

    for (const f of files) {
      if (f.status === 'unchanged') {
        this.log(`${f.path}: unchanged`);
        continue;
      }
      await makeDirectories(outputDir, path.relative(outputDir, path.dirname(f.absolute)));
      await writeFile(f.absolute, f.content);
      this.log(`${f.path}: ${f.status}`);
    }
    return result;
  }
}

async function loadTable(file: string | undefined): Promise<TargetTable> {
  try {
    return await loadTargetTable(file);
  } catch (err) {
    if (err instanceof TargetTableError) {
      throw new UserError(
        `${err.issues.length} problem${err.issues.length === 1 ? '' : 's'} in the target table:\n${err.issues.map((i) => formatIssue(i)).join('\n')}`,
        ExitCode.invalidInput,
        { issues: err.issues },
      );
    }
    throw err;
  }
}
