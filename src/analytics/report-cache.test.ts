import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitFor, type TestService } from '../../test/support/service.js';
import { BucketCache, pageOf } from './report-cache.js';

const DAY = 86_400_000;

/**
 * The report cache answers closed buckets it holds, and no answer is stale once the batch that changes it has
 * landed: a late result three weeks back changes the next report (docs/analytics.md, "Report cache").
 */
describe('report cache', () => {
  let svc: TestService;
  let checkId: string;
  const today = Math.floor(Date.now() / DAY) * DAY;
  beforeAll(async () => {
    svc = await startTestService();
    checkId = (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'cached', request: { url: 'http://127.0.0.1:9/' } } })).body.id;
    // Four passing runs a day for 30 days, through the API (ingest marks the days it lands).
    const results = [];
    for (let d = 30; d >= 1; d--) {
      for (let h = 0; h < 4; h++) {
        const at = today - d * DAY + h * 6 * 3_600_000 + 60_000;
        results.push({ id: randomUUID(), checkId, checkType: 'API', runLocation: h % 2 ? 'eu-west-1' : 'us-east-1', startedAt: new Date(at).toISOString(), stoppedAt: new Date(at + 200).toISOString(), hasFailures: false, responseTime: 100 + h, statusCode: 200 });
      }
    }
    await svc.call('POST', '/v1/check-results', { body: { results } });
    await waitFor(() => svc.call('GET', `/v1/check-results/${checkId}?limit=1`), (r) => Number(r.headers.get('x-total-count')) === 120);
  }, 60_000);
  afterAll(() => svc?.stop());

  // A fixed window (a rolling one moves between two asks): a partial first day, today open.
  const from = Math.floor((today - 31 * DAY + 5 * 3_600_000) / 1000);
  const to = Math.floor(Date.now() / 1000);
  const path = `/v1/analytics/api-checks/{id}?from=${from}&to=${to}&metrics=availability,responseTime_avg,responseTime_p95&aggregationInterval=1440&groupBy=runLocation&limit=100`;
  const ask = (noCache = false) => svc.call('GET', path.replace('{id}', checkId), noCache ? { headers: { 'cache-control': 'no-cache' } } : {});
  const dayOf = (body: { series: { runLocation: string; data: { bucketStart: string; availability: number }[] }[] }, location: string, at: number) =>
    body.series.find((s) => s.runLocation === location)!.data.find((r) => r.bucketStart === new Date(Math.floor(at / DAY) * DAY).toISOString());

  it('holds closed buckets: the second answer reads none of them again, and equals the uncached one', async () => {
    const first = await ask();
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('x-analytics-cache')).toMatch(/^hits=0; misses=\d+$/);
    const second = await ask();
    const [, hits, misses] = /^hits=(\d+); misses=(\d+)$/.exec(second.headers.get('x-analytics-cache') ?? '')!;
    expect(Number(hits)).toBeGreaterThanOrEqual(28);
    expect(Number(misses)).toBe(0);
    expect(second.body).toEqual((await ask(true)).body);
  });

  it('a late result three weeks back changes the next report once it has landed', async () => {
    await ask();
    const at = today - 21 * DAY + 3_600_000;
    const before = dayOf((await ask()).body, 'eu-west-1', at)!;
    expect(before.availability).toBe(100);
    await svc.call('POST', '/v1/check-results', {
      body: { results: [{ id: randomUUID(), checkId, checkType: 'API', runLocation: 'eu-west-1', startedAt: new Date(at).toISOString(), stoppedAt: new Date(at + 900).toISOString(), hasFailures: true, responseTime: 900, statusCode: 503 }] },
    });
    await waitFor(() => svc.call('GET', `/v1/check-results/${checkId}?limit=1`), (r) => Number(r.headers.get('x-total-count')) === 121);
    const after = await ask();
    // One bucket read again (the late result's day), the rest from the cache.
    expect(after.headers.get('x-analytics-cache')).toMatch(/misses=1$/);
    expect(dayOf(after.body, 'eu-west-1', at)!.availability).toBeCloseTo((100 * 2) / 3, 9);
    expect(after.body).toEqual((await ask(true)).body);
  });
});

describe('the bucket cache itself', () => {
  it('keeps within its memory bound, dropping the least recently used', () => {
    const cache = new BucketCache(2000);
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ b: i, m0: i }));
    cache.set('a', 'v1', rows(5));
    cache.set('b', 'v1', rows(5));
    expect(cache.get('a', 'v1')).toHaveLength(5);
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, 'v1', rows(5));
    expect(cache.stats().bytes).toBeLessThanOrEqual(2000);
    expect(cache.get('b', 'v1')).toBeUndefined();
    // Another version is a miss.
    cache.set('c', 'v1', rows(1));
    expect(cache.get('c', 'v2')).toBeUndefined();
  });

  it('pages as the query does: by series and bucket, a limit per series from an offset, missing series last', () => {
    const rows = [
      { g: 'b', b: 2 }, { g: 'a', b: 3 }, { g: 'a', b: 1 }, { g: null, b: 1 }, { g: 'b', b: 1 }, { g: 'a', b: 2 },
    ];
    expect(pageOf(rows, true, 2, 1)).toEqual([{ g: 'a', b: 2 }, { g: 'a', b: 3 }, { g: 'b', b: 2 }]);
    expect(pageOf(rows, true, 1, 0).map((r) => r.g)).toEqual(['a', 'b', null]);
    expect(pageOf([{ b: 3 }, { b: 1 }, { b: 2 }], false, 2, 1)).toEqual([{ b: 2 }, { b: 3 }]);
  });
});
