import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import type { Generations } from '../storage/generations.js';
import { BucketCache, bucketedRows, pageOf, rawPage } from './report-cache.js';

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
        results.push({
          id: randomUUID(),
          checkId,
          checkType: 'API',
          runLocation: h % 2 ? 'eu-west-1' : 'us-east-1',
          startedAt: new Date(at).toISOString(),
          stoppedAt: new Date(at + 200).toISOString(),
          hasFailures: false,
          responseTime: 100 + h,
          statusCode: 200,
        });
      }
    }
    await svc.call('POST', '/v1/check-results', { body: { results } });
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${checkId}?limit=1`),
      (r) => Number(r.headers.get('x-total-count')) === 120,
    );
    await waitFor(
      () => svc.deps.ingest.stats(),
      (s) => s.waiting + s.active + s.delayed === 0,
    );
  }, 60_000);
  afterAll(() => svc?.stop());

  /**
   * Waits until a check's runs number `n` and ingest is done with them: a run is listed as soon as it is stored, and its
   * days are marked changed (and, with ROLLUPS=ticks, a late run rolled) a moment later.
   */
  const landed = async (id: string, n: number) => {
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${id}?limit=1`),
      (r) => Number(r.headers.get('x-total-count')) === n,
    );
    await waitFor(
      () => svc.deps.ingest.stats(),
      (s) => s.waiting + s.active + s.delayed === 0,
    );
  };

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
      body: {
        results: [
          {
            id: randomUUID(),
            checkId,
            checkType: 'API',
            runLocation: 'eu-west-1',
            startedAt: new Date(at).toISOString(),
            stoppedAt: new Date(at + 900).toISOString(),
            hasFailures: true,
            responseTime: 900,
            statusCode: 503,
          },
        ],
      },
    });
    await landed(checkId, 121);
    const after = await ask();
    // One bucket read again (the late result's day), the rest from the cache.
    expect(after.headers.get('x-analytics-cache')).toMatch(/misses=1$/);
    expect(dayOf(after.body, 'eu-west-1', at)!.availability).toBe(66.6667); // 2 of 3, to 4 decimals (docs/analytics.md, Figures)
    expect(after.body).toEqual((await ask(true)).body);
  });

  const cacheHeader = (res: { headers: Headers }) => {
    const [, hits, misses] = /^hits=(\d+); misses=(\d+)$/.exec(res.headers.get('x-analytics-cache') ?? '') ?? [];
    return { hits: Number(hits), misses: Number(misses) };
  };

  it('keeps the partial first bucket while its start moves up to its first run, and reads it again past it', async () => {
    // The first day's runs start at 00:01, 06:01, 12:01 and 18:01 (response times 100 to 103).
    const day = today - 30 * DAY;
    const at = (ms: number) =>
      `/v1/analytics/api-checks/${checkId}?from=${Math.floor(ms / 1000)}&to=${to}&metrics=responseTime_avg,availability&aggregationInterval=1440&groupBy=runLocation&limit=100`;
    const firstDay = (body: { series: { runLocation: string; data: { bucketStart: string; responseTime_avg: number }[] }[] }) =>
      body.series.find((s) => s.runLocation === 'us-east-1')!.data.find((r) => r.bucketStart === new Date(day).toISOString());
    const uncached = (path: string) => svc.call('GET', path, { headers: { 'cache-control': 'no-cache' } });
    await svc.call('GET', at(day + 30_000));
    const held = await svc.call('GET', at(day + 30_000));
    expect(cacheHeader(held).misses).toBe(0);
    // Up to the first run itself the edge holds the same runs: still answered from the cache.
    const atRun = await svc.call('GET', at(day + 60_000));
    expect(cacheHeader(atRun).misses).toBe(0);
    expect(firstDay(atRun.body)!.responseTime_avg).toBe(101); // 00:01 (100) and 12:01 (102) ran in us-east-1
    expect(atRun.body.series).toEqual((await uncached(at(day + 60_000))).body.series);
    // A second later the 00:01 run is out: the edge is read again.
    const past = await svc.call('GET', at(day + 61_000));
    expect(cacheHeader(past).misses).toBe(1);
    expect(firstDay(past.body)!.responseTime_avg).toBe(102);
    expect(past.body.series).toEqual((await uncached(at(day + 61_000))).body.series);
  });

  it('keeps the open end of a rolling window until a run lands in it', async () => {
    const rolling = `/v1/analytics/api-checks/${checkId}?quickRange=last7Days&metrics=responseTime_avg&aggregationInterval=1440&limit=100`;
    const todayRow = (body: { series: { data: { bucketStart: string; responseTime_avg: number }[] }[] }) =>
      body.series[0]!.data.find((r) => r.bucketStart === new Date(today).toISOString());
    await svc.call('GET', rolling);
    const held = await svc.call('GET', rolling);
    expect(cacheHeader(held).misses).toBe(0);
    expect(todayRow(held.body)).toBeUndefined();
    const count = Number((await svc.call('GET', `/v1/check-results/${checkId}?limit=1`)).headers.get('x-total-count'));
    const at = Math.max(today, Date.now() - 120_000);
    await svc.call('POST', '/v1/check-results', {
      body: {
        results: [
          {
            id: randomUUID(),
            checkId,
            checkType: 'API',
            runLocation: 'us-east-1',
            startedAt: new Date(at).toISOString(),
            stoppedAt: new Date(at + 300).toISOString(),
            hasFailures: false,
            responseTime: 300,
            statusCode: 200,
          },
        ],
      },
    });
    await landed(checkId, count + 1);
    const after = await svc.call('GET', rolling);
    expect(cacheHeader(after).misses).toBeGreaterThanOrEqual(1);
    expect(todayRow(after.body)!.responseTime_avg).toBe(300);
    expect(after.body.series).toEqual((await svc.call('GET', rolling, { headers: { 'cache-control': 'no-cache' } })).body.series);
  });

  it("holds each check's summary until a run lands on its window; another check's batch leaves it held", async () => {
    const other = (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'other', request: { url: 'http://127.0.0.1:9/' } } })).body
      .id;
    const summary = (noCache = false) =>
      svc.call('POST', '/v1/analytics/checks?quickRange=last7Days', {
        body: { checkIds: [checkId, other] },
        headers: noCache ? { 'cache-control': 'no-cache' } : {},
      });
    const post = async (id: string, responseTime: number) => {
      const total = async () => Number((await svc.call('GET', `/v1/check-results/${id}?limit=1`)).headers.get('x-total-count'));
      const count = await total();
      const at = Math.max(today, Date.now() - 60_000);
      await svc.call('POST', '/v1/check-results', {
        body: {
          results: [
            {
              id: randomUUID(),
              checkId: id,
              checkType: 'API',
              runLocation: 'eu-west-1',
              startedAt: new Date(at).toISOString(),
              stoppedAt: new Date(at + 100).toISOString(),
              hasFailures: true,
              responseTime,
              statusCode: 500,
            },
          ],
        },
      });
      await landed(id, count + 1);
    };
    await summary();
    const held = await summary();
    expect(cacheHeader(held)).toEqual({ hits: 2, misses: 0 });
    expect(held.body[1].availability).toBeNull();
    await post(other, 700);
    const after = await summary();
    // Only the check the batch landed on is read again.
    expect(cacheHeader(after)).toEqual({ hits: 1, misses: 1 });
    expect(after.body[1]).toMatchObject({ checkId: other, availability: 0, responseTime_avg: 700 });
    expect(after.body[0]).toEqual(held.body[0]);
    expect(after.body).toEqual((await summary(true)).body);
  });

  it('pages raw runs from the rows it keeps, moving with the window, until a run lands among them', async () => {
    const day = today - 30 * DAY;
    const raw = (fromMs: number) => `/v1/analytics/api-checks/${checkId}?from=${Math.floor(fromMs / 1000)}&to=${to}&metrics=responseTime&limit=3`;
    const times = (body: { series: { data: { startedAt: string; responseTime: number }[] }[] }) =>
      body.series[0]!.data.map((r) => [r.startedAt.slice(11, 16), r.responseTime]);
    const uncached = async (path: string) => (await svc.call('GET', path, { headers: { 'cache-control': 'no-cache' } })).body;
    await svc.call('GET', raw(day + 30_000));
    const held = await svc.call('GET', raw(day + 30_000));
    expect(cacheHeader(held)).toEqual({ hits: 1, misses: 0 });
    expect(times(held.body)).toEqual([
      ['00:01', 100],
      ['06:01', 101],
      ['12:01', 102],
    ]);
    // The window's start moves past the first run: the page moves with it, from the same rows.
    const moved = await svc.call('GET', raw(day + 61_000));
    expect(cacheHeader(moved)).toEqual({ hits: 1, misses: 0 });
    expect(times(moved.body)).toEqual([
      ['06:01', 101],
      ['12:01', 102],
      ['18:01', 103],
    ]);
    expect(moved.body).toEqual(await uncached(raw(day + 61_000)));
    // A late run between them lands: the next page reads the rows again and holds it.
    const count = Number((await svc.call('GET', `/v1/check-results/${checkId}?limit=1`)).headers.get('x-total-count'));
    const at = day + 3 * 3_600_000;
    await svc.call('POST', '/v1/check-results', {
      body: {
        results: [
          {
            id: randomUUID(),
            checkId,
            checkType: 'API',
            runLocation: 'us-east-1',
            startedAt: new Date(at).toISOString(),
            stoppedAt: new Date(at + 100).toISOString(),
            hasFailures: false,
            responseTime: 555,
            statusCode: 200,
          },
        ],
      },
    });
    await landed(checkId, count + 1);
    const after = await svc.call('GET', raw(day + 61_000));
    expect(cacheHeader(after)).toEqual({ hits: 0, misses: 1 });
    expect(times(after.body)).toEqual([
      ['03:00', 555],
      ['06:01', 101],
      ['12:01', 102],
    ]);
    expect(after.body).toEqual(await uncached(raw(day + 61_000)));
  });

  it('refuses a Cache-Control header it cannot read with a 400 naming it, on every cached route', async () => {
    const headers = { 'cache-control': `no-cache, ${'x'.repeat(200)}` };
    const asks = [
      svc.call('GET', path.replace('{id}', checkId), { headers }),
      svc.call('POST', '/v1/analytics/checks?quickRange=last7Days', { body: { checkIds: [checkId] }, headers }),
      svc.call('GET', '/v1/reporting?quickRange=last7Days', { headers }),
    ];
    for (const res of await Promise.all(asks)) {
      expect(res.status, res.text).toBe(400);
      expect(JSON.stringify(res.body)).toContain('cache-control');
    }
  });
});

