import { Command, Flags } from '#oclif';
import { closest } from '../util/closest.js';
import { setVerbosity } from '../util/terminal.js';
import { missingArgsMessage, missingFlagsMessage } from './missing-input.js';
import { terminalSafeJson } from '../util/printable.js';
import { ExitCode } from './exit-codes.js';
import { UserError } from './errors.js';
import { outputDrained } from './output-drain.js';
import { internalErrorMessage, reportError } from './report-error.js';

/**
 * Common behaviour of every command: `--json` (oclif prints what run() returns),
 * user errors mapped to documented exit codes, and plain-text messages without
 * stack traces for anything the user can act on.
 */
export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;

  /** Every command's: how much it says on stderr besides its results. */
  static override baseFlags = {
    quiet: Flags.boolean({ char: 'q', description: 'no progress and no notices on stderr: results, warnings and errors only', exclusive: ['verbose'], helpGroup: 'GLOBAL' }),
    verbose: Flags.boolean({ description: 'more detail where the command has it (bump: the diff of every revision bump and carried hand edit)', exclusive: ['quiet'], helpGroup: 'GLOBAL' }),
  };

  /** --quiet and --verbose take effect before the command parses the rest (progress is created deep inside its steps). */
  override async init(): Promise<void> {
    await super.init();
    const given = new Set(this.argv.slice(0, this.argv.includes('--') ? this.argv.indexOf('--') : undefined));
    setVerbosity(given.has('--quiet') || given.has('-q') ? 'quiet' : given.has('--verbose') ? 'verbose' : 'normal');
  }

  /** --json output: JSON.stringify's text with every character a terminal acts on escaped (the same values for a parser). */
  override logJson(json: unknown): void {
    process.stdout.write(`${terminalSafeJson(json)}\n`);
  }

  protected override async catch(err: Error & { code?: string; exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    // Every way out of here ends in process.exit (oclif's handle), which drops
    // what a pipe has not taken yet: the report and the error go out whole first.
    try {
      return await this.reportFailure(err);
    } finally {
      await outputDrained();
    }
  }

  private async reportFailure(err: Error & { code?: string; exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    // this.exit(n) throws oclif's ExitError: not a failure to report, just the
    // exit code to use (with --json, oclif would otherwise print it as an error).
    if (err.code === 'EEXIT') throw err;
    if (err instanceof UserError) {
      reportError(err.message, err.exitCode, { json: this.jsonEnabled(), details: err.details });
      this.exit(err.exitCode);
    }
    // oclif's own parse errors (unknown flag, missing argument) are usage errors.
    if (err.oclif?.exit === 2 || err.name === 'CLIError' || /Unexpected argument|Missing required|Nonexistent flag/.test(err.message)) {
      if (err.oclif?.exit !== undefined && err.oclif.exit !== 2) return super.catch(err);
      reportError(this.usageMessage(err.message), ExitCode.invalidInput, { json: this.jsonEnabled() });
      this.exit(ExitCode.invalidInput);
    }
    // oclif's own errors keep their exit codes; anything else is a bug of ours: said so, with where to report it.
    if (err.oclif?.exit !== undefined) return super.catch(err);
    reportError(internalErrorMessage(err), ExitCode.failure, { json: this.jsonEnabled() });
    this.exit(ExitCode.failure);
  }

  /** oclif's parse error, with the nearest flag for a mistyped one and the help to read. */
  private usageMessage(message: string): string {
    // oclif adds a note on flags taking several values to every missing-argument error; ours take one
    // value per occurrence (multipleNonGreedy), so arguments may come anywhere and the note is wrong.
    let text = message.replace(/\n\nNote: .* allows? multiple values\..*\nAlternatively, you can use "--" .*/, '');
    const help = `see rocm-ebuild ${this.id ? `${this.id.replaceAll(':', ' ')} ` : ''}--help`;
    text = text.replace(/\nSee more help with --help$/, '');
    // A required flag or argument left out: what it is and how to give it, in our words.
    const command = { bin: this.config.bin, id: this.id ?? '', examples: this.ctor.examples as never };
    const flags = missingFlagsMessage(text, { ...(this.ctor.flags ?? {}) }, help, command);
    if (flags) return flags;
    const args = missingArgsMessage(text, this.ctor.args ?? {}, help, command);
    if (args) return args;
    const unknown = /^Nonexistent flags?: (.*)$/m.exec(text)?.[1];
    if (unknown !== undefined) {
      const names = [...Object.keys(this.ctor.flags ?? {}), ...Object.keys(this.ctor.baseFlags ?? {}), 'json', 'help'];
      const flags = unknown.split(', ');
      const hints = flags.flatMap((f) => {
        const near = closest(f.replace(/^-+/, '').replace(/=.*/, ''), names);
        return near ? [flags.length === 1 ? `did you mean --${near}?` : `${f}: did you mean --${near}?`] : [];
      });
      if (hints.length) return `${text}; ${hints.join('; ')}`;
    }
    // Flags that exclude each other: oclif says it once from each side, with "=true".
    const exclusive = [...text.matchAll(/^\s*--([\w-]+)(?:=\S*)? cannot also be provided when using --([\w-]+)\s*$/gm)];
    if (exclusive.length) {
      const pairs = [...new Set(exclusive.map((m) => [m[1]!, m[2]!].sort().join(' and --')))];
      return `--${pairs.join('; --')} cannot be given together: choose one; ${help}`;
    }
    // A --format value offered by --json (`gpu list --format json`).
    if (/^Expected --format=json to be one of/.test(text)) return `${text}; JSON is --json, as for every command`;
    return `${text}; ${help}`;
  }
}
