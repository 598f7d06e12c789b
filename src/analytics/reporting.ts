import { type Static, Type } from '@sinclair/typebox';
import type { Redis } from 'ioredis';
import { expectationsOf, noDataRatio } from '../coverage/index.js';
import type { RequestContext } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { StringEnum } from '../http/schemas.js';
import { figure, percentage } from '../model/figures.js';
import { toClickHouseTime } from '../model/time.js';
import type { QueryBudget } from '../platform/config.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { QueryParams } from '../storage/clickhouse/store.js';
import type { Sql } from '../storage/postgres.js';
import { budgetSettings, withinBudget } from './budget.js';
import { PRECISIONS, type Precision } from './plan.js';
import { type Part, part, rollupHorizon, SKETCH_MIN_WINDOW_MS, type SourcePlan, sketchAt, TIERS } from './rollups.js';
import { noDataFields } from './schemas.js';
import { unionOfSources } from './sources.js';
import { heldPerCheck } from './window-cache.js';
import { type QuickRange, resolveWindow, type Window } from './windows.js';

/**
 * `GET /v1/reporting` (the anchor's): per check of the account (or of `filterByTags`, activated or not), the
 * window's success ratio, mean, p95 and p99 response time; with `granularity`, one aggregate per calendar day,
 * week (from Monday) or month in `timezone` (UTC by default), ascending, buckets without runs left out. Windows of
 * 32 days or less are read from the runs (exact percentiles, R7 as everywhere: docs/analytics.md); longer ones from
 * the daily rollup where its UTC days lie inside the zone's buckets (reportingSources).
 */

const RANGES = {
  last24Hrs: 'last24Hours',
  last7Days: 'last7Days',
  last30Days: 'last30Days',
  thisWeek: 'thisWeek',
  thisMonth: 'thisMonth',
  lastWeek: 'lastWeek',
  lastMonth: 'lastMonth',
} as const satisfies Record<string, QuickRange>;
const GRANULARITIES = ['day', 'week', 'month'] as const;
type Granularity = (typeof GRANULARITIES)[number];
const DAY = 86_400_000;
export const MAX_REPORTING_DAYS = 400;
export const MAX_REPORTING_BUCKETS = 120;

/**
 * The start of the bucket holding time column `t` in the zone, as a DateTime there (fixed text: an allow-list),
 * and the start of the next bucket after the one starting at `b`. toStartOfWeek/Month give a Date, which is made
 * the zone's midnight (toDateTime64 of a Date alone would be UTC's).
 */
const BUCKET_SQL: Record<Granularity, { start: (t: string) => string; next: (b: string) => string }> = {
  day: { start: (t) => `toStartOfDay(${t}, {tz:String})`, next: (b) => `toStartOfDay(addHours(${b}, 36), {tz:String})` },
  week: {
    start: (t) => `toDateTime(toStartOfWeek(${t}, 1, {tz:String}), {tz:String})`,
    next: (b) => `toDateTime(toStartOfWeek(addHours(${b}, 180), 1, {tz:String}), {tz:String})`,
  },
  month: {
    start: (t) => `toDateTime(toStartOfMonth(${t}, {tz:String}), {tz:String})`,
    next: (b) => `toDateTime(toStartOfMonth(addDays(${b}, 40), {tz:String}), {tz:String})`,
  },
};

export const ReportingQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ maxLength: 40, description: 'Start: unix seconds or ISO 8601; overrides quickRange' })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'End: unix seconds or ISO 8601; overrides quickRange' })),
    quickRange: StringEnum(Object.keys(RANGES) as (keyof typeof RANGES)[], { default: 'last24Hrs' }),
    filterByTags: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 }), Type.String({ minLength: 1, maxLength: 255 })]),
    ),
    deactivated: Type.Optional(Type.Boolean({ description: 'true: only deactivated checks; false: only activated ones; left out: all' })),
    granularity: Type.Optional(StringEnum(GRANULARITIES)),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$' })),
    precision: StringEnum(PRECISIONS, {
      default: 'auto',
      description:
        'auto: over windows longer than 32 days, the whole UTC days inside a bucket of the zone are read from the daily rollup ' +
        '(percentiles from DDSketch sketches, within 1% of a value between the two nearest ranks) and the rest from the runs; ' +
        'shorter windows read every run. exact: every run is read and percentiles are exact (R7).',
    }),
  },
  { additionalProperties: false },
);
type Query = Static<typeof ReportingQuery>;

