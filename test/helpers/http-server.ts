import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A real HTTP server on 127.0.0.1 for download tests, with faults that can be
 * queued per path. Each request to a path takes the next queued fault; when
 * none is left the file is served normally (with Range support unless off).
 */
export type Fault =
  /** Answer with this status and an empty body. */
  | { kind: 'status'; status: number; headers?: { [name: string]: string } }
  /** Redirect elsewhere (absolute path on this server or a full URL). */
  | { kind: 'redirect'; to: string; status?: number }
  /** Promise the whole body, send `after` bytes, then reset the connection. */
  | { kind: 'cut'; after: number }
  /** Promise the whole body in Content-Length, send `after` bytes, then close the connection cleanly. */
  | { kind: 'truncate'; after: number }
  /** Send `after` bytes, then nothing more until the client gives up. */
  | { kind: 'stall'; after: number }
  /**
   * `Connection: close` with the whole length promised, `after` bytes sent,
   * then the socket closed with a FIN (not a reset): what a server or proxy
   * that gives up on a response does. Written straight to the socket so the
   * bytes and the FIN leave together.
   */
  | { kind: 'fin'; after: number }
  /**
   * An HTTP/1.0 response (no keep-alive): Content-Length only when the route
   * sends one, the body ended by closing the socket with a FIN, after `after`
   * bytes (default: all of it).
   */
  | { kind: 'http10'; after?: number }
  /** A chunked body that never ends: random bytes as fast as the client reads them. */
  | { kind: 'endless' }
  /** Serve this body instead of the real one (with its own length). */
  | { kind: 'content'; body: Buffer }
  /**
   * Promise the whole body, send `after` bytes, then hold the rest until the
   * test calls release(): a download that is certainly in progress (another
   * process waiting on it, a kill -9 in the middle) without any timing.
   */
  | { kind: 'hold'; after: number }
  /** Serve normally: lets a fault follow a success in the queue. */
  | { kind: 'ok' }
  /**
   * From this request on, the route serves `body` under the same ETag and
   * Last-Modified, Range and If-Range honoured as before: a mirror that
   * replaced a file's content and kept its validators.
   */
  | { kind: 'swap'; body: Buffer }
  /**
   * Hold the response until `count` requests are in progress at once, then
   * serve this and every later request: proves concurrency without depending
   * on timing. Gives up waiting
   * after 10 s so a test that never reaches `count` fails instead of hanging.
   */
  | { kind: 'gate'; count: number };

export interface Route {
  body: Buffer;
  faults?: Fault[];
  /** Honour Range requests (default true). */
  ranges?: boolean;
  etag?: string;
  lastModified?: string;
  /** Send Content-Length (default true); without it the body is chunked. */
  contentLength?: boolean;
  /** Content-Encoding header to claim without encoding anything (a misconfigured server). */
  contentEncoding?: string;
}

export interface SeenRequest {
  path: string;
  range?: string;
  ifRange?: string;
  acceptEncoding?: string;
}

/** A key and self-signed certificate for 127.0.0.1 and localhost, made by the real openssl (CI installs it). */
export interface TestCert {
  key: Buffer;
  cert: Buffer;
}

let sharedCert: TestCert | undefined;

