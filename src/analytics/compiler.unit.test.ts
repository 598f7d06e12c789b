import { describe, expect, it } from 'vitest';
import { HttpError } from '../http/errors.js';
import { compileReport, compileSummary } from './compiler.js';
import { AGGREGATES, CATALOGS, type Catalog, metricNames, SUFFIXES } from './metrics.js';
import { PAGE_PUSHDOWN_MIN_RUNS, PAGE_PUSHDOWN_RATIO, type ReportRequest } from './plan.js';

const catalog = (segment: string): Catalog => CATALOGS.find((c) => c.segment === segment)!;
const base: ReportRequest = {
  catalog: catalog('multistep-checks'),
  accountId: '11111111-1111-4111-8111-111111111111',
  checkId: '22222222-2222-4222-8222-222222222222',
  window: { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 2) },
  metrics: ['responseTime_avg'],
  limit: 10,
  page: 1,
  budget: { maxSeconds: 30, maxMemoryBytes: 1_000_000_000 },
  precision: 'exact',
};

function rejection(req: ReportRequest): HttpError {
  try {
    compileReport(req);
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    return e as HttpError;
  }
  throw new Error(`compiled: ${JSON.stringify(req.metrics)}`);
}

describe('report compiler', () => {
  it('maps each suffix to its aggregate over the catalog column', () => {
    for (const suffix of SUFFIXES) {
      const { sql, mode } = compileReport({ ...base, metrics: [`responseTime_${suffix}`] });
      expect(mode).toBe('aggregated');
      expect(sql).toContain(`${AGGREGATES[suffix].sql.replace('{c}', 'response_time')} AS m0`);
    }
    const icmp = compileReport({ ...base, catalog: catalog('icmp'), metrics: ['latencyStdDev_p99', 'packetLoss_sum'] });
    expect(icmp.sql).toContain('quantileExactInclusive(0.99)(latency_stddev) AS m0');
    expect(icmp.sql).toContain('sum(packet_loss) AS m1');
  });

  it('computes availability and retries per row, and drops repeated names', () => {
    const { sql, metrics } = compileReport({ ...base, metrics: ['availability', 'retries', 'availability'] });
    expect(metrics.map((m) => m.name)).toEqual(['availability', 'retries']);
    expect(sql).toContain('countIf(NOT has_failures)');
    expect(sql).toContain('countIf(attempts > 1) AS m1');
  });

  it('scopes every query to the account, the check and the window through parameters', () => {
    const { sql, params } = compileReport(base);
    expect(sql).toContain('account_id = {accountId:UUID}');
    expect(sql).toContain('check_id = {checkId:UUID}');
    expect(sql).toContain("started_at >= {from:DateTime64(3, 'UTC')}");
    expect(sql).toContain("started_at < {to:DateTime64(3, 'UTC')}");
    expect(params).toMatchObject({ accountId: base.accountId, checkId: base.checkId, from: '2026-11-01 00:00:00.000', to: '2026-11-02 00:00:00.000' });
  });

  it('without an interval aggregates the whole window into one row; with one, into epoch-aligned buckets', () => {
    const whole = compileReport(base);
    expect(whole.sql).not.toContain('GROUP BY');
    expect(whole.sql).toContain('HAVING count() > 0');
    expect(whole.bucketed).toBe(false);
    const hourly = compileReport({ ...base, aggregationInterval: 60 });
    expect(hourly.sql).toContain('intDiv(toUnixTimestamp64Milli(started_at), {bucketMs:UInt64}) * {bucketMs:UInt64} AS b');
    expect(hourly.sql).toContain('GROUP BY b');
    expect(hourly.sql).toContain('ORDER BY b');
    expect(hourly.params.bucketMs).toBe(3_600_000);
    expect(compileReport({ ...base, aggregationInterval: 7.5 }).params.bucketMs).toBe(450_000);
  });

  it('groups by a fixed column and pages each series with LIMIT BY', () => {
    const grouped = compileReport({ ...base, catalog: catalog('api-checks'), groupBy: 'statusCode', aggregationInterval: 1440, page: 3, limit: 7 });
    expect(grouped.sql).toContain('status_code AS g');
    expect(grouped.sql).toContain('GROUP BY g, b');
    expect(grouped.sql).toContain('ORDER BY g, b');
    expect(grouped.sql).toContain('LIMIT {offset:UInt64}, {limit:UInt64} BY g');
    expect(grouped.params).toMatchObject({ offset: 14, limit: 7 });
    const byLocation = compileReport({ ...base, groupBy: 'runLocation' });
    expect(byLocation.sql).toContain('run_location AS g');
    const flat = compileReport({ ...base, page: 2, limit: 100 });
    expect(flat.sql).toContain('LIMIT {limit:UInt64} OFFSET {offset:UInt64}');
    expect(flat.params).toMatchObject({ offset: 100, limit: 100 });
  });

  it('filters by status with a boolean parameter; both statuses mean no filter', () => {
    expect(compileReport({ ...base, filterByStatus: ['failure'] }).params.hasFailures).toBe(true);
    expect(compileReport({ ...base, filterByStatus: ['success'] }).params.hasFailures).toBe(false);
    const both = compileReport({ ...base, filterByStatus: ['success', 'failure'] });
    expect(both.params).not.toHaveProperty('hasFailures');
    expect(both.sql).not.toContain('has_failures =');
    expect(compileReport({ ...base, filterByStatus: ['failure'] }).sql).toContain('has_failures = {hasFailures:Bool}');
  });

  it('returns raw metrics one row per run in time order', () => {
    const raw = compileReport({ ...base, catalog: catalog('browser-checks'), metrics: ['LCP', 'CLS'] });
    expect(raw.mode).toBe('raw');
    expect(raw.sql).toContain('lcp AS m0, cls AS m1');
    expect(raw.sql).toContain('ORDER BY started_at, run_location, result_id');
    expect(raw.sql).not.toContain('GROUP BY');
  });

  it('rejects mixing raw and aggregated metrics, and an interval on raw metrics', () => {
    expect(rejection({ ...base, metrics: ['responseTime', 'responseTime_avg'] }).attributes?.errors).toEqual([
      expect.objectContaining({ field: 'query.metrics', rule: 'mix' }),
    ]);
    expect(rejection({ ...base, metrics: ['responseTime', 'availability'] }).status).toBe(400);
    expect(rejection({ ...base, metrics: ['responseTime'], aggregationInterval: 60 }).attributes?.errors).toEqual([
      expect.objectContaining({ field: 'query.aggregationInterval', rule: 'raw' }),
    ]);
  });

  it('rejects a metric of another catalog and lists what this one allows', () => {
    const e = rejection({ ...base, metrics: ['responseTime_avg', 'packetLoss_p95'] });
    const [err] = (e.attributes?.errors ?? []) as { field: string; message: string }[];
    expect(err.field).toBe('query.metrics[1]');
    for (const name of metricNames(catalog('multistep-checks'))) expect(err.message).toContain(name);
    expect(rejection({ ...base, groupBy: 'statusCode' }).attributes?.errors).toEqual([expect.objectContaining({ field: 'query.groupBy' })]);
    expect(rejection({ ...base, catalog: catalog('heartbeat-checks'), metrics: ['responseTime_avg'] }).status).toBe(400);
  });

  it('rejects hostile strings before any SQL exists', () => {
    const hostile = [
      "responseTime_avg'); DROP TABLE check_results; --",
      'responseTime_avg) FROM system.tables --',
      'responseTime_p95 OR 1=1',
      '{checkId:String}',
      'availability\nUNION ALL SELECT * FROM system.users',
      'response_time',
      'sleep(3)',
      'responseTime_avg\u0000',
      '__proto___avg',
      'constructor',
      'toString_avg',
      'responseTime_',
      '_avg',
    ];
    for (const metric of hostile) expect(rejection({ ...base, metrics: [metric] }).status).toBe(400);
    expect(rejection({ ...base, groupBy: 'run_location; DROP TABLE x' }).status).toBe(400);
    expect(rejection({ ...base, filterByStatus: ["success' OR '1'='1"] }).status).toBe(400);
    expect(rejection({ ...base, checkId: "x' OR 1=1 --" }).attributes?.errors).toEqual([expect.objectContaining({ field: 'path.id' })]);
    expect(rejection({ ...base, aggregationInterval: Number.NaN }).status).toBe(400);
    expect(rejection({ ...base, limit: 1e9 }).status).toBe(400);
  });

  it('never puts a request value in the SQL text: only the parameters change', () => {
    const a = compileReport({ ...base, aggregationInterval: 60, filterByStatus: ['failure'], groupBy: 'runLocation', page: 2 });
    const b = compileReport({
      ...base,
      accountId: '33333333-3333-4333-8333-333333333333',
      checkId: '44444444-4444-4444-8444-444444444444',
      window: { from: 0, to: 1 },
      aggregationInterval: 1440,
      filterByStatus: ['success'],
      groupBy: 'runLocation',
      page: 9,
      limit: 37,
    });
    expect(a.sql).toBe(b.sql);
    expect(a.params).not.toEqual(b.params);
    // Every value is distinctive enough to be found if it were spliced in (offset 296, bucket 86400000, …).
    for (const value of Object.values(b.params)) expect(a.sql).not.toContain(String(value));
  });

  it('caps the buckets of one series and says which interval would fit', () => {
    const year = { from: Date.UTC(2026, 0, 1), to: Date.UTC(2027, 0, 1) };
    const e = rejection({ ...base, window: year, aggregationInterval: 1 });
    expect(e.attributes?.errors).toEqual([expect.objectContaining({ field: 'query.aggregationInterval', rule: 'buckets' })]);
    expect(e.message).toContain('525600 buckets');
    expect(e.message).toContain('at least 11 minutes');
    expect(compileReport({ ...base, window: year, aggregationInterval: 11 }).params.bucketMs).toBe(660_000);
    const month = { from: Date.UTC(2026, 9, 1), to: Date.UTC(2026, 9, 31) };
    expect(compileReport({ ...base, window: month, aggregationInterval: 1 }).bucketed).toBe(true);
  });

  it('bounds every query by the configured time and memory budget', () => {
    // The budget travels with the query as settings (Store QueryOptions), never in the SQL text.
    for (const compiled of [
      compileReport(base),
      compileReport({ ...base, precision: 'auto' }),
      compileSummary(base.accountId, [base.checkId], base.window, base.budget),
    ]) {
      expect(compiled.settings).toMatchObject({ max_execution_time: 30, max_memory_usage: 1_000_000_000 });
      expect(compiled.sql).not.toContain('SETTINGS');
    }
    expect(() => compileReport({ ...base, budget: { maxSeconds: 1.5, maxMemoryBytes: 1 } })).toThrow();
    expect(() => compileReport({ ...base, budget: { maxSeconds: 30, maxMemoryBytes: Number.NaN } })).toThrow();
  });

  it('compiles the summary of many checks to one query over an array parameter', () => {
    const ids = [base.checkId, '55555555-5555-4555-8555-555555555555'];
    const { sql, params } = compileSummary(base.accountId, ids, base.window, base.budget, 'exact');
    expect(sql).toContain('check_id IN {checkIds:Array(UUID)}');
    expect(sql).toContain('GROUP BY check_id');
    expect(params.checkIds).toEqual(ids);
    expect(() => compileSummary(base.accountId, ["' OR 1=1"], base.window, base.budget)).toThrow();
  });
});