const NoData = noDataFields('successRatio');
const Figures = {
  successRatio: Type.Number({ minimum: 0, description: 'The percentage of the runs made that passed (runs that did not happen are in noDataRatio)' }),
  avg: Type.Number({ minimum: 0 }),
  p95: Type.Number({ minimum: 0 }),
  p99: Type.Number({ minimum: 0 }),
  ...NoData,
};
export const ReportingItem = Type.Object({
  name: Type.String(),
  checkId: Type.String({ format: 'uuid' }),
  checkType: Type.String(),
  deactivated: Type.Boolean(),
  tags: Type.Array(Type.String()),
  ...NoData,
  aggregate: Type.Optional(Type.Object(Figures, { description: 'The whole window; absent with granularity, or without runs' })),
  aggregates: Type.Optional(Type.Array(Type.Object({ ...Figures, from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) }))),
});
type Item = Static<typeof ReportingItem>;

interface Row {
  checkId: string;
  bucket: string;
  next: string;
  runs: string | number;
  passed: string | number;
  avg: number | null;
  q: (number | null)[];
}

/** The zone's canonical IANA name (`europe/paris` → `Europe/Paris`, what ClickHouse knows), or undefined. */
function canonicalZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** The window and the rules on it: at most 400 days, at most 120 buckets. */
export function reportingWindow(query: Query, now: number): Window & { granularity?: Granularity; tz: string } {
  const window = resolveWindow({ quickRange: RANGES[query.quickRange], from: query.from, to: query.to }, now);
  const tz = canonicalZone(query.timezone ?? 'UTC');
  const rules = new Rules();
  rules.check(tz !== undefined && !/^[+-]/.test(query.timezone ?? ''), 'query.timezone', 'timezone', 'must be a named IANA time zone');
  rules.check(query.timezone === undefined || query.granularity !== undefined, 'query.timezone', 'requires', 'is used with granularity');
  if (query.granularity) {
    const days = (window.to - window.from) / DAY;
    rules.check(days <= MAX_REPORTING_DAYS, 'query.from', 'range', `the window may span at most ${MAX_REPORTING_DAYS} days with granularity`);
    const per = { day: 1, week: 7, month: 28 }[query.granularity];
    rules.check(
      Math.ceil(days / per) + 1 <= MAX_REPORTING_BUCKETS,
      'query.granularity',
      'buckets',
      `the window holds more than ${MAX_REPORTING_BUCKETS} ${query.granularity}s`,
    );
  }
  rules.throwIfAny();
  return { ...window, granularity: query.granularity, tz: tz! };
}

/** Labels the calendar bucket (day, week from Monday, month) holding an instant in the zone: equal within one bucket. */
function bucketLabeller(granularity: Granularity | undefined, tz: string): (ms: number) => string {
  if (!granularity) return () => '';
  const format = new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: 'numeric', day: 'numeric' });
  return (ms) => {
    const p = Object.fromEntries(format.formatToParts(ms).map((x) => [x.type, x.value]));
    if (granularity === 'month') return `${p.year}-${p.month}`;
    const date = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day)) / DAY;
    // 1970-01-01, day 0, was a Thursday: Monday-based weekday (date + 3) mod 7.
    return String(granularity === 'day' ? date : date - ((((date + 3) % 7) + 7) % 7));
  };
}

/**
 * Where a reporting window's rows come from. Over windows longer than SKETCH_MIN_WINDOW_MS (32 days; shorter ones
 * read the runs as fast, and stay exact: rollups.ts), each whole UTC day lying inside one bucket of the zone is read
 * from the daily rollup (its sketches merge into the bucket's percentiles) and the rest (the window's ragged ends,
 * the UTC days a bucket boundary of the zone cuts) from the runs. `exact`: every run.
 */
export function reportingSources(window: Window & { granularity?: Granularity; tz: string }, precision: Precision): SourcePlan {
  if (precision === 'exact' || window.to - window.from < SKETCH_MIN_WINDOW_MS) return { rollups: [], raw: [{ from: window.from, to: window.to }] };
  const tier = TIERS.find((t) => t.id === 'day')!;
  const plan: SourcePlan = { rollups: [], raw: [] };
  let at = window.from;
  // Days ending after the rollups' horizon are read from the runs.
  for (const r of wholeDays(window.granularity, window.tz, Math.ceil(window.from / DAY), Math.floor(Math.min(window.to, rollupHorizon()) / DAY))) {
    if (at < r.from) plan.raw.push({ from: at, to: r.from });
    plan.rollups.push({ tier, ...r });
    at = r.to;
  }
  if (at < window.to) plan.raw.push({ from: at, to: window.to });
  return plan;
}

