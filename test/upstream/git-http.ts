import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Git's smart HTTP protocol on 127.0.0.1: a real HTTP server running the
 * real `git http-backend` as a CGI program, so ls-remote and fetch go over
 * the network code path that https://github.com takes. `fail` makes paths
 * starting with a prefix answer 500.
 */
export class GitHttpServer {
  readonly requests: string[] = [];
  readonly fail = new Set<string>();
  /** Bytes of every response body sent, for tests that bound what a read costs. */
  bytesSent = 0;
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  url = '';

  constructor(private readonly projectRoot: string) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://localhost');
    this.requests.push(`${req.method} ${u.pathname}${u.search}`);
    if ([...this.fail].some((p) => u.pathname.startsWith(p))) {
      res.writeHead(500).end();
      return;
    }
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: this.projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: this.projectRoot,
        PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(child.stdin);
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.resume();
    child.on('close', () => {
      const buf = Buffer.concat(out);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        res.writeHead(500).end();
        return;
      }
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of buf.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[name] = value;
      }
      this.bytesSent += buf.length - end - 4;
      res.writeHead(status, headers).end(buf.subarray(end + 4));
    });
  }
}
