import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { REFUSED_BODY_LINGER_MS } from './errors.js';

describe('error bodies', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ BODY_LIMIT_BYTES: '2048' });
  });
  afterAll(() => svc?.stop());

  it('answers malformed JSON with 400 in the contract shape', async () => {
    const res = await svc.call('POST', '/v1/api-keys', {
      rawBody: '{"name": "x",',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Malformed JSON body' });
  });

  it('answers a body over the limit with 413', async () => {
    const res = await svc.call('POST', '/v1/api-keys', { body: { name: 'x'.repeat(4096) } });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      statusCode: 413,
      error: 'Payload Too Large',
      message: 'Request body is larger than the allowed limit',
    });
  });

  /** The head of a JSON POST to /v1/api-keys as the admin, with `headers` (each line ending in CRLF) added. */
  const postHead = (headers: string) =>
    `POST /v1/api-keys HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${svc.adminKey}\r\nContent-Type: application/json\r\n${headers}\r\n`;

  /**
   * Sends a body of `total` bytes in 64 KiB pieces, as fast as the socket takes them, and reads the answer.
   * The answer must arrive whole (no EPIPE or reset on the client's side) even though the server never
   * reads most of the body; `ended` says the server ended the connection after it (a FIN, not only a reset).
   */
  const sendLarge = (total: number, chunked: boolean, gzipped?: Buffer) =>
    new Promise<{ status: number; text: string; sent: number; answeredAt: number; ended: boolean }>((resolve, reject) => {
      const { hostname, port } = new URL(svc.url);
      const socket = net.connect(Number(port), hostname);
      let sent = 0;
      let answer = '';
      const piece = Buffer.alloc(64 * 1024, 0x20);
      socket.on('connect', () => {
        socket.write(postHead((gzipped ? 'Content-Encoding: gzip\r\n' : '') + (chunked ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${total}\r\n`)));
        const pump = () => {
          while (sent < total && !socket.destroyed) {
            const n = Math.min(piece.length, total - sent);
            const body = gzipped ? gzipped.subarray(sent, sent + n) : piece.subarray(0, n);
            const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), body, Buffer.from('\r\n')]) : body);
            sent += n;
            if (!ok) return void socket.once('drain', pump);
          }
          if (chunked && !socket.destroyed) socket.write('0\r\n\r\n');
        };
        pump();
      });
      /** Bytes of the body sent when the first byte of the answer arrived. */
      let answeredAt = -1;
      socket.on('data', (c) => {
        if (answeredAt < 0) answeredAt = sent;
        answer += c.toString('utf8');
      });
      let ended = false;
      socket.on('end', () => (ended = true));
      const done = () => resolve({ status: Number(answer.split(' ')[1]), text: answer, sent, answeredAt, ended });
      socket.on('error', (err) => (answer.includes('\r\n\r\n') ? done() : reject(err)));
      socket.on('close', done);
    });

  it('answers a 1 GiB chunked body with 413, and the client reads it', async () => {
    const total = 1024 * 1024 * 1024;
    const res = await sendLarge(total, true);
    expect(res.status).toBe(413);
    expect(res.text).toContain('Request body is larger than the allowed limit');
    // The answer came while the body was still being sent, and the server stopped taking it.
    expect(res.answeredAt).toBeLessThan(total);
    expect(res.sent).toBeLessThan(total);
    expect(res.ended).toBe(true);
  });

  it('answers a large body announced by Content-Length with 413 before reading it, and the client reads it', async () => {
    const total = 1024 * 1024 * 1024;
    const res = await sendLarge(total, false);
    expect(res.status).toBe(413);
    expect(res.text).toContain('Request body is larger than the allowed limit');
    // The connection is not kept for more of a request already answered: the client was told, and stopped sending.
    expect(res.text).toContain('Connection: close');
    expect(res.answeredAt).toBeLessThan(total);
    expect(res.sent).toBeLessThan(total);
    expect(res.ended).toBe(true);
  });

  it('answers a gzip body that inflates past the limit with 413 while the client is still sending it, and the client reads it', async () => {
    // 16 MiB that do not compress: the limit is passed in the first piece, most of the body is still to come.
    const gzipped = gzipSync(randomBytes(16 * 1024 * 1024), { level: 1 });
    const res = await sendLarge(gzipped.length, false, gzipped);
    expect(res.status).toBe(413);
    expect(res.text).toContain('Request body is larger than the allowed limit');
    expect(res.text).toContain('Connection: close');
    expect(res.answeredAt).toBeLessThan(gzipped.length);
    expect(res.ended).toBe(true);
  });

  it('keeps answering after a client goes away in the middle of a gzip body it was refused', async () => {
    const gzipped = gzipSync(randomBytes(4 * 1024 * 1024), { level: 1 });
    const { port } = new URL(svc.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    socket.write(postHead(`Content-Encoding: gzip\r\nContent-Length: ${gzipped.length}\r\n`));
    // A quarter of the body: the limit is passed, the request is not complete.
    socket.write(gzipped.subarray(0, gzipped.length / 4));
    const answer = await new Promise<string>((resolve) => socket.once('data', (d) => resolve(d.toString('utf8'))));
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const res = await svc.call('GET', '/v1/api-keys');
    expect(res.status).toBe(200);
  });

  it('does not handle a request sent after a body it refused unread, on the same connection', async () => {
    const { port } = new URL(svc.url);
    // A client that keeps its side open after the server's FIN, as HTTP lets it.
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('utf8')));
    const ended = new Promise((resolve) => socket.once('end', resolve));
    const head = (length: number) => postHead(`Content-Length: ${length}\r\n`);
    const next = JSON.stringify({ name: 'sent after a refused body' });
    // A body far over the limit, then, pipelined behind it, a request that would create a key.
    socket.write(head(1024 * 1024));
    socket.write(Buffer.alloc(1024 * 1024, 0x20));
    socket.write(head(Buffer.byteLength(next)) + next);
    await ended;
    // The server reads the rest of the refused body for REFUSED_BODY_LINGER_MS: the pipelined request arrives within it.
    await new Promise((resolve) => setTimeout(resolve, REFUSED_BODY_LINGER_MS + 500));
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).not.toContain('HTTP/1.1 201');
    const keys = await svc.call('GET', '/v1/api-keys');
    expect(keys.status).toBe(200);
    expect(JSON.stringify(keys.body)).not.toContain('sent after a refused body');
  });

  it('answers a non-JSON body with 415', async () => {
    const res = await svc.call('POST', '/v1/api-keys', { rawBody: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
  });

  /** POSTs `body` to /v1/api-keys as JSON with these extra headers, in pieces `pause` ms apart, and reads the answer. */
  const post = async (pieces: Buffer[], headers: Record<string, string> = {}, pause = 0) => {
    const { port } = new URL(svc.url);
    const total = pieces.reduce((n, p) => n + p.length, 0);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(postHead(`Content-Length: ${total}\r\nConnection: close\r\n${extra}`));
    for (const piece of pieces) {
      socket.write(piece);
      if (pause) await new Promise((resolve) => setTimeout(resolve, pause));
    }
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('utf8')));
    await new Promise((resolve) => socket.once('close', resolve));
    return { status: Number(answer.split(' ')[1]), body: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) };
  };

  it('reads a body whose character is cut between two packets as the character', async () => {
    const text = Buffer.from(JSON.stringify({ name: 'clé €' }), 'utf8');
    const cut = text.indexOf(0xe2) + 1; // inside the three bytes of €
    const res = await post([text.subarray(0, cut), text.subarray(cut)], {}, 50);
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('clé €');
  });

  it('inflates a gzip body, and holds the limit to the inflated bytes', async () => {
    const small = await post([gzipSync(JSON.stringify({ name: 'zipped' }))], { 'Content-Encoding': 'gzip' });
    expect(small.status).toBe(201);
    expect(small.body.name).toBe('zipped');
    // 1 MiB of JSON in a few KiB of gzip: over the 2 KiB limit once inflated.
    const bomb = await post([gzipSync(JSON.stringify({ name: 'x'.repeat(1 << 20) }))], { 'Content-Encoding': 'gzip' });
    expect(bomb.status).toBe(413);
    const bad = await post([gzipSync(Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))], { 'Content-Encoding': 'gzip' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('The body is not valid UTF-8');
  });

  it('answers a content coding it does not know with 415, naming the codings it takes', async () => {
    const res = await post([Buffer.from('{"name":"x"}')], { 'Content-Encoding': 'compress' });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ statusCode: 415, message: expect.stringContaining('gzip') });
  });

  it('answers an unknown route with 404', async () => {
    const res = await svc.call('GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Not Found' });
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const res = await svc.call('DELETE', '/v1/account');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ statusCode: 405, error: 'Method Not Allowed', message: 'Method Not Allowed' });
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('names the field and the rule of a validation failure', async () => {
    const res = await svc.call('POST', '/v1/api-keys', { body: { name: '', role: 'owner', extra: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.statusCode).toBe(400);
    expect(res.body.error).toBe('Bad Request');
    const fields = res.body.attributes.errors.map((e: { field: string; rule: string }) => `${e.field}:${e.rule}`);
    expect(fields).toEqual(expect.arrayContaining(['body.name:minLength', 'body.role:enum', 'body.extra:additionalProperties']));
    expect(res.body.message).toMatch(/^body\./);
  });

  it('rejects a missing body on a route that needs one', async () => {
    const res = await svc.call('POST', '/v1/api-keys');
    expect(res.status).toBe(400);
    expect(res.body.attributes.errors[0]).toMatchObject({ field: 'body', rule: 'type' });
  });

  it('rejects bad query and path values with 400', async () => {
    const q = await svc.call('GET', '/v1/api-keys?limit=0');
    expect(q.status).toBe(400);
    expect(q.body.attributes.errors[0]).toMatchObject({ field: 'query.limit', rule: 'minimum' });
    const unknown = await svc.call('GET', '/v1/api-keys?bogus=1');
    expect(unknown.status).toBe(400);
    expect(unknown.body.attributes.errors[0]).toMatchObject({ field: 'query.bogus', rule: 'additionalProperties' });
    const p = await svc.call('DELETE', '/v1/api-keys/123');
    expect(p.status).toBe(400);
    expect(p.body.attributes.errors[0]).toMatchObject({ field: 'path.id', rule: 'format' });
  });

  // Last: it breaks the service's Postgres pool on purpose.
  it('answers an unexpected failure with 500, a request id and no stack', async () => {
    await svc.deps.sql.end();
    const res = await svc.call('GET', '/v1/account', { headers: { 'x-request-id': 'req-500' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: 'Internal Server Error',
      attributes: { requestId: 'req-500' },
    });
    expect(res.text).not.toMatch(/at .*\.ts/);
    expect(svc.logs.some((l) => l.includes('"requestId":"req-500"') && l.includes('unhandled error'))).toBe(true);
  });
});
