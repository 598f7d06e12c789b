import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonBody } from './body.js';

/**
 * The JSON body middleware alone in a Koa app on 127.0.0.1: what it makes of a body, and that a request whose client
 * goes away mid-body ends (its handling would otherwise hold the process's in-flight count, and its shutdown, forever).
 */
describe('JSON bodies', () => {
  let server: ReturnType<Koa['listen']>;
  let port = 0;
  /** How each request's handling ended, in order: 'ok', or the status of the error it threw. */
  const ended: string[] = [];

  beforeAll(async () => {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
        ended.push('ok');
      } catch (err) {
        const status = (err as { status?: number }).status ?? 500;
        ended.push(String(status));
        ctx.status = status;
        ctx.body = { status };
      }
    });
    app.use(jsonBody(64 * 1024));
    app.use((ctx) => {
      ctx.body = { got: ctx.request.body };
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = async (body: Buffer, headers: Record<string, string> = {}) => {
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    return { status: res.status, body: (await res.json()) as { got?: unknown } };
  };

  it('reads a body that starts with a UTF-8 byte order mark', async () => {
    const res = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"bom"}')]));
    expect(res).toEqual({ status: 200, body: { got: { name: 'bom' } } });
  });

  it('ends the handling of a compressed body whose client goes away before its end', async () => {
    const whole = gzipSync(JSON.stringify({ name: 'x'.repeat(20_000), n: Math.random() }));
    const before = ended.length;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${whole.length}\r\n\r\n`);
    socket.write(whole.subarray(0, Math.floor(whole.length / 2)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    const deadline = Date.now() + 5_000;
    while (ended.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(ended.slice(before)).toEqual(['400']);
  });

  it('still reads a whole compressed body', async () => {
    const res = await post(gzipSync('{"name":"zipped"}'), { 'content-encoding': 'gzip' });
    expect(res).toEqual({ status: 200, body: { got: { name: 'zipped' } } });
  });
});
