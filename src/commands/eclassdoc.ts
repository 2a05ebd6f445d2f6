import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Args, Flags } from '#oclif';
import { BaseCommand } from '../cli/base-command.js';
import { UserError } from '../cli/errors.js';
import { ExitCode } from '../cli/exit-codes.js';
import { projectRoot } from '../paths.js';
import { checkEclassDoc, eclassPath, renderMan, renderMarkdown, sourcedVariableProblems, type DocProblem } from '../eclass/index.js';

interface EclassDocOutput {
  file: string;
  format: 'markdown' | 'man';
  /** Where the document was written; absent when printed. */
  output?: string;
  status?: 'unchanged' | 'updated' | 'created';
  /** The document, when it was printed rather than written. */
  text?: string;
  functions: number;
  variables: number;
}

export default class EclassDoc extends BaseCommand {
  static override summary = "Turn an eclass's eclassdoc into Markdown or a man page";
  static override description =
    'Parses the eclassdoc comments of an eclass (@ECLASS, @FUNCTION, @ECLASS_VARIABLE, ... as Gentoo ' +
    'documents them) and renders a Markdown page or a section 5 man page, so the documentation can be ' +
    'read without Gentoo. The eclass is checked first: every function it defines and every variable it ' +
    'sets at file scope or names with its prefix (ROCM_* for rocm.eclass) must be documented, and every ' +
    '@FUNCTION block must match a function. @INTERNAL items are left out unless --internal is given. ' +
    'Exit codes: 0 done, 2 unreadable file, 6 documentation problems (or, with --check, a stale output).';

  static override examples = [
    { description: "Print the Markdown documentation of rocm-ebuild's rocm.eclass", command: '<%= config.bin %> <%= command.id %>' },
    { description: 'Regenerate the committed documentation', command: '<%= config.bin %> <%= command.id %> --output docs/rocm.eclass.md' },
    { description: 'Write the man page and read it', command: '<%= config.bin %> <%= command.id %> --format man --output rocm.eclass.5 && man -l rocm.eclass.5' },
    { description: 'Check that an eclass is fully documented, as CI does', command: '<%= config.bin %> <%= command.id %> path/to/foo.eclass --check --output docs/foo.eclass.md' },
  ];

  static override args = {
    file: Args.string({ ignoreStdin: true, description: 'the eclass to document (default: eclass/rocm.eclass of rocm-ebuild)' }),
  };

  static override flags = {
    format: Flags.string({
      char: 'f',
      description: 'output format: markdown, or man (roff for man -l)',
      options: ['markdown', 'man'],
      default: 'markdown',
    }),
    output: Flags.string({ char: 'o', description: 'file to write (default: print to standard output)', helpValue: 'FILE' }),
    internal: Flags.boolean({ description: 'include @INTERNAL functions and variables', default: false }),
    check: Flags.boolean({
      description: 'with --output: write nothing and exit 6 when the file differs from what would be written',
      default: false,
    }),
  };

  async run(): Promise<EclassDocOutput> {
    const { args, flags } = await this.parse(EclassDoc);
    if (flags.check && !flags.output) {
      throw new UserError('--check compares with the file given by --output; add --output FILE', ExitCode.invalidInput);
    }
    const file = path.resolve(args.file ?? eclassPath);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new UserError(`cannot read ${file}: ${(err as Error).message}`, ExitCode.invalidInput);
    }

    const shown = path.relative(projectRoot, file).startsWith('..') ? file : path.relative(projectRoot, file);
    const { doc, problems } = checkEclassDoc(text, shown);
    problems.push(...(await sourcedVariableProblems(file, text, doc)));
    problems.sort((a, b) => a.line - b.line);
    if (problems.length > 0) {
      throw new UserError(
        `${shown}: ${problems.length} documentation problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => formatProblem(shown, p)).join('\n')}`,
        ExitCode.qaFailed,
        { file, problems },
      );
    }

    const format = flags.format as 'markdown' | 'man';
    const options = { internal: flags.internal, source: shown };
    const rendered = format === 'man' ? renderMan(doc, options) : renderMarkdown(doc, options);
    const result: EclassDocOutput = {
      file,
      format,
      functions: doc.functions.filter((f) => flags.internal || !f.internal).length,
      variables: doc.variables.filter((v) => flags.internal || !v.internal).length,
    };

    if (!flags.output) {
      if (!this.jsonEnabled()) process.stdout.write(rendered);
      return { ...result, text: rendered };
    }
    const output = path.resolve(flags.output);
    let previous: string | undefined;
    try {
      previous = await readFile(output, 'utf8');
    } catch {
      previous = undefined;
    }
    const status = previous === undefined ? 'created' : previous === rendered ? 'unchanged' : 'updated';
    if (flags.check) {
      if (status !== 'unchanged') {
        throw new UserError(
          `${flags.output} is ${status === 'created' ? 'missing' : 'out of date'}; run "rocm-ebuild eclassdoc ${args.file ?? ''} --format ${format} --output ${flags.output}"`.replace('  ', ' '),
          ExitCode.qaFailed,
          { ...result, output, status },
        );
      }
      this.log(`${flags.output}: up to date`);
      return { ...result, output, status };
    }
    if (status !== 'unchanged') {
      await mkdir(path.dirname(output), { recursive: true });
      await writeFile(output, rendered);
    }
    this.log(`${flags.output}: ${status}`);
    return { ...result, output, status };
  }
}

function formatProblem(file: string, p: DocProblem): string {
  return `${file}:${p.line}:${p.column}: ${p.kind}: ${p.message}`;
}
