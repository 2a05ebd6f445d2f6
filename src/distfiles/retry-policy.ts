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

export interface Classified {
  kind: FailureKind;
  outcome: string;
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

export function classifyStatus(status: number): Classified {
  const kind: FailureKind = status === 408 || status === 425 || status === 429 || status >= 500 ? 'transient' : 'wrong-url';
  return { kind, outcome: `HTTP ${status}` };
}

const TRANSIENT_CODES: { [code: string]: string } = {
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the response',
  UND_ERR_BODY_TIMEOUT: 'timed out: the body stalled',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'body shorter than its Content-Length',
  ECONNRESET: 'connection reset',
  ECONNREFUSED: 'connection refused',
  EPIPE: 'connection broken',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network down',
  EAI_AGAIN: 'name lookup failed temporarily',
};

const WRONG_URL_CODES: { [code: string]: string } = {
  ENOTFOUND: 'unknown host',
  ERR_INVALID_URL: 'invalid URL',
  ERR_BAD_REDIRECT: 'bad redirect',
  UND_ERR_INVALID_ARG: 'invalid request',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate cannot be verified',
};

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
  if (e?.name === 'AbortError' || codeOf(err) === 'UND_ERR_ABORTED' || codeOf(err) === 'ABORT_ERR') {
    return { kind: 'fatal', outcome: 'aborted' };
  }
  const code = codeOf(err);
  const message = e?.message ?? String(err);
  if (code && LOCAL_CODES[code]) return { kind: 'fatal', outcome: `${LOCAL_CODES[code]} (${message})` };
  if (code && TRANSIENT_CODES[code]) return { kind: 'transient', outcome: TRANSIENT_CODES[code]! };
  if (code && WRONG_URL_CODES[code]) return { kind: 'wrong-url', outcome: `${WRONG_URL_CODES[code]} (${message})` };
  // Unknown network trouble: worth one more try rather than giving up on the URL.
  return { kind: 'transient', outcome: code ? `${message} (${code})` : message };
}
