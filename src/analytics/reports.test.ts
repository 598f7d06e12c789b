import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregate, expectRowsClose, fieldValue, metricOverWith, type OracleRequest, report, sketchBounds } from '../../test/support/analytics-oracle.js';
import { startTestService, type TestService } from '../../test/support/service.js';
import type { ResultItem } from '../ingest/schemas.js';
import { CREATABLE_TYPES, LOCATIONS, type TypeSegment } from '../model/checks.js';
import { phaseOf } from '../model/schedule.js';
import { generateRuns, type SeedCheck } from '../seed/generator.js';
import { createSeedChecks, seedBulk } from '../seed/seeder.js';
import { compileSummary } from './compiler.js';
import { CATALOGS, type Catalog, metricNames } from './metrics.js';
import { SKETCH_ACCURACY } from './rollups.js';
import { summarize } from './summary.js';
import { type QuickRange, resolveQuickRange, SUMMARY_RANGES } from './windows.js';

/**
 * Every report and summary answer is compared with the oracle (test/analytics/oracle.ts) over the
 * same generated runs: one check of each type, 3 locations, every 10 minutes, 35 days up to a minute ago.
 */
const SEGMENT_OF_CATALOG: Record<string, TypeSegment> = {
  'multistep-checks': 'multistep',
  icmp: 'icmp',
  'api-checks': 'api',
  'url-monitors': 'url',
  'browser-checks': 'browser',
  'playwright-checks': 'playwright',
  'tcp-checks': 'tcp',
  dns: 'dns',
  'heartbeat-checks': 'heartbeat',
  'agentic-checks': 'agentic',
  traceroute: 'traceroute',
  ssl: 'ssl',
  'grpc-checks': 'grpc',
};
const SEGMENTS = Object.values(SEGMENT_OF_CATALOG);
const DAY = 86_400_000;

let svc: TestService;
/** The X-Analytics-Sources of the last `auto` answer compare() checked. */
let autoSources = '';
const runs = new Map<string, ResultItem[]>();
const checkOf = new Map<TypeSegment, SeedCheck>();
let seedTo: number;

beforeAll(async () => {
  svc = await startTestService();
  await svc.deps.sql`update accounts set rate_limit_points = 1000000 where id = ${svc.defaultAccountId}`;
  const checks = await createSeedChecks(svc.deps.sql, svc.defaultAccountId, { count: SEGMENTS.length, types: SEGMENTS, frequency: 10, locations: 3 });
  seedTo = Math.floor(Date.now() / 60_000) * 60_000 - 60_000;
  const window = { from: seedTo - 35 * DAY, to: seedTo, seed: 20261122 };
  await seedBulk(svc.deps.store, svc.defaultAccountId, checks, window);
  checks.forEach((check, index) => {
    runs.set(check.id, [...generateRuns(check, window, index)]);
    checkOf.set(SEGMENTS[index], check);
  });
}, 120_000);
afterAll(() => svc?.stop());

function query(params: Record<string, string | number | undefined>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string][];
  return new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString();
}

const seconds = (ms: number) => String(ms / 1000);

/**
 * Asks the endpoint and the oracle the same question and compares every series, row and value, in both
 * precisions: `exact` equal to the oracle; `auto` (rollups where they fit) equal for every value but the
 * percentiles, which must fall within the sketch's bound around the exact ranks.
 */
async function compare(catalog: Catalog, req: OracleRequest, extra: Record<string, string> = {}, rel = 1e-9) {
  const check = checkOf.get(SEGMENT_OF_CATALOG[catalog.segment])!;
  let body: any;
  for (const precision of ['exact', 'auto'] as const) {
    const qs = query({
      from: seconds(req.from),
      to: seconds(req.to),
      metrics: req.metrics.join(','),
      aggregationInterval: req.intervalMinutes,
      filterByStatus: req.status,
      groupBy: req.groupBy,
      limit: req.limit,
      page: req.page,
      precision,
      ...extra,
    });
    // The uncached path is checked against the oracle; the report cache must then answer exactly the same, both
    // when it reads the closed buckets (first) and when it holds them (second).
    const path = `/v1/analytics/${catalog.segment}/${check.id}?${qs}`;
    const res = await svc.call('GET', path, { headers: { 'cache-control': 'no-cache' } });
    expect(res.status, res.text).toBe(200);
    for (let i = 0; i < 2; i++) {
      const cached = await svc.call('GET', path);
      expectSameAnswer(cached.body, res.body, `${catalog.segment} ${qs}: the cached answer (${cached.headers.get('x-analytics-cache') ?? 'not cached'})`);
    }
    const expected = report(runs.get(check.id)!, req, precision === 'auto' ? SKETCH_ACCURACY : undefined);
    const where = `${catalog.segment} ${qs} (sources ${res.headers.get('x-analytics-sources')})`;
    if (req.groupBy) {
      expect(
        res.body.series.map((s: Record<string, unknown>) => s[req.groupBy!]),
        where,
      ).toEqual(expected.map((s) => s.key));
    } else {
      expect(res.body.series).toHaveLength(1);
    }
    expected.forEach((s, i) => expectRowsClose(res.body.series[i].data, s.data, `${where} series ${i}`, rel));
    if (precision === 'exact') expect(res.headers.get('x-analytics-sources')).toBe('raw');
    else autoSources = res.headers.get('x-analytics-sources') ?? '';
    body = res.body;
  }
  return body;
}

