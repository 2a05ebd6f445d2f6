import { useColor } from '../util/progress.js';
import { liveTerminal, verbosity } from '../util/terminal.js';
import { hostOf } from './host-health.js';
import type { DistfileAttempt, DistfileFailureCause, DistfileProgress, DistfileResult } from './types.js';
import { formatBytes, formatDuration, formatRate, RateMeter } from './units.js';

export interface DistfileProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Nothing at all (with --json, where stdout carries the results). */
  quiet?: boolean;
  /** Force the live display on or off; defaults to a terminal that is not TERM=dumb. */
  tty?: boolean;
  /** Defaults to useColor(stream): off for NO_COLOR and for non-TTYs. */
  color?: boolean;
  /** Clock, for tests. */
  now?: () => number;
  /** Non-TTY: how often a total line is printed while downloading (default 10 s). TTY: redraw interval (default 100 ms). */
  intervalMs?: number;
}

export const silentProgress: DistfileProgress = {
  begin() {},
  downloading() {},
  received() {},
  attemptFailed() {},
  hashing() {},
  finished() {},
  end() {},
};

interface FileState {
  size?: number;
  bytes: number;
  /** Bytes already on disk when this run started on it (resume): not part of the rate. */
  offset: number;
  startedAt?: number;
  phase: 'queued' | 'download' | 'hash';
  /** A download (planned or started): only these make up the byte totals, not files merely re-hashed. */
  counted: boolean;
}

/** Shared bookkeeping of both displays: per-file bytes and the totals with rate and ETA. */
class Tally {
  readonly files = new Map<string, FileState>();
  readonly meter = new RateMeter();
  fileCount = 0;
  settled = 0;

  constructor(readonly now: () => number) {}

  state(name: string): FileState {
    let s = this.files.get(name);
    if (!s) {
      s = { bytes: 0, offset: 0, phase: 'queued', counted: false };
      this.files.set(name, s);
    }
    return s;
  }

  /** The run's plan: how many files, and which will be downloaded (with sizes when known). */
  plan(plan: { files: number; downloads: { name: string; size?: number }[] }): void {
    this.fileCount = plan.files;
    for (const d of plan.downloads) {
      const s = this.state(d.name);
      s.counted = true;
      if (d.size !== undefined) s.size = d.size;
    }
  }

  /** A download attempt starts: both reporters record it the same way. */
  startDownload(name: string, info: { offset: number; size?: number }): FileState {
    const s = this.state(name);
    s.phase = 'download';
    s.counted = true;
    s.offset = info.offset;
    s.bytes = info.offset;
    s.startedAt ??= this.now();
    this.meter.mark(this.now());
    if (info.size !== undefined) s.size = info.size;
    return s;
  }

  totals(): { bytes: number; size?: number; rate?: number; etaMs?: number } {
    let bytes = 0;
    let size = 0;
    let known = true;
    for (const f of this.files.values()) {
      if (!f.counted) continue;
      bytes += f.bytes;
      if (f.size === undefined) known = false;
      else size += f.size;
    }
    const rate = this.meter.rate(this.now());
    const out: { bytes: number; size?: number; rate?: number; etaMs?: number } = { bytes };
    if (rate !== undefined) out.rate = rate;
    if (known) {
      out.size = size;
      if (rate && rate > 0) out.etaMs = ((size - bytes) / rate) * 1000;
    }
    return out;
  }

  totalLine(): string {
    const t = this.totals();
    const parts = [`${this.settled}/${this.fileCount} files`];
    parts.push(t.size !== undefined ? `${formatBytes(t.bytes)} of ${formatBytes(t.size)}` : formatBytes(t.bytes));
    if (t.rate !== undefined) parts.push(formatRate(t.rate));
    if (t.etaMs !== undefined && this.settled < this.fileCount) parts.push(`ETA ${formatDuration(t.etaMs)}`);
    return parts.join(', ');
  }
}

const HOST_LEVEL: ReadonlySet<DistfileFailureCause> = new Set(['dns', 'connect', 'proxy', 'tls']);

/**
 * Keeps one unreachable host from filling the log: the first file that hits
 * it shows its attempts and its failure, the files after it are counted and
 * summed up in the closing line. Per-file detail is in the results.
 */
class Repeats {
  /** host and cause → the file whose lines are shown for it. */
  private readonly shownBy = new Map<string, string>();
  private readonly hidden = new Map<string, number>();
  /** host and cause → how the closing line names it ("github.com: name not resolved"). */
  private readonly labels = new Map<string, string>();

  /** Whether to show this attempt's line. */
  attempt(name: string, attempt: DistfileAttempt): boolean {
    return this.claim(this.key(attempt.cause, hostOf(attempt.url)), name);
  }

  /** Whether to show this finished file's line; counts the ones not shown. */
  finished(r: DistfileResult): boolean {
    const f = r.failure;
    const key = this.key(f?.cause, f?.host);
    if (key === undefined) return true;
    this.labels.set(key, `${f!.host ?? '?'}: ${f!.summary}`);
    if (this.claim(key, r.name)) return true;
    this.hidden.set(key, (this.hidden.get(key) ?? 0) + 1);
    return false;
  }

