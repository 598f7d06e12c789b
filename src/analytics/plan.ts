import { UUID } from '../http/ids.js';
import { Rules } from '../http/rules.js';
import type { QueryBudget } from '../platform/config.js';
import { type Catalog, type GroupBy, metricNames, type ParsedMetric, resolveMetric } from './metrics.js';
import { type Part, planSources, type SourcePlan } from './rollups.js';
import type { Window } from './windows.js';

/**
 * Report planning: a request checked against its catalog (every problem a 400 naming the parameter), and the
 * decision of what answers it: rollup tiers with raw edges, or raw rows (only the page's part of the window
 * when that pays). Rendering the plan as SQL is compiler.ts's.
 */

export const STATUSES = ['success', 'failure'] as const;
export type Status = (typeof STATUSES)[number];
export const MAX_INTERVAL_MINUTES = 43_200;
/** Most buckets one series may span: 30 days at 1 minute fits; a year at 1 minute would build 525k groups. */
export const MAX_BUCKETS = 50_000;

/** A report request after schema validation; the compiler still re-checks everything it turns into SQL. */
export interface ReportRequest {
  catalog: Catalog;
  accountId: string;
  checkId: string;
  window: Window;
  metrics: readonly string[];
  /** Bucket width in minutes; without it one row covers the window. */
  aggregationInterval?: number;
  filterByStatus?: readonly string[];
  groupBy?: string;
  limit: number;
  page: number;
  budget: QueryBudget;
  /** `exact`: raw rows only, exact percentiles. Otherwise rollups serve what they can (docs/analytics.md). */
  precision?: Precision;
  /**
   * Runs the check makes per minute in each of its locations, as its configuration says (locationRunsPerMinute):
   * how many runs a rollup row stands for, which decides whether reading only the page pays (pageBounds).
   * Unknown: the whole window is read.
   */
  locationRunsPerMinute?: number;
  /**
   * A part of a longer window whose report reads rollups (the report cache's reads): read the part the same way,
   * merged partial aggregates and sketches whatever its length, so its buckets are the ones the whole window gives.
   */
  partOfMerged?: boolean;
  /** Read only these parts of the window (the report cache's open edges, read together); at most 4. */
  ranges?: readonly Window[];
}

export const PRECISIONS = ['auto', 'exact'] as const;
export type Precision = (typeof PRECISIONS)[number];

/** Checks the request against the catalog; every problem is a 400 naming the parameter and what is allowed. */
export function parseRequest(req: ReportRequest) {
  const rules = new Rules();
  const { catalog } = req;
  rules.check(UUID.test(req.checkId), 'path.id', 'format', 'must be a check id');
  rules.check(UUID.test(req.accountId), 'account', 'format', 'must be an account id');
  // An empty window (thisWeek at Monday 00:00) is allowed; it simply has no runs.
  rules.check(
    Number.isFinite(req.window.from) && Number.isFinite(req.window.to) && req.window.from <= req.window.to,
    'query.from',
    'before',
    'must not be after to',
  );
  const metrics: ParsedMetric[] = [];
  const seen = new Set<string>();
  req.metrics.forEach((name, i) => {
    const m = typeof name === 'string' ? resolveMetric(catalog, name) : undefined;
    if (!m) {
      rules.fail(`query.metrics[${i}]`, 'enum', `is not a ${catalog.title} metric; allowed: ${metricNames(catalog).join(', ')}`);
    } else if (!seen.has(m.name)) {
      seen.add(m.name);
      metrics.push(m);
    }
  });
  rules.check(req.metrics.length > 0, 'query.metrics', 'minItems', 'must name at least one metric');
  const raw = metrics.filter((m) => m.kind === 'raw');
  if (raw.length && raw.length < metrics.length) {
    rules.fail('query.metrics', 'mix', `mixes raw metrics (${raw.map((m) => m.name).join(', ')}) with aggregated ones; ask for one kind per request`);
  }
  const interval = req.aggregationInterval;
  if (interval !== undefined) {
    rules.check(
      Number.isFinite(interval) && interval >= 1 && interval <= MAX_INTERVAL_MINUTES,
      'query.aggregationInterval',
      'range',
      `must be 1 to ${MAX_INTERVAL_MINUTES} minutes`,
    );
    rules.check(!raw.length, 'query.aggregationInterval', 'raw', 'applies to aggregated metrics only; raw metrics are one row per run');
    const span = req.window.to - req.window.from;
    if (Number.isFinite(interval) && interval >= 1 && span / (interval * 60_000) > MAX_BUCKETS) {
      const least = Math.ceil(span / MAX_BUCKETS / 60_000);
      rules.fail(
        'query.aggregationInterval',
        'buckets',
        `gives ${Math.ceil(span / (interval * 60_000))} buckets over this window; at most ${MAX_BUCKETS}: use at least ${least} minutes or a shorter window`,
      );
    }
  }
  const statuses = req.filterByStatus ?? [];
  statuses.forEach((s, i) =>
    rules.check((STATUSES as readonly string[]).includes(s), `query.filterByStatus[${i}]`, 'enum', `must be one of: ${STATUSES.join(', ')}`),
  );
  const groupBy = req.groupBy;
  rules.check(
    groupBy === undefined || (catalog.groupBy as string[]).includes(groupBy),
    'query.groupBy',
    'enum',
    `must be one of: ${catalog.groupBy.join(', ')}`,
  );
  rules.check(Number.isInteger(req.limit) && req.limit >= 1 && req.limit <= 100, 'query.limit', 'range', 'must be 1 to 100');
  rules.check(Number.isInteger(req.page) && req.page >= 1, 'query.page', 'range', 'must be 1 or more');
  rules.throwIfAny();
  const failedOnly = statuses.includes('failure') && !statuses.includes('success');
  const passedOnly = statuses.includes('success') && !statuses.includes('failure');
  return {
    metrics,
    mode: raw.length ? ('raw' as const) : ('aggregated' as const),
    bucketMs: interval === undefined ? undefined : Math.round(interval * 60_000),
    hasFailures: failedOnly ? true : passedOnly ? false : undefined,
    groupBy: groupBy as GroupBy | undefined,
  };
}

