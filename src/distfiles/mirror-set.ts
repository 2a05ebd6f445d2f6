import type { Dispatcher } from 'undici';
import { get } from './http.js';
import { mirrorFileUrl, parseLayoutConf, type MirrorLayout } from './mirrors.js';
import { classifyError } from './retry-policy.js';
import type { DistfileAttempt } from './types.js';

export interface Candidate {
  url: string;
  /** Set for mirror URLs: the mirror directory it belongs to. */
  mirror?: string;
}

const MAX_LAYOUT_CONF = 64 * 1024;

type Probe = { ok: true; layout: MirrorLayout } | { ok: false; outcome: string };

/**
 * The mirrors of one run. Each mirror's layout.conf is asked for once; a mirror
 * that cannot be reached at all, then or later, is skipped for the rest of the
 * run instead of costing every file its retries.
 */
export class MirrorSet {
  private readonly probes = new Map<string, Promise<Probe>>();
  private readonly dead = new Map<string, string>();

  constructor(
    readonly mirrors: string[],
    private readonly http: { dispatcher: Dispatcher; timeoutMs: number; signal?: AbortSignal },
  ) {}

  /** Mirror URLs for `name`, in mirror order, and notes on mirrors that are being skipped. */
  async candidatesFor(name: string): Promise<{ candidates: Candidate[]; skipped: DistfileAttempt[] }> {
    const candidates: Candidate[] = [];
    const skipped: DistfileAttempt[] = [];
    for (const mirror of this.mirrors) {
      const probe = await this.probe(mirror);
      const deadReason = this.dead.get(mirror) ?? (probe.ok ? undefined : probe.outcome);
      if (deadReason !== undefined) {
        skipped.push({ url: mirror, outcome: `mirror skipped: ${deadReason}` });
        continue;
      }
      if (probe.ok) candidates.push({ url: mirrorFileUrl(mirror, probe.layout, name), mirror });
    }
    return { candidates, skipped };
  }

  markDead(mirror: string, reason: string): void {
    if (!this.dead.has(mirror)) this.dead.set(mirror, reason);
  }

  private probe(mirror: string): Promise<Probe> {
    let p = this.probes.get(mirror);
    if (!p) {
      p = this.fetchLayout(mirror);
      this.probes.set(mirror, p);
    }
    return p;
  }

  private async fetchLayout(mirror: string): Promise<Probe> {
    const url = `${mirror.replace(/\/+$/, '')}/layout.conf`;
    try {
      const res = await get(url, { ...this.http });
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => undefined);
        // No layout.conf: a flat mirror, by GLEP 75's rule and by --mirror's contract.
        return { ok: true, layout: { kind: 'flat' } };
      }
      const text = await res.body.text(MAX_LAYOUT_CONF);
      return { ok: true, layout: parseLayoutConf(text) };
    } catch (err) {
      const c = classifyError(err);
      return { ok: false, outcome: `${url}: ${c.outcome}` };
    }
  }
}