  /** "N more failures of host: cause" for the closing line. */
  summary(): string[] {
    return [...this.hidden].map(([key, n]) => `${n} more failure${n === 1 ? '' : 's'} of ${this.labels.get(key) ?? key}`);
  }

  private key(cause: DistfileFailureCause | undefined, host: string | undefined): string | undefined {
    return cause && HOST_LEVEL.has(cause) ? `${host ?? '?'}\0${cause}` : undefined;
  }

  private claim(key: string | undefined, name: string): boolean {
    if (key === undefined) return true;
    const owner = this.shownBy.get(key);
    if (owner === undefined) this.shownBy.set(key, name);
    return owner === undefined || owner === name;
  }
}

function paint(color: boolean, code: number, text: string): string {
  return color ? `\x1b[${code}m${text}\x1b[0m` : text;
}

function summary(r: DistfileResult, state: FileState | undefined, now: number): string {
  if (r.status === 'fetched') {
    const size = r.entry ? formatBytes(r.entry.size) : '';
    const took = state?.startedAt !== undefined ? now - state.startedAt : undefined;
    const rate = took && took > 0 && state ? `, ${formatRate(((state.bytes - state.offset) * 1000) / took)}` : '';
    return `fetched ${size}${took !== undefined ? ` in ${formatDuration(took)}${rate}` : ''} from ${r.source ?? '?'}`;
  }
  if (r.status === 'present') return 'present';
  return r.error ?? r.status;
}

function label(r: DistfileResult): { text: string; code: number } {
  switch (r.status) {
    case 'fetched':
    case 'present':
      return { text: 'ok', code: 32 };
    case 'missing':
      return { text: 'MISSING', code: 33 };
    default:
      return { text: 'FAILED', code: 31 };
  }
}

/**
 * A display for ensureDistfiles. On a TTY: a live block with one line per file
 * being downloaded or hashed and a total line (bytes, rate, ETA), redrawn in
 * place on stderr, with finished files and retries printed above it. Elsewhere
 * (CI, pipes): one plain line per event and a total line every `intervalMs`.
 */
export function createProgress(options: DistfileProgressOptions = {}): DistfileProgress {
  if (options.quiet || verbosity() === 'quiet') return silentProgress;
  const stream = options.stream ?? process.stderr;
  const tty = options.tty ?? liveTerminal(stream);
  const color = options.color ?? useColor(stream);
  const now = options.now ?? Date.now;
  return tty ? liveProgress(stream, color, now, options.intervalMs ?? 100) : lineProgress(stream, color, now, options.intervalMs ?? 10_000);
}

function lineProgress(stream: NodeJS.WriteStream, color: boolean, now: () => number, intervalMs: number): DistfileProgress {
  const tally = new Tally(now);
  const counts = { present: 0, fetched: 0, missing: 0, failed: 0 };
  const repeats = new Repeats();
  let lastTotal = now();
  const write = (line: string) => stream.write(`${line}\n`);
  return {
    begin(plan) {
      tally.plan(plan);
      const known = plan.downloads.reduce((n, d) => n + (d.size ?? 0), 0);
      const size = plan.downloads.length > 0 && known > 0 ? ` (${formatBytes(known)} known)` : '';
      write(`distfiles: ${plan.files} files, ${plan.downloads.length} to download${size}`);
      lastTotal = now();
    },
    downloading(name, info) {
      tally.startDownload(name, info);
      const resume = info.offset > 0 ? `, resuming at ${formatBytes(info.offset)}` : '';
      const size = info.size !== undefined ? ` (${formatBytes(info.size)}${resume})` : resume ? ` (${resume.slice(2)})` : '';
      write(`fetch   ${name}${size} from ${info.url}`);
    },
    received(name, bytes) {
      const s = tally.state(name);
      if (bytes > s.bytes) tally.meter.add(now(), bytes - s.bytes);
      s.bytes = bytes;
      if (now() - lastTotal >= intervalMs) {
        lastTotal = now();
        write(`        ${tally.totalLine()}`);
      }
    },
    attemptFailed(name, attempt, retryInMs) {
      if (!repeats.attempt(name, attempt)) return;
      const then = retryInMs !== undefined ? `; trying again in ${formatDuration(retryInMs)}` : '';
      write(`${paint(color, 33, retryInMs !== undefined ? 'retry ' : 'skip  ')}  ${name}: ${attempt.outcome} (${attempt.url})${then}`);
    },
    hashing(name, size) {
      const s = tally.state(name);
      s.phase = 'hash';
      s.size ??= size;
    },
    waiting(name, holder) {
      write(`wait    ${name}: being downloaded by ${holder} (another run sharing this distdir); waiting for it`);
    },
    finished(r) {
      tally.settled++;
      counts[r.status]++;
      const s = tally.files.get(r.name);
      if (s && r.entry) s.bytes = s.size = r.entry.size;
      else if (s && r.status !== 'fetched') tally.files.delete(r.name);
      // A file that was simply there and right is counted in the closing line, not logged.
      if (r.status === 'present' && r.attempts.length === 0) return;
      if (!repeats.finished(r)) return;
      const l = label(r);
      write(`${paint(color, l.code, l.text.padEnd(7))} ${r.name} ${r.status === 'fetched' || r.status === 'present' ? summary(r, s, now()) : `— ${summary(r, s, now())}`}`);
    },
    end() {
      if (tally.fileCount === 0) return;
      const parts = (['present', 'fetched', 'missing', 'failed'] as const).filter((k) => counts[k] > 0).map((k) => `${counts[k]} ${k}`);
      const hidden = repeats.summary();
      write(`distfiles: ${parts.join(', ') || 'none'}${hidden.length > 0 ? ` (${hidden.join('; ')}, not listed)` : ''}`);
    },
  };
}

