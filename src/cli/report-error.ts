import { printable, terminalSafeJson } from '../util/printable.js';

/**
 * The one error format of every command: `rocm-ebuild: <message>` on standard error, or with
 * --json `{ "error": { "message", "exitCode", "details" } }` on standard output, so a program
 * reading the JSON never has to parse text. Also used where no command ran (an unknown command).
 */
export function reportError(message: string, exitCode: number, options: { json: boolean; details?: unknown }): void {
  if (options.json) {
    process.stdout.write(`${terminalSafeJson({ error: { message, exitCode, details: options.details ?? null } })}\n`);
  } else {
    // Messages quote what users and repositories wrote: nothing in them may act on the terminal (newlines stay).
    process.stderr.write(`rocm-ebuild: ${printable(message)}\n`);
  }
}

/** Whether the command line asks for JSON (before `--`, as oclif reads it). */
export function wantsJson(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--json') return true;
  }
  return false;
}