/** One certificate per test process: openssl is called once. */
export function testCert(): TestCert {
  if (sharedCert) return sharedCert;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rocm-ebuild-cert-'));
  try {
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    sharedCert = { key: readFileSync(key), cert: readFileSync(cert) };
    return sharedCert;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export class TestServer {
  readonly requests: SeenRequest[] = [];
  /** Connections accepted (TCP; for TLS, before the handshake). */
  connections = 0;
  active = 0;
  maxActive = 0;
  private readonly routes = new Map<string, Route>();
  private readonly gated: (() => void)[] = [];
  private gateOpen = false;
  private readonly sockets = new Set<Socket>();
  private readonly holding: (() => void)[] = [];
  /** Responses held by a `hold` fault, their first bytes sent (they stay counted after the client left). */
  held = 0;
  /**
   * As an HTTP proxy: the status answered to every CONNECT (a tunnel is
   * opened for 200) and to every request for an absolute URL (forwarded for
   * 200; refusals carry a Proxy-Status header, RFC 9209, as proxies send).
   * A function decides per target (`host:port`), as a proxy's access rules do.
   * Undefined: CONNECT is refused with 405, absolute URLs are served as paths.
   */
  proxyStatus: number | ((target: string) => number) | undefined;
  /** The `host:port` of every CONNECT received. */
  readonly tunnels: string[] = [];
  /** The URL of every request received as a forward proxy. */
  readonly forwarded: string[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  /** Serves HTTP, or HTTPS with `tls` (see testCert). */
  static async start(options: { tls?: TestCert } = {}): Promise<TestServer> {
    let self: TestServer | undefined;
    const listener = (req: http.IncomingMessage, res: http.ServerResponse) => self!.handle(req, res);
    const server = options.tls ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, listener) : http.createServer(listener);
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new TestServer(server, `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`);
    server.on('connection', (socket: Socket) => {
      self!.connections++;
      self!.sockets.add(socket);
      socket.on('close', () => self!.sockets.delete(socket));
    });
    server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => self!.tunnel(req, socket, head));
    return self;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  route(path: string, route: Route): this {
    this.routes.set(path, { ...route, faults: [...(route.faults ?? [])] });
    return this;
  }

  requestsFor(path: string): SeenRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** Sends the rest of every held response. */
  release(): void {
    for (const finish of this.holding.splice(0)) finish();
  }

  /** Resolves once `count` responses are held (polls; fails after 30 s rather than hang a test). */
  async whenHeld(count = 1): Promise<void> {
    for (let i = 0; this.held < count; i++) {
      if (i > 600) throw new Error(`only ${this.held} of ${count} responses were ever held`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async close(): Promise<void> {
    this.release();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private proxyAnswer(target: string): number | undefined {
    return typeof this.proxyStatus === 'function' ? this.proxyStatus(target) : this.proxyStatus;
  }

  /** An HTTP proxy's CONNECT: answered with `proxyStatus`, tunnelled to the target for 200. */
  private tunnel(req: http.IncomingMessage, socket: Socket, head: Buffer): void {
    this.tunnels.push(req.url ?? '');
    const status = this.proxyAnswer(req.url ?? '') ?? 405;
    if (status !== 200) {
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Refused'}\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host!, () => {
      socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    const drop = () => {
      upstream.destroy();
      socket.destroy();
    };
    upstream.on('error', drop);
    socket.on('error', drop);
  }

  /** A forward proxy's request (absolute URL): refused with `proxyStatus`, or passed on for 200. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.forwarded.push(req.url!);
    const target = new URL(req.url!);
    const status = this.proxyAnswer(target.host)!;
    if (status !== 200) {
      res.writeHead(status, { 'proxy-status': 'testproxy; error=destination_ip_prohibited', 'content-length': '0' }).end();
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        // A cut upstream is a cut downstream.
        answer.on('aborted', () => res.destroy());
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.proxyStatus !== undefined && /^https?:\/\//.test(req.url ?? '')) {
      this.forward(req, res);
      return;
    }
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    this.requests.push({
      path,
      ...(req.headers.range ? { range: req.headers.range } : {}),
      ...(req.headers['if-range'] ? { ifRange: String(req.headers['if-range']) } : {}),
      ...(req.headers['accept-encoding'] ? { acceptEncoding: String(req.headers['accept-encoding']) } : {}),
    });
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    res.on('close', () => this.active--);

    const route = this.routes.get(path);
    if (!route) {
      res.writeHead(404, { 'content-length': '0' }).end();
      return;
    }
    const fault = route.faults!.shift() ?? { kind: 'ok' };
    switch (fault.kind) {
      case 'status':
        res.writeHead(fault.status, { 'content-length': '0', ...fault.headers }).end();
        return;
      case 'redirect':
        res.writeHead(fault.status ?? 302, { location: fault.to, 'content-length': '0' }).end();
        return;
      case 'content':
        res.writeHead(200, { 'content-length': String(fault.body.length) }).end(fault.body);
        return;
      case 'swap':
        route.body = fault.body;
        this.serve(req, res, route, { kind: 'ok' });
        return;
      case 'gate': {
        const go = () => this.serve(req, res, route, { kind: 'ok' });
        if (this.gateOpen || this.active >= fault.count) {
          // Once reached, the gate stays open: the last few files of a run cannot fill it again.
          this.gateOpen = true;
          for (const waiting of this.gated.splice(0)) waiting();
          go();
          return;
        }
        this.gated.push(go);
        setTimeout(() => {
          const i = this.gated.indexOf(go);
          if (i >= 0) this.gated.splice(i, 1)[0]!();
        }, 10_000).unref();
        return;
      }
      default:
        this.serve(req, res, route, fault);
    }
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse, route: Route, fault: Fault): void {
    const whole = route.body;
    const headers: http.OutgoingHttpHeaders = {};
    if (route.etag) headers.etag = route.etag;
    if (route.lastModified) headers['last-modified'] = route.lastModified;
    if (route.contentEncoding) headers['content-encoding'] = route.contentEncoding;
    if (route.ranges !== false) headers['accept-ranges'] = 'bytes';

    let status = 200;
    let body = whole;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    const validatorHolds = !ifRange || ifRange === route.etag || ifRange === route.lastModified;
    if (range && route.ranges !== false && validatorHolds) {
      const start = Number(range[1]);
      if (start >= whole.length) {
        res.writeHead(416, { 'content-range': `bytes */${whole.length}`, 'content-length': '0' }).end();
        return;
      }
      status = 206;
      body = whole.subarray(start);
      headers['content-range'] = `bytes ${start}-${whole.length - 1}/${whole.length}`;
    }
    if (route.contentLength !== false) headers['content-length'] = String(body.length);

    if (fault.kind === 'fin' || fault.kind === 'http10') {
      const version = fault.kind === 'fin' ? '1.1' : '1.0';
      if (fault.kind === 'fin') headers.connection = 'close';
      const lines = [`HTTP/${version} ${status} ${http.STATUS_CODES[status]}`];
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${String(v)}`);
      const sent = body.subarray(0, fault.after ?? body.length);
      const socket = req.socket;
      // The server's own response object is never used: the bytes, then the FIN, exactly.
      socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), sent]));
      socket.end();
      return;
    }
    if (fault.kind === 'endless') {
      delete headers['content-length'];
      delete headers['content-range'];
      res.writeHead(200, headers);
      const chunk = Buffer.alloc(256 * 1024, 0x5a);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => res.removeListener('drain', pump));
      pump();
      return;
    }
    res.writeHead(status, headers);

    switch (fault.kind) {
      case 'cut':
        // The reset waits a moment: an RST discards whatever the client has not read yet.
        res.write(body.subarray(0, fault.after), () => setTimeout(() => res.socket?.resetAndDestroy(), 100));
        return;
      case 'truncate':
        res.write(body.subarray(0, fault.after), () => res.socket?.end());
        return;
      case 'hold':
        res.write(body.subarray(0, fault.after), () => {
          this.held++;
          this.holding.push(() => {
            if (!res.destroyed) res.end(body.subarray(fault.after));
          });
        });
        return;
      case 'stall':
        res.write(body.subarray(0, fault.after));
        res.flushHeaders();
        return;
      default:
        res.end(body);
    }
  }
}