/** Recent answers of wholeDays: a rolling window asks the same days again and again (its planning costs ms). */
const WHOLE_DAYS = new Map<string, { from: number; to: number }[]>();

/** The UTC days of [firstDay, endDay) (day numbers) lying inside one bucket of the zone, as contiguous ranges in ms. */
function wholeDays(granularity: Granularity | undefined, tz: string, firstDay: number, endDay: number): { from: number; to: number }[] {
  const key = `${granularity}|${tz}|${firstDay}|${endDay}`;
  const known = WHOLE_DAYS.get(key);
  if (known) return known;
  const label = bucketLabeller(granularity, tz);
  const ranges: { from: number; to: number }[] = [];
  for (let day = firstDay * DAY; day < endDay * DAY; day += DAY) {
    if (label(day) !== label(day + DAY - 1)) continue;
    const last = ranges[ranges.length - 1];
    if (last && last.to === day) last.to = day + DAY;
    else ranges.push({ from: day, to: day + DAY });
  }
  if (WHOLE_DAYS.size >= 256) WHOLE_DAYS.delete(WHOLE_DAYS.keys().next().value!);
  WHOLE_DAYS.set(key, ranges);
  return ranges;
}

/**
 * The reporting query for some checks: per check and bucket (its start in epoch seconds, `b`; 0 without
 * granularity) the runs, passed runs, mean response time and its p95 and p99. Raw runs alone: exact percentiles
 * (R7); with rollup ranges in the plan, every source's partial aggregates merged (sources.ts) and percentiles from
 * the merged sketches.
 */
export function compileReporting(
  accountId: string,
  checkIds: readonly string[],
  window: Window & { granularity?: Granularity; tz: string },
  plan: SourcePlan,
): { sql: string; params: QueryParams } {
  const bucket = window.granularity ? BUCKET_SQL[window.granularity] : undefined;
  const bucketOf = (t: string) => (bucket ? `toUnixTimestamp(${bucket.start(t)})` : 'toUInt32(0)');
  const scope = ['account_id = {accountId:UUID}', 'check_id IN {checkIds:Array(UUID)}'];
  let inner: string;
  let params: QueryParams = {};
  if (!plan.rollups.length) {
    inner = [
      `SELECT toString(check_id) AS checkId, ${bucketOf('started_at')} AS b, count() AS n_runs, countIf(NOT has_failures) AS n_passed,`,
      '  avg(response_time) AS a, quantilesExactInclusive(0.95, 0.99)(response_time) AS qs',
      'FROM check_results',
      `WHERE ${[...scope, "started_at >= {from:DateTime64(3, 'UTC')}", "started_at < {to:DateTime64(3, 'UTC')}"].join(' AND ')}`,
      'GROUP BY checkId, b',
    ].join('\n');
    params = { from: toClickHouseTime(window.from), to: toClickHouseTime(window.to) };
  } else {
    const union = unionOfSources({
      where: scope,
      keys: [
        { alias: 'checkId', rollup: 'toString(check_id)', raw: 'toString(check_id)' },
        { alias: 'b', rollup: bucketOf('bucket'), raw: bucketOf('started_at') },
      ],
      columns: new Map([['response_time', new Set<Part>(['n', 'sum', 'q'])]]),
      plan,
    });
    const none = `sum(${part('response_time', 'n')}) = 0`;
    inner = [
      'SELECT checkId, b, sum(runs) AS n_runs, sum(passed) AS n_passed,',
      `  if(${none}, NULL, sum(${part('response_time', 'sum')}) / sum(${part('response_time', 'n')})) AS a,`,
      `  if(${none}, [], [${[0.95, 0.99].map((l) => sketchAt(part('response_time', 'q'), l)).join(', ')}]) AS qs`,
      `FROM ${union.sql}`,
      'GROUP BY checkId, b',
    ].join('\n');
    params = union.params;
  }
  const next = bucket ? `toString(toUnixTimestamp(${bucket.next('toDateTime(b, {tz:String})')}) * 1000)` : "'0'";
  const sql = [
    `SELECT checkId, toString(b * 1000) AS bucket, ${next} AS next, n_runs AS runs, n_passed AS passed, a AS avg, qs AS q`,
    `FROM (\n${inner}\n)`,
    'ORDER BY checkId, b',
  ].join('\n');
  return { sql, params: { ...params, accountId, checkIds: [...checkIds], tz: window.tz } };
}

