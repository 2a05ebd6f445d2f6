import { ExitCode, type ExitCodeValue } from './exit-codes.js';

/**
 * An error meant for the user: it carries the exit code and, optionally,
 * structured details that `--json` prints as they are.
 */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.invalidInput,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'UserError';
  }
}