function liveProgress(stream: NodeJS.WriteStream, color: boolean, now: () => number, intervalMs: number): DistfileProgress {
  const tally = new Tally(now);
  const repeats = new Repeats();
  let drawn = 0;
  let timer: NodeJS.Timeout | undefined;
  let active = false;

  const erase = () => {
    if (drawn === 0) return;
    stream.write(`\r${drawn > 1 ? `\x1b[${drawn - 1}A` : ''}\x1b[J`);
    drawn = 0;
  };
  const fit = (line: string) => {
    const width = (stream.columns ?? 80) - 1;
    return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
  };
  const fileLine = (name: string, f: FileState): string => {
    const pct = f.size ? `${Math.floor((f.bytes / f.size) * 100)}%`.padStart(4) : '    ';
    const bar = f.size ? barOf(f.bytes / f.size, 20) : ' '.repeat(20);
    const what = f.phase === 'hash' ? 'hashing' : `${formatBytes(f.bytes)}${f.size !== undefined ? ` / ${formatBytes(f.size)}` : ''}`;
    const elapsed = f.startedAt !== undefined ? now() - f.startedAt : 0;
    const rate = f.phase === 'download' && elapsed > 500 ? `  ${formatRate(((f.bytes - f.offset) * 1000) / elapsed)}` : '';
    return `  ${name.length > 40 ? `${name.slice(0, 39)}…` : name.padEnd(40)} ${bar} ${pct}  ${what}${rate}`;
  };
  const draw = () => {
    erase();
    const lines: string[] = [];
    const busy = [...tally.files.entries()].filter(([, f]) => f.phase === 'download' || f.phase === 'hash');
    const shown = busy.slice(0, 8);
    for (const [name, f] of shown) lines.push(fit(fileLine(name, f)));
    if (busy.length > shown.length) lines.push(`  … and ${busy.length - shown.length} more`);
    lines.push(fit(paint(color, 1, tally.totalLine())));
    stream.write(lines.join('\n'));
    drawn = lines.length;
  };
  const note = (text: string) => {
    erase();
    stream.write(`${text}\n`);
    if (active) draw();
  };
  return {
    begin(plan) {
      tally.plan(plan);
      active = true;
      timer = setInterval(draw, intervalMs);
      timer.unref();
      draw();
    },
    downloading(name, info) {
      tally.startDownload(name, info);
    },
    received(name, bytes) {
      const s = tally.state(name);
      if (bytes > s.bytes) tally.meter.add(now(), bytes - s.bytes);
      s.bytes = bytes;
    },
    attemptFailed(name, attempt, retryInMs) {
      if (!repeats.attempt(name, attempt)) return;
      const then = retryInMs !== undefined ? `; trying again in ${formatDuration(retryInMs)}` : '';
      note(`${paint(color, 33, '!')} ${name}: ${attempt.outcome} (${attempt.url})${then}`);
    },
    hashing(name, size) {
      const s = tally.state(name);
      s.phase = 'hash';
      s.size ??= size;
      s.bytes = s.size;
    },
    waiting(name, holder) {
      note(`${paint(color, 33, '…')} ${name}: being downloaded by ${holder} (another run sharing this distdir); waiting for it`);
    },
    finished(r) {
      tally.settled++;
      const s = tally.files.get(r.name);
      if (s && r.entry) {
        s.bytes = s.size = r.entry.size;
        s.phase = 'queued';
      } else if (s) tally.files.delete(r.name);
      const ok = r.status === 'fetched' || r.status === 'present';
      // Present files that were already fine would flood the screen: the total line counts them.
      if (r.status === 'present' && r.attempts.length === 0) return;
      if (!repeats.finished(r)) return;
      note(`${paint(color, ok ? 32 : 31, ok ? '✓' : '✗')} ${r.name} ${summary(r, s, now())}`);
    },
    end() {
      active = false;
      if (timer) clearInterval(timer);
      erase();
      const hidden = repeats.summary();
      stream.write(`${tally.totalLine()}${hidden.length > 0 ? ` (${hidden.join('; ')}, not listed)` : ''}\n`);
    },
  };
}

function barOf(fraction: number, width: number): string {
  const filled = Math.max(0, Math.min(width, Math.round(fraction * width)));
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}