/**
 * The same answer: every field and row equal, numbers to within 1e-12 of each other (a sum over the same runs
 * read in another order can differ in its last bits, in ClickHouse as anywhere).
 */
function expectSameAnswer(got: unknown, want: unknown, where: string): void {
  const near = (a: unknown, b: unknown): boolean => {
    if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-12 * Math.max(Math.abs(a), Math.abs(b));
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => near(v, b[i]));
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      const ka = Object.keys(a).sort();
      const kb = Object.keys(b).sort();
      return near(ka, kb) && ka.every((k) => near((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
    }
    return a === b;
  };
  if (!near(got, want)) expect(got, where).toEqual(want);
}

const aggregatedNames = (catalog: Catalog) => metricNames(catalog).filter((n) => n.includes('_') || n === 'availability' || n === 'retries');

describe('reports against the oracle', () => {
  it.each(CATALOGS.map((c) => [c.segment, c] as const))('%s: every aggregated metric over a custom window', async (_, catalog) => {
    const body = await compare(catalog, { from: seedTo - 20 * DAY + 1234, to: seedTo - 2 * DAY, metrics: aggregatedNames(catalog), limit: 10, page: 1 });
    expect(body.checkType).toBe(CREATABLE_TYPES[SEGMENT_OF_CATALOG[catalog.segment]]);
    expect(Object.keys(body.metadata)).toEqual(aggregatedNames(catalog));
    expect(body.series[0].data).toHaveLength(1);
  });

  it.each(CATALOGS.map((c) => [c.segment, c] as const))('%s: daily buckets with availability and retries', async (_, catalog) => {
    const bases = Object.keys(catalog.metrics).slice(0, 2);
    const body = await compare(catalog, {
      from: seedTo - 35 * DAY,
      to: seedTo,
      metrics: ['availability', 'retries', ...bases.flatMap((b) => [`${b}_p95`, `${b}_avg`])],
      intervalMinutes: 1440,
      limit: 100,
      page: 1,
    });
    expect(body.series[0].data.length).toBeGreaterThanOrEqual(35);
  });

  it('hourly buckets, paged', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'multistep-checks')!;
    for (const page of [1, 2, 3, 50]) {
      await compare(catalog, { from: seedTo - 3 * DAY, to: seedTo, metrics: ['responseTime_p99', 'responseTime_min'], intervalMinutes: 60, limit: 7, page });
    }
  });

  it('buckets of an odd and a fractional width', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'icmp')!;
    await compare(catalog, { from: seedTo - DAY, to: seedTo, metrics: ['latencyAvg_p90', 'packetLoss_max'], intervalMinutes: 7, limit: 100, page: 2 });
    await compare(catalog, { from: seedTo - DAY, to: seedTo, metrics: ['latencyAvg_median'], intervalMinutes: 22.5, limit: 100, page: 1 });
    await compare(catalog, { from: seedTo - 30 * DAY, to: seedTo, metrics: ['latencyAvg_median'], intervalMinutes: 43200, limit: 100, page: 1 });
  });

  it('grouped by run location, with buckets and paging per series', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'multistep-checks')!;
    const body = await compare(catalog, {
      from: seedTo - 30 * DAY,
      to: seedTo,
      metrics: ['responseTime_p95', 'responseTime_avg', 'availability'],
      intervalMinutes: 360,
      groupBy: 'runLocation',
      limit: 5,
      page: 2,
    });
    expect(body.series).toHaveLength(3);
    for (const s of body.series) expect(s.data).toHaveLength(5);
    await compare(CATALOGS.find((c) => c.segment === 'tcp-checks')!, {
      from: seedTo - 7 * DAY,
      to: seedTo,
      metrics: ['total_p50', 'connection_stddev'],
      groupBy: 'runLocation',
      limit: 10,
      page: 1,
    });
  });

  it('grouped by status code (API and URL)', async () => {
    for (const segment of ['api-checks', 'url-monitors']) {
      const catalog = CATALOGS.find((c) => c.segment === segment)!;
      const body = await compare(catalog, {
        from: seedTo - 35 * DAY,
        to: seedTo,
        metrics: ['availability', 'responseTime_p90', 'firstByte_sum'],
        groupBy: 'statusCode',
        limit: 10,
        page: 1,
      });
      expect(body.series.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('filtered by status', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'browser-checks')!;
    const w = { from: seedTo - 35 * DAY, to: seedTo, limit: 100, page: 1, metrics: ['availability', 'LCP_p95', 'networkErrors_sum', 'retries'] };
    const failing = await compare(catalog, { ...w, status: 'failure', intervalMinutes: 1440 });
    expect(failing.series[0].data.length).toBeGreaterThan(0);
    for (const row of failing.series[0].data) expect(row.availability).toBe(0);
    const passing = await compare(catalog, { ...w, status: 'success' });
    expect(passing.series[0].data[0].availability).toBe(100);
    await compare(catalog, w, { filterByStatus: 'success,failure' });
  });

  it('raw per-run values in time order, paged, also grouped', async () => {
    const browser = CATALOGS.find((c) => c.segment === 'browser-checks')!;
    const body = await compare(browser, { from: seedTo - DAY, to: seedTo, metrics: ['responseTime', 'CLS', 'consoleErrors'], limit: 100, page: 2 });
    expect(body.series[0].data).toHaveLength(100);
    expect(Object.keys(body.series[0].data[0])).toEqual(['startedAt', 'runLocation', 'hasFailures', 'responseTime', 'CLS', 'consoleErrors']);
    const icmp = CATALOGS.find((c) => c.segment === 'icmp')!;
    await compare(icmp, { from: seedTo - DAY, to: seedTo, metrics: ['packetLoss', 'latencyMax'], groupBy: 'runLocation', limit: 9, page: 3 });
    await compare(icmp, { from: seedTo - DAY, to: seedTo, metrics: ['latencyAvg'], status: 'failure', limit: 100, page: 1 });
  });

  it('a window without runs answers an empty series', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'dns')!;
    const body = await compare(catalog, { from: seedTo + 60_000, to: seedTo + DAY, metrics: ['total_avg', 'availability'], limit: 10, page: 1 });
    expect(body.series).toEqual([{ data: [] }]);
    const grouped = await compare(catalog, { from: seedTo + 60_000, to: seedTo + DAY, metrics: ['total'], groupBy: 'runLocation', limit: 10, page: 1 });
    expect(grouped.series).toEqual([]);
  });

  it('ISO 8601 bounds give the same answer as unix seconds', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'playwright-checks')!;
    const from = seedTo - 10 * DAY;
    await compare(
      catalog,
      { from, to: seedTo, metrics: ['responseTime_p95'], limit: 10, page: 1 },
      {
        from: new Date(from).toISOString(),
        to: new Date(seedTo).toISOString().replace('.000Z', '+00:00'),
      },
    );
  });

  it('quick ranges: calendar windows and rolling ones', async () => {
    const catalog = CATALOGS.find((c) => c.segment === 'multistep-checks')!;
    const check = checkOf.get('multistep')!;
    const metrics = ['availability', 'responseTime_avg', 'responseTime_p50'];
    for (const range of ['last24Hours', 'last7Days', 'last30Days', 'thisWeek', 'thisMonth', 'lastWeek', 'lastMonth'] as QuickRange[]) {
      const before = Date.now();
      const res = await svc.call(
        'GET',
        `/v1/analytics/multistep-checks/${check.id}?quickRange=${range}&metrics=${metrics.join(',')}&aggregationInterval=1440&limit=100`,
      );
      const after = Date.now();
      expect(res.status, res.text).toBe(200);
      // A rolling window ends at the server's clock, which the answer reports in `to`.
      const serverNow = Date.parse(res.body.to);
      const clocks = serverNow >= before && serverNow <= after ? [serverNow, before] : [before];
      const candidates = clocks.map((now) => {
        const w = resolveQuickRange(range, now);
        return { window: w, series: report(runs.get(check.id)!, { ...w, metrics, intervalMinutes: 1440, limit: 100, page: 1 }, SKETCH_ACCURACY) };
      });
      const match = candidates.find(({ window, series }) => {
        try {
          expect([res.body.from, res.body.to]).toEqual([new Date(window.from).toISOString(), new Date(window.to).toISOString()]);
          expectRowsClose(res.body.series[0].data, series[0].data, range);
          return true;
        } catch {
          return false;
        }
      });
      expect(match, `${range}: ${res.text.slice(0, 300)}`).toBeDefined();
    }
    expect(catalog.checkTypes).toEqual(['MULTI_STEP']);
  });

  it('a long window read only where its page lies gives the same answer, every series its own page', async () => {
    const segment = (s: string) => CATALOGS.find((c) => c.segment === s)!;
    const busy = ['multistep', 'api', 'browser', 'playwright'] as const;
    // The planner weighs a check's volume by its configuration: declared every minute, an hourly rollup row
    // stands for 60 runs and finding the page first pays. The answer must not depend on the plan.
    await svc.deps.sql`update checks set frequency = 1 where id = any(${busy.map((b) => checkOf.get(b)!.id)}::uuid[])`;
    // A location that joined two days ago: its first page lies at the end of the window, the others' at the start.
    const late = checkOf.get('playwright')!;
    const lateCheck = { ...late, locations: [LOCATIONS[LOCATIONS.length - 1]] };
    const lateWindow = { from: seedTo - 2 * DAY, to: seedTo, seed: 777 };
    await seedBulk(svc.deps.store, svc.defaultAccountId, [lateCheck], lateWindow);
    runs.set(late.id, [...runs.get(late.id)!, ...generateRuns(lateCheck, lateWindow, 0)]);
    try {
      const long = { from: seedTo - 35 * DAY + 1234, to: seedTo };
      const hourly = { ...long, intervalMinutes: 60 };
      const cases: [string, OracleRequest][] = [
        ['multistep-checks', { ...hourly, metrics: ['responseTime_p95', 'responseTime_avg', 'availability'], groupBy: 'runLocation', limit: 10, page: 1 }],
        ['multistep-checks', { ...hourly, metrics: ['responseTime_p95', 'retries'], groupBy: 'runLocation', limit: 10, page: 2 }],
        ['multistep-checks', { ...hourly, metrics: ['responseTime_median', 'responseTime_max'], limit: 4, page: 5 }],
        ['api-checks', { ...hourly, metrics: ['availability', 'responseTime_p90', 'firstByte_sum'], groupBy: 'statusCode', limit: 5, page: 1 }],
        ['browser-checks', { ...hourly, metrics: ['availability', 'LCP_p95'], status: 'failure', limit: 10, page: 1 }],
        ['browser-checks', { ...hourly, metrics: ['availability', 'LCP_p95'], status: 'failure', groupBy: 'runLocation', limit: 10, page: 2 }],
        ['playwright-checks', { ...hourly, metrics: ['responseTime_p95', 'availability'], groupBy: 'runLocation', limit: 10, page: 1 }],
        ['playwright-checks', { ...hourly, metrics: ['responseTime_p50', 'responseTime_avg'], groupBy: 'runLocation', limit: 5, page: 3 }],
      ];
      for (const [s, req] of cases) {
        const body = await compare(segment(s), req);
        expect(autoSources, `${s} ${JSON.stringify(req)}`).toMatch(/; page=rollup:/);
        if (s === 'playwright-checks') expect(body.series.map((x: { runLocation: string }) => x.runLocation)).toContain(lateCheck.locations[0]);
      }
    } finally {
      await svc.deps.sql`update checks set frequency = 10 where id = any(${busy.map((b) => checkOf.get(b)!.id)}::uuid[])`;
    }
  });

  it('carries the check fields from Postgres and the metric metadata', async () => {
    const check = checkOf.get('icmp')!;
    await svc.deps.sql`update checks set name = 'edge ping', muted = true, tags = '{edge,eu}' where id = ${check.id}`;
    const res = await svc.call('GET', `/v1/analytics/icmp/${check.id}?metrics=packetLoss_p95,latencyAvg_avg,availability`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      checkId: check.id,
      name: 'edge ping',
      checkType: 'ICMP',
      activated: true,
      muted: true,
      frequency: 10,
      tags: ['edge', 'eu'],
      pagination: { page: 1, limit: 10 },
      metadata: {
        packetLoss_p95: { label: 'Packet loss (95th percentile)', unit: 'percentage', aggregation: 'p95' },
        latencyAvg_avg: { label: 'Average latency (average)', unit: 'milliseconds', aggregation: 'avg' },
        availability: { label: 'Availability', unit: 'percentage' },
      },
    });
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(DAY);
  });
});

