import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';

// undici costs more to load than Node itself takes to start: loaded only when
// something is downloaded, not by every bump that finds its distfiles on disk.
const undici = (): typeof import('undici') => createRequire(import.meta.url)('undici') as typeof import('undici');

/**
 * HTTP plumbing over undici's dispatcher, not `fetch()` and not `request()`.
 *
 * - The body is stored exactly as sent: fetch() would transparently gunzip a
 *   .tar.gz that a misconfigured server labels Content-Encoding: gzip, and the
 *   hashes would then describe a different file than the one Portage downloads.
 * - The body is pushed to the caller and undici's HTTP/1 parser is never
 *   paused. undici 7 crashes the whole process (an uncatchable
 *   `assert(!this.paused)` in the socket's 'end' handler, undici issue 5360)
 *   when a response without keep-alive — `Connection: close`, or HTTP/1.0 —
 *   ends with a FIN while its parser is paused for backpressure. request()'s
 *   body stream pauses the parser whenever 64 KiB are unread, which a
 *   downloader busy opening or writing its file always lets happen. The fix
 *   (undici 8) needs Node >= 22.19; we support Node 20.18. So every chunk is
 *   consumed synchronously by the caller's sink, and backpressure comes from
 *   the sink itself (a synchronous file write holds the event loop, and with
 *   it the socket, until the disk took the data).
 */

const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Error pages and redirect bodies worth reading to keep the connection; larger ones close it. */
const MAX_DUMP = 64 * 1024;

export const USER_AGENT = 'rocm-ebuild distfile fetcher';

export interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
  /** The URL that answered, after redirects. */
  url: string;
  redirected: boolean;
}

/** A body pushed chunk by chunk as it arrives; see the note at the top of this module. */
export interface ResponseBody {
  /**
   * Calls `sink` synchronously with every chunk, in order, the ones that came
   * before this call first. Resolves when the body is complete, rejects with
   * the network error (or with what `sink` threw: that aborts the request).
   * Only one sink per body.
   */
  pipeTo(sink: (chunk: Buffer) => void): Promise<void>;
  /** Abandons the body: the request is aborted and its connection closed. */
  destroy(reason?: Error): void;
  /** Reads and drops a small body (an error page), so the connection can serve the next request; a large one is destroyed. */
  dump(): Promise<void>;
  /** The body as UTF-8 text, at most `limit` bytes of it (the rest is not read). */
  text(limit: number): Promise<string>;
}

export class RedirectError extends Error {
  readonly code = 'ERR_BAD_REDIRECT';
}

/** Why we stopped a body ourselves; tells our own abort apart from a network failure. */
export class BodyAbandoned extends Error {
  readonly code = 'ERR_BODY_ABANDONED';
}

/**
 * One dispatcher per run: keep-alive connections are reused across files of
 * one host, `connections` caps sockets per origin, and HTTP(S)_PROXY /
 * NO_PROXY are honoured like curl and wget do.
 */
export function createDispatcher(options: { connectionsPerOrigin: number; timeoutMs: number }): Dispatcher {
  return new (undici().EnvHttpProxyAgent)({
    // http:// URLs go to the proxy as plain requests, as curl, wget and Portage send
    // them; only https:// is tunnelled with CONNECT. undici 7 tunnels everything by
    // default, and a Squid-like proxy refuses CONNECT to any port but 443 (undici 8
    // made this the default too).
    proxyTunnel: false,
    connections: options.connectionsPerOrigin,
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Rejections nobody waits for (a body never read) must not become unhandled.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * A dispatch handler that never pauses the parser: chunks go straight to the
 * sink, or into a list until the caller attaches one (only between the
 * response head and pipeTo(), a few file-system calls later).
 */
class PushHandler implements Dispatcher.DispatchHandler {
  readonly head = deferred<{ statusCode: number; headers: IncomingHttpHeaders }>();
  private controller: Dispatcher.DispatchController | undefined;
  private sink: ((chunk: Buffer) => void) | undefined;
  private early: Buffer[] = [];
  private state: 'open' | 'ended' | 'failed' = 'open';
  private error: Error | undefined;
  private settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private pendingAbort: Error | undefined;
  private readonly onAbortSignal = () => this.abort(abortError(this.signal?.reason));

  constructor(private readonly signal: AbortSignal | undefined) {
    signal?.addEventListener('abort', this.onAbortSignal, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort) controller.abort(this.pendingAbort);
    else if (this.signal?.aborted) controller.abort(abortError(this.signal.reason));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx informational responses precede the real one.
    if (statusCode < 200) return;
    this.head.resolve({ statusCode, headers });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.state !== 'open') return;
    if (this.sink) this.deliver(chunk);
    else this.early.push(chunk);
  }

  onResponseEnd(): void {
    if (this.state !== 'open') return;
    this.state = 'ended';
    this.signal?.removeEventListener('abort', this.onAbortSignal);
    if (this.sink) this.settle?.resolve();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.head.reject(error);
    this.fail(error);
  }

  attach(sink: (chunk: Buffer) => void): Promise<void> {
    if (this.sink) return Promise.reject(new Error('the body already has a sink'));
    this.sink = sink;
    return new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
      const early = this.early;
      this.early = [];
      for (const chunk of early) if (!this.deliver(chunk)) return;
      if (this.state === 'ended') resolve();
      else if (this.state === 'failed') reject(this.error!);
    });
  }

  /** Stops the request; the body's outcome becomes `reason` unless it already has one. */
  abort(reason: Error): void {
    if (this.state !== 'open') return;
    if (this.controller) this.controller.abort(reason);
    else this.pendingAbort = reason;
  }

  /** Feeds one chunk to the sink; what the sink throws ends the body with that error (even a body already complete). */
  private deliver(chunk: Buffer): boolean {
    try {
      this.sink!(chunk);
      return true;
    } catch (err) {
      const wasOpen = this.state === 'open';
      this.fail(err as Error, true);
      if (wasOpen) this.controller?.abort(err as Error);
      return false;
    }
  }

  private fail(error: Error, override = false): void {
    if (this.state === 'failed' || (this.state === 'ended' && !override)) return;
    this.state = 'failed';
    this.error = error;
    this.early = [];
    this.signal?.removeEventListener('abort', this.onAbortSignal);
    this.settle?.reject(error);
  }
}

