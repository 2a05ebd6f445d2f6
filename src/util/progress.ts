import { printable } from './printable.js';
import { liveTerminal, verbosity } from './terminal.js';

/**
 * Progress for long work. Step texts often name things read from outside (a
 * project, a file): they go through the terminal-safe printer. On a TTY it redraws one status line on stderr; when
 * stderr is not a TTY (CI, pipes, tests) it prints one plain line per step so
 * logs stay readable and other programs can follow along; so it does on a
 * TTY whose TERM is "dumb". `quiet` silences it (used with --json so stdout
 * stays machine-readable and stderr calm), and so does --quiet.
 */
export interface Progress {
  /** A step has started or finished; `current`/`total` count steps. */
  step(current: number, total: number, text: string): void;
  /** A one-off message that must stay visible (not overwritten on a TTY). */
  note(text: string): void;
  /** Clear any transient line. */
  done(): void;
}

export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  quiet?: boolean;
  /** Force TTY behaviour on or off (tests); defaults to a terminal that is not TERM=dumb. */
  tty?: boolean;
}

export function useColor(stream: NodeJS.WriteStream = process.stderr): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false;
  if (process.env.FORCE_COLOR === '0') return false;
  // A dumb terminal shows escape sequences as text, colours included.
  return liveTerminal(stream);
}

export function createProgress(options: ProgressOptions = {}): Progress {
  const stream = options.stream ?? process.stderr;
  if (options.quiet || verbosity() === 'quiet') return { step() {}, note() {}, done() {} };
  const tty = options.tty ?? liveTerminal(stream);
  if (!tty) {
    return {
      step(current, total, text) {
        stream.write(`[${current}/${total}] ${printable(text, { oneLine: true })}\n`);
      },
      note(text) {
        stream.write(`${printable(text)}\n`);
      },
      done() {},
    };
  }
  let shown = false;
  const clear = () => {
    if (shown) stream.write('\r\x1b[2K');
    shown = false;
  };
  return {
    step(current, total, text) {
      clear();
      const width = stream.columns ?? 80;
      const line = `[${current}/${total}] ${printable(text, { oneLine: true })}`;
      stream.write(line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line);
      shown = true;
    },
    note(text) {
      clear();
      stream.write(`${printable(text)}\n`);
    },
    done() {
      clear();
    },
  };
}
