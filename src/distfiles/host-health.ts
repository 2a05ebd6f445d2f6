import { HOST_CAUSES, type Classified, type FailureCause } from './retry-policy.js';

export interface HostDown {
  host: string;
  cause: FailureCause;
  summary: string;
}

/** `host:port` of a URL, as the user reads it in a report ("github.com", "127.0.0.1:8080"). */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * Hosts this run could not talk to at all: their name did not resolve, the
 * connection was refused or timed out, the proxy refused them, or TLS failed.
 * Once a URL of a host failed that way after its retries, the run's other
 * files skip the host instead of each paying the same timeouts (77 files of
 * one unreachable github.com would otherwise take the run's retries 77
 * times). An HTTP error is not such a failure: a mirror that answers 500 for
 * one file is asked again for the next.
 */
export class HostHealth {
  private readonly down = new Map<string, HostDown>();

  /** Why `url`'s host is being skipped, or undefined. */
  check(url: string): HostDown | undefined {
    return this.down.get(hostOf(url));
  }

  /** Records a failure of `url`; only host-level causes mark its host down. */
  report(url: string, failure: Pick<Classified, 'cause' | 'summary'>): void {
    if (!HOST_CAUSES.has(failure.cause)) return;
    const host = hostOf(url);
    if (!this.down.has(host)) this.down.set(host, { host, cause: failure.cause, summary: failure.summary });
  }
}