/** The run's own abort (its AbortSignal), told apart from undici's aborts, which also report proxy refusals. */
function abortError(reason: unknown): Error {
  const err = Object.assign(new Error(reason instanceof Error ? reason.message : 'aborted'), { code: 'ABORT_ERR' });
  err.name = 'AbortError';
  return err;
}

function bodyOf(handler: PushHandler): ResponseBody {
  return {
    pipeTo: (sink) => handler.attach(sink),
    destroy: (reason) => handler.abort(reason ?? new BodyAbandoned('body abandoned')),
    async dump() {
      let size = 0;
      await handler
        .attach((chunk) => {
          size += chunk.length;
          if (size > MAX_DUMP) throw new BodyAbandoned('body too large to read through');
        })
        .catch(() => undefined);
    },
    async text(limit) {
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        await handler.attach((chunk) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size > limit) throw new BodyAbandoned(`more than ${limit} bytes`);
        });
      } catch (err) {
        if (!(err instanceof BodyAbandoned)) throw err;
      }
      return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
    },
  };
}

/** One GET, no redirects: resolves with the response head once it arrived. */
async function getOnce(
  url: URL,
  options: { dispatcher: Dispatcher; timeoutMs: number; headers: { [name: string]: string }; signal?: AbortSignal },
): Promise<{ statusCode: number; headers: IncomingHttpHeaders; body: ResponseBody }> {
  const handler = new PushHandler(options.signal);
  options.dispatcher.dispatch(
    {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: options.headers,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    },
    handler,
  );
  const head = await handler.head.promise;
  return { ...head, body: bodyOf(handler) };
}

/**
 * GET `url`, following redirects (GitHub archive URLs go through codeload).
 * The body of the final response is the caller's to pipe, dump or destroy.
 */
export async function get(
  url: string,
  options: { dispatcher: Dispatcher; timeoutMs: number; headers?: { [name: string]: string }; signal?: AbortSignal },
): Promise<HttpResponse> {
  let current = url;
  const headers = { 'user-agent': USER_AGENT, 'accept-encoding': 'identity', ...options.headers };
  for (let hop = 0; ; hop++) {
    let target: URL;
    try {
      target = new URL(current);
    } catch {
      throw Object.assign(new TypeError(`invalid URL ${current}`), { code: 'ERR_INVALID_URL' });
    }
    if (target.protocol !== 'https:' && target.protocol !== 'http:') {
      throw new RedirectError(`unsupported ${target.protocol} URL ${target.href}`);
    }
    let res: Awaited<ReturnType<typeof getOnce>>;
    try {
      res = await getOnce(target, {
        dispatcher: options.dispatcher,
        timeoutMs: options.timeoutMs,
        headers,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      // Which hop failed: after a redirect, that host is the one to report.
      if (err && typeof err === 'object' && !('requestUrl' in err)) Object.defineProperty(err, 'requestUrl', { value: current });
      throw err;
    }
    const location = headerValue(res.headers, 'location');
    if (!REDIRECT_STATUSES.has(res.statusCode) || !location) {
      return { ...res, url: current, redirected: hop > 0 };
    }
    await res.body.dump();
    if (hop >= MAX_REDIRECTS) throw new RedirectError(`more than ${MAX_REDIRECTS} redirects from ${url}`);
    const next = new URL(location, current);
    if (next.protocol !== 'https:' && next.protocol !== 'http:') {
      throw new RedirectError(`redirect to unsupported ${next.protocol} URL ${next.href}`);
    }
    // What was asked for over https is never fetched in clear text: a downgrade
    // lets anyone on the path choose the bytes, and a distfile no Manifest lists
    // yet (a patch fetched by URL, a new release's archive) gets its digests from them.
    if (target.protocol === 'https:' && next.protocol === 'http:') {
      throw new RedirectError(`redirect from https to ${next.href} refused: an https download never continues over http`);
    }
    current = next.href;
  }
}
