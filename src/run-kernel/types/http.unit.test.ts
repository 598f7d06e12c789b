import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundPolicy } from '../../platform/outbound.js';
import { runApi } from './http.js';

/**
 * The HTTP call of API checks, as a target sees it and as the result says it: redirects followed by fetch's rules
 * (or not followed), bodies decoded, the reason phrase and repeated headers kept, a loop of redirects a failure.
 */
describe('API check requests', () => {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  let server: http.Server;
  let base = '';
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        if (req.url === '/see-other') return void res.writeHead(303, { location: '/landing' }).end();
        if (req.url === '/moved') return void res.writeHead(302, { location: '/landing' }).end();
        if (req.url === '/temporary') return void res.writeHead(307, { location: '/landing' }).end();
        if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
        const hop = /^\/hop\/(\d+)$/.exec(req.url!);
        if (hop) return void res.writeHead(302, { location: `/hop/${Number(hop[1]) + 1}` }).end();
        if (req.url === '/zipped')
          return void res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' }).end(gzipSync(JSON.stringify({ ok: true })));
        if (req.url === '/teapot') {
          res.statusMessage = 'Short And Stout';
          res.setHeader('x-many', ['one', 'two']);
          return void res.writeHead(418).end('tea');
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`landed by ${req.method}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const policy = new OutboundPolicy({ allowPublic: false, allow: ['127.0.0.0/8'] });
  const run = (request: Record<string, unknown>) =>
    runApi({
      check: {
        id: 'c',
        accountId: 'a',
        name: 'api',
        checkType: 'API',
        activated: true,
        tags: [],
        groupId: null,
        variables: {},
        secrets: [],
        locations: ['eu-west-1'],
        runParallel: false,
        data: { request: { method: 'GET', bodyType: 'NONE', ...request } },
      },
      location: 'eu-west-1',
      resultId: 'r',
      attempt: 1,
      policy,
    });
  const responseOf = (outcome: Awaited<ReturnType<typeof run>>) =>
    (outcome.detail.apiCheckResult as { response: { status: number; statusText: string; body: string; headers: Record<string, string> } | null }).response!;

  it('follows a 303 and a 302 after a POST with a GET, a 307 with the same POST and body', async () => {
    seen.length = 0;
    for (const path of ['/see-other', '/moved', '/temporary']) {
      const outcome = await run({ method: 'POST', url: `${base}${path}`, bodyType: 'JSON', body: '{"a":1}' });
      expect(outcome.hasFailures).toBe(false);
      expect(responseOf(outcome).status).toBe(200);
    }
    expect(seen.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      'POST /see-other {"a":1}',
      'GET /landing ',
      'POST /moved {"a":1}',
      'GET /landing ',
      'POST /temporary {"a":1}',
      'POST /landing {"a":1}',
    ]);
  });

  it('answers the redirect itself when followRedirects is false', async () => {
    const outcome = await run({ url: `${base}/moved`, followRedirects: false, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '302' }] });
    expect(outcome.hasFailures).toBe(false);
    expect(responseOf(outcome)).toMatchObject({ status: 302, headers: { location: '/landing' } });
  });

  it('fails a run caught in a loop of redirects, or sent on more than 20 hops, instead of answering the last one', async () => {
    const loop = await run({ url: `${base}/loop` });
    expect(loop.hasFailures).toBe(true);
    expect(loop.error).toMatch(/redirect/i);
    seen.length = 0;
    const chain = await run({ url: `${base}/hop/0` });
    expect(chain.hasFailures).toBe(true);
    expect(chain.error).toMatch(/redirect/i);
    expect(seen.length).toBe(21); // the first request and 20 hops
  });

  it('decodes a gzip body for its assertions, and keeps the reason phrase and repeated headers', async () => {
    seen.length = 0;
    const zipped = await run({ url: `${base}/zipped`, assertions: [{ source: 'JSON_BODY', property: '$.ok', comparison: 'EQUALS', target: 'true' }] });
    expect(zipped.hasFailures).toBe(false);
    expect(responseOf(zipped).body).toBe('{"ok":true}');
    expect(seen[0].headers['accept-encoding']).toMatch(/gzip/);
    expect(seen[0].headers.accept).toBe('*/*');
    const teapot = await run({ url: `${base}/teapot`, headers: [{ key: 'Accept', value: 'text/plain' }] });
    expect(responseOf(teapot)).toMatchObject({ status: 418, statusText: 'Short And Stout', body: 'tea', headers: { 'x-many': 'one, two' } });
    expect(teapot.hasFailures).toBe(true); // a 4xx without a status assertion fails
    expect(seen[1].headers.accept).toBe('text/plain'); // the check's own header, not a second one
  });
});