export type Parsed = ReturnType<typeof parseRequest>;

/**
 * A bucketed report whose values come from raw rows reads only the part of the window its page covers when
 * the window spans at least this many times the buckets up to the end of the page, and the rollup rows that
 * find the page stand for at least PAGE_PUSHDOWN_MIN_RUNS runs each. Measured (bench/README.md): a page of 10
 * hourly buckets by location over 30 days of a 1-minute check in 22 locations (60 runs a row) costs half of
 * computing all 720 buckets, over 7 days the same; over 24 hours, or for a check running every 10 minutes in
 * 4 locations (6 runs a row), finding the page first costs two to three times the whole query. Values that
 * come from rollups are not read this way: the page's counts would read the same tier twice (measured twice
 * as slow for hourly averages, no faster for daily sketches).
 */
export const PAGE_PUSHDOWN_RATIO = 32;
export const PAGE_PUSHDOWN_MIN_RUNS = 20;

/** Where a page's buckets can be counted, when the window is long enough against the page; else undefined. */
function pageKeysPlan(req: ReportRequest, parsed: Parsed): SourcePlan | undefined {
  const { bucketMs } = parsed;
  if (bucketMs === undefined) return undefined;
  const buckets = Math.ceil((req.window.to - req.window.from) / bucketMs) + 1;
  if (buckets < PAGE_PUSHDOWN_RATIO * req.page * req.limit) return undefined;
  const plan = planSources(req.window.from, req.window.to, { bucketMs, sketches: false });
  return plan.rollups.length ? plan : undefined;
}

/** The parts of each metric column an aggregated metric reads from rollups. */
export function partsRead(metrics: readonly ParsedMetric[]): Map<string, Set<Part>> {
  const columns = new Map<string, Set<Part>>();
  for (const m of metrics) {
    if (m.kind !== 'aggregated') continue;
    const parts = columns.get(m.def.column) ?? new Set<Part>(['n']);
    if (m.suffix === 'avg' || m.suffix === 'sum') parts.add('sum');
    else if (m.suffix === 'min' || m.suffix === 'max') parts.add(m.suffix);
    else if (m.suffix === 'stddev') parts.add('var');
    else parts.add('q');
    columns.set(m.def.column, parts);
  }
  return columns;
}

/** What answers a report: rollups (with raw edges), or raw rows (only the page's part when pageKeys is set). */
export type ReportPlan =
  | { source: 'rollups'; parsed: Parsed; sources: SourcePlan }
  | { source: 'raw'; parsed: Parsed; pageKeys?: SourcePlan; pageCandidate: boolean };

export function planReport(req: ReportRequest): ReportPlan {
  const parsed = parseRequest(req);
  if (parsed.mode === 'aggregated' && req.precision !== 'exact') {
    const sketches = [...partsRead(parsed.metrics).values()].some((parts) => parts.has('q'));
    const opts = { bucketMs: parsed.bucketMs, sketches, anyLength: req.partOfMerged };
    const parts = (req.ranges ?? [req.window]).map((r) => planSources(r.from, r.to, opts));
    const sources: SourcePlan = { rollups: parts.flatMap((p) => p.rollups), raw: parts.flatMap((p) => p.raw) };
    if (sources.rollups.length || req.partOfMerged) return { source: 'rollups', parsed, sources };
    // Values from raw rows: finding the page first may spare most of them (not for parts of a window).
    const keys = req.ranges ? undefined : pageKeysPlan(req, parsed);
    return { source: 'raw', parsed, pageKeys: keys && pageWorthFinding(req, keys) ? keys : undefined, pageCandidate: keys !== undefined };
  }
  return { source: 'raw', parsed, pageCandidate: false };
}

/** The coarsest tier counts most of the window; finding the page pays when each of its rows stands for enough runs. */
function pageWorthFinding(req: ReportRequest, plan: SourcePlan): boolean {
  const runsPerRow = (req.locationRunsPerMinute ?? 0) * (Math.max(...plan.rollups.map((r) => r.tier.ms)) / 60_000);
  return runsPerRow >= PAGE_PUSHDOWN_MIN_RUNS;
}