describe('summary against the oracle', () => {
  /**
   * The runs a check should have made in [from, to), walked slot by slot (k × period + phase): from the grace (60 s)
   * after its activation, to the grace before `now`, one per location (the seeded checks run in parallel).
   */
  const activations = new Map<string, number>();
  const expectedRunsOf = async (checkId: string, w: { from: number; to: number }, now: number) => {
    if (!activations.has(checkId)) {
      const [row] = await svc.deps.sql<{ from_at: Date }[]>`select from_at from check_activity where check_id = ${checkId} order by from_at desc limit 1`;
      activations.set(checkId, row!.from_at.getTime());
    }
    const check = [...checkOf.values()].find((c) => c.id === checkId)!;
    const period = check.frequency * 60_000;
    const phase = phaseOf(checkId, period);
    let slots = 0;
    for (let t = Math.ceil((w.from - phase) / period) * period + phase; t < w.to; t += period) {
      if (t >= activations.get(checkId)! + 60_000 && t < now - 60_000) slots++;
    }
    return slots * check.locations.length;
  };
  /** What no data adds to an item: absent for heartbeats, which are not run. */
  const noDataOf = (checkType: string, expected: number, made: number) =>
    checkType === 'HEARTBEAT'
      ? {}
      : { expectedRuns: expected, runs: made, noDataRatio: expected ? Math.round((1e6 * Math.max(0, expected - made)) / expected) / 1e4 : 0 };

  function expectedItem(checkId: string, checkType: string, items: ResultItem[], sketch?: number, expected = 0) {
    const http = ['API', 'URL', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT', 'AGENTIC', 'GRPC'].includes(checkType);
    const icmp = checkType === 'ICMP';
    const m = (name: string, applies: boolean) => (applies ? metricOverWith(items, name, sketch) : null);
    return {
      checkId,
      checkType,
      availability: metricOverWith(items, 'availability'),
      ...noDataOf(checkType, expected, items.length),
      responseTime_avg: m('responseTime_avg', http),
      responseTime_p50: m('responseTime_p50', http),
      responseTime_p95: m('responseTime_p95', http),
      responseTime_p99: m('responseTime_p99', http),
      latency_avg: m('latencyAvg_avg', icmp),
      latency_p50: m('latencyAvg_p50', icmp),
      latency_p95: m('latencyAvg_p95', icmp),
      latency_p99: m('latencyAvg_p99', icmp),
      packetLoss_avg: m('packetLoss_avg', icmp),
      packetLoss_p95: m('packetLoss_p95', icmp),
      packetLoss_p99: m('packetLoss_p99', icmp),
      hopCount_avg: m('hopCount_avg', checkType === 'TRACEROUTE'),
    };
  }

  // Read now (Cache-Control: no-cache), then twice through the report cache (read, then held): each against the oracle.
  it.each(
    SUMMARY_RANGES.flatMap(
      (r) =>
        [
          [r, 'exact'],
          [r, 'auto'],
        ] as const,
    ).flatMap(
      (c) =>
        [
          [...c, 'no-cache'],
          [...c, 'cached'],
          [...c, 'held'],
        ] as const,
    ),
  )('%s (%s, %s): one item per existing check, in request order', async (range, precision, how) => {
    const ids = [...checkOf.values()].map((c) => c.id).reverse();
    const unknown = '00000000-0000-4000-8000-00000000abcd';
    const before = Date.now();
    const res = await svc.call('POST', `/v1/analytics/checks?quickRange=${range}&precision=${precision}&noData=true`, {
      body: { checkIds: [ids[0], unknown, 'not-a-uuid', ...ids, ids[1]] },
      headers: how === 'no-cache' ? { 'cache-control': 'no-cache' } : {},
    });
    const after = Date.now();
    expect(res.headers.get('x-analytics-cache') === null).toBe(how === 'no-cache');
    if (how === 'held') expect(res.headers.get('x-analytics-cache')).toMatch(/^hits=[1-9]/);
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((i: { checkId: string }) => i.checkId)).toEqual(ids);
    const expectations = new Map<string, number>();
    for (const now of [before, after]) for (const id of ids) expectations.set(`${now}|${id}`, await expectedRunsOf(id, resolveQuickRange(range, now), now));
    const matches = [before, after].some((now) => {
      const w = resolveQuickRange(range, now);
      return ids.every((id, i) => {
        const check = [...checkOf.values()].find((c) => c.id === id)!;
        const items = runs.get(id)!.filter((r) => Date.parse(r.startedAt) >= w.from && Date.parse(r.startedAt) < w.to);
        try {
          expectRowsClose(
            [res.body[i]],
            [expectedItem(id, check.checkType, items, precision === 'auto' ? SKETCH_ACCURACY : undefined, expectations.get(`${now}|${id}`))],
            `${range} ${check.checkType}`,
          );
          return true;
        } catch (e) {
          if (now === after) throw e;
          return false;
        }
      });
    });
    expect(matches).toBe(true);
  });

  it("answers the anchor's items exactly unless no data is asked for", async () => {
    const ids = [...checkOf.values()].map((c) => c.id);
    const plain = await svc.call('POST', '/v1/analytics/checks?quickRange=last24Hours', { body: { checkIds: ids } });
    expect(plain.status).toBe(200);
    for (const item of plain.body) expect(Object.keys(item)).not.toContain('noDataRatio');
    const asked = await svc.call('POST', '/v1/analytics/checks?quickRange=last24Hours&noData=true', { body: { checkIds: ids } });
    expect(asked.body.filter((i: { noDataRatio?: number }) => i.noDataRatio !== undefined)).toHaveLength(ids.length - 1);
    // A flag that is not a boolean is refused, as every bad query is.
    const bad = await svc.call('POST', '/v1/analytics/checks?quickRange=last24Hours&noData=maybe', { body: { checkIds: ids } });
    expect(bad.status).toBe(400);
    expect(bad.body.attributes.errors.map((e: { field: string }) => e.field)).toContain('query.noData');
  });

  it('a summary over more than a month reads the daily sketches: exact counts and averages, percentiles within the bound', async () => {
    const ids = [...checkOf.values()].map((c) => c.id);
    const w = { from: seedTo - 35 * DAY + 12_345, to: seedTo };
    const now = Date.now();
    const { items, tiers } = await summarize(svc.deps, svc.defaultAccountId, ids, w, { now });
    expect(tiers).toEqual(['day']);
    expect(items.map((i) => i.checkId)).toEqual(ids);
    for (const item of items) {
      const check = [...checkOf.values()].find((c) => c.id === item.checkId)!;
      const within = runs.get(item.checkId)!.filter((r) => Date.parse(r.startedAt) >= w.from && Date.parse(r.startedAt) < w.to);
      const expected = await expectedRunsOf(item.checkId, w, now);
      expectRowsClose([item], [expectedItem(item.checkId, check.checkType, within, SKETCH_ACCURACY, expected)], `35 days ${check.checkType}`);
    }
  });

  it('the summary over raw rows reads the time-ordered projection: it holds every column the summary reads', async () => {
    const ids = [...checkOf.values()].map((c) => c.id);
    const { sql, params } = compileSummary(svc.defaultAccountId, ids, { from: seedTo - DAY, to: seedTo }, svc.deps.config.analytics, 'exact');
    const plan = await svc.deps.store.query<{ explain: string }>(`EXPLAIN projections = 1 ${sql}`, params);
    expect(plan.map((r) => r.explain).join('\n')).toContain('summary_by_time_v2');
  });
});

