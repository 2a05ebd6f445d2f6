import { Errors, type Hook } from '#oclif';
import { ExitCode } from './exit-codes.js';
import { unknownCommand } from './command-words.js';
import { reportError, wantsJson } from './report-error.js';

/**
 * oclif's hook for a command line that names no command: our error format and exit code 2, with
 * the nearest command, instead of oclif's "command bmp:6.2.2 not found".
 */
const hook: Hook<'command_not_found'> = async function (options) {
  const argv = options.argv ?? [];
  reportError(unknownCommand(options.config.commandIDs, options.id, argv), ExitCode.invalidInput, { json: wantsJson(argv) });
  throw new Errors.ExitError(ExitCode.invalidInput);
};

export default hook;
