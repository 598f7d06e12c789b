import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * An HTTP endpoint that records every request. `failNext(path, n)` makes the next n requests to a path
 * answer 500 (a receiver that fails, then recovers); `alwaysFail(path)` makes it keep failing.
 */
export async function startHttpReceiver() {
  const received: Received[] = [];
  const failures = new Map<string, number>();
  const endless = new Set<string>();
  /** Bytes written to answers of endless paths, until the caller hung up. */
  let endlessBytes = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0];
      received.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      if (endless.has(path)) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) endlessBytes += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      const left = failures.get(path) ?? 0;
      if (left > 0) {
        failures.set(path, left - 1);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver says no');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    to: (path: string) => received.filter((r) => r.path.split('?')[0] === path),
    failNext: (path: string, n: number) => failures.set(path, n),
    alwaysFail: (path: string) => failures.set(path, Number.MAX_SAFE_INTEGER),
    /** Answers to `path` never end: 64 KiB chunks for as long as the caller reads. */
    endless: (path: string) => endless.add(path),
    endlessBytes: () => endlessBytes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A local SMTP server that keeps every message it is given, parsed. */
export async function startSmtpSink() {
  const mails: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          mails.push(mail);
          callback();
        })
        .catch(callback);
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
