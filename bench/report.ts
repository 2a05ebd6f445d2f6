/** What a bench module's run() returns: timings and ratios measured in one run, on one machine. */
export interface BenchFigure {
  label: string;
  seconds: number;
  /** CPU time (user + system) of that best run, all threads: unlike wall time, barely moved by other load on the machine. */
  cpuSeconds?: number;
  /** Throughput or other context, already formatted. */
  detail?: string;
}

export interface BenchRatio {
  label: string;
  value: number;
  note?: string;
}

export interface BenchReport {
  title: string;
  figures: BenchFigure[];
  ratios: BenchRatio[];
  notes?: string[];
}
