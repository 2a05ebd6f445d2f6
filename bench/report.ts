/** What a bench module's run() returns: timings and ratios measured in one run, on one machine. */
export interface BenchFigure {
  label: string;
  /** Wall time: the median of the runs (or the one run). */
  seconds: number;
  /** Fastest and slowest run's wall time, when there were several. */
  min?: number;
  max?: number;
  /** CPU time (user + system, children included), median: unlike wall time, barely moved by other load on the machine. */
  cpuSeconds?: number;
  /** Peak resident memory of the process, MiB. */
  peakMiB?: number;
  /** Throughput or other context, already formatted. */
  detail?: string;
}

export interface BenchRatio {
  label: string;
  /** The median of the paired ratios of alternating runs (or the ratio of medians). */
  value: number;
  min?: number;
  max?: number;
  /** The goal, when there is one: the ratio must be at most this. */
  goal?: number;
  note?: string;
}

export interface BenchReport {
  title: string;
  figures: BenchFigure[];
  ratios: BenchRatio[];
  notes?: string[];
}
