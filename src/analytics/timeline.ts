import { Type } from '@sinclair/typebox';
import { checkTagsOf } from '../checks/index.js';
import { expectationsOf } from '../coverage/index.js';
import type { RequestContext } from '../http/route.js';
import { TimeParam } from '../http/time.js';
import { figure, percentage } from '../model/figures.js';
import { inMaintenance, type WindowData } from '../model/maintenance.js';
import { toClickHouseTime } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import { budgetSettings, withinBudget } from './budget.js';

/**
 * A strip of each check's runs over the last hours, in equal buckets (the console's Home): per bucket how many
 * runs there were, how many failed (failed or errored) and how many were degraded; a bucket without runs says 0,
 * which is no data, never "up". With whether a maintenance window that applies to the check is on now.
 */
export const TimelineQuery = Type.Object(
  {
    hours: Type.Integer({ minimum: 1, maximum: 744, default: 24, description: 'How far back the strip reaches from now (without from and to)' }),
    buckets: Type.Integer({ minimum: 1, maximum: 500, default: 48, description: 'How many equal buckets the window is cut in' }),
    from: Type.Optional({ ...TimeParam, description: 'Start of the window instead of hours (unix seconds or ISO 8601); with to' }),
    to: Type.Optional({ ...TimeParam, description: 'End of the window, exclusive; with from; at most 31 days after it' }),
  },
  { additionalProperties: false },
);

export const MAX_TIMELINE_DAYS = 31;
/** Checks one call may name: the console asks for a thousand checks in one call (one scan), not ten. */
export const MAX_TIMELINE_CHECKS = 1000;

export const TimelineBody = Type.Object(
  { checkIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: MAX_TIMELINE_CHECKS }) },
  { additionalProperties: false },
);

const Percentile = Type.Union([Type.Number(), Type.Null()]);

export const TimelineItem = Type.Object(
  {
    checkId: Type.String({ format: 'uuid' }),
    inMaintenance: Type.Boolean({ description: 'A maintenance window that applies to the check is on now' }),
    total: Type.Object(
      {
        runs: Type.Integer({ minimum: 0 }),
        failed: Type.Integer({ minimum: 0 }),
        degraded: Type.Integer({ minimum: 0 }),
        responseTimeP95: { ...Percentile, description: "p95 of the runs' response time (ms) over the window, exact; null without runs" },
        latencyP95: { ...Percentile, description: "p95 of the runs' average latency (ms; ICMP checks); null without any" },
        expectedRuns: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
          description: 'The runs the check should have made in the window (docs/analytics.md, "No data"); null for heartbeat checks',
        }),
        noDataRatio: Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()], {
          description: 'The percentage of expected runs that did not happen; null for heartbeat checks',
        }),
      },
      { description: 'The whole window: the sums of the buckets, and percentiles over its runs' },
    ),
    from: Type.String({ format: 'date-time', description: 'Where the first bucket starts; bucket i holds runs started from `from + i × bucketSeconds`' }),
    bucketSeconds: Type.Integer({ minimum: 1 }),
    runs: Type.Array(Type.Integer({ minimum: 0 }), {
      description: 'Runs in each bucket, oldest first; 0 is no data. Without from and to, the last bucket ends at the next whole bucket after now',
    }),
    failed: Type.Array(Type.Integer({ minimum: 0 }), { description: 'Runs that failed or errored, per bucket' }),
    degraded: Type.Array(Type.Integer({ minimum: 0 }), { description: 'Runs that passed degraded, per bucket' }),
    expected: Type.Union([Type.Array(Type.Integer({ minimum: 0 })), Type.Null()], {
      description:
        'The runs the check should have made in each bucket (0: none were: deactivated, paused by maintenance, not yet created, or ' +
        'the bucket is still running); fewer runs than expected is no data. Null for heartbeat checks',
    }),
    maintenanceBuckets: Type.Array(Type.Integer({ minimum: 0 }), {
      description: 'The buckets in which a maintenance window that applies to the check was on (at the start, middle or end)',
    }),
  },
  { additionalProperties: false },
);

interface Row {
  checkId: string;
  b: number;
  runs: number;
  failed: number;
  degraded: number;
}

interface TotalRow {
  checkId: string;
  rt: number | null;
  latency: number | null;
}