describe('report compiler on rollups', () => {
  const auto = { ...base, precision: 'auto' as const };
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;

  it('reads the aligned middle from the coarsest tier a bucket allows and the ragged edges from raw rows', () => {
    const day = compileReport({ ...auto, aggregationInterval: 1440, window: { from: Date.UTC(2026, 9, 1), to: Date.UTC(2026, 10, 1) } });
    expect(day.tiers).toEqual(['day']);
    expect(day.sql).toContain('FROM check_results_1d WHERE');
    expect(day.sql).not.toContain('FROM check_results WHERE');
    const ragged = compileReport({ ...auto, window: { from: Date.UTC(2026, 9, 1) + 90 * 60_000, to: Date.UTC(2026, 9, 9) + 30 * 60_000 } });
    expect(ragged.tiers.sort()).toEqual(['day', 'hour']);
    expect(ragged.sql).toContain('FROM check_results_1d WHERE');
    expect(ragged.sql).toContain('FROM check_results_1h WHERE');
    expect(ragged.sql).toContain('FROM check_results WHERE');
    expect(ragged.sql).toContain('UNION ALL');
    const hourly = compileReport({ ...auto, aggregationInterval: 60, window: { from: Date.UTC(2026, 9, 1), to: Date.UTC(2026, 9, 3) } });
    expect(hourly.tiers).toEqual(['hour']);
  });

  it('reads percentiles only from the tier with sketches and only over windows longer than a month: the rest from raw rows', () => {
    const long = { from: Date.UTC(2026, 6, 1) + 90 * 60_000, to: Date.UTC(2026, 9, 9) + 30 * 60_000 };
    const month = { from: Date.UTC(2026, 9, 1) + 90 * 60_000, to: Date.UTC(2026, 9, 31) + 30 * 60_000 };
    const p95 = ['responseTime_p95', 'availability'];
    const ragged = compileReport({ ...auto, metrics: p95, window: long });
    expect(ragged.tiers).toEqual(['day']);
    expect(ragged.sql).not.toContain('check_results_1h');
    expect(ragged.sql).toContain('FROM check_results WHERE');
    expect(compileReport({ ...auto, metrics: p95, window: month }).tiers).toEqual([]);
    expect(compileReport({ ...auto, metrics: p95, aggregationInterval: 60, window: long }).tiers).toEqual([]);
    expect(compileReport({ ...auto, metrics: ['responseTime_avg', 'availability'], aggregationInterval: 60, window: month }).tiers).toEqual(['hour']);
    expect(compileSummary(base.accountId, [base.checkId], long, base.budget).tiers).toEqual(['day']);
    expect(compileSummary(base.accountId, [base.checkId], month, base.budget).tiers).toEqual([]);
  });

  it('falls back to raw rows for sub-hour buckets, raw metrics, windows no tier covers, and precision=exact', () => {
    const window = { from: Date.UTC(2026, 9, 1), to: Date.UTC(2026, 9, 8) };
    expect(compileReport({ ...auto, window, aggregationInterval: 30 }).tiers).toEqual([]);
    expect(compileReport({ ...auto, window, aggregationInterval: 90 }).tiers).toEqual([]);
    expect(compileReport({ ...auto, window, metrics: ['responseTime'] }).tiers).toEqual([]);
    expect(compileReport({ ...auto, window: { from: Date.UTC(2026, 9, 1, 10, 5), to: Date.UTC(2026, 9, 1, 10, 55) } }).tiers).toEqual([]);
    expect(compileReport({ ...base, window }).tiers).toEqual([]);
  });

  it('merges partial aggregates: exact sums, counts, extremes and variance, percentiles from sketches', () => {
    const all = ['availability', 'retries', ...SUFFIXES.map((s) => `responseTime_${s}`)];
    const { sql, metrics } = compileReport({ ...auto, metrics: all, window: { from: 0, to: 60 * DAY } });
    expect(metrics).toHaveLength(all.length);
    expect(sql).toContain('100 * sum(passed) / sum(runs)');
    expect(sql).toContain('sum(response_time__sum) / sum(response_time__n)');
    expect(sql).toContain('min(response_time__min)');
    expect(sql).toContain('sqrt(varPopMerge(response_time__var))');
    expect(sql).toContain('quantilesDDMerge(0.01, 0.5, 0.9, 0.95, 0.99)(response_time__q)[3]');
    expect(sql).toContain('HAVING sum(runs) > 0');
  });

  it('keeps request values out of the SQL text on this path too', () => {
    const a = compileReport({ ...auto, aggregationInterval: 1440, filterByStatus: ['failure'], groupBy: 'runLocation', window: { from: 0, to: 10 * DAY } });
    const b = compileReport({
      ...auto,
      aggregationInterval: 1440,
      filterByStatus: ['success'],
      groupBy: 'runLocation',
      window: { from: DAY, to: 11 * DAY },
      checkId: '33333333-3333-4333-8333-333333333333',
    });
    expect(a.sql).toBe(b.sql);
    expect(a.params).not.toEqual(b.params);
  });
});

