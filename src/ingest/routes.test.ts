import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { INGEST_QUEUE, type IngestJob } from '../model/results.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('check-result ingest', () => {
  let svc: TestService;
  /** The ingest queue's BullMQ side, to watch the jobs the service made. */
  const ingestQueue = () => svc.deps.queues.queue<IngestJob>(INGEST_QUEUE);
  let apiCheck: string;
  let icmpCheck: string;
  let browserCheck: string;

  beforeAll(async () => {
    svc = await startTestService();
    apiCheck = (await svc.call('POST', '/v1/checks/api', { body: { name: 'api', request: { url: 'https://x.test' } } })).body.id;
    icmpCheck = (await svc.call('POST', '/v1/checks/icmp', { body: { name: 'ping', request: { hostname: 'x.test' } } })).body.id;
    browserCheck = (await svc.call('POST', '/v1/checks/browser', { body: { name: 'web', script: null } })).body.id;
  });
  afterAll(() => svc?.stop());

  const countStored = async (checkId: string) => {
    const rows = await svc.deps.store.query<{ n: number }>('SELECT count() AS n FROM check_results WHERE check_id = {checkId:UUID}', { checkId });
    return Number(rows[0].n);
  };

  it('queues a batch, lands it in ClickHouse and reads it back with the same values', async () => {
    const results = [
      {
        id: randomUUID(),
        checkId: apiCheck,
        checkType: 'API',
        runLocation: 'eu-west-1',
        startedAt: '2026-11-20T10:00:00.123Z',
        stoppedAt: '2026-11-20T10:00:00.456Z',
        hasFailures: false,
        attempts: 1,
        responseTime: 333.5,
        statusCode: 200,
        timings: { wait: 1.5, dns: 2, tcp: 3, firstByte: 120, download: 7 },
      },
      {
        id: randomUUID(),
        checkId: apiCheck,
        checkType: 'API',
        runLocation: 'us-east-1',
        startedAt: '2026-11-20T10:10:00.000Z',
        stoppedAt: '2026-11-20T10:10:01.000Z',
        hasFailures: true,
        hasErrors: true,
        isDegraded: true,
        attempts: 2,
        responseTime: 1000,
        statusCode: 503,
      },
      {
        checkId: icmpCheck,
        checkType: 'ICMP',
        runLocation: 'ap-south-1',
        startedAt: '2026-11-20T10:05:00.000Z',
        stoppedAt: '2026-11-20T10:05:02.000Z',
        hasFailures: false,
        packetLoss: 10,
        latencyMin: 1.25,
        latencyMax: 9.5,
        latencyAvg: 4,
        latencyStdDev: 0.75,
      },
      {
        checkId: browserCheck,
        checkType: 'BROWSER',
        runLocation: 'eu-central-1',
        startedAt: '2026-11-20T10:06:00.000Z',
        stoppedAt: '2026-11-20T10:06:09.000Z',
        hasFailures: false,
        responseTime: 9000,
        webVitals: { TTFB: 100, FCP: 800, LCP: 2100, CLS: 0.05, TBT: 250, consoleErrors: 2, networkErrors: 0, userScriptErrors: 1, documentErrors: 0 },
      },
    ];
    const res = await svc.call('POST', '/v1/check-results', { body: { results } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ batchId: expect.stringMatching(/^[0-9a-f-]{36}$/), count: 4 });

    const api = await waitFor(
      () => svc.call('GET', `/v1/check-results/${apiCheck}`),
      (r) => r.body.length === 2,
    );
    expect(Number(api.headers.get('x-total-count'))).toBe(2);
    // Newest first, every value as sent, defaults filled; the anchor's result fields beside them.
    expect(api.body[0]).toMatchObject({
      id: results[1].id,
      checkId: apiCheck,
      checkType: 'API',
      runLocation: 'us-east-1',
      startedAt: '2026-11-20T10:10:00.000Z',
      stoppedAt: '2026-11-20T10:10:01.000Z',
      hasFailures: true,
      hasErrors: true,
      isDegraded: true,
      aborted: false,
      attempts: 2,
      responseTime: 1000,
      statusCode: 503,
      name: 'api',
      isCancelled: false,
      overMaxResponseTime: null,
      resultType: 'FINAL',
      sequenceId: null,
      traceId: null,
      errorGroupIds: [],
      apiCheckResult: { request: { method: 'GET', url: 'https://x.test' }, response: { status: 503, timings: null, timingPhases: null } },
    });
    expect(Date.parse(api.body[0].created_at)).toBeGreaterThan(Date.parse('2026-11-20T10:10:00.000Z'));
    expect(api.body[1]).toMatchObject({
      id: results[0].id,
      checkId: apiCheck,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: '2026-11-20T10:00:00.123Z',
      stoppedAt: '2026-11-20T10:00:00.456Z',
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      aborted: false,
      attempts: 1,
      responseTime: 333.5,
      statusCode: 200,
      timings: { wait: 1.5, dns: 2, tcp: 3, firstByte: 120, download: 7 },
    });
    const icmp = await waitFor(
      () => svc.call('GET', `/v1/check-results/${icmpCheck}`),
      (r) => r.body.length === 1,
    );
    expect(icmp.body[0]).toMatchObject({ packetLoss: 10, latencyMin: 1.25, latencyMax: 9.5, latencyAvg: 4, latencyStdDev: 0.75 });
    expect(icmp.body[0].id).toMatch(/^[0-9a-f-]{36}$/);
    const web = await waitFor(
      () => svc.call('GET', `/v1/check-results/${browserCheck}`),
      (r) => r.body.length === 1,
    );
    expect(web.body[0].webVitals).toEqual(results[3].webVitals);
  });

  it("lists leave out what only a run's detail holds, never show it empty; the single result carries it", async () => {
    const checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'detailed', request: { url: 'https://x.test' } } })).body.id;
    const id = randomUUID();
    const assertions = [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200', actual: 503, success: false }];
    const result = {
      id,
      checkId,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: minutesAgo(1),
      stoppedAt: minutesAgo(0.9),
      hasFailures: true,
      statusCode: 503,
      responseTime: 40,
      timings: { wait: 1, dns: 2, tcp: 3, firstByte: 30, download: 4 },
      apiCheckResult: { assertions, response: { status: 503, statusText: 'Service Unavailable', body: 'down' } },
    };
    const posted = await svc.call('POST', '/v1/check-results', { body: { results: [result] } });
    expect(posted.status, posted.text).toBe(202);
    await waitFor(
      () => countStored(checkId),
      (n) => n === 1,
    );
    const one = await svc.call('GET', `/v1/check-results/${checkId}/${id}`);
    expect(one.body.apiCheckResult).toMatchObject({ assertions, response: { status: 503, statusText: 'Service Unavailable' } });
    // What the run reported is laid over the stored run one level deep: its response keeps the run's timing phases.
    expect(one.body.apiCheckResult.response.timingPhases).toEqual({ wait: 1, dns: 2, tcp: 3, firstByte: 30, download: 4, total: 40 });
    for (const path of [`/v1/check-results/${checkId}`, `/v2/check-results/${checkId}`]) {
      const res = await svc.call('GET', path);
      const [listed] = path.startsWith('/v2') ? res.body.entries : res.body;
      expect(listed.apiCheckResult.response.status, path).toBe(503);
      expect(listed.apiCheckResult.request, path).toMatchObject({ method: 'GET', url: 'https://x.test' });
      expect(listed.apiCheckResult, path).not.toHaveProperty('assertions');
      expect(listed.apiCheckResult.response, path).not.toHaveProperty('statusText');
    }
    // A failed browser run listed shows no `errors: []` beside its failure either.
    const web = await svc.call('GET', `/v1/check-results/${browserCheck}`);
    expect(web.body[0].browserCheckResult).not.toHaveProperty('errors');
  });

  it('filters reads by window, status and location, and pages them', async () => {
    const checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'paged', request: { url: 'https://x.test' } } })).body.id;
    const results = Array.from({ length: 12 }, (_, i) => ({
      checkId,
      checkType: 'API',
      runLocation: i % 2 ? 'eu-west-1' : 'us-west-2',
      startedAt: new Date(Date.UTC(2026, 10, 21, 0, i)).toISOString(),
      stoppedAt: new Date(Date.UTC(2026, 10, 21, 0, i, 1)).toISOString(),
      hasFailures: i % 3 === 0,
      responseTime: i,
    }));
    expect((await svc.call('POST', '/v1/check-results', { body: { results } })).status).toBe(202);
    await waitFor(
      () => countStored(checkId),
      (n) => n === 12,
    );
    const page2 = await svc.call('GET', `/v1/check-results/${checkId}?limit=5&page=2`);
    expect(page2.body.map((r: { responseTime: number }) => r.responseTime)).toEqual([6, 5, 4, 3, 2]);
    expect(Number(page2.headers.get('x-total-count'))).toBe(12);
    const failed = await svc.call('GET', `/v1/check-results/${checkId}?hasFailures=true&limit=100`);
    expect(failed.body.map((r: { responseTime: number }) => r.responseTime)).toEqual([9, 6, 3, 0]);
    const eu = await svc.call('GET', `/v1/check-results/${checkId}?location=eu-west-1&limit=100`);
    expect(eu.body.every((r: { runLocation: string }) => r.runLocation === 'eu-west-1')).toBe(true);
    expect(eu.body).toHaveLength(6);
    const from = Date.UTC(2026, 10, 21, 0, 3) / 1000;
    const windowed = await svc.call('GET', `/v1/check-results/${checkId}?from=${from}&to=2026-11-21T00:06:00Z&limit=100`);
    expect(windowed.body.map((r: { responseTime: number }) => r.responseTime)).toEqual([5, 4, 3]);
    expectFieldError(await svc.call('GET', `/v1/check-results/${checkId}?from=yesterday`), 'query.from', 'pattern');
    expectFieldError(await svc.call('GET', `/v1/check-results/${checkId}?from=2026-13-45`), 'query.from', 'format');
    expectFieldError(await svc.call('GET', `/v1/check-results/${checkId}?from=2000&to=1000`), 'query.from', 'before');
    expectFieldError(await svc.call('GET', `/v1/check-results/${checkId}?hasFailures=maybe`), 'query.hasFailures', 'type');
    expect((await svc.call('GET', `/v1/check-results/${randomUUID()}`)).status).toBe(404);
  });

  const valid = () => ({
    checkId: apiCheck,
    checkType: 'API',
    runLocation: 'eu-west-1',
    startedAt: minutesAgo(2),
    stoppedAt: minutesAgo(1),
    hasFailures: false,
  });

  it.each([
    ['no results', () => ({ results: [] }), 'body.results', 'minItems'],
    ['not an array', () => ({ results: {} }), 'body.results', 'type'],
    ['unknown property', () => ({ results: [{ ...valid(), colour: 'red' }] }), 'body.results[0].colour', 'additionalProperties'],
    ['missing hasFailures', () => ({ results: [{ ...valid(), hasFailures: undefined }] }), 'body.results[0].hasFailures', 'required'],
    ['bad checkType', () => ({ results: [{ ...valid(), checkType: 'SMOKE' }] }), 'body.results[0].checkType', 'enum'],
    ['bad time', () => ({ results: [{ ...valid(), startedAt: 'noon' }] }), 'body.results[0].startedAt', 'format'],
    // toISOString's shape, but no such day: the quick check of that shape must not let it through.
    ['no 30 February', () => ({ results: [{ ...valid(), stoppedAt: '2026-02-30T10:00:00.000Z' }] }), 'body.results[0].stoppedAt', 'format'],
    // A leap second, later today: RFC 3339's form takes it, no instant is read from it (rolled over to midnight it would pass).
    [
      'a leap second',
      () => ({ results: [{ ...valid(), stoppedAt: `${new Date().toISOString().slice(0, 10)}T23:59:60.000Z` }] }),
      'body.results[0].stoppedAt',
      'after',
    ],
    ['attempts 0', () => ({ results: [{ ...valid(), attempts: 0 }] }), 'body.results[0].attempts', 'minimum'],
    ['negative responseTime', () => ({ results: [{ ...valid(), responseTime: -1 }] }), 'body.results[0].responseTime', 'minimum'],
    ['packet loss over 100', () => ({ results: [{ ...valid(), packetLoss: 101 }] }), 'body.results[0].packetLoss', 'maximum'],
    ['status code 42', () => ({ results: [{ ...valid(), statusCode: 42 }] }), 'body.results[0].statusCode', 'minimum'],
    ['unknown check', () => ({ results: [{ ...valid(), checkId: randomUUID() }] }), 'body.results[0].checkId', 'exists'],
    ['type mismatch', () => ({ results: [valid(), { ...valid(), checkType: 'ICMP' }] }), 'body.results[1].checkType', 'match'],
    ['stopped before started', () => ({ results: [{ ...valid(), stoppedAt: minutesAgo(5) }] }), 'body.results[0].stoppedAt', 'after'],
    [
      'far future',
      () => ({ results: [{ ...valid(), startedAt: new Date(Date.now() + 3600_000).toISOString(), stoppedAt: new Date(Date.now() + 3601_000).toISOString() }] }),
      'body.results[0].startedAt',
      'future',
    ],
    [
      'beyond retention',
      () => ({ results: [{ ...valid(), startedAt: '2001-01-01T00:00:00Z', stoppedAt: '2001-01-01T00:00:01Z' }] }),
      'body.results[0].startedAt',
      'retention',
    ],
    [
      'a detail over 64 KB of JSON',
      () => ({ results: [valid(), { ...valid(), apiCheckResult: { response: { status: 200, body: 'x'.repeat(70_000) } } }] }),
      'body.results[1]',
      'detailSize',
    ],
    [
      // Fewer UTF-16 units than the limit, more bytes: measured in bytes.
      'a detail over 64 KB of JSON in multi-byte characters',
      () => ({ results: [{ ...valid(), apiCheckResult: { response: { status: 200, body: '€'.repeat(23_000) } } }] }),
      'body.results[0]',
      'detailSize',
    ],
  ])('rejects a batch with %s, queueing nothing', async (_label, body, field, rule) => {
    const before = await ingestQueue().getJobCountByTypes('waiting', 'active', 'completed', 'delayed', 'failed');
    expectFieldError(await svc.call('POST', '/v1/check-results', { body: body() }), field, rule);
    const after = await ingestQueue().getJobCountByTypes('waiting', 'active', 'completed', 'delayed', 'failed');
    expect(after).toBe(before);
  });

  it('names every bad index in one answer', async () => {
    const res = await svc.call('POST', '/v1/check-results', {
      body: { results: [valid(), { ...valid(), checkId: randomUUID() }, valid(), { ...valid(), checkType: 'DNS' }] },
    });
    expect(res.status).toBe(400);
    const fields = res.body.attributes.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(['body.results[1].checkId', 'body.results[3].checkType']);
  });

  it('holds posted kept-file descriptions to what a run writes: a CR/LF content type or a foreign key is refused, nothing queued', async () => {
    const key = `screenshots/${'a'.repeat(64)}.png`;
    const browser = (assets: unknown[]) => ({
      id: randomUUID(),
      checkId: browserCheck,
      checkType: 'BROWSER',
      runLocation: 'eu-west-1',
      hasFailures: true,
      startedAt: minutesAgo(3),
      stoppedAt: minutesAgo(2),
      browserCheckResult: { errors: [], assets },
    });
    const before = await countStored(browserCheck);
    const bad = await svc.call('POST', '/v1/check-results', {
      body: {
        results: [
          browser([{ type: 'screenshot', name: 'x.png', contentType: 'image/png\r\nSet-Cookie: a=b', key, size: 1 }]),
          browser([{ type: 'screenshot', name: 'x.png', contentType: 'image/png', key: `code-bundles/${'b'.repeat(64)}.tar.gz`, size: 1 }]),
          browser([{ type: 'screenshot', name: '../../x.png', contentType: 'image/png', key, size: 1 }]),
          browser([
            { type: 'screenshot', name: 'a.png', contentType: 'image/png', key, size: 1 },
            { type: 'screenshot', name: 'a.png', contentType: 'image/png', key, size: 1 },
          ]),
        ],
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.attributes.errors.map((e: { field: string }) => e.field)).toEqual([
      'body.results[0].browserCheckResult.assets[0]',
      'body.results[1].browserCheckResult.assets[0]',
      'body.results[2].browserCheckResult.assets[0]',
      'body.results[3].browserCheckResult.assets[1]',
    ]);
    expect(bad.body.attributes.errors[0].message).toMatch(/contentType must be image\/png/);
    // A description as a run writes it is taken.
    const good = await svc.call('POST', '/v1/check-results', {
      body: { results: [browser([{ type: 'screenshot', name: 'shot-1.png', contentType: 'image/png', key, size: 10 }])] },
    });
    expect(good.status, good.text).toBe(202);
    await waitFor(
      () => countStored(browserCheck),
      (n) => n === before + 1,
    );
  });

  it('rejects a batch over the configured maximum', async () => {
    const results = Array.from({ length: 1001 }, valid);
    expectFieldError(await svc.call('POST', '/v1/check-results', { body: { results } }), 'body.results', 'maxItems');
  });

  it("keeps accounts apart: another account cannot post for or read this account's checks", async () => {
    const other = await createOtherTenant(svc);
    const res = await svc.call('POST', '/v1/check-results', { key: other.key, body: { results: [valid()] } });
    expectFieldError(res, 'body.results[0].checkId', 'exists');
    expect((await svc.call('GET', `/v1/check-results/${apiCheck}`, { key: other.key })).status).toBe(404);
  });

  it('reports the queue and the results it accepted in /ready', async () => {
    const res = await svc.call('GET', '/ready', { key: null });
    expect(res.body.ingest).toMatchObject({
      waiting: expect.any(Number),
      failed: 0,
      oldestWaitingSeconds: expect.any(Number),
      acceptedResults: expect.any(Number),
    });
    const before = res.body.ingest.acceptedResults as number;
    expect((await svc.call('POST', '/v1/check-results', { body: { results: [valid(), valid(), valid()] } })).status).toBe(202);
    expect((await svc.call('POST', '/v1/check-results', { body: { results: [valid(), { ...valid(), attempts: 0 }] } })).status).toBe(400);
    const after = await svc.call('GET', '/ready', { key: null });
    expect(after.body.ingest.acceptedResults).toBe(before + 3);
  });
});

