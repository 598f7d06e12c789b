import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';

const at = (minutesAgo: number, plusMs = 0) => new Date(Date.now() - minutesAgo * 60_000 + plusMs).toISOString();

describe('check statuses kept by the ingest worker', () => {
  let svc: TestService;
  let api: string;
  let ssl: string;

  beforeAll(async () => {
    svc = await startTestService();
    api = (await svc.call('POST', '/v1/checks/api', { body: { name: 'shop api', request: { url: 'https://shop.test' } } })).body.id;
    ssl = (await svc.call('POST', '/v1/checks/ssl', { body: { name: 'cert', request: { sslConfig: { hostname: 'shop.test' } } } })).body.id;
  });
  afterAll(() => svc?.stop());

  const run = (checkId: string, minutesAgo: number, fields: Record<string, unknown> = {}) => {
    // One reading of the clock for both ends: two could be a millisecond apart on a loaded machine.
    const start = Date.now() - minutesAgo * 60_000;
    return {
      id: randomUUID(),
      checkId,
      checkType: checkId === ssl ? 'SSL' : 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(start).toISOString(),
      stoppedAt: new Date(start + 500).toISOString(),
      hasFailures: false,
      ...fields,
    };
  };

  const post = async (results: unknown[]) => {
    const res = await svc.call('POST', '/v1/check-results', { body: { results } });
    expect(res.status, res.text).toBe(202);
  };

  const statusOf = (checkId: string) => svc.call('GET', `/v1/check-statuses/${checkId}`);

  it('answers 404 with a reason while a check has no results, and 404 for ids of no check', async () => {
    const res = await statusOf(api);
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/no results yet/);
    expect((await statusOf(randomUUID())).status).toBe(404);
    expect((await statusOf('not-an-id')).status).toBe(404);
    expect((await svc.call('GET', '/v1/check-statuses')).body).toEqual([]);
  });

  it('follows the newest run, and takes the longest and shortest run from the latest run of each location', async () => {
    const latest = run(api, 2, { runLocation: 'us-east-1', hasFailures: true, hasErrors: true, responseTime: 900 });
    await post([
      run(api, 10, { runLocation: 'eu-west-1', responseTime: 120 }),
      latest,
      run(api, 5, { runLocation: 'ap-south-1', responseTime: 40, isDegraded: true }),
    ]);
    const res = await waitFor(
      () => statusOf(api),
      (r) => r.status === 200,
    );
    expect(res.body).toMatchObject({
      name: 'shop api',
      checkId: api,
      hasFailures: true,
      hasErrors: true,
      isDegraded: false,
      longestRun: 900,
      shortestRun: 40,
      lastRunLocation: 'us-east-1',
      lastCheckRunId: latest.id,
      sslDaysRemaining: null,
    });
    expect(Date.parse(res.body.created_at)).toBeGreaterThan(0);
  });

  it('ignores a run older than the one it shows, and a batch posted twice changes nothing', async () => {
    const before = (await statusOf(api)).body;
    const old = run(api, 30, { runLocation: 'eu-west-1', responseTime: 5 });
    await post([old]);
    await post([old]);
    // The next newer run shows the late one was never applied: eu-west-1 keeps its 120 ms run.
    const next = run(api, 1, { runLocation: 'us-east-1', responseTime: 300 });
    await post([next]);
    const res = await waitFor(
      () => statusOf(api),
      (r) => r.body.lastCheckRunId === next.id,
    );
    expect(res.body).toMatchObject({ hasFailures: false, hasErrors: false, shortestRun: 40, longestRun: 300, lastRunLocation: 'us-east-1' });
    expect(before.lastCheckRunId).not.toBe(next.id);
    const [{ n }] = await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from check_statuses where check_id = ${api}`;
    expect(n).toBe(1);
  });

  it('keeps the days an SSL certificate has left', async () => {
    await post([run(ssl, 3, { handshakeTimeMs: 55, daysUntilExpiry: 41 })]);
    const res = await waitFor(
      () => statusOf(ssl),
      (r) => r.status === 200,
    );
    expect(res.body.sslDaysRemaining).toBe(41);
    // handshake time is not a responseTime: the run lasted stoppedAt - startedAt.
    expect(res.body.longestRun).toBe(500);
  });

  it('lists every check with results, and nothing of another account', async () => {
    const list = await svc.call('GET', '/v1/check-statuses');
    expect(list.status).toBe(200);
    expect(list.body.map((s: { checkId: string }) => s.checkId)).toEqual([api, ssl]);
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', '/v1/check-statuses', { key: other.key })).body).toEqual([]);
    expect((await svc.call('GET', `/v1/check-statuses/${api}`, { key: other.key })).status).toBe(404);
  });

  it('goes with its check', async () => {
    expect((await svc.call('DELETE', `/v1/checks/${ssl}`)).status).toBe(204);
    expect((await statusOf(ssl)).status).toBe(404);
    expect((await svc.call('GET', '/v1/check-statuses')).body.map((s: { checkId: string }) => s.checkId)).toEqual([api]);
  });
});

describe('the check list filtered by status', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('matches the current status of each check; checks without results match none', async () => {
    const make = (name: string) => svc.call('POST', '/v1/checks/api', { body: { name, request: { url: 'https://x.test' } } }).then((r) => r.body.id as string);
    const [passing, failing, degraded, erroring] = [await make('p'), await make('f'), await make('d'), await make('e')];
    await make('no results');
    const result = (checkId: string, fields: object) => ({
      checkId,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: at(1),
      stoppedAt: at(1, 10),
      hasFailures: false,
      ...fields,
    });
    await svc.call('POST', '/v1/check-results', {
      body: {
        results: [result(passing, {}), result(failing, { hasFailures: true }), result(degraded, { isDegraded: true }), result(erroring, { hasErrors: true })],
      },
    });
    await waitFor(
      () => svc.call('GET', '/v1/check-statuses'),
      (r) => r.body.length === 4,
    );
    const ids = async (status: string) => (await svc.call('GET', `/v1/checks?status=${status}&limit=100`)).body.map((c: { id: string }) => c.id).sort();
    expect(await ids('passing')).toEqual([passing]);
    expect(await ids('failing')).toEqual([failing, erroring].sort());
    expect(await ids('degraded')).toEqual([degraded]);
    const res = await svc.call('GET', '/v1/checks?status=broken');
    expect(res.status).toBe(400);
    expect(res.body.attributes.errors[0]).toMatchObject({ field: 'query.status', rule: 'enum' });
  });
});