describe('report compiler reading only the page', () => {
  const DAY = 86_400_000;
  const month = { from: Date.UTC(2026, 9, 1, 0, 7), to: Date.UTC(2026, 9, 31, 0, 7) };
  /** A 1-minute check in parallel: 60 runs in each hourly rollup row. */
  const busy = {
    ...base,
    precision: 'auto' as const,
    window: month,
    aggregationInterval: 60,
    groupBy: 'runLocation',
    metrics: ['responseTime_p95', 'availability'],
    locationRunsPerMinute: 1,
  };

  it("finds a long window's page from rollup counts, then aggregates only its part of the window, each series its own", () => {
    const c = compileReport(busy);
    expect(c.pageCandidate).toBe(true);
    expect(c.pageTiers).toEqual(['hour']);
    expect(c.tiers).toEqual([]);
    expect(c.sql).toMatch(/^WITH \(SELECT \(min\(first\), max\(last\), groupArray\(\(g, first, last\)\)\)/);
    expect(c.sql).toContain('FROM check_results_1h WHERE');
    expect(c.sql).toContain("started_at >= fromUnixTimestamp64Milli(page.1, 'UTC')");
    expect(c.sql).toContain('b >= page.3[indexOf(page_keys, g)].2');
    // The page is chosen inside the scalar; the outer query is not paged again.
    expect(c.sql.match(/LIMIT \{offset:UInt64\}, \{limit:UInt64\} BY g/g)).toHaveLength(1);
    expect(c.sql.trim()).toMatch(/ORDER BY g, b$/);
    expect(Object.keys(c.params)).toEqual(expect.arrayContaining(['r0from', 'r0to', 'w0from', 'w1to', 'from', 'to']));
    const ungrouped = compileReport({ ...busy, groupBy: undefined });
    expect(ungrouped.sql).toContain('LIMIT {limit:UInt64} OFFSET {offset:UInt64}');
    expect(ungrouped.sql).not.toContain('page_keys, g');
  });

  it('reads values that come from rollups over the whole window: counting the page would read the same tier twice', () => {
    const averages = compileReport({ ...busy, metrics: ['responseTime_avg', 'availability'] });
    expect(averages.tiers).toEqual(['hour']);
    expect(averages.pageTiers).toEqual([]);
    expect(averages.sql).not.toContain('AS page');
    const year = compileReport({ ...busy, aggregationInterval: 1440, window: { from: Date.UTC(2025, 9, 1, 5), to: Date.UTC(2026, 9, 1, 5) } });
    expect(year.tiers).toEqual(['day']);
    expect(year.pageTiers).toEqual([]);
  });

  it('reads the whole window when the window is short against the page, the check is quiet, its volume unknown, or precision=exact', () => {
    const plain = (r: ReportRequest) => {
      const c = compileReport(r);
      expect(c.pageTiers, JSON.stringify(r)).toEqual([]);
      expect(c.sql).not.toContain('AS page');
      return c;
    };
    // 721 hourly buckets: up to page 2 of 10 is within the ratio, page 3 is not.
    expect(Math.floor(721 / (PAGE_PUSHDOWN_RATIO * 10))).toBe(2);
    expect(compileReport({ ...busy, page: 2 }).pageTiers).toEqual(['hour']);
    expect(plain({ ...busy, page: 3 }).pageCandidate).toBe(false);
    expect(plain({ ...busy, window: { from: month.from, to: month.from + 7 * DAY } }).pageCandidate).toBe(false);
    // A check every 10 minutes in each location: 6 runs a row, fewer than PAGE_PUSHDOWN_MIN_RUNS.
    expect(6).toBeLessThan(PAGE_PUSHDOWN_MIN_RUNS);
    expect(plain({ ...busy, locationRunsPerMinute: 0.1 }).pageCandidate).toBe(true);
    expect(plain({ ...busy, locationRunsPerMinute: undefined }).pageCandidate).toBe(true);
    // …while daily rows of the same check stand for 144 runs each (a month: percentiles from raw rows).
    const daily = compileReport({
      ...busy,
      locationRunsPerMinute: 0.1,
      aggregationInterval: 1440,
      limit: 1,
      window: { from: month.from, to: month.from + 31.5 * DAY },
    });
    expect(daily.tiers).toEqual([]);
    expect(daily.pageTiers).toContain('day');
    expect(plain({ ...busy, precision: 'exact' }).pageCandidate).toBe(false);
    expect(plain({ ...busy, aggregationInterval: 30 }).pageCandidate).toBe(false);
    expect(plain({ ...busy, aggregationInterval: undefined }).pageCandidate).toBe(false);
    expect(plain({ ...busy, aggregationInterval: undefined, metrics: ['responseTime'] }).pageCandidate).toBe(false);
  });

  it('carries the report settings: no projection or skip-index analysis for one check (the summary keeps its projection)', () => {
    expect(compileReport(busy).settings).toEqual({ max_execution_time: 30, max_memory_usage: 1_000_000_000, optimize_use_projections: 0, use_skip_indexes: 0 });
    expect(compileReport(base).settings).toMatchObject({ optimize_use_projections: 0, use_skip_indexes: 0 });
    expect(compileSummary(base.accountId, [base.checkId], base.window, base.budget).settings).toEqual({
      max_execution_time: 30,
      max_memory_usage: 1_000_000_000,
    });
  });
});
