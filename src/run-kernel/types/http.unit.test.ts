import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundPolicy } from '../../platform/outbound.js';
import { runApi } from './http.js';

/**
 * The HTTP call of API checks, as a target sees it and as the result says it: redirects followed by fetch's rules
 * (or not followed), bodies decoded, the reason phrase and repeated headers kept, a loop of redirects a failure.
 */
describe('API check requests', () => {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const seenElsewhere: typeof seen = [];
  let server: http.Server;
  let otherServer: http.Server;
  let base = '';
  let other = '';
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
        const upTo = /^\/hops\/(\d+)\/(\d+)$/.exec(req.url!);
        if (upTo && Number(upTo[1]) < Number(upTo[2])) return void res.writeHead(302, { location: `/hops/${Number(upTo[1]) + 1}/${upTo[2]}` }).end();
        if (req.url === '/utf8-location') return void res.writeHead(302, { location: Buffer.from('/café').toString('latin1') }).end();
        if (req.url === '/choices') return void res.writeHead(300, { location: '/landing' }).end('pick one');
        if (req.url === '/elsewhere') return void res.writeHead(307, { location: `${other}/landing` }).end();
        if (req.url === '/no-content') return void res.writeHead(204, { 'content-encoding': 'gzip' }).end();
        if (req.url === '/not-modified') return void res.writeHead(304, { 'content-encoding': 'gzip' }).end();
        if (req.url === '/head-zipped') return void res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': '40' }).end();
        if (req.url === '/deflated') return void res.writeHead(200, { 'content-encoding': 'deflate' }).end(deflateSync('wrapped deflate'));
        if (req.url === '/raw-deflated') return void res.writeHead(200, { 'content-encoding': 'deflate' }).end(deflateRawSync('raw deflate'));
        if (req.url === '/cut-short') {
          const zipped = gzipSync('x'.repeat(20_000));
          return void res.writeHead(200, { 'content-encoding': 'gzip' }).end(zipped.subarray(0, zipped.length - 12));
        }
        if (req.url === '/deflate-and-more')
          return void res.writeHead(200, { 'content-encoding': 'deflate' }).end(Buffer.concat([deflateSync('deflated'), Buffer.from('\n')]));
        if (req.url === '/unknown-coding') return void res.writeHead(200, { 'content-encoding': 'snappy' }).end('as it came');
        if (req.url === '/silent') return; // never answers
        if (req.url === '/large') return void res.writeHead(200).end('y'.repeat(6 * 1024 * 1024));
        if (req.url === '/large-zipped') return void res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('z'.repeat(6 * 1024 * 1024)));
        if (req.url === '/teapot') {
          res.statusMessage = 'Short And Stout';
          res.setHeader('x-many', ['one', 'two']);
          res.setHeader('set-cookie', ['a=1', 'b=2']);
          return void res.writeHead(418).end('tea');
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`landed by ${req.method}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Another origin (another port), to redirect to.
    otherServer = http.createServer((req, res) => {
      seenElsewhere.push({ method: req.method!, url: req.url!, headers: req.headers, body: '' });
      res.writeHead(200).end('elsewhere');
    });
    await new Promise<void>((resolve) => otherServer.listen(0, '127.0.0.1', resolve));
    other = `http://127.0.0.1:${(otherServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise<void>((resolve) => otherServer.close(() => resolve()));
  });

  const policy = new OutboundPolicy({ allowPublic: false, allow: ['127.0.0.0/8'] });
  const run = (request: Record<string, unknown>, data: Record<string, unknown> = {}) =>
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
        data: { request: { method: 'GET', bodyType: 'NONE', ...request }, ...data },
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
    expect(responseOf(teapot)).toMatchObject({
      status: 418,
      statusText: 'Short And Stout',
      body: 'tea',
      headers: { 'x-many': 'one, two', 'set-cookie': 'a=1, b=2' },
    });
    expect(teapot.hasFailures).toBe(true); // a 4xx without a status assertion fails
    expect(seen[1].headers.accept).toBe('text/plain'); // the check's own header, not a second one
  });

  it("sends the request headers fetch sends, the check's own first", async () => {
    seen.length = 0;
    await run({ url: `${base}/plain` });
    await run({
      url: `${base}/plain`,
      headers: [
        { key: 'Accept-Language', value: 'nl' },
        { key: 'Accept-Encoding', value: 'identity' },
        { key: 'Sec-Fetch-Mode', value: 'navigate' },
      ],
    });
    expect(seen[0].headers).toMatchObject({ accept: '*/*', 'accept-language': '*', 'accept-encoding': 'gzip, deflate', 'sec-fetch-mode': 'cors' });
    expect(seen[1].headers).toMatchObject({ accept: '*/*', 'accept-language': 'nl', 'accept-encoding': 'identity', 'sec-fetch-mode': 'cors' });
  });

  it("sends one user agent, the check's own if it names one; a text body as text/plain; never the check's Host; no-cache with a conditional request", async () => {
    seen.length = 0;
    await run({
      url: `${base}/plain`,
      headers: [
        { key: 'User-Agent', value: 'MyChecker/2' },
        { key: 'Host', value: 'elsewhere.test' },
      ],
    });
    await run({ method: 'POST', url: `${base}/plain`, bodyType: 'RAW', body: 'hello', headers: [{ key: 'If-None-Match', value: '"v1"' }] });
    expect(seen[0].headers['user-agent']).toBe('MyChecker/2');
    expect(seen[0].headers.host).toBe(new URL(base).host);
    expect(seen[1].headers).toMatchObject({
      'user-agent': 'monitoring-service-runner/1',
      'content-type': 'text/plain;charset=UTF-8',
      pragma: 'no-cache',
      'cache-control': 'no-cache',
    });
    expect(seen[1].body).toBe('hello');
  });

  it('refuses what fetch refused: credentials in the URL, TRACE', async () => {
    seen.length = 0;
    const credentials = await run({ url: base.replace('http://', 'http://user:secret@') });
    expect(credentials).toMatchObject({ hasFailures: true, error: 'Request cannot be constructed from a URL that includes credentials' });
    const trace = await run({ method: 'TRACE', url: `${base}/plain` });
    expect(trace).toMatchObject({ hasFailures: true, error: "'TRACE' HTTP method is unsupported." });
    expect(seen).toEqual([]);
  });

  it('drops the body and its content headers when a redirect makes a POST a GET, keeps them on a 307, and credentials stay at their origin', async () => {
    seen.length = 0;
    seenElsewhere.length = 0;
    const headers = [
      { key: 'Content-Language', value: 'en' },
      { key: 'Authorization', value: 'Bearer token' },
    ];
    await run({ method: 'POST', url: `${base}/moved`, bodyType: 'JSON', body: '{"a":1}', headers });
    await run({ method: 'POST', url: `${base}/temporary`, bodyType: 'JSON', body: '{"a":1}', headers });
    expect(seen[1]).toMatchObject({ method: 'GET', url: '/landing', body: '' });
    expect(seen[1].headers['content-type']).toBeUndefined();
    expect(seen[1].headers['content-language']).toBeUndefined();
    expect(seen[1].headers.authorization).toBe('Bearer token'); // the same origin
    expect(seen[3]).toMatchObject({ method: 'POST', url: '/landing', body: '{"a":1}' });
    expect(seen[3].headers).toMatchObject({ 'content-type': 'application/json', 'content-language': 'en', authorization: 'Bearer token' });
    const away = await run({ url: `${base}/elsewhere`, headers: [...headers, { key: 'Cookie', value: 'session=1' }] });
    expect(responseOf(away).body).toBe('elsewhere');
    expect(seenElsewhere[0].headers.authorization).toBeUndefined();
    expect(seenElsewhere[0].headers.cookie).toBeUndefined();
    expect(seenElsewhere[0].headers['content-language']).toBe('en');
  });

  it('follows exactly 20 hops, and answers a 300 itself', async () => {
    seen.length = 0;
    const twenty = await run({ url: `${base}/hops/0/20` });
    expect(twenty.hasFailures).toBe(false);
    expect(responseOf(twenty).body).toBe('landed by GET');
    expect(seen.length).toBe(21);
    const choices = await run({ url: `${base}/choices`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '300' }] });
    expect(choices.hasFailures).toBe(false);
    expect(responseOf(choices)).toMatchObject({ status: 300, body: 'pick one' });
    seen.length = 0;
    await run({ url: `${base}/utf8-location` }); // a location in UTF-8 bytes, as some servers send it
    expect(seen.map((s) => s.url)).toEqual(['/utf8-location', '/caf%C3%A9']);
  });

  it('reads no body from HEAD, 204 and 304 answers whatever encoding they declare', async () => {
    for (const [path, method, status] of [
      ['/no-content', 'GET', 204],
      ['/not-modified', 'GET', 304],
      ['/head-zipped', 'HEAD', 200],
    ] as const) {
      const outcome = await run({ method, url: `${base}${path}` });
      expect(outcome.error, path).toBeUndefined();
      expect(responseOf(outcome)).toMatchObject({ status, body: '' });
    }
  });

  it('decodes deflate with and without its zlib wrapper, keeps what a gzip cut short had, and leaves an unknown coding as it came', async () => {
    expect(responseOf(await run({ url: `${base}/deflated` })).body).toBe('wrapped deflate');
    expect(responseOf(await run({ url: `${base}/raw-deflated` })).body).toBe('raw deflate');
    const cut = await run({ url: `${base}/cut-short` });
    expect(cut.error).toBeUndefined();
    expect(responseOf(cut).body).toMatch(/^x{1000,}/);
    expect(responseOf(await run({ url: `${base}/unknown-coding` })).body).toBe('as it came');
    // Bytes after the end of the deflate stream are let go (as fetch did), not waited for.
    expect(responseOf(await run({ url: `${base}/deflate-and-more` }, { maxResponseTime: 1000 })).body).toBe('deflated');
  });

  it('reads at most 5 MB of a body, plain or decoded, and keeps its start', async () => {
    for (const path of ['/large', '/large-zipped']) {
      const outcome = await run({ url: `${base}${path}` });
      expect(outcome.error, path).toBeUndefined();
      expect(responseOf(outcome), path).toMatchObject({ status: 200, bodyTruncated: true });
      expect(responseOf(outcome).body.length, path).toBe(16 * 1024 + 1);
    }
  });

  it('fails a request that is not answered in time, or cannot connect, as a network error', async () => {
    const silent = await run({ url: `${base}/silent` }, { maxResponseTime: 1000 });
    expect(silent).toMatchObject({ hasFailures: true, networkError: true, error: 'The request timed out after 1250 ms' });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = await run({ url: `http://127.0.0.1:${port}/` });
    expect(refused).toMatchObject({ hasFailures: true, networkError: true });
    expect(refused.error).toMatch(/ECONNREFUSED/);
  });
});