export async function reporting(
  deps: {
    sql: Sql;
    store: Store;
    redis?: Redis;
    config: {
      analytics: QueryBudget;
      redisPrefix?: string;
      reportCache?: { enabled: boolean; maxBytes: number };
      alerts?: { noDataGraceMs: number };
    };
  },
  accountId: string,
  query: Query,
  options: { context?: RequestContext; now?: number; noCache?: boolean } = {},
): Promise<{ items: Item[]; tiers: string[]; cache?: { hits: number; misses: number } }> {
  const window = reportingWindow(query, options.now ?? Date.now());
  const tags = query.filterByTags === undefined ? [] : Array.isArray(query.filterByTags) ? query.filterByTags : [query.filterByTags];
  const checks = await deps.sql<{ id: string; name: string; check_type: string; activated: boolean; tags: string[] }[]>`
    select id, name, check_type, activated, tags from checks where account_id = ${accountId}
      ${tags.length ? deps.sql`and tags && ${tags}::text[]` : deps.sql``}
      ${query.deactivated === undefined || query.deactivated === null ? deps.sql`` : deps.sql`and activated = ${!query.deactivated}`}
    order by name, id`;
  if (!checks.length) return { items: [], tiers: [] };
  const plan = reportingSources(window, query.precision ?? 'auto');
  const read = async (ids: string[]) => {
    const { sql, params } = compileReporting(accountId, ids, window, plan);
    const rows = await withinBudget(
      deps.store.query<Row>(sql, params, {
        settings: budgetSettings(deps.config.analytics),
        queryId: options.context?.requestId,
        signal: options.context?.signal,
        purpose: 'report',
      }),
    );
    const byCheck = new Map<string, Row[]>();
    for (const r of rows) {
      const list = byCheck.get(r.checkId);
      if (list) list.push(r);
      else byCheck.set(r.checkId, [r]);
    }
    return byCheck;
  };
  // Which days the rollup serves decide the arithmetic (sketches or exact ranks): part of the key, as the summary's.
  const split = plan.rollups.flatMap((r) => [r.from / DAY, r.to / DAY]);
  const { rows: byCheck, cache } = await heldPerCheck<Row>(
    deps,
    accountId,
    ['reporting', window.granularity ?? null, window.tz, split],
    checks.map((c) => c.id),
    window,
    read,
    options.noCache,
  );
  const expected = await expectationsOf(
    deps.sql,
    accountId,
    checks.map((c) => c.id),
    { graceMs: deps.config.alerts?.noDataGraceMs ?? 60_000 },
    options.now,
  );
  /** expectedRuns, runs and noDataRatio of a check over [from, to) holding `runs` runs; nothing for checks that are not run. */
  const noData = (checkId: string, from: number, to: number, runs: number) => {
    const n = expected.of(checkId, from, to);
    return n === null ? {} : { expectedRuns: n, runs, noDataRatio: percentage(noDataRatio(n, runs)) ?? 0 };
  };
  const figures = (r: Row) => ({
    successRatio: percentage((100 * Number(r.passed)) / Number(r.runs)) ?? 0,
    avg: figure(r.avg ?? 0) ?? 0,
    p95: figure(r.q[0] ?? 0) ?? 0,
    p99: figure(r.q[1] ?? 0) ?? 0,
  });
  const items = checks.map((c) => {
    const mine = byCheck.get(c.id) ?? [];
    const runs = mine.reduce((n, r) => n + Number(r.runs), 0);
    const item: Item = {
      name: c.name,
      checkId: c.id,
      checkType: c.check_type,
      deactivated: !c.activated,
      tags: c.tags,
      ...noData(c.id, window.from, window.to, runs),
    };
    if (window.granularity) {
      item.aggregates = mine.map((r) => {
        const from = Math.max(window.from, Number(r.bucket));
        const to = Math.min(window.to, Number(r.next));
        return { ...figures(r), ...noData(c.id, from, to, Number(r.runs)), from: new Date(from).toISOString(), to: new Date(to).toISOString() };
      });
    } else if (mine[0]) item.aggregate = { ...figures(mine[0]), ...noData(c.id, window.from, window.to, runs) };
    return item;
  });
  return { items, tiers: plan.rollups.length ? ['day'] : [], ...(cache ? { cache } : {}) };
}
