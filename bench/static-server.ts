import { createReadStream, promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/*
 * A plain static file server for the fetch bench, run as its own process so
 * that serving does not share an event loop with the client being measured.
 * Usage: node static-server.js DIR — prints the port, serves until killed.
 */
const root = path.resolve(process.argv[2] ?? '.');

const server = http.createServer(async (req, res) => {
  const name = decodeURIComponent((req.url ?? '/').slice(1));
  const file = path.join(root, path.basename(name));
  try {
    const st = await fs.stat(file);
    res.writeHead(200, { 'content-length': String(st.size), 'content-type': 'application/octet-stream' });
    createReadStream(file, { highWaterMark: 256 * 1024 }).pipe(res);
  } catch {
    res.writeHead(404, { 'content-length': '0' }).end();
  }
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
