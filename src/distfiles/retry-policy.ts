import type { DistfileFailureCause } from './types.js';

/**
 * What a failed attempt means for the next one:
 * - `transient`: the same URL may well work if asked again (5xx, 429, reset,
 *   timeout, truncated body); retried with backoff, resuming what arrived.
 * - `wrong-url`: this URL will not give the file (404, wrong size or content,
 *   unknown host); go on to the next URL at once.
 * - `fatal`: no URL can help (disk full, permission denied, aborted); stop
 *   trying this file.
 */
export type FailureKind = 'transient' | 'wrong-url' | 'fatal';

/**
 * What went wrong, for the advice and for grouping many failures into a few
 * lines: one unreachable host must read as one problem, not 77.
 * - `dns`, `connect`, `proxy`, `tls`: the host cannot be talked to at all;
 *   the rest of the run skips it (see HostHealth).
 * - `network`: trouble mid-transfer (reset, stall, a body cut short).
 * - `http`: an HTTP status.
 * - `content`: bytes that contradict the Manifest, or a wrong range.
 * - `too-large`: a body beyond the size cap.
 * - `local`: the distdir's file system.
 * - `interrupted`: the run was aborted.
 */
export type FailureCause = Exclude<DistfileFailureCause, 'busy' | 'conflict' | 'missing'>;

/** Causes that condemn a host rather than a URL. */
export const HOST_CAUSES: ReadonlySet<FailureCause> = new Set(['dns', 'connect', 'proxy', 'tls']);

export interface Classified {
  kind: FailureKind;
  /** The short description, shared by every failure of this kind ("connection refused", "HTTP 404"). */
  summary: string;
  /** The summary with the details of this one failure. */
  outcome: string;
  cause: FailureCause;
}

export interface RetryPolicy {
  /** Extra attempts of one URL after transient failures that brought no new bytes. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 3, baseDelayMs: 1000, maxDelayMs: 30_000 };

/**
 * Attempts that made progress (new bytes on disk) do not use up the retry
 * budget — a long download over a link that drops every few minutes should
 * finish — but this many of them per URL at most, so a server that always
 * cuts at the same point cannot loop forever.
 */
export const MAX_PROGRESS_RETRIES = 20;

/** Retry-After is obeyed up to this, so a hostile header cannot park the run. */
const MAX_RETRY_AFTER_MS = 120_000;

/** Delay before the `n`th consecutive retry (1-based): exponential, half of it random so parallel downloads do not retry in lockstep. */
export function backoffDelay(policy: RetryPolicy, n: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, n - 1));
  const delay = exp / 2 + (exp / 2) * random();
  if (retryAfterMs !== undefined) return Math.max(delay, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
  return delay;
}

/** Retry-After: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function transientStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

export function classifyStatus(status: number): Classified {
  const outcome = `HTTP ${status}`;
  return { kind: transientStatus(status) ? 'transient' : 'wrong-url', summary: outcome, outcome, cause: 'http' };
}

/**
 * An error answer, told apart when it is the proxy's own (an http:// URL goes
 * to the proxy as a plain request, so its refusal arrives as a response): 407,
 * or an error the proxy marks as its own with Proxy-Status (RFC 9209) or
 * Squid's X-Squid-Error.
 */
export function classifyResponse(status: number, headers: { [name: string]: string | string[] | undefined }): Classified {
  const marked = /\berror=/.test(String(headers['proxy-status'] ?? '')) || headers['x-squid-error'] !== undefined;
  if (status === 407 || (status >= 400 && marked)) {
    const summary = `the proxy refused the request: HTTP ${status}`;
    return { kind: transientStatus(status) ? 'transient' : 'wrong-url', summary, outcome: summary, cause: 'proxy' };
  }
  return classifyStatus(status);
}

