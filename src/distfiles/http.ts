import { EnvHttpProxyAgent, request, type Dispatcher } from 'undici';

/**
 * HTTP plumbing over undici. undici.request hands back the body exactly as
 * sent: fetch() would transparently gunzip a .tar.gz that a misconfigured
 * server labels Content-Encoding: gzip, and the hashes would then describe a
 * different file than the one Portage downloads.
 */

const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export const USER_AGENT = 'rocm-ebuild distfile fetcher';

export interface HttpResponse {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Dispatcher.ResponseData['body'];
  /** The URL that answered, after redirects. */
  url: string;
  redirected: boolean;
}

export class RedirectError extends Error {
  readonly code = 'ERR_BAD_REDIRECT';
}

/**
 * One dispatcher per run: keep-alive connections are reused across files of
 * one host, `connections` caps sockets per origin, and HTTP(S)_PROXY /
 * NO_PROXY are honoured like curl and wget do.
 */
export function createDispatcher(options: { connectionsPerOrigin: number; timeoutMs: number }): Dispatcher {
  return new EnvHttpProxyAgent({
    connections: options.connectionsPerOrigin,
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}

export function headerValue(headers: HttpResponse['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * GET `url`, following redirects (GitHub archive URLs go through codeload).
 * The body of the final response is the caller's to consume or dump.
 */
export async function get(
  url: string,
  options: { dispatcher: Dispatcher; timeoutMs: number; headers?: { [name: string]: string }; signal?: AbortSignal },
): Promise<HttpResponse> {
  let current = url;
  for (let hop = 0; ; hop++) {
    const res = await request(current, {
      method: 'GET',
      dispatcher: options.dispatcher,
      headers: { 'user-agent': USER_AGENT, 'accept-encoding': 'identity', ...options.headers },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const location = headerValue(res.headers, 'location');
    if (!REDIRECT_STATUSES.has(res.statusCode) || !location) {
      return { statusCode: res.statusCode, headers: res.headers, body: res.body, url: current, redirected: hop > 0 };
    }
    await res.body.dump();
    if (hop >= MAX_REDIRECTS) throw new RedirectError(`more than ${MAX_REDIRECTS} redirects from ${url}`);
    const next = new URL(location, current);
    if (next.protocol !== 'https:' && next.protocol !== 'http:') {
      throw new RedirectError(`redirect to unsupported ${next.protocol} URL ${next.href}`);
    }
    current = next.href;
  }
}
