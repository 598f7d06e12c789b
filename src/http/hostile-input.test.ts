import { randomUUID } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, requestHead } from '../../test/support/raw-http.js';
import { expectFieldError, startTestService, type TestService } from '../../test/support/service.js';
import { createApiKey, revokeApiKey } from '../accounts/repository.js';

const NUL = '\u0000';
const TABLES = ['checks', 'check_groups', 'alert_channels', 'dashboards', 'maintenance_windows', 'variables', 'test_sessions', 'api_keys'];

describe('hostile input', () => {
  let svc: TestService;
  let ids: { check: string; group: number; channel: number; dashboard: string; window: number; session: string };

  /** Row counts and the newest change of every control-plane table: equal before and after means nothing changed. */
  const snapshot = async () =>
    svc.deps.sql.unsafe(
      `${TABLES.map(
        (t) => `select '${t}' as t, count(*)::int as n, max(${t === 'api_keys' ? 'created_at' : 'coalesce(updated_at, created_at)'}) as at from ${t}`,
      ).join(' union all ')} order by t`,
    );
  const accepted = async () => (await svc.call('GET', '/ready')).body.ingest.acceptedResults as number;

  beforeAll(async () => {
    svc = await startTestService();
    const check = await svc.call('POST', '/v1/checks/api', { body: { name: 'c', request: { url: 'https://x.test' } } });
    const group = await svc.call('POST', '/v1/check-groups', { body: { name: 'g' } });
    const channel = await svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'a@x.test' } } });
    const dashboard = await svc.call('POST', '/v1/dashboards', { body: { header: 'd' } });
    const window = await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'w', startsAt: '2026-01-01T00:00:00Z', endsAt: '2026-01-02T00:00:00Z' },
    });
    const session = await svc.call('POST', '/v1/test-sessions', { body: { name: 's' } });
    await svc.call('POST', '/v1/variables', { body: { key: 'V', value: 'v' } });
    ids = {
      check: check.body.id,
      group: group.body.id,
      channel: channel.body.id,
      dashboard: dashboard.body.dashboardId,
      window: window.body.id,
      session: session.body.testSessionId,
    };
  });
  afterAll(() => svc?.stop());

  describe('U+0000 in a string', () => {
    const cases = (): [string, string, unknown, string][] => [
      ['POST', '/v1/checks/api', { name: `a${NUL}`, request: { url: 'https://x.test' } }, 'body.name'],
      ['POST', '/v1/checks/browser', { name: 'b', script: `x${NUL}` }, 'body.script'],
      ['PUT', `/v1/checks/api/${ids.check}`, { name: 'c', request: { url: `https://x.test/${NUL}` } }, 'body.request.url'],
      ['PUT', `/v1/checks/${ids.check}`, { heartbeat: {}, script: 'x', tags: [NUL] }, 'body.tags[0]'],
      ['POST', '/v1/check-groups', { name: 'g', tags: [`t${NUL}`] }, 'body.tags[0]'],
      ['PUT', `/v1/check-groups/${ids.group}`, { name: `g${NUL}` }, 'body.name'],
      ['POST', '/v1/alert-channels', { type: 'SMS', config: { number: '+31612345678', name: NUL } }, 'body.config.name'],
      ['PUT', `/v1/alert-channels/${ids.channel}`, { type: 'EMAIL', config: { address: `a${NUL}@x.test` } }, 'body.config.address'],
      ['POST', '/v1/dashboards', { header: `h${NUL}` }, 'body.header'],
      ['PUT', `/v1/dashboards/${ids.dashboard}`, { header: 'h', customCSS: NUL }, 'body.customCSS'],
      ['POST', '/v1/maintenance-windows', { name: NUL, startsAt: '2026-01-01', endsAt: '2026-01-02' }, 'body.name'],
      ['PUT', `/v1/maintenance-windows/${ids.window}`, { name: 'w', startsAt: '2026-01-01', endsAt: '2026-01-02', tags: [NUL] }, 'body.tags[0]'],
      ['POST', '/v1/variables', { key: 'K', value: `v${NUL}` }, 'body.value'],
      ['PUT', '/v1/variables/V', { value: NUL }, 'body.value'],
      ['POST', '/v1/test-sessions', { name: 's', metadata: { branchName: NUL } }, 'body.metadata.branchName'],
      ['POST', `/v1/test-sessions/${ids.session}/results`, { results: [{ checkId: ids.check, name: NUL, runLocation: 'eu-west-1' }] }, 'body.results[0].name'],
      ['POST', '/v1/api-keys', { name: `k${NUL}` }, 'body.name'],
      ['POST', '/v1/analytics/checks', { checkIds: [`${ids.check}${NUL}`] }, 'body.checkIds[0]'],
    ];

    it('is a 400 naming the field on every create and update, and nothing is stored', async () => {
      for (const [method, path, body, field] of cases()) {
        const before = await snapshot();
        const res = await svc.call(method, path, { body });
        expectFieldError(res, field, 'characters');
        expect(await snapshot(), `${method} ${path}`).toEqual(before);
      }
    });

    it('is refused in an object key too', async () => {
      const res = await svc.call('POST', '/v1/variables', {
        rawBody: '{"key":"K","value":"v","a\\u0000b":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body.attributes.errors[0]).toMatchObject({ rule: 'characters' });
    });

    it('in a path id names nothing: 404', async () => {
      for (const path of ['/v1/variables/a%00b', `/v1/dashboards/${ids.dashboard}%00`, '/v1/checks/%00', `/v1/test-sessions/${ids.session}%00`]) {
        const res = await svc.call('GET', path);
        expect(res.status, path).toBe(404);
        expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Not Found' });
      }
      expect((await svc.call('DELETE', '/v1/variables/V%00')).status).toBe(404);
      expect((await svc.call('GET', '/v1/variables/V')).status).toBe(200);
    });

    it('in a query value is a 400', async () => {
      expectFieldError(await svc.call('GET', '/v1/checks?tag=%00'), 'query.tag[0]', 'characters');
      expectFieldError(await svc.call('GET', `/v1/check-results/${ids.check}?location=eu%00`), 'query.location', 'characters');
    });

    it('in an ingested runLocation is a 400 and nothing is queued', async () => {
      const before = await accepted();
      const now = new Date().toISOString();
      const res = await svc.call('POST', '/v1/check-results', {
        body: { results: [{ checkId: ids.check, checkType: 'API', runLocation: `eu${NUL}`, startedAt: now, stoppedAt: now, hasFailures: false }] },
      });
      expectFieldError(res, 'body.results[0].runLocation', 'characters');
      expect(await accepted()).toBe(before);
    });
  });

  it('refuses a JSON-escaped unpaired surrogate, which would be stored as U+FFFD', async () => {
    const before = await snapshot();
    const res = await svc.call('POST', '/v1/variables', { rawBody: '{"key":"K2","value":"a\\ud800b"}', headers: { 'content-type': 'application/json' } });
    expectFieldError(res, 'body.value', 'unicode');
    expect(await snapshot()).toEqual(before);
  });

  describe('numbers in paths and query strings', () => {
    it('answers 400 for Infinity as limit on every list, and as page', async () => {
      const doc = (await svc.call('GET', '/openapi.json')).body;
      const lists = Object.entries(doc.paths as Record<string, { get?: { parameters?: { name?: string }[] } }>)
        .filter(([path, item]) => !path.includes('{') && item.get?.parameters?.some((p) => p.name === 'limit'))
        .map(([path]) => path);
      expect(lists.length).toBeGreaterThanOrEqual(8);
      for (const path of lists) {
        for (const value of ['Infinity', '-Infinity', '1e1', ' 5', '+5', '5.0', '0x10']) {
          expectFieldError(await svc.call('GET', `${path}?limit=${encodeURIComponent(value)}`), 'query.limit', 'type');
        }
      }
      expectFieldError(await svc.call('GET', `/v1/check-results/${ids.check}?page=Infinity`), 'query.page', 'type');
      expect((await svc.call('GET', '/v1/checks?limit=5')).status).toBe(200);
    });

    it('reads a numeric path id only when it is written as one', async () => {
      for (const id of ['Infinity', '-Infinity', '%205', '+5', '5%20', '05.0', '1e1']) {
        expectFieldError(await svc.call('GET', `/v1/maintenance-windows/${id}`), 'path.id', 'type');
      }
      expect((await svc.call('GET', `/v1/maintenance-windows/${ids.window}`)).status).toBe(200);
    });

    it('refuses booleans other than true and false', async () => {
      for (const value of ['1', 'yes', 'TRUE', ' true']) {
        expectFieldError(
          await svc.call('GET', `/v1/checks/${ids.check}?includeDependencies=${encodeURIComponent(value)}`),
          'query.includeDependencies',
          'type',
        );
      }
    });
  });

  describe('bodies', () => {
    const post = (bytes: Buffer, contentType = 'application/json') =>
      rawRequest(
        svc.url,
        requestHead('POST', '/v1/variables', [
          ['Authorization', `Bearer ${svc.adminKey}`],
          ['Content-Type', contentType],
          ['Content-Length', String(bytes.length)],
        ]),
        bytes,
      );
    const body = (value: Buffer) => Buffer.concat([Buffer.from('{"key":"BYTES","value":"'), value, Buffer.from('"}')]);

    it.each([
      ['a raw 0xff byte', Buffer.from([0xff])],
      ['an overlong "/"', Buffer.from([0xc0, 0xaf])],
      ['an encoded surrogate (CESU-8)', Buffer.from([0xed, 0xa0, 0x80])],
      ['a truncated sequence', Buffer.from([0xe2, 0x82])],
    ])('refuses invalid UTF-8 (%s) with a 400, storing nothing', async (_name, bytes) => {
      const before = await snapshot();
      const res = await post(body(bytes));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request', message: 'The body is not valid UTF-8' });
      expect(await snapshot()).toEqual(before);
    });

    it.each([
      ['gzip', '\\u0000', 'characters', (b: Buffer) => gzipSync(b)],
      ['br', '\\ud800', 'unicode', (b: Buffer) => brotliCompressSync(b)],
      ['deflate', '\\u0000', 'characters', (b: Buffer) => deflateSync(b)],
    ])('refuses a %s body of a thousand results whose last one escapes %s, storing nothing', async (encoding, escaped, rule, compress) => {
      // The escape comes last, where this process's own inflating of the body may still be under way when koa-body ends.
      const now = new Date().toISOString();
      const item = (location: string) =>
        `{"checkId":"${ids.check}","checkType":"API","runLocation":"${location}","startedAt":"${now}","stoppedAt":"${now}","hasFailures":false}`;
      const text = `{"results":[${Array.from({ length: 999 }, () => item('eu-west-1')).join(',')},${item(`eu${escaped}`)}]}`;
      const before = await accepted();
      const bytes = compress(Buffer.from(text));
      const res = await rawRequest(
        svc.url,
        requestHead('POST', '/v1/check-results', [
          ['Authorization', `Bearer ${svc.adminKey}`],
          ['Content-Type', 'application/json'],
          ['Content-Encoding', encoding],
          ['Content-Length', String(bytes.length)],
        ]),
        bytes,
      );
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.attributes.errors).toContainEqual(expect.objectContaining({ field: 'body.results[999].runLocation', rule }));
      expect(await accepted()).toBe(before);
    });

    describe('a large body sent whole (a thousand results, 360 KB)', () => {
      const now = new Date().toISOString();
      const item = (location: string, extra = '') =>
        `{"checkId":"${ids.check}","checkType":"API","runLocation":"${location}","startedAt":"${now}","stoppedAt":"${now}","hasFailures":false${extra}}`;
      const batch = (last: string, count = 1000) =>
        Buffer.from(`{"results":[${Array.from({ length: count - 1 }, () => item('eu-west-1')).join(',')},${last}]}`);
      const ingest = (bytes: Buffer, length = bytes.length) =>
        rawRequest(
          svc.url,
          requestHead('POST', '/v1/check-results', [
            ['Authorization', `Bearer ${svc.adminKey}`],
            ['Content-Type', 'application/json'],
            ['Content-Length', String(length)],
          ]),
          bytes,
        );

      it('takes a thousand results, each once', async () => {
        const before = await accepted();
        const bytes = batch(item('us-east-1', ',"responseTime":12.5'));
        expect(bytes.length).toBeGreaterThan(128 * 1024);
        const res = await ingest(bytes);
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        expect(res.body.count).toBe(1000);
        expect(await accepted()).toBe(before + 1000);
      });

      it.each([
        ['escapes \\u0000 in its last result', () => item('eu\\u0000'), 'body.results[999].runLocation', 'characters'],
        ['names no check in its last result', () => item('eu-west-1').replace(ids.check, randomUUID()), 'body.results[999].checkId', 'exists'],
      ])('refuses one that %s, naming the field, accepting nothing', async (_name, last, field, rule) => {
        const before = await accepted();
        const res = await ingest(batch(last()));
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body.attributes.errors).toContainEqual(expect.objectContaining({ field, rule }));
        expect(await accepted()).toBe(before);
      });

      it.each([
        ['a trailing comma', (b: Buffer) => Buffer.from(b.toString().replace(/\]\}$/, ',]}')), 'Malformed JSON body'],
        ['two commas between results', (b: Buffer) => Buffer.from(b.toString().replace('},{', '},,{')), 'Malformed JSON body'],
        ['text after the object', (b: Buffer) => Buffer.concat([b, Buffer.from(' 1')]), 'Malformed JSON body'],
        [
          'a __proto__ key',
          (b: Buffer) => Buffer.from(b.toString().replace('"hasFailures":false}]}', '"hasFailures":false,"__proto__":{"x":1}}]}')),
          'Malformed JSON body',
        ],
        ['a raw 0xff byte', (b: Buffer) => Buffer.concat([b.subarray(0, 100), Buffer.from([0xff]), b.subarray(101)]), 'The body is not valid UTF-8'],
      ])('answers 400 to one with %s, accepting nothing', async (_name, edit, message) => {
        const before = await accepted();
        const res = await ingest(edit(batch(item('eu-west-1'))));
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, message });
        expect(await accepted()).toBe(before);
      });

      it('answers 400 to one nested more than 64 levels deep, and 413 to one beyond the limit', async () => {
        const deep = await ingest(batch(item('eu-west-1', `,"x":${'['.repeat(70)}${']'.repeat(70)}`)));
        expect(deep.status).toBe(400);
        expect(deep.body.attributes.errors).toEqual([{ field: 'body', rule: 'depth', message: 'must not nest arrays and objects more than 64 levels deep' }]);
        const huge = await ingest(Buffer.from('{"results":[]}'), 64 * 1024 * 1024);
        expect(huge.status).toBe(413);
      });
    });

    it('still takes well-formed UTF-8, including a literal U+FFFD', async () => {
      const res = await post(body(Buffer.from('ü€😀\ufffd', 'utf8')), 'application/json; charset=UTF-8');
      expect(res.status).toBe(201);
      expect(res.body.value).toBe('ü€😀\ufffd');
    });

    it('answers 415 to a charset other than UTF-8', async () => {
      const res = await post(Buffer.from('{"key":"L1","value":"x"}'), 'application/json; charset=latin1');
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
      expect((await svc.call('GET', '/v1/variables/L1')).status).toBe(404);
    });

    it.each([
      ['an array', (d: number) => '['.repeat(d) + ']'.repeat(d)],
      ['a field value', (d: number) => `{"key":"DEEP","value":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`],
    ])('answers 400 to a body nested thousands of levels deep (%s), storing nothing', async (_name, nest) => {
      const before = await snapshot();
      for (const depth of [65, 3000, 20000]) {
        const res = await post(Buffer.from(nest(depth)));
        expect(res.status, `depth ${depth}`).toBe(400);
        expect(res.body.attributes.errors).toEqual([{ field: 'body', rule: 'depth', message: 'must not nest arrays and objects more than 64 levels deep' }]);
      }
      expect(await snapshot()).toEqual(before);
    });

    it('refuses year 0000 as a maintenance-window date', async () => {
      const res = await svc.call('POST', '/v1/maintenance-windows', { body: { name: 'w', startsAt: '0000-01-01', endsAt: '2026-01-02' } });
      expectFieldError(res, 'body.startsAt', 'range');
    });
  });

  describe('headers', () => {
    it('answers 400 to two Authorization headers, even when both are valid', async () => {
      const res = await rawRequest(
        svc.url,
        requestHead('GET', '/v1/account', [
          ['Authorization', `Bearer ${svc.adminKey}`],
          ['Authorization', `Bearer ${svc.adminKey}`],
        ]),
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Send one Authorization header' });
    });

    it('answers oversized headers with 431 in the error shape', async () => {
      const res = await rawRequest(svc.url, requestHead('GET', '/health', [['X-Big', 'a'.repeat(20_000)]]));
      expect(res.status).toBe(431);
      expect(res.body).toEqual({ statusCode: 431, error: 'Request Header Fields Too Large', message: 'Request headers are too large' });
    });

    it('answers a control character in a header with 400 in the error shape', async () => {
      const res = await rawRequest(svc.url, requestHead('GET', '/health', [['X-Bad', 'a\u0001b']]));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Malformed HTTP request' });
    });
  });

  it('answers 404 when deleting a key that is already revoked', async () => {
    const key = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    await revokeApiKey(svc.deps.sql, key.id);
    expect((await svc.call('DELETE', `/v1/api-keys/${key.id}`)).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/api-keys/${randomUUID()}`)).status).toBe(404);
  });
});
