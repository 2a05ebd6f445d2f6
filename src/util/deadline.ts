/**
 * A bound on a whole operation (`--timeout` of the upstream commands): every
 * remote call it makes gets what is left of it, not a fresh allowance of its
 * own. Forty repositories that each stall do not take forty timeouts.
 */
export class Deadline {
  private readonly at: number;
  private controller?: AbortController;

  /** `seconds` undefined: no bound on the whole; each call still gets `perCallMs`. */
  constructor(
    readonly seconds: number | undefined,
    readonly perCallMs: number,
  ) {
    this.at = seconds === undefined ? Infinity : Date.now() + seconds * 1000;
  }

  /** Milliseconds one call may take now: what is left of the whole, at most `perCallMs`; 0 once it has passed. */
  callMs(): number {
    return Math.max(0, Math.min(this.perCallMs, this.at - Date.now()));
  }

  expired(): boolean {
    return Date.now() >= this.at;
  }

  /** Aborted when the whole operation's time is up (never, without a bound). */
  get signal(): AbortSignal | undefined {
    if (this.seconds === undefined) return undefined;
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      const left = this.at - Date.now();
      if (left <= 0) controller.abort();
      // unref: a pending bound must not keep the process alive after the work is done.
      else setTimeout(() => controller.abort(), left).unref();
    }
    return this.controller.signal;
  }

  /** Why a call that ran out of time did: the whole bound, or the single call's. */
  reason(): string {
    return this.expired() && this.seconds !== undefined ? `not answered before the --timeout of ${this.seconds} s` : `no answer within ${Math.round(this.perCallMs / 1000)} s`;
  }
}
