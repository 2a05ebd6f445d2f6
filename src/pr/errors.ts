import { UserError } from '../util/errors.js';
import type { ExitCodeValue } from '../util/exit-codes.js';

/** A user error whose hint is printed too (details alone only reach --json). */
export function prError(message: string, exitCode: ExitCodeValue, hint?: string, details: Record<string, unknown> = {}): UserError {
  return new UserError(hint ? `${message}\n  hint: ${hint}` : message, exitCode, { ...details, ...(hint ? { hint } : {}) });
}
