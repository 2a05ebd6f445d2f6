const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Bytes per second over the last `windowMs`, so the rate follows the link rather than the whole run's average. */
export class RateMeter {
  private readonly samples: { t: number; bytes: number }[] = [];
  private total = 0;

  constructor(private readonly windowMs = 5000) {}

  /** A transfer starts now: without this the first chunk's bytes would have no time to be spread over. */
  mark(now: number): void {
    this.add(now, 0);
  }

  add(now: number, bytes: number): void {
    this.total += bytes;
    this.samples.push({ t: now, bytes: this.total });
    while (this.samples.length > 2 && this.samples[0]!.t < now - this.windowMs) this.samples.shift();
  }

  rate(now: number): number | undefined {
    const first = this.samples[0];
    if (!first) return undefined;
    const span = now - first.t;
    if (span < 250) return undefined;
    return ((this.total - first.bytes) * 1000) / span;
  }
}
