/**
 * What the user's terminal and flags allow on stderr: whether a line may be
 * redrawn in place, and how much the commands say besides their results.
 */

/**
 * A terminal that understands cursor movement: a TTY whose TERM is not
 * "dumb" (Emacs' shell buffers, some serial consoles and CI runners set it;
 * there `\r\x1b[2K` shows up as text). Anything else gets plain lines.
 */
export function liveTerminal(stream: { isTTY?: boolean } = process.stderr, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/**
 * --quiet and --verbose, set once per process by the command before it runs:
 * quiet silences progress and notices (never results, warnings or errors),
 * verbose lets commands that have more to say say it. A process-wide setting
 * because progress is created deep inside the steps, which know no flags.
 */
export type Verbosity = 'quiet' | 'normal' | 'verbose';

let current: Verbosity = 'normal';

export function setVerbosity(level: Verbosity): void {
  current = level;
}

export function verbosity(): Verbosity {
  return current;
}

/** A notice on stderr (where the distdir is, what was skipped): said unless --quiet. */
export function notice(text: string, stream: { write(s: string): unknown } = process.stderr): void {
  if (current !== 'quiet') stream.write(`${text}\n`);
}