/** `GET /v1/reporting` against the oracle: per check, whole window or per local calendar day. */
describe('reporting', () => {
  const round = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;
  /** What a reporting aggregate should say about `items`, computed here from the generated runs. */
  const figures = (items: ResultItem[]) => {
    const passed = items.filter((r) => !r.hasFailures).length;
    const times = items.map((r) => fieldValue(r, 'responseTime')).filter((v): v is number => v !== null);
    return {
      successRatio: round((100 * passed) / items.length, 4),
      avg: round(aggregate(times, 'avg') ?? 0, 2),
      p95: round(aggregate(times, 'p95') ?? 0, 2),
      p99: round(aggregate(times, 'p99') ?? 0, 2),
    };
  };
  const close = (got: Record<string, number>, want: Record<string, number>, what: string) => {
    for (const k of Object.keys(want)) expect(got[k], `${what} ${k}`).toBeCloseTo(want[k]!, 1);
  };
  /** The UTC instant of local midnight of the day holding `ms` in `tz` (no zone moves its clocks at midnight here). */
  const offset = (ms: number, tz: string) => {
    const p = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      })
        .formatToParts(ms)
        .map((x) => [x.type, Number(x.value)]),
    );
    return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) - Math.floor(ms / 1000) * 1000;
  };
  const localMidnight = (ms: number, tz: string) => {
    const local = ms + offset(ms, tz);
    const midnightAsUtc = Math.floor(local / DAY) * DAY;
    return midnightAsUtc - offset(midnightAsUtc - offset(midnightAsUtc, tz), tz);
  };

  it('answers every check over the window, as the runs say', async () => {
    const w = { from: seedTo - 7 * DAY + 777, to: seedTo - 3_600_000 };
    // Read now, then through the report cache (read, then held): each against the runs.
    for (const how of ['no-cache', 'cached', 'held']) {
      const res = await svc.call('GET', `/v1/reporting?${query({ from: seconds(w.from - (w.from % 1000)), to: seconds(w.to) })}`, {
        headers: how === 'no-cache' ? { 'cache-control': 'no-cache' } : {},
      });
      expect(res.status, res.text).toBe(200);
      if (how === 'held') expect(res.headers.get('x-analytics-cache')).toBe(`hits=${checkOf.size}; misses=0`);
      const from = w.from - (w.from % 1000);
      for (const check of checkOf.values()) {
        const item = (res.body as { checkId: string; aggregate?: Record<string, number>; checkType: string; deactivated: boolean; tags: string[] }[]).find(
          (i) => i.checkId === check.id,
        )!;
        expect(item).toMatchObject({ checkType: check.checkType, tags: expect.any(Array) });
        const within = runs.get(check.id)!.filter((r) => Date.parse(r.startedAt) >= from && Date.parse(r.startedAt) < w.to);
        close(item.aggregate!, figures(within), `${check.checkType} whole window (${how})`);
      }
    }
  });

  it('splits the window into local calendar days of a time zone, and filters by tag', async () => {
    const tz = 'America/New_York';
    const api = checkOf.get('api')!;
    await svc.deps.sql`update checks set tags = array_append(tags, 'reporting-tagged') where id = ${api.id}`;
    try {
      const w = { from: seedTo - 10 * DAY - 4_321_000, to: seedTo - 4_000_000 };
      for (const how of ['no-cache', 'cached', 'held']) {
        const res = await svc.call(
          'GET',
          `/v1/reporting?${query({ from: seconds(w.from), to: seconds(w.to), granularity: 'day', timezone: tz, filterByTags: 'reporting-tagged' })}`,
          { headers: how === 'no-cache' ? { 'cache-control': 'no-cache' } : {} },
        );
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-analytics-cache') ?? 'none').toBe({ 'no-cache': 'none', cached: 'hits=0; misses=1', held: 'hits=1; misses=0' }[how]);
        expect(res.body.map((i: { checkId: string }) => i.checkId)).toEqual([api.id]);
        const buckets = new Map<number, ResultItem[]>();
        for (const r of runs.get(api.id)!) {
          const t = Date.parse(r.startedAt);
          if (t < w.from || t >= w.to) continue;
          const b = localMidnight(t, tz);
          buckets.set(b, [...(buckets.get(b) ?? []), r]);
        }
        const starts = [...buckets.keys()].sort((a, b) => a - b);
        const got = res.body[0].aggregates as (Record<string, number> & { from: string; to: string })[];
        expect(got.map((a) => a.from)).toEqual(starts.map((s) => new Date(Math.max(s, w.from)).toISOString()));
        expect(got.map((a) => a.to)).toEqual(starts.map((s) => new Date(Math.min(w.to, localMidnight(s + 36 * 3_600_000, tz))).toISOString()));
        got.forEach((a, i) => close(a, figures(buckets.get(starts[i]!)!), `day ${a.from}`));
        expect(res.body[0].aggregate).toBeUndefined();
      }
    } finally {
      await svc.deps.sql`update checks set tags = array_remove(tags, 'reporting-tagged') where id = ${api.id}`;
    }
  });

  /** The start of the local calendar day, week (from Monday) or month holding `ms` in `tz`. */
  const localStart = (ms: number, tz: string, granularity: 'day' | 'week' | 'month') => {
    const midnight = localMidnight(ms, tz);
    if (granularity === 'day') return midnight;
    const p = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: 'numeric', day: 'numeric' })
        .formatToParts(ms)
        .map((x) => [x.type, Number(x.value)]),
    );
    const date = Date.UTC(p.year!, p.month! - 1, p.day!) / DAY;
    const back = granularity === 'week' ? (date + 3) % 7 : p.day! - 1;
    return localMidnight(midnight - back * DAY + 12 * 3_600_000, tz);
  };

  it("over more than 32 days reads the daily rollup where its days lie inside the zone's buckets: exact counts and means, percentiles within the sketch bound", async () => {
    const w = { from: seedTo - 34 * DAY - 4_321_000, to: seedTo - 4_000_000 };
    for (const [granularity, tz] of [
      ['week', 'Asia/Kolkata'],
      ['month', 'America/New_York'],
      [undefined, 'UTC'],
    ] as const) {
      // Each run's bucket, computed once per quarter hour (the zones' boundaries fall on whole or half hours).
      const memo = new Map<number, number>();
      const bucketOf = (t: number) => {
        const slot = Math.floor(t / 900_000);
        if (!memo.has(slot)) memo.set(slot, granularity ? localStart(slot * 900_000, tz, granularity) : w.from);
        return memo.get(slot)!;
      };
      const bucketsOf = new Map<string, Map<number, ResultItem[]>>();
      for (const check of checkOf.values()) {
        const buckets = new Map<number, ResultItem[]>();
        for (const r of runs.get(check.id)!) {
          const t = Date.parse(r.startedAt);
          if (t < w.from || t >= w.to) continue;
          const b = bucketOf(t);
          const list = buckets.get(b);
          if (list) list.push(r);
          else buckets.set(b, [r]);
        }
        bucketsOf.set(check.id, buckets);
      }
      let first: unknown;
      for (const how of ['no-cache', 'cached', 'held', 'exact']) {
        const params = { from: seconds(w.from), to: seconds(w.to), granularity, timezone: granularity && tz, precision: how === 'exact' ? 'exact' : undefined };
        const res = await svc.call('GET', `/v1/reporting?${query(params)}`, { headers: how === 'no-cache' ? { 'cache-control': 'no-cache' } : {} });
        const where = `${granularity ?? 'whole window'} in ${tz} (${how})`;
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('x-analytics-sources'), where).toBe(how === 'exact' ? 'raw' : 'rollup:day');
        if (how === 'no-cache') first = res.body;
        else if (how !== 'exact') expectSameAnswer(res.body, first, where);
        if (how === 'held') expect(res.headers.get('x-analytics-cache')).toMatch(/^hits=\d+; misses=0$/);
        for (const check of checkOf.values()) {
          const item = (
            res.body as { checkId: string; aggregate?: Record<string, number>; aggregates?: (Record<string, number> & { from: string; to: string })[] }[]
          ).find((i) => i.checkId === check.id)!;
          const buckets = bucketsOf.get(check.id)!;
          const starts = [...buckets.keys()].sort((a, b) => a - b);
          type Figures = Record<'successRatio' | 'avg' | 'p95' | 'p99', number> & { from: string; to: string };
          const got: Figures[] = granularity
            ? (item.aggregates as Figures[])
            : [{ ...(item.aggregate as Figures), from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() }];
          expect(
            got.map((a) => a.from),
            `${check.checkType} ${where}`,
          ).toEqual(starts.map((s) => new Date(Math.max(s, w.from)).toISOString()));
          if (granularity) {
            const next = (s: number) => localStart(s + (granularity === 'week' ? 8 : 32) * DAY, tz, granularity);
            expect(
              got.map((a) => a.to),
              `${check.checkType} ${where}`,
            ).toEqual(starts.map((s) => new Date(Math.min(w.to, next(s))).toISOString()));
          }
          got.forEach((a, i) => {
            const items = buckets.get(starts[i]!)!;
            const want = figures(items);
            const what = `${check.checkType} ${where} from ${a.from}`;
            expect(a.successRatio, what).toBe(want.successRatio);
            expect(a.avg, what).toBeCloseTo(want.avg, 1);
            const times = items.map((r) => fieldValue(r, 'responseTime')).filter((v): v is number => v !== null);
            for (const [k, p] of [
              ['p95', 0.95],
              ['p99', 0.99],
            ] as const) {
              if (how === 'exact' || !times.length) expect(a[k], `${what} ${k}`).toBeCloseTo(want[k], 1);
              else {
                const { lo, hi } = sketchBounds(times, p, SKETCH_ACCURACY)!;
                expect(a[k], `${what} ${k}`).toBeGreaterThanOrEqual(lo - 0.005);
                expect(a[k], `${what} ${k}`).toBeLessThanOrEqual(hi + 0.005);
              }
            }
          });
        }
      }
    }
  });

  it('counts the runs each check should have made and the part that did not happen, as a slot-by-slot walk does (no data)', async () => {
    // Activated a day before its runs begin: the window's first day expected runs and got none.
    const activated = seedTo - 36 * DAY;
    const ids = [...checkOf.values()].map((c) => c.id);
    await svc.deps.sql`update check_activity set from_at = ${new Date(activated)} where check_id = any(${ids}::uuid[])`;
    try {
      const w = { from: seedTo - 36 * DAY + 12_345_000, to: seedTo - 20 * DAY };
      const res = await svc.call('GET', `/v1/reporting?${query({ from: seconds(w.from), to: seconds(w.to), precision: 'exact' })}`);
      expect(res.status, res.text).toBe(200);
      const grace = 60_000;
      for (const check of checkOf.values()) {
        const item = (res.body as { checkId: string; expectedRuns?: number; runs?: number; noDataRatio?: number }[]).find((i) => i.checkId === check.id)!;
        if (check.checkType === 'HEARTBEAT') {
          expect(item.expectedRuns, 'heartbeats are not counted').toBeUndefined();
          continue;
        }
        // Every slot of the check (k × period + phase), one by one, from the grace after its activation.
        const period = check.frequency * 60_000;
        const phase = phaseOf(check.id, period);
        let slots = 0;
        for (let t = Math.ceil((w.from - phase) / period) * period + phase; t < w.to; t += period) if (t >= activated + grace) slots++;
        const expected = slots * check.locations.length;
        const made = runs.get(check.id)!.filter((r) => Date.parse(r.startedAt) >= w.from && Date.parse(r.startedAt) < w.to).length;
        expect(item, check.checkType).toMatchObject({
          expectedRuns: expected,
          runs: made,
          noDataRatio: round((100 * Math.max(0, expected - made)) / expected, 4),
        });
        // About one of the window's sixteen days.
        expect(item.noDataRatio!, check.checkType).toBeGreaterThan(4);
        expect(item.noDataRatio!, check.checkType).toBeLessThan(9);
      }
    } finally {
      await svc.deps.sql`update check_activity a set from_at = c.created_at from checks c where c.id = a.check_id and a.check_id = any(${ids}::uuid[])`;
    }
  });

  it('refuses windows it cannot split, zones that are not named, and a zone without granularity', async () => {
    const bad = async (params: Record<string, string>, field: string) => {
      const res = await svc.call('GET', `/v1/reporting?${query(params)}`);
      expect(res.status, res.text).toBe(400);
      expect(res.body.attributes.errors.map((e: { field: string }) => e.field)).toContain(field);
    };
    await bad({ from: seconds(seedTo - 200 * DAY), to: seconds(seedTo), granularity: 'day' }, 'query.granularity');
    await bad({ from: seconds(seedTo - 401 * DAY), to: seconds(seedTo), granularity: 'month' }, 'query.from');
    await bad({ granularity: 'day', timezone: 'Mars/Olympus' }, 'query.timezone');
    await bad({ timezone: 'Europe/Paris' }, 'query.timezone');
    await bad({ quickRange: 'last7Days', precision: 'rough' }, 'query.precision');
    await bad({ quickRange: 'lastFortnight' }, 'query.quickRange');
    expect((await svc.call('GET', '/v1/reporting?quickRange=last7Days&deactivated=true')).body).toEqual([]);
    // A zone named in another case is the same zone.
    const fixed = query({ from: seconds(seedTo - 7 * DAY), to: seconds(seedTo), granularity: 'day' });
    const lower = await svc.call('GET', `/v1/reporting?${fixed}&timezone=europe/paris`);
    expect(lower.status, lower.text).toBe(200);
    expect(lower.body).toEqual((await svc.call('GET', `/v1/reporting?${fixed}&timezone=Europe/Paris`)).body);
  });
});
