import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';

/** The console's strip: checked against the same runs counted here, bucket by bucket. */
describe('POST /v1/analytics/checks/timeline', () => {
  let svc: TestService;
  let a: string;
  let b: string;
  const runs: { checkId: string; startedAt: number; failed: boolean; errored: boolean; degraded: boolean; responseTime: number }[] = [];

  beforeAll(async () => {
    svc = await startTestService();
    a = (await svc.call('POST', '/v1/checks/api', { body: { name: 'a', tags: ['shop'], request: { url: 'http://127.0.0.1:9/' } } })).body.id;
    b = (await svc.call('POST', '/v1/checks/api', { body: { name: 'b', request: { url: 'http://127.0.0.1:9/' } } })).body.id;
    const now = Date.now();
    // 300 runs over the last 26 hours (some before the strip), a few failing, errored or degraded, pseudo-random times.
    for (let i = 0; i < 300; i++) {
      const checkId = i % 3 === 0 ? b : a;
      runs.push({
        checkId,
        startedAt: now - Math.floor((((i * 7919) % 1000) / 1000) * 26 * 3_600_000),
        failed: i % 11 === 0,
        errored: i % 17 === 0,
        degraded: i % 13 === 0,
        responseTime: 50 + ((i * 37) % 400) + (i % 7) / 4,
      });
    }
    const results = runs.map((r) => ({
      id: randomUUID(),
      checkId: r.checkId,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(r.startedAt).toISOString(),
      stoppedAt: new Date(r.startedAt + 100).toISOString(),
      hasFailures: r.failed,
      hasErrors: r.errored,
      isDegraded: r.degraded,
      responseTime: r.responseTime,
    }));
    for (let i = 0; i < results.length; i += 100)
      expect((await svc.call('POST', '/v1/check-results', { body: { results: results.slice(i, i + 100) } })).status).toBe(202);
    await waitFor(
      async () => (await svc.deps.store.query<{ n: number }>('SELECT count() AS n FROM check_results', {}))[0]!.n,
      (n) => Number(n) === 300,
    );
  });
  afterAll(() => svc?.stop());

  it('counts runs, failures and degraded runs per bucket exactly as the runs say', async () => {
    const res = await svc.call('POST', '/v1/analytics/checks/timeline?hours=24&buckets=48', {
      body: { checkIds: [b, a, '00000000-0000-4000-8000-000000000000'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.map((i: { checkId: string }) => i.checkId)).toEqual([b, a]);
    for (const item of res.body as { checkId: string; from: string; bucketSeconds: number; runs: number[]; failed: number[]; degraded: number[] }[]) {
      expect(item.runs).toHaveLength(48);
      const size = 1_800_000;
      expect(item.bucketSeconds).toBe(1800);
      const starts = item.runs.map((_, i) => Date.parse(item.from) + i * size);
      const end = starts[47]! + size;
      expect(end).toBeGreaterThanOrEqual(Date.now() - 60_000);
      const expected = starts.map((from) => {
        const inside = runs.filter((r) => r.checkId === item.checkId && r.startedAt >= from && r.startedAt < from + size);
        return {
          runs: inside.length,
          failed: inside.filter((r) => r.failed || r.errored).length,
          degraded: inside.filter((r) => r.degraded && !r.failed && !r.errored).length,
        };
      });
      expect(item.runs.map((n, i) => ({ runs: n, failed: item.failed[i], degraded: item.degraded[i] }))).toEqual(expected);
      // The window's totals and its exact p95 (linear between the two nearest ranks), computed here from the same runs.
      const inWindow = runs.filter((r) => r.checkId === item.checkId && r.startedAt >= starts[0]! && r.startedAt < end);
      const times = inWindow.map((r) => r.responseTime).sort((x, y) => x - y);
      const rank = 0.95 * (times.length - 1);
      const p95 = times[Math.floor(rank)]! + (times[Math.ceil(rank)]! - times[Math.floor(rank)]!) * (rank - Math.floor(rank));
      const total = (item as unknown as { total: { responseTimeP95: number; expectedRuns: number } }).total;
      // The checks were activated when the suite began: the runs posted before that were never expected (no data
      // is counted from an activation, docs/analytics.md); only the last bucket may expect a run.
      const expectedRuns = (item as unknown as { expected: number[] }).expected;
      expect(expectedRuns).toHaveLength(48);
      expect(expectedRuns.slice(0, 46).every((n) => n === 0)).toBe(true);
      expect(total).toEqual({
        runs: inWindow.length,
        failed: expected.reduce((n, x) => n + x.failed, 0),
        degraded: expected.reduce((n, x) => n + x.degraded, 0),
        responseTimeP95: expect.any(Number),
        latencyP95: null,
        expectedRuns: expectedRuns.reduce((n, x) => n + x, 0),
        // Gaps per bucket: the expected runs each bucket did not get.
        noDataRatio: expectedRuns.some((n) => n > 0)
          ? Math.round((1e6 * expectedRuns.reduce((n, x, i) => n + Math.max(0, x - item.runs[i]!), 0)) / expectedRuns.reduce((n, x) => n + x, 0)) / 1e4
          : 0,
      });
      // Rounded to 2 decimals on both sides: the engine's float and this one may round a …5 apart (430.125 → .12 or .13).
      expect(Math.abs(total.responseTimeP95 - p95)).toBeLessThanOrEqual(0.0051);
    }
  });

  it('says which checks a maintenance window is on for now', async () => {
    const now = Date.now();
    await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'shop upgrade', tags: ['shop'], startsAt: new Date(now - 60_000).toISOString(), endsAt: new Date(now + 3_600_000).toISOString() },
    });
    const res = await svc.call('POST', '/v1/analytics/checks/timeline?hours=1&buckets=12', { body: { checkIds: [a, b] } });
    expect(res.body.map((i: { inMaintenance: boolean }) => i.inMaintenance)).toEqual([true, false]);
    // Drawn over the strip: the buckets the window overlaps, for the check it applies to.
    const [shop, other] = res.body as { from: string; bucketSeconds: number; maintenanceBuckets: number[] }[];
    const flagged = shop!.maintenanceBuckets.map((i) => Date.parse(shop!.from) + i * shop!.bucketSeconds * 1000);
    expect(flagged.length).toBeGreaterThanOrEqual(1);
    expect(Math.min(...flagged)).toBeGreaterThanOrEqual(now - 60_000 - 300_000);
    expect(other!.maintenanceBuckets).toEqual([]);
  });

  it('takes a window from–to, cut in equal buckets', async () => {
    const to = Date.now();
    const from = to - 5 * 3_600_000;
    const res = await svc.call('POST', `/v1/analytics/checks/timeline?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&buckets=7`, {
      body: { checkIds: [a] },
    });
    expect(res.status).toBe(200);
    const item = res.body[0] as { from: string; bucketSeconds: number; runs: number[] };
    expect(item.runs).toHaveLength(7);
    expect(Date.parse(item.from)).toBe(from);
    const size = Math.ceil((to - from) / 7 / 1000) * 1000;
    expect(item.bucketSeconds * 1000).toBe(size);
    expect(item.runs.reduce((n, x) => n + x, 0)).toBe(runs.filter((r) => r.checkId === a && r.startedAt >= from && r.startedAt < from + 7 * size).length);
  });

  it('refuses a window longer than 31 days, or from without to', async () => {
    expectFieldError(
      await svc.call('POST', '/v1/analytics/checks/timeline?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', { body: { checkIds: [a] } }),
      'query.to',
      'window',
    );
    expectFieldError(await svc.call('POST', '/v1/analytics/checks/timeline?from=2026-01-01T00:00:00Z', { body: { checkIds: [a] } }), 'query.to', 'required');
  });

  it('takes up to 1,000 checks a call', async () => {
    const many = [a, ...Array.from({ length: 999 }, () => randomUUID())];
    const res = await svc.call('POST', '/v1/analytics/checks/timeline?hours=1&buckets=4', { body: { checkIds: many } });
    expect(res.status).toBe(200);
    expect(res.body.map((i: { checkId: string }) => i.checkId)).toEqual([a]);
    expectFieldError(await svc.call('POST', '/v1/analytics/checks/timeline', { body: { checkIds: [...many, randomUUID()] } }), 'body.checkIds', 'maxItems');
  });
});