describe('the bucket cache itself', () => {
  it('reads what many requests miss at once only once: the others wait for it', async () => {
    const cache = new BucketCache(10_000_000);
    const generations = { read: async () => ({ epoch: 0, days: new Map<number, number>() }) } as unknown as Generations;
    const HOUR = 3_600_000;
    const reads: string[] = [];
    const ask = (now: number) =>
      bucketedRows({
        cache,
        generations,
        key: 'k',
        checkId: 'c',
        window: { from: now - 24 * HOUR, to: now },
        bucketMs: HOUR,
        now,
        closeAfterMs: 0,
        compute: async (w, ranges) => {
          reads.push(ranges ? 'edges' : 'buckets');
          await new Promise((r) => setTimeout(r, 20));
          const rows = [];
          for (let b = Math.floor(w.from / HOUR) * HOUR; b < w.to; b += HOUR) rows.push({ b, m0: 1 });
          return { rows, tiers: [] };
        },
        firstRuns: async (ranges) => ranges.map(() => null),
      });
    const now = Date.UTC(2026, 10, 20, 12, 30);
    // Eight requests a millisecond apart: one reads the closed buckets and the edges, seven wait and share them.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => ask(now + i)));
    expect(reads.sort()).toEqual(['buckets', 'edges']);
    for (const a of answers) expect(a!.rows).toEqual(answers[0]!.rows);
    expect(answers.slice(1).every((a) => a!.misses === 0)).toBe(true);
  });

  it("answers a window's closed buckets with one lookup while none of their days changed, and reads again only a changed day's", async () => {
    const cache = new BucketCache(10_000_000);
    const days = new Map<number, number>();
    const generations = { read: async () => ({ epoch: 0, days }) } as unknown as Generations;
    const HOUR = 3_600_000;
    let value = 1;
    const reads: { from: number; to: number }[] = [];
    const now = Date.UTC(2026, 10, 20, 12, 30);
    const ask = () =>
      bucketedRows({
        cache,
        generations,
        key: 'k',
        checkId: 'c',
        window: { from: now - 48 * HOUR, to: now },
        bucketMs: HOUR,
        now,
        closeAfterMs: 0,
        compute: async (w, ranges) => {
          if (!ranges) reads.push(w);
          const rows = [];
          for (let b = Math.floor(w.from / HOUR) * HOUR; b < w.to; b += HOUR) rows.push({ b, m0: value });
          return { rows, tiers: [] };
        },
        firstRuns: async (ranges) => ranges.map(() => null),
      });
    const first = (await ask())!;
    expect(first.rows).toHaveLength(49);
    const before = cache.stats();
    const second = (await ask())!;
    // The same kept rows (and the same page of them): one lookup for the 47 closed buckets, one per edge.
    expect(second.rows).toBe(first.rows);
    expect(pageOf(second.rows, false, 10, 5)).toBe(pageOf(first.rows, false, 10, 5));
    expect(second.misses).toBe(0);
    expect(cache.stats().hits - before.hits).toBeLessThanOrEqual(3);
    // A batch lands on the day before: its buckets in the window are read again, with what they hold now.
    const changed = Math.floor((now - 30 * HOUR) / DAY);
    days.set(changed, 1);
    value = 2;
    reads.length = 0;
    const third = (await ask())!;
    expect(reads).toEqual([{ from: Math.max(changed * DAY, now - 48 * HOUR + 1800_000), to: (changed + 1) * DAY }]);
    expect(third.misses).toBe(reads[0]!.to / HOUR - reads[0]!.from / HOUR);
    for (const row of third.rows)
      expect(row.m0, new Date(Number(row.b)).toISOString()).toBe(Math.floor(Number(row.b) / DAY) === changed && Number(row.b) >= reads[0]!.from ? 2 : 1);
  });

  it('answers a raw page from kept rows that are not all of the window only while they fill the page', async () => {
    const cache = new BucketCache(10_000_000);
    const generations = { read: async () => ({ epoch: 0, days: new Map<number, number>() }) } as unknown as Generations;
    // A run every second from t = 1,000,000 on, far more than a page and the spare rows.
    const all = Array.from({ length: 5000 }, (_, i) => ({ t: 1_000_000 + i * 1000, m0: i }));
    let reads = 0;
    const ask = (from: number, to: number, offset = 0, limit = 100) =>
      rawPage({
        cache,
        generations,
        key: 'k',
        checkId: 'c',
        window: { from, to },
        offset,
        limit,
        read: async (count) => {
          reads++;
          return all.filter((r) => r.t >= from && r.t < to).slice(0, count);
        },
        firstRuns: async () => [null],
      });
    const to = 1_000_000 + 5000 * 1000;
    expect((await ask(1_000_000, to)).hit).toBe(false);
    const moved = await ask(1_500_000, to + 500_000);
    expect(moved.hit).toBe(true);
    expect(moved.rows.map((r) => r.m0)).toEqual(Array.from({ length: 100 }, (_, i) => 500 + i));
    // 1100 rows were kept: past them the page cannot be filled from them.
    const past = await ask(2_050_000, to + 1_050_000);
    expect(past.hit).toBe(false);
    expect(past.rows[0]!.m0).toBe(1050);
    // An earlier start is never answered from rows kept for a later one.
    expect((await ask(2_000_000, to + 1_050_000)).hit).toBe(false);
    expect(reads).toBe(3);
  });

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

  it('answers an open edge only while its moving bound stays between where it was read and its first run', () => {
    const cache = new BucketCache(10_000);
    cache.set('edge', 'v1', [{ b: 0, m0: 1 }], [{ at: 100, until: 160 }]);
    expect(cache.get('edge', 'v1', [100])).toHaveLength(1);
    expect(cache.get('edge', 'v1', [160])).toHaveLength(1);
    expect(cache.get('edge', 'v1', [161])).toBeUndefined();
    expect(cache.get('edge', 'v1', [99])).toBeUndefined();
    expect(cache.get('edge', 'v1')).toBeUndefined();
    expect(cache.get('edge', 'v2', [120])).toBeUndefined();
  });

  it('pages as the query does: by series and bucket, a limit per series from an offset, missing series last', () => {
    const rows = [
      { g: 'b', b: 2 },
      { g: 'a', b: 3 },
      { g: 'a', b: 1 },
      { g: null, b: 1 },
      { g: 'b', b: 1 },
      { g: 'a', b: 2 },
    ];
    expect(pageOf(rows, true, 2, 1)).toEqual([
      { g: 'a', b: 2 },
      { g: 'a', b: 3 },
      { g: 'b', b: 2 },
    ]);
    expect(pageOf(rows, true, 1, 0).map((r) => r.g)).toEqual(['a', 'b', null]);
    expect(pageOf([{ b: 3 }, { b: 1 }, { b: 2 }], false, 2, 1)).toEqual([{ b: 2 }, { b: 3 }]);
  });
});
