import { Command } from '#oclif';
import { ExitCode } from './exit-codes.js';
import { UserError } from './errors.js';

/**
 * Common behaviour of every command: `--json` (oclif prints what run() returns),
 * user errors mapped to documented exit codes, and plain-text messages without
 * stack traces for anything the user can act on.
 */
export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;

  protected override async catch(err: Error & { code?: string; exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    // this.exit(n) throws oclif's ExitError: not a failure to report, just the
    // exit code to use (with --json, oclif would otherwise print it as an error).
    if (err.code === 'EEXIT') throw err;
    if (err instanceof UserError) {
      if (this.jsonEnabled()) {
        this.logJson({ error: { message: err.message, exitCode: err.exitCode, details: err.details ?? null } });
      } else {
        process.stderr.write(`rocm-ebuild: ${err.message}\n`);
      }
      this.exit(err.exitCode);
    }
    // oclif's own parse errors (unknown flag, missing argument) are usage errors.
    if (err.oclif?.exit === 2 || err.name === 'CLIError' || /Unexpected argument|Missing required|Nonexistent flag/.test(err.message)) {
      if (err.oclif?.exit !== undefined && err.oclif.exit !== 2) return super.catch(err);
      // oclif adds a note on flags taking several values to every missing-argument error; ours take one
      // value per occurrence (multipleNonGreedy), so arguments may come anywhere and the note is wrong.
      const message = err.message.replace(/\n\nNote: .* allows? multiple values\..*\nAlternatively, you can use "--" .*/, '');
      process.stderr.write(`rocm-ebuild: ${message}\n`);
      this.exit(ExitCode.invalidInput);
    }
    return super.catch(err);
  }
}
