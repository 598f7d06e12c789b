import http from 'node:http';
import type { Socket } from 'node:net';
import { connectThrough, type OutboundPolicy } from '../../platform/outbound.js';

/** How long the egress waits for a connection to a target. */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * The only way out of a browser sandbox: an HTTP proxy on a Unix socket (bound into the sandbox, whose network
 * namespace has nothing but its own loopback), CONNECT for TLS and WebSockets and absolute-form requests for plain
 * HTTP. Each target is resolved and checked by the outbound policy (docs/outbound.md) before it is connected, so a
 * browser script reaches what an API check may reach and nothing else. A refused target answers 403 with the reason.
 */
export async function startEgress(socketPath: string, policy: OutboundPolicy): Promise<{ close(): Promise<void> }> {
  const open = new Set<Socket>();
  const server = http.createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('only http:// is forwarded; https goes through CONNECT');
    } catch (err) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end((err as Error).message);
      return;
    }
    const port = Number(url.port || 80);
    connectThrough(policy, url.hostname, port, { timeoutMs: CONNECT_TIMEOUT_MS }).then(
      ({ socket }) => {
        open.add(socket);
        socket.once('close', () => open.delete(socket));
        const headers = { ...req.headers };
        delete headers['proxy-connection'];
        delete headers['proxy-authorization'];
        const upstream = http.request({ method: req.method, path: `${url.pathname}${url.search}`, headers, createConnection: () => socket }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        req.pipe(upstream);
      },
      (err: Error) => {
        if (!res.headersSent) res.writeHead(403, { 'content-type': 'text/plain' });
        res.end(err.message);
      },
    );
  });
  server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    const target = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(req.url ?? '');
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    open.add(client);
    client.once('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    connectThrough(policy, target[1], Number(target[2]), { timeoutMs: CONNECT_TIMEOUT_MS }).then(
      ({ socket }) => {
        open.add(socket);
        socket.once('close', () => open.delete(socket));
        socket.on('error', () => client.destroy());
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) socket.write(head);
        socket.pipe(client);
        client.pipe(socket);
        client.once('close', () => socket.destroy());
      },
      (err: Error) => client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${err.message}`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    // Every connection is cut (keep-alive ones from the sandbox included): a run's end never waits on a socket.
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
