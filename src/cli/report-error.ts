import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../paths.js';
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

/** Where bugs are reported: package.json's `bugs` (its url, or the string form). */
export function bugTracker(root = projectRoot): string | undefined {
  try {
    const bugs = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { bugs?: string | { url?: string } }).bugs;
    return typeof bugs === 'string' ? bugs : bugs?.url;
  } catch {
    return undefined;
  }
}

/**
 * An error no check of ours raised (a TypeError, a failed assumption): a bug of
 * rocm-ebuild, not something the user did, said as such with where to report
 * it and what to send (the command line, the message and where it happened).
 */
export function internalErrorMessage(err: Error): string {
  const where = bugTracker();
  const stack = (err.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).slice(0, 8).map((l) => `  ${l.trim()}`);
  return (
    `internal error: ${err.name === 'Error' ? '' : `${err.name}: `}${err.message}\n` +
    `This is a bug in rocm-ebuild, not a problem with your input: please report it ${where ? `at ${where}` : 'where you got rocm-ebuild from (its repository\'s issues)'}, with the command you ran, its version (rocm-ebuild --version) and these lines:` +
    (stack.length > 0 ? `\n${stack.join('\n')}` : '')
  );
}