const TRANSIENT_CODES: { [code: string]: [string, FailureCause] } = {
  UND_ERR_CONNECT_TIMEOUT: ['connection timed out', 'connect'],
  UND_ERR_HEADERS_TIMEOUT: ['timed out waiting for the response', 'network'],
  UND_ERR_BODY_TIMEOUT: ['timed out: the body stalled', 'network'],
  UND_ERR_SOCKET: ['connection closed by the server', 'network'],
  UND_ERR_CLOSED: ['connection closed', 'network'],
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: ['body shorter than its Content-Length', 'network'],
  ECONNRESET: ['connection reset', 'network'],
  ECONNREFUSED: ['connection refused', 'connect'],
  EPIPE: ['connection broken', 'network'],
  ETIMEDOUT: ['connection timed out', 'connect'],
  EHOSTUNREACH: ['host unreachable', 'connect'],
  ENETUNREACH: ['network unreachable', 'connect'],
  ENETDOWN: ['network down', 'connect'],
  EAI_AGAIN: ['name not resolved (temporary DNS failure)', 'dns'],
};

const WRONG_URL_CODES: { [code: string]: [string, FailureCause] } = {
  ENOTFOUND: ['name not resolved', 'dns'],
  ERR_INVALID_URL: ['invalid URL', 'other'],
  ERR_BAD_REDIRECT: ['bad redirect', 'other'],
  UND_ERR_INVALID_ARG: ['invalid request', 'other'],
  ERR_TLS_CERT_ALTNAME_INVALID: ['TLS certificate does not match the host', 'tls'],
  CERT_HAS_EXPIRED: ['TLS certificate expired', 'tls'],
  DEPTH_ZERO_SELF_SIGNED_CERT: ['self-signed TLS certificate', 'tls'],
  SELF_SIGNED_CERT_IN_CHAIN: ['TLS certificate chain is self-signed', 'tls'],
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: ['TLS certificate cannot be verified', 'tls'],
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: ['TLS certificate issuer unknown', 'tls'],
};

/** undici reports a proxy that refuses the CONNECT tunnel as an abort carrying the proxy's status. */
const PROXY_REFUSAL = /^Proxy response \((\d{3})\) !== 200/;

/** Errors of the local file system: no other URL will make the disk writable. */
const LOCAL_CODES: { [code: string]: string } = {
  ENOSPC: 'no space left on the device holding the distdir',
  EDQUOT: 'disk quota exceeded in the distdir',
  EACCES: 'permission denied in the distdir',
  EPERM: 'operation not permitted in the distdir',
  EROFS: 'the distdir is on a read-only file system',
  EIO: 'I/O error in the distdir',
};

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  if (typeof e?.code === 'string') return e.code;
  if (typeof e?.cause?.code === 'string') return e.cause.code;
  return undefined;
}

export function classifyError(err: unknown): Classified {
  const e = err as { name?: string; message?: string };
  const code = codeOf(err);
  const message = e?.message ?? String(err);
  const proxy = PROXY_REFUSAL.exec(message);
  if (/^Proxy Authentication Required \(407\)/.test(message)) {
    const summary = 'the proxy requires authentication: HTTP 407';
    return { kind: 'wrong-url', summary, outcome: `${summary} (put the credentials in HTTP(S)_PROXY as http://user:password@host:port)`, cause: 'proxy' };
  }
  if (proxy) {
    const status = Number(proxy[1]);
    const summary = `the proxy refused the connection: HTTP ${status}`;
    // A 5xx is the proxy's own trouble (502, 504: it could not reach the host); 4xx is its policy.
    return { kind: transientStatus(status) ? 'transient' : 'wrong-url', summary, outcome: summary, cause: 'proxy' };
  }
  if (e?.name === 'AbortError' || code === 'UND_ERR_ABORTED' || code === 'ABORT_ERR') {
    return { kind: 'fatal', summary: 'aborted', outcome: 'aborted', cause: 'interrupted' };
  }
  if (code && LOCAL_CODES[code]) {
    return { kind: 'fatal', summary: LOCAL_CODES[code]!, outcome: `${LOCAL_CODES[code]} (${message})`, cause: 'local' };
  }
  const transient = code ? TRANSIENT_CODES[code] : undefined;
  if (transient) return { kind: 'transient', summary: transient[0], outcome: transient[0], cause: transient[1] };
  const wrong = code ? WRONG_URL_CODES[code] : undefined;
  if (wrong) return { kind: 'wrong-url', summary: wrong[0], outcome: `${wrong[0]} (${message})`, cause: wrong[1] };
  // Unknown network trouble: worth one more try rather than giving up on the URL.
  const outcome = code ? `${message} (${code})` : message;
  return { kind: 'transient', summary: outcome, outcome, cause: 'other' };
}
