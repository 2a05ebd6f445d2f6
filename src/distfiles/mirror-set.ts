import type { Dispatcher } from 'undici';
import { get } from './http.js';
import type { HostHealth } from './host-health.js';
import { mirrorFileUrl, parseLayoutConf, type MirrorLayout } from './mirrors.js';
import { classifyError, classifyStatus, type Classified } from './retry-policy.js';
import type { DistfileAttempt } from './types.js';

export interface Candidate {
  url: string;
  /** Set for mirror URLs: the mirror directory it belongs to. */
  mirror?: string;
}

const MAX_LAYOUT_CONF = 64 * 1024;

type Probe = { ok: true; layout: MirrorLayout } | { ok: false; failure: Classified; url: string };

/**
 * The mirrors of one run. Each mirror's layout.conf is asked for once, and
 * the answer kept, when the answer means something: a layout.conf (its
 * layout), or a 404-like status (a flat mirror). A 5xx or a network error on
 * the way says nothing about the layout: the file at hand skips the mirror
 * and the next file asks again. A mirror whose host cannot be talked to at
 * all (name, connection, proxy, TLS) is skipped by the whole run, through
 * HostHealth, like any other host.
 */
export class MirrorSet {
  private readonly probes = new Map<string, Promise<Probe>>();

  constructor(
    readonly mirrors: string[],
    private readonly http: { dispatcher: Dispatcher; timeoutMs: number; signal?: AbortSignal },
    private readonly hosts: HostHealth,
  ) {}

  /** Mirror URLs for `name`, in mirror order, and notes on mirrors that are being skipped. */
  async candidatesFor(name: string): Promise<{ candidates: Candidate[]; skipped: DistfileAttempt[] }> {
    const candidates: Candidate[] = [];
    const skipped: DistfileAttempt[] = [];
    for (const mirror of this.mirrors) {
      const down = this.hosts.check(mirror);
      if (down) {
        skipped.push({ url: mirror, outcome: `mirror skipped: ${down.host} failed earlier in this run (${down.summary})`, cause: down.cause });
        continue;
      }
      const probe = await this.probe(mirror);
      if (!probe.ok) {
        skipped.push({ url: mirror, outcome: `mirror skipped: ${probe.url}: ${probe.failure.outcome}`, cause: probe.failure.cause });
        continue;
      }
      candidates.push({ url: mirrorFileUrl(mirror, probe.layout, name), mirror });
    }
    return { candidates, skipped };
  }

  private probe(mirror: string): Promise<Probe> {
    let p = this.probes.get(mirror);
    if (!p) {
      p = this.fetchLayout(mirror);
      this.probes.set(mirror, p);
      // An answer that says nothing about the layout is not kept: the next file asks again.
      void p.then((r) => {
        if (!r.ok && this.probes.get(mirror) === p) this.probes.delete(mirror);
      });
    }
    return p;
  }

  private async fetchLayout(mirror: string): Promise<Probe> {
    const url = `${mirror.replace(/\/+$/, '')}/layout.conf`;
    try {
      const res = await get(url, { ...this.http });
      if (res.statusCode !== 200) {
        await res.body.dump();
        const status = classifyStatus(res.statusCode);
        if (status.kind === 'transient') return { ok: false, failure: status, url };
        // No layout.conf: a flat mirror, by GLEP 75's rule and by --mirror's contract.
        return { ok: true, layout: { kind: 'flat' } };
      }
      const text = await res.body.text(MAX_LAYOUT_CONF);
      return { ok: true, layout: parseLayoutConf(text) };
    } catch (err) {
      const failure = classifyError(err);
      this.hosts.report(url, failure);
      return { ok: false, failure, url };
    }
  }
}