describe('check results as the anchor API pages them', () => {
  let svc: TestService;
  let check: string;
  const ids: string[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'paged', maxResponseTime: 250, request: { url: 'https://x.test' } } })).body.id;
    // 25 runs a minute apart; two pairs share a start time, so ties are ordered by run id.
    const results = Array.from({ length: 25 }, (_, i) => {
      const id = randomUUID();
      ids.push(id);
      const minute = i === 7 || i === 15 ? i - 1 : i;
      return {
        id,
        checkId: check,
        checkType: 'API',
        runLocation: i % 2 ? 'eu-west-1' : 'us-east-1',
        startedAt: new Date(Date.UTC(2026, 10, 20, 9, minute)).toISOString(),
        stoppedAt: new Date(Date.UTC(2026, 10, 20, 9, minute, 1)).toISOString(),
        hasFailures: i % 5 === 0,
        responseTime: 100 + i * 10,
      };
    });
    await svc.call('POST', '/v1/check-results', { body: { results } });
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${check}?limit=100`),
      (r) => r.body.length === 25,
    );
  });
  afterAll(() => svc?.stop());

  it('walks every run once, newest first, by nextId; the last page says null', async () => {
    const all = (await svc.call('GET', `/v1/check-results/${check}?limit=100`)).body.map((r: { id: string }) => r.id);
    const seen: string[] = [];
    let nextId: string | null = null;
    let pages = 0;
    do {
      const res: { status: number; body: { length: number; entries: { id: string }[]; nextId: string | null } } = await svc.call(
        'GET',
        `/v2/check-results/${check}?limit=7${nextId ? `&nextId=${nextId}` : ''}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(res.body.entries.length);
      seen.push(...res.body.entries.map((e) => e.id));
      nextId = res.body.nextId;
      pages++;
    } while (nextId);
    expect(pages).toBe(4);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(25);
  });

  it('filters like the list, projects fields, and refuses a nextId it did not give', async () => {
    const failed = await svc.call('GET', `/v2/check-results/${check}?hasFailures=true&limit=100&fields=id,hasFailures,responseTime,overMaxResponseTime`);
    expect(failed.body.entries).toHaveLength(5);
    for (const e of failed.body.entries) expect(Object.keys(e).sort()).toEqual(['hasFailures', 'id', 'overMaxResponseTime', 'responseTime']);
    expect(failed.body.entries.map((e: { overMaxResponseTime: boolean }) => e.overMaxResponseTime)).toEqual([true, false, false, false, false]);
    const arrayForm = await svc.call('GET', `/v2/check-results/${check}?fields[]=id&fields[]=runLocation&location=eu-west-1&limit=3`);
    expect(arrayForm.body.entries[0]).toEqual({ id: expect.any(String), runLocation: 'eu-west-1' });
    const windowed = await svc.call('GET', `/v2/check-results/${check}?from=${Date.UTC(2026, 10, 20, 9, 20) / 1000}&limit=100`);
    expect(windowed.body.entries).toHaveLength(5);
    expect(windowed.body.nextId).toBeNull();
    expect((await svc.call('GET', `/v2/check-results/${check}?resultType=ATTEMPT`)).body).toEqual({ length: 0, entries: [], nextId: null });
    for (const bad of ['nope', Buffer.from('12.not-a-uuid').toString('base64url'), '%00']) {
      expectFieldError(await svc.call('GET', `/v2/check-results/${check}?nextId=${bad}`), 'query.nextId');
    }
    expectFieldError(await svc.call('GET', `/v2/check-results/${check}?fields=password`), 'query.fields[0]', 'enum');
    expect((await svc.call('GET', `/v2/check-results/${randomUUID()}`)).status).toBe(404);
  });

  it('reads one result by its run id, in its own account only', async () => {
    const res = await svc.call('GET', `/v1/check-results/${check}/${ids[3]}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids[3], checkId: check, name: 'paged', responseTime: 130, resultType: 'FINAL', apiCheckResult: { response: {} } });
    expect((await svc.call('GET', `/v1/check-results/${check}/${ids[3].toUpperCase()}`)).body.id).toBe(ids[3]);
    expect((await svc.call('GET', `/v1/check-results/${check}/${randomUUID()}`)).status).toBe(404);
    expect((await svc.call('GET', `/v1/check-results/${check}/not-a-run`)).status).toBe(404);
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/check-results/${check}/${ids[3]}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', `/v2/check-results/${check}`, { key: other.key })).status).toBe(404);
  });
});
