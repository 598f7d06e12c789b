import { Type, type Static } from '@sinclair/typebox';
import type { Sql } from '../storage/postgres.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { QueryBudget } from '../platform/config.js';
import type { RequestContext } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { StringEnum } from '../http/schemas.js';
import { toClickHouseTime } from '../model/time.js';
import { budgetSettings, withinBudget } from './budget.js';
import { resolveWindow, type QuickRange, type Window } from './windows.js';
import { heldPerCheck } from './window-cache.js';
import type { Redis } from 'ioredis';

/**
 * `GET /v1/reporting` (the anchor's): per check of the account (or of `filterByTags`, activated or not), the
 * window's success ratio, mean, p95 and p99 response time; with `granularity`, one aggregate per calendar day,
 * week (from Monday) or month in `timezone` (UTC by default), ascending, buckets without runs left out. Read from
 * the runs themselves (exact percentiles, R7 as everywhere: docs/analytics.md).
 */

const RANGES = { last24Hrs: 'last24Hours', last7Days: 'last7Days', last30Days: 'last30Days', thisWeek: 'thisWeek', thisMonth: 'thisMonth', lastWeek: 'lastWeek', lastMonth: 'lastMonth' } as const satisfies Record<string, QuickRange>;
const GRANULARITIES = ['day', 'week', 'month'] as const;
type Granularity = (typeof GRANULARITIES)[number];
const DAY = 86_400_000;
export const MAX_REPORTING_DAYS = 400;
export const MAX_REPORTING_BUCKETS = 120;

/** The bucket of each granularity and the start of the next one, in the zone (fixed text: an allow-list). */
const BUCKET_SQL: Record<Granularity, { start: string; next: string }> = {
  day: { start: 'toStartOfDay(started_at, {tz:String})', next: 'toStartOfDay(addHours(b, 36), {tz:String})' },
  week: { start: 'toStartOfWeek(started_at, 1, {tz:String})', next: 'toStartOfWeek(addHours(b, 180), 1, {tz:String})' },
  month: { start: 'toDateTime(toStartOfMonth(started_at, {tz:String}), {tz:String})', next: 'toDateTime(toStartOfMonth(addDays(b, 40), {tz:String}), {tz:String})' },
};

export const ReportingQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ maxLength: 40, description: 'Start: unix seconds or ISO 8601; overrides quickRange' })),
    to: Type.Optional(Type.String({ maxLength: 40, description: 'End: unix seconds or ISO 8601; overrides quickRange' })),
    quickRange: StringEnum(Object.keys(RANGES) as (keyof typeof RANGES)[], { default: 'last24Hrs' }),
    filterByTags: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 }), Type.String({ minLength: 1, maxLength: 255 })])),
    deactivated: Type.Optional(Type.Boolean({ description: 'true: only deactivated checks; false: only activated ones; left out: all' })),
    granularity: Type.Optional(StringEnum(GRANULARITIES)),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$' })),
  },
  { additionalProperties: false },
);
type Query = Static<typeof ReportingQuery>;

const Figures = { successRatio: Type.Number({ minimum: 0 }), avg: Type.Number({ minimum: 0 }), p95: Type.Number({ minimum: 0 }), p99: Type.Number({ minimum: 0 }) };
export const ReportingItem = Type.Object({
  name: Type.String(),
  checkId: Type.String({ format: 'uuid' }),
  checkType: Type.String(),
  deactivated: Type.Boolean(),
  tags: Type.Array(Type.String()),
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

const round = (v: number, places: number) => Math.round(v * 10 ** places) / 10 ** places;

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
    rules.check(Math.ceil(days / per) + 1 <= MAX_REPORTING_BUCKETS, 'query.granularity', 'buckets', `the window holds more than ${MAX_REPORTING_BUCKETS} ${query.granularity}s`);
  }
  rules.throwIfAny();
  return { ...window, granularity: query.granularity, tz: tz! };
}

export async function reporting(
  deps: { sql: Sql; store: Store; redis?: Redis; config: { analytics: QueryBudget; redisPrefix?: string; reportCache?: { enabled: boolean; maxBytes: number } } },
  accountId: string,
  query: Query,
  options: { context?: RequestContext; now?: number; noCache?: boolean } = {},
): Promise<{ items: Item[]; cache?: { hits: number; misses: number } }> {
  const window = reportingWindow(query, options.now ?? Date.now());
  const tags = query.filterByTags === undefined ? [] : Array.isArray(query.filterByTags) ? query.filterByTags : [query.filterByTags];
  const checks = await deps.sql<{ id: string; name: string; check_type: string; activated: boolean; tags: string[] }[]>`
    select id, name, check_type, activated, tags from checks where account_id = ${accountId}
      ${tags.length ? deps.sql`and tags && ${tags}::text[]` : deps.sql``}
      ${query.deactivated === undefined || query.deactivated === null ? deps.sql`` : deps.sql`and activated = ${!query.deactivated}`}
    order by name, id`;
  if (!checks.length) return { items: [] };
  const bucket = window.granularity ? BUCKET_SQL[window.granularity] : { start: '{from:DateTime64(3, \'UTC\')}', next: '{to:DateTime64(3, \'UTC\')}' };
  const read = async (ids: string[]) => {
    const rows = await withinBudget(
      deps.store.query<Row>(
        `SELECT checkId, toString(toUnixTimestamp64Milli(toDateTime64(b, 3))) AS bucket, toString(toUnixTimestamp64Milli(toDateTime64(${bucket.next}, 3))) AS next, runs, passed, avg, q
         FROM (
           SELECT toString(check_id) AS checkId, ${bucket.start} AS b, count() AS runs, countIf(NOT has_failures) AS passed,
             avg(response_time) AS avg, quantilesExactInclusive(0.95, 0.99)(response_time) AS q
           FROM check_results
           WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)}
             AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}
           GROUP BY checkId, b
         )
         ORDER BY checkId, bucket`,
        { accountId, checkIds: ids, from: toClickHouseTime(window.from), to: toClickHouseTime(window.to), tz: window.tz },
        { settings: budgetSettings(deps.config.analytics), queryId: options.context?.requestId, signal: options.context?.signal, purpose: 'report' },
      ),
    );
    const byCheck = new Map<string, Row[]>();
    for (const r of rows) {
      const list = byCheck.get(r.checkId);
      if (list) list.push(r);
      else byCheck.set(r.checkId, [r]);
    }
    return byCheck;
  };
  const { rows: byCheck, cache } = await heldPerCheck<Row>(deps, accountId, ['reporting', window.granularity ?? null, window.tz], checks.map((c) => c.id), window, read, options.noCache);
  const figures = (r: Row) => ({
    successRatio: round((100 * Number(r.passed)) / Number(r.runs), 4),
    avg: round(r.avg ?? 0, 2),
    p95: round(r.q[0] ?? 0, 2),
    p99: round(r.q[1] ?? 0, 2),
  });
  const items = checks.map((c) => {
    const item: Item = { name: c.name, checkId: c.id, checkType: c.check_type, deactivated: !c.activated, tags: c.tags };
    const mine = byCheck.get(c.id) ?? [];
    if (window.granularity) {
      item.aggregates = mine.map((r) => ({
        ...figures(r),
        from: new Date(Math.max(window.from, Number(r.bucket))).toISOString(),
        to: new Date(Math.min(window.to, Number(r.next))).toISOString(),
      }));
    } else if (mine[0]) item.aggregate = figures(mine[0]);
    return item;
  });
  return { items, ...(cache ? { cache } : {}) };
}

