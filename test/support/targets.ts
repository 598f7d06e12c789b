import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import dns2 from 'dns2';

/**
 * What the runner suites and the runner bench check: servers on 127.0.0.1 only, started by the test.
 */

export interface HttpTarget {
  url: string;
  hits: (path: string) => IncomingMessage[];
  close(): Promise<void>;
}

/**
 * An HTTP target: `/ok` JSON, `/slow?ms=` after a delay, `/fail` 500, `/status/<n>`, `/redirect` to `/ok`,
 * `/echo` answers the request's headers and body as JSON, `/flaky/<key>/<n>` fails the first n calls.
 */
export async function startHttpTarget(): Promise<HttpTarget> {
  const hits: IncomingMessage[] = [];
  const flaky = new Map<string, number>();
  const server: Server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push(req);
      const url = new URL(req.url ?? '/', 'http://x');
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-target': 'local', ...headers }).end(JSON.stringify(body));
      };
      // A two-page shop for browser checks: a button that adds to the cart, and the cart.
      if (url.pathname === '/shop') {
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<!doctype html><title>Local shop</title><h1>Shop</h1><button id="add" onclick="document.getElementById(\'count\').textContent=String(Number(document.getElementById(\'count\').textContent)+1)">Add to cart</button>' +
              '<p>In cart: <span id="count">0</span></p><a href="/shop/cart">Cart</a>',
          );
      }
      if (url.pathname === '/shop/cart')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Cart</title><h1>Your cart</h1>');
      if (url.pathname === '/ok') return json(200, { status: 'ok', items: [1, 2, 3], nested: { name: 'shop', price: 12.5 } });
      if (url.pathname === '/slow') return void setTimeout(() => json(200, { slow: true }), Number(url.searchParams.get('ms') ?? 1000));
      if (url.pathname === '/fail') return json(500, { error: 'boom' });
      if (url.pathname.startsWith('/status/')) return json(Number(url.pathname.slice(8)), {});
      if (url.pathname === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
      if (url.pathname === '/echo')
        return json(200, {
          method: req.method,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          query: Object.fromEntries(url.searchParams),
        });
      const f = /^\/flaky\/([\w-]+)\/(\d+)$/.exec(url.pathname);
      if (f) {
        const n = (flaky.get(f[1]) ?? 0) + 1;
        flaky.set(f[1], n);
        return json(n <= Number(f[2]) ? 503 : 200, { call: n });
      }
      json(404, { error: 'no such path' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  server.keepAliveTimeout = 1000;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits: (p) => hits.filter((h) => new URL(h.url ?? '/', 'http://x').pathname === p),
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A TCP echo server that also greets: it answers `PING` with `PONG` and echoes anything else. */
export async function startTcpTarget() {
  const server = createTcpServer((socket) => {
    socket.on('data', (d) => socket.write(d.toString().trim() === 'PING' ? 'PONG\n' : d));
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * A DNS server (dns2) on UDP and TCP: `<name>.test` A records from `records`, TXT records from `txt` (which the test
 * may change while it runs), NXDOMAIN for any other name.
 */
export async function startDnsTarget(records: Record<string, string>, txt: Map<string, string[]> = new Map()) {
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question.name.replace(/\.$/, '').toLowerCase();
      const address = records[name];
      const texts = (question as { type?: number }).type === Packet.TYPE.TXT ? txt.get(name) : undefined;
      if (texts?.length)
        for (const data of texts) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data } as never);
      else if (address) response.answers.push({ name: question.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 60, address } as never);
      else (response.header as { rcode: number }).rcode = 3;
      send(response);
    },
  });
  const listening = new Promise<void>((r) => server.once('listening', () => r()));
  await server.listen({ udp: { port: 0, address: '127.0.0.1' }, tcp: { port: 0, address: '127.0.0.1' } });
  await listening;
  const addresses = server.addresses() as { udp: { port: number }; tcp: { port: number } };
  return { udpPort: addresses.udp.port, tcpPort: addresses.tcp.port, txt, close: () => server.close() };
}

/** A TLS server with a self-signed certificate for `name` (openssl), valid for `days` days. */
export async function startTlsTarget(name: string, days: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'tls-target-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      String(days),
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name}`,
    ],
    {
      stdio: 'ignore',
    },
  );
  const server = createTlsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (socket) => {
    socket.on('error', () => {});
    socket.end('hello\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        rmSync(dir, { recursive: true, force: true });
        server.close(() => r());
      }),
  };
}

/** A gRPC server with the standard health service (SERVING, or NOT_SERVING for service "down"), without TLS. */
export async function startGrpcTarget() {
  const server = new grpc.Server();
  const identity = (b: Buffer) => b;
  server.addService(
    {
      Check: {
        path: '/grpc.health.v1.Health/Check',
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: (status: number) => Buffer.from([0x08, status]),
        responseDeserialize: identity,
      },
    },
    {
      Check: (call: grpc.ServerUnaryCall<Buffer, number>, callback: grpc.sendUnaryData<number>) => {
        const service = call.request.length > 2 ? call.request.subarray(2).toString('utf8') : '';
        callback(null, service === 'down' ? 2 : 1);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { port, close: () => new Promise<void>((r) => server.tryShutdown(() => r())) };
}