/** The strips of the account's checks among `checkIds`, in request order (ids of no check of the account left out). */
export async function timeline(
  deps: Pick<Deps, 'sql' | 'store' | 'config'>,
  accountId: string,
  checkIds: string[],
  window: { hours: number; buckets: number; from?: number; to?: number },
  context?: RequestContext,
  now = Date.now(),
) {
  const { buckets } = window;
  const span = window.from !== undefined && window.to !== undefined ? window.to - window.from : window.hours * 3_600_000;
  // Whole seconds, so a bucket's length is a number of seconds.
  const size = Math.ceil(span / buckets / 1000) * 1000;
  const from = window.from ?? Math.ceil(now / size) * size - size * buckets;
  const end = from + size * buckets;
  const [tags, windows, expectations] = await Promise.all([
    checkTagsOf(deps.sql, accountId, checkIds),
    deps.sql<{ data: WindowData }[]>`select data from maintenance_windows where account_id = ${accountId}`,
    expectationsOf(deps.sql, accountId, checkIds, { graceMs: deps.config.alerts.noDataGraceMs }, now),
  ]);
  const ids = [...new Set(checkIds.map((id) => id.toLowerCase()))].filter((id) => tags.has(id));
  if (!ids.length) return [];
  const where = `account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)}
         AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}`;
  const params = { accountId, checkIds: ids, fromMs: from, size, from: toClickHouseTime(from), to: toClickHouseTime(end) };
  const options = { settings: budgetSettings(deps.config.analytics), queryId: context?.requestId, signal: context?.signal, purpose: 'summary' as const };
  const [rows, totals] = await withinBudget(
    Promise.all([
      deps.store.query<Row>(
        `SELECT toString(check_id) AS checkId, intDiv(toUnixTimestamp64Milli(started_at) - {fromMs:Int64}, {size:Int64}) AS b,
           count() AS runs, countIf(has_failures OR has_errors) AS failed, countIf(is_degraded AND NOT has_failures AND NOT has_errors) AS degraded
         FROM check_results WHERE ${where}
         GROUP BY checkId, b`,
        params,
        options,
      ),
      deps.store.query<TotalRow>(
        `SELECT toString(check_id) AS checkId, quantileExactInclusive(0.95)(response_time) AS rt, quantileExactInclusive(0.95)(latency_avg) AS latency
         FROM check_results WHERE ${where}
         GROUP BY checkId`,
        params,
        { ...options, queryId: context?.requestId ? `${context.requestId}-p95` : undefined },
      ),
    ]),
  );
  const percentiles = new Map(totals.map((t) => [t.checkId, t]));
  const counts = new Map<string, Row>(rows.map((r) => [`${r.checkId}|${Number(r.b)}`, r]));
  const data = windows.map((w) => w.data);
  // Columns, not a list of bucket objects: a thousand checks × 48 buckets stay a few hundred kilobytes.
  return ids.map((checkId) => {
    const column = (k: 'runs' | 'failed' | 'degraded') => Array.from({ length: buckets }, (_, b) => Number(counts.get(`${checkId}|${b}`)?.[k] ?? 0));
    const [runs, failed, degraded] = [column('runs'), column('failed'), column('degraded')];
    const maintenanceBuckets = data.length
      ? Array.from({ length: buckets }, (_, b) => b).filter((b) =>
          [0, size / 2, size - 1].some((d) => inMaintenance(data, tags.get(checkId)!, from + b * size + d)),
        )
      : [];
    const p = percentiles.get(checkId);
    const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);
    const expected =
      expectations.of(checkId, from, from + 1) === null
        ? null
        : Array.from({ length: buckets }, (_, b) => expectations.of(checkId, from + b * size, from + (b + 1) * size)!);
    // Gaps per bucket: a bucket's extra runs (a triggered one) do not fill another bucket's gap.
    const missing = expected ? sum(expected.map((e, b) => Math.max(0, e - runs[b]))) : 0;
    const expectedRuns = expected ? sum(expected) : null;
    return {
      checkId,
      inMaintenance: inMaintenance(data, tags.get(checkId)!, now),
      total: {
        runs: sum(runs),
        failed: sum(failed),
        degraded: sum(degraded),
        responseTimeP95: figure(p?.rt),
        latencyP95: figure(p?.latency),
        expectedRuns,
        noDataRatio: expectedRuns === null ? null : (percentage(expectedRuns ? (100 * missing) / expectedRuns : 0) ?? 0),
      },
      from: new Date(from).toISOString(),
      bucketSeconds: size / 1000,
      runs,
      failed,
      degraded,
      expected,
      maintenanceBuckets,
    };
  });
}
