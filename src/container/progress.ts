import { createProgress, type Progress } from '../util/progress.js';
import { liveTerminal, verbosity } from '../util/terminal.js';
import { duration } from './markdown.js';

/**
 * The live line of a test run: container, atom, phase and elapsed time,
 * redrawn every second on a terminal; on a pipe or in CI one plain line per
 * change (no clock), so logs stay short.
 */
export class TestProgress {
  private readonly progress: Progress;
  private readonly tty: boolean;
  private timer?: NodeJS.Timeout;
  private state = { label: '', done: 0, total: 0, what: '', since: Date.now() };
  private lastPlain = '';

  constructor(options: { quiet: boolean; stream?: NodeJS.WriteStream; tty?: boolean }) {
    const stream = options.stream ?? process.stderr;
    this.tty = !options.quiet && verbosity() !== 'quiet' && (options.tty ?? liveTerminal(stream));
    this.progress = createProgress({ stream, quiet: options.quiet, tty: this.tty });
  }

  start(): void {
    if (this.tty) {
      this.timer = setInterval(() => this.draw(), 1000);
      this.timer.unref();
    }
  }

  /** `what`: "sci-libs/rocBLAS compile", "dependencies", "resolving"… */
  update(label: string, done: number, total: number, what: string): void {
    if (what !== this.state.what || label !== this.state.label) this.state.since = Date.now();
    this.state = { ...this.state, label, done, total, what };
    this.draw();
  }

  note(text: string): void {
    this.progress.note(text);
  }

  private draw(): void {
    const { label, done, total, what, since } = this.state;
    if (!what) return;
    const text = `${label} ${what}`;
    if (this.tty) {
      this.progress.step(done, total, `${text} ${duration((Date.now() - since) / 1000)}`);
    } else if (text !== this.lastPlain) {
      this.lastPlain = text;
      this.progress.step(done, total, text);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.progress.done();
  }
}
