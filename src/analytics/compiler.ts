import { UUID } from '../http/ids.js';
import { toClickHouseTime } from '../model/time.js';
import type { QueryBudget } from '../platform/config.js';
import type { QueryParams } from '../storage/clickhouse/store.js';
import { budgetSettings } from './budget.js';
import { AGGREGATES, GROUP_COLUMNS, type GroupBy, type ParsedMetric, QUANTILE_LEVELS, type QuantileSuffix, RUN_METRICS, SUMMARY_METRICS } from './metrics.js';
import { type Parsed, type Precision, partsRead, planReport, type ReportRequest } from './plan.js';
import { type Part, part, planSources, type SourcePlan, sketchAt } from './rollups.js';
import { type Key, unionOfSources } from './sources.js';
import type { Window } from './windows.js';

export interface CompiledReport {
  sql: string;
  params: QueryParams;
  /** The query budget, passed to the store with the query. */
  settings: Record<string, number>;
  mode: 'raw' | 'aggregated';
  /** The tiers the query reads besides raw rows (empty: raw rows only). */
  tiers: string[];
  /** The tiers that found the page's buckets when the query reads only its page's part of the window (pageBounds). */
  pageTiers: string[];
  /** Reading only the page's part of the window may pay, depending on the check's volume (locationRunsPerMinute). */
  pageCandidate: boolean;
  /** In request order; metric i is selected as column `m{i}`. */
  metrics: ParsedMetric[];
  groupBy?: GroupBy;
  bucketed: boolean;
}

/** A row as the compiled query returns it; `g` is the group key, `b` the bucket start in epoch ms. */
export type ReportRow = Record<string, unknown> & { g?: unknown; b?: number; t?: number; loc?: string; failed?: boolean };

/**
 * Engine settings of every report query besides the budget. A report reads one check, which the table's own
 * order (account, check, time) serves best, so the planner need not weigh the time-ordered projection (the
 * summary's) or the run-id skip index (ingest's): measured, that analysis alone cost the bench's paged report
 * about a quarter of its time.
 */
const REPORT_SETTINGS = { optimize_use_projections: 0, use_skip_indexes: 0 };

/** The window of a query over raw rows. */
const WINDOW = ["started_at >= {from:DateTime64(3, 'UTC')}", "started_at < {to:DateTime64(3, 'UTC')}"];

/** Where every summary query starts: one account, a primary-key range, a time window. */
const SCOPE = ['account_id = {accountId:UUID}', ...WINDOW];

function windowParams(window: Window) {
  return { from: toClickHouseTime(window.from), to: toClickHouseTime(window.to) };
}

/** Range i of a request's ranges (`r{i}from`, `r{i}to`: rangeParams) on raw rows. */
const inRange = (i: number) => `started_at >= {r${i}from:DateTime64(3, 'UTC')} AND started_at < {r${i}to:DateTime64(3, 'UTC')}`;

function rangeParams(ranges: readonly Window[] = []): QueryParams {
  return Object.fromEntries(
    ranges.flatMap((r, i) => [
      [`r${i}from`, toClickHouseTime(r.from)],
      [`r${i}to`, toClickHouseTime(r.to)],
    ]),
  );
}

function metricExpression(m: ParsedMetric): string {
  switch (m.kind) {
    case 'run':
      return RUN_METRICS[m.metric].sql;
    case 'raw':
      return m.def.column;
    case 'aggregated':
      return AGGREGATES[m.suffix].sql.replace('{c}', m.def.column);
  }
}

/**
 * Compiles a report request to one parameterized query. The SQL text is assembled only from fixed
 * fragments and catalog columns; the check, account, window, bucket width, status and paging travel as
 * `{name:Type}` parameters. Metrics are selected as `m0, m1, …` so no requested name reaches the text.
 * What to read is the plan's (plan.ts); this file only renders it.
 */
export function compileReport(req: ReportRequest): CompiledReport {
  const plan = planReport(req);
  switch (plan.source) {
    case 'rollups':
      return compileFromRollups(req, plan.parsed, plan.sources);
    case 'raw':
      return { ...compileFromRaw(req, plan.parsed, plan.pageKeys && pageBounds(plan.parsed, plan.pageKeys)), pageCandidate: plan.pageCandidate };
  }
}

/** The grouping keys of an aggregated query over rollups and raw rows: the series (g) and the bucket (b). */
function unionKeys(parsed: Parsed): Key[] {
  const { bucketMs, groupBy } = parsed;
  const keys: Key[] = [];
  if (groupBy) keys.push({ alias: 'g', rollup: groupBy === 'statusCode' ? 'nullIf(status_code, 0)' : 'run_location', raw: GROUP_COLUMNS[groupBy] });
  if (bucketMs !== undefined) {
    keys.push({
      alias: 'b',
      // One type on both sides of the UNION (UInt64 and Int64 would make a Variant).
      rollup: 'toInt64(intDiv(toUnixTimestamp(bucket) * 1000, {bucketMs:UInt64}) * {bucketMs:UInt64})',
      raw: 'toInt64(intDiv(toUnixTimestamp64Milli(started_at), {bucketMs:UInt64}) * {bucketMs:UInt64})',
    });
  }
  return keys;
}

/** The conditions every source of a report shares: the account, the check, the status filter. */
const sourceScope = (parsed: Parsed) => [
  'account_id = {accountId:UUID}',
  'check_id = {checkId:UUID}',
  ...(parsed.hasFailures === undefined ? [] : ['has_failures = {hasFailures:Bool}']),
];

/** How a query reads only its page's part of the window (see pageBounds). */
interface PageBounds {
  /** `WITH (…) AS page`: the scalar holding the page's first and last bucket, and each series' own. */
  with: string;
  params: QueryParams;
  /** The page's time bounds on raw rows. */
  narrow: string;
  /** Grouped: keeps each series' own page (the bounds hold the union of all series' pages). */
  having?: string;
  tiers: string[];
}

/**
 * The page's part of the window. The buckets a page holds are found first by counting runs per series and
 * bucket, from the rollup tiers (whole hours or days, exact counts) and raw rows at the ragged edges, paged as
 * the report pages (`LIMIT … BY g`); the report then aggregates only the raw rows between the page's first
 * and last bucket, each series between its own. The scalar subquery runs once, before the main query, so its
 * bounds prune the primary key. When it applies is the plan's decision (plan.ts, pageKeysPlan).
 */
function pageBounds(parsed: Parsed, plan: SourcePlan): PageBounds {
  const { groupBy } = parsed;
  const union = unionOfSources({ where: sourceScope(parsed), keys: unionKeys(parsed), columns: new Map(), plan });
  const keys = groupBy
    ? `SELECT g, min(b) AS first, max(b) AS last FROM (
    SELECT g, b FROM ${union.sql} GROUP BY g, b ORDER BY g, b LIMIT {offset:UInt64}, {limit:UInt64} BY g
  ) GROUP BY g`
    : `SELECT NULL AS g, min(b) AS first, max(b) AS last FROM (
    SELECT b FROM ${union.sql} GROUP BY b ORDER BY b LIMIT {limit:UInt64} OFFSET {offset:UInt64}
  )`;
  // An empty page leaves first = last = 0: bounds before any window, so nothing is read.
  const end = 'page.2 + {bucketMs:UInt64}';
  // Each series' [first, last] looked up by its key (a constant list, built once); indexOf treats NULL (the
  // runs without a status code) as a value.
  const own = 'page.3[indexOf(page_keys, g)]';
  return {
    with: `WITH (SELECT (min(first), max(last), groupArray((g, first, last))) FROM (
  ${keys}
)) AS page, arrayMap(s -> s.1, page.3) AS page_keys`,
    params: union.params,
    narrow: `started_at >= fromUnixTimestamp64Milli(page.1, 'UTC') AND started_at < fromUnixTimestamp64Milli(${end}, 'UTC')`,
    having: groupBy ? `b >= ${own}.2 AND b <= ${own}.3` : undefined,
    tiers: [...new Set(plan.rollups.map((r) => r.tier.id))],
  };
}

function pagingOf(parsed: Parsed) {
  return parsed.groupBy ? 'LIMIT {offset:UInt64}, {limit:UInt64} BY g' : 'LIMIT {limit:UInt64} OFFSET {offset:UInt64}';
}

function baseParams(req: ReportRequest, parsed: Parsed): QueryParams {
  return {
    accountId: req.accountId,
    checkId: req.checkId,
    limit: req.limit,
    offset: (req.page - 1) * req.limit,
    ...(parsed.bucketMs !== undefined ? { bucketMs: parsed.bucketMs } : {}),
    ...(parsed.hasFailures !== undefined ? { hasFailures: parsed.hasFailures } : {}),
  };
}

/** Every row of the window (or of its page's part) read from check_results: raw metrics, and exact aggregates. */
function compileFromRaw(req: ReportRequest, parsed: Parsed, page?: PageBounds): CompiledReport {
  const { metrics, mode, bucketMs, groupBy } = parsed;
  // Parts of the window (the report cache's edges): any of them; the primary key reads each range.
  const ranges = req.ranges?.map((_, i) => `(${inRange(i)})`);
  const where = [...sourceScope(parsed), ...(ranges ? [`(${ranges.join(' OR ')})`] : WINDOW), ...(page ? [page.narrow] : [])];
  const select: string[] = [];
  const order: string[] = [];
  if (groupBy) {
    select.push(`${GROUP_COLUMNS[groupBy]} AS g`);
    order.push('g');
  }
  const values = metrics.map((m, i) => `${metricExpression(m)} AS m${i}`);
  let body: string;
  if (mode === 'raw') {
    select.push('toUnixTimestamp64Milli(started_at) AS t', 'run_location AS loc', 'has_failures AS failed', ...values);
    order.push('started_at', 'run_location', 'result_id');
    body = '';
  } else {
    if (bucketMs !== undefined) {
      // Buckets start at multiples of the width since the Unix epoch: 60 → UTC hours, 1440 → UTC days.
      select.push('intDiv(toUnixTimestamp64Milli(started_at), {bucketMs:UInt64}) * {bucketMs:UInt64} AS b');
      order.push('b');
    }
    select.push(...values);
    const keys = [...(groupBy ? ['g'] : []), ...(bucketMs !== undefined ? ['b'] : [])];
    // Buckets (and windows) without runs produce no row rather than a row of NULLs.
    body = `${keys.length ? `GROUP BY ${keys.join(', ')} ` : ''}HAVING count() > 0${page?.having ? ` AND ${page.having}` : ''}`;
  }
  const sql = [
    page?.with ?? '',
    `SELECT ${select.join(', ')}`,
    'FROM check_results',
    `WHERE ${where.join(' AND ')}`,
    body,
    order.length ? `ORDER BY ${order.join(', ')}` : '',
    page ? '' : pagingOf(parsed),
  ]
    .filter(Boolean)
    .join('\n');
  return {
    sql,
    params: {
      ...baseParams(req, parsed),
      ...windowParams(req.window),
      ...rangeParams(req.ranges),
      ...page?.params,
    },
    settings: { ...budgetSettings(req.budget), ...REPORT_SETTINGS },
    mode,
    metrics,
    groupBy,
    bucketed: bucketMs !== undefined,
    tiers: [],
    pageTiers: page?.tiers ?? [],
    pageCandidate: false,
  };
}

/** An aggregated metric over merged partial aggregates: exact for counts, sums, averages, min, max, stddev. */
export function mergedExpression(m: ParsedMetric): string {
  if (m.kind === 'run') return m.metric === 'availability' ? 'if(sum(runs) = 0, NULL, 100 * sum(passed) / sum(runs))' : 'sum(retried)';
  if (m.kind === 'raw') throw new Error('raw metrics are never read from rollups');
  const c = m.def.column;
  const none = `sum(${part(c, 'n')}) = 0`;
  switch (m.suffix) {
    case 'avg':
      return `if(${none}, NULL, sum(${part(c, 'sum')}) / sum(${part(c, 'n')}))`;
    case 'sum':
      return `if(${none}, NULL, sum(${part(c, 'sum')}))`;
    case 'min':
      return `min(${part(c, 'min')})`;
    case 'max':
      return `max(${part(c, 'max')})`;
    case 'stddev':
      return `if(${none}, NULL, sqrt(varPopMerge(${part(c, 'var')})))`;
    default:
      return `if(${none}, NULL, ${sketchAt(part(c, 'q'), QUANTILE_LEVELS[m.suffix])})`;
  }
}

/**
 * The window's aligned middle read from rollups, its ragged edges from raw rows (planSources), merged per
 * group and bucket. Every value but the percentiles is exact; percentiles come from the merged sketches.
 */
function compileFromRollups(req: ReportRequest, parsed: Parsed, plan: SourcePlan): CompiledReport {
  const { metrics, bucketMs, groupBy } = parsed;
  const keys = unionKeys(parsed);
  const union = unionOfSources({ where: sourceScope(parsed), keys, columns: partsRead(metrics), plan });
  const aliases = keys.map((k) => k.alias);
  const sql = [
    `SELECT ${[...aliases, ...metrics.map((m, i) => `${mergedExpression(m)} AS m${i}`)].join(', ')}`,
    `FROM ${union.sql}`,
    `${aliases.length ? `GROUP BY ${aliases.join(', ')} ` : ''}HAVING sum(runs) > 0`,
    aliases.length ? `ORDER BY ${aliases.join(', ')}` : '',
    pagingOf(parsed),
  ]
    .filter(Boolean)
    .join('\n');
  return {
    sql,
    params: { ...baseParams(req, parsed), ...union.params },
    settings: { ...budgetSettings(req.budget), ...REPORT_SETTINGS },
    mode: 'aggregated',
    metrics,
    groupBy,
    bucketed: bucketMs !== undefined,
    tiers: [...new Set(plan.rollups.map((r) => r.tier.id))],
    pageTiers: [],
    pageCandidate: false,
  };
}

/**
 * The summary query, from SUMMARY_METRICS: per metric `s{i}_avg` and one `quantilesExactInclusive` over its
 * levels as `s{i}_q` (one sort for all levels). Aliases are positional, never column names: ClickHouse would
 * otherwise resolve `latency_avg` inside `avg(…)` to the alias itself.
 */
const SUMMARY_SQL = `SELECT
  toString(check_id) AS checkId,
  ${RUN_METRICS.availability.sql} AS availability,
  count() AS run_count,
${SUMMARY_METRICS.map((m, i) => {
  const levels = summaryQuantiles(i).map((suffix) => QUANTILE_LEVELS[suffix]);
  const quantiles = levels.length ? `,\n  quantilesExactInclusive(${levels.join(', ')})(${m.column}) AS s${i}_q` : '';
  return `  avg(${m.column}) AS s${i}_avg${quantiles}`;
}).join(',\n')}
FROM check_results
WHERE ${SCOPE.join(' AND ')} AND check_id IN {checkIds:Array(UUID)}
GROUP BY check_id`;

/** The percentile suffixes of summary metric `i`, in the order its `s{i}_q` array holds them. */
export function summaryQuantiles(i: number): QuantileSuffix[] {
  return (SUMMARY_METRICS[i].suffixes as readonly ('avg' | QuantileSuffix)[]).filter((s): s is QuantileSuffix => s !== 'avg');
}

/** `s{i}_avg` is a number or null, `s{i}_q` the quantiles of metric i. */
export type SummaryRow = { checkId: string; availability: number | null; run_count: number | string } & Record<
  string,
  number | string | null | (number | null)[]
>;

export function compileSummary(
  accountId: string,
  checkIds: readonly string[],
  window: Window,
  budget: QueryBudget,
  precision: Precision = 'auto',
): { sql: string; params: QueryParams; settings: Record<string, number>; tiers: string[] } {
  for (const id of [accountId, ...checkIds]) if (!UUID.test(id)) throw new Error(`compileSummary: not a UUID: ${JSON.stringify(id)}`);
  const scope = { accountId, checkIds: [...checkIds] };
  // The summary always has percentiles: only tiers with sketches serve it.
  const plan = precision === 'exact' ? undefined : planSources(window.from, window.to, { sketches: true });
  if (!plan?.rollups.length) {
    return { sql: SUMMARY_SQL, params: { ...scope, ...windowParams(window) }, settings: budgetSettings(budget), tiers: [] };
  }
  const columns = new Map<string, Set<Part>>();
  SUMMARY_METRICS.forEach((m, i) => columns.set(m.column, new Set<Part>(summaryQuantiles(i).length ? ['n', 'sum', 'q'] : ['n', 'sum'])));
  const union = unionOfSources({
    where: ['account_id = {accountId:UUID}', 'check_id IN {checkIds:Array(UUID)}'],
    keys: [{ alias: 'checkId', rollup: 'toString(check_id)', raw: 'toString(check_id)' }],
    columns,
    plan,
  });
  const values = SUMMARY_METRICS.map((m, i) => {
    const none = `sum(${part(m.column, 'n')}) = 0`;
    const levels = summaryQuantiles(i).map((suffix) => QUANTILE_LEVELS[suffix]);
    const avg = `  if(${none}, NULL, sum(${part(m.column, 'sum')}) / sum(${part(m.column, 'n')})) AS s${i}_avg`;
    const q = levels.length ? `,\n  if(${none}, [], [${levels.map((l) => sketchAt(part(m.column, 'q'), l)).join(', ')}]) AS s${i}_q` : '';
    return avg + q;
  });
  const sql = [
    'SELECT',
    '  checkId,',
    `  if(sum(runs) = 0, NULL, 100 * sum(passed) / sum(runs)) AS availability,`,
    '  sum(runs) AS run_count,',
    values.join(',\n'),
    `FROM ${union.sql}`,
    'GROUP BY checkId',
  ].join('\n');
  return { sql, params: { ...scope, ...union.params }, settings: budgetSettings(budget), tiers: [...new Set(plan.rollups.map((r) => r.tier.id))] };
}

/**
 * When the first run of each range started, per check (epoch ms; any status; null for none): how far the report
 * cache may let a window's moving bound travel before the window holds other runs (report-cache.ts). Checks
 * without a run in any range have no row. At most 4 ranges.
 */
export function compileFirstRuns(accountId: string, checkIds: readonly string[], ranges: readonly Window[]): { sql: string; params: QueryParams } {
  for (const id of [accountId, ...checkIds]) if (!UUID.test(id)) throw new Error(`compileFirstRuns: not a UUID: ${JSON.stringify(id)}`);
  if (!ranges.length || ranges.length > 4) throw new Error('compileFirstRuns: 1 to 4 ranges');
  const firsts = ranges.map((_, i) => `if(countIf(${inRange(i)}) = 0, NULL, minIf(toUnixTimestamp64Milli(started_at), ${inRange(i)})) AS f${i}`);
  const sql = [
    `SELECT toString(check_id) AS checkId, ${firsts.join(', ')}`,
    'FROM check_results',
    `WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)} AND (${ranges.map((_, i) => `(${inRange(i)})`).join(' OR ')})`,
    'GROUP BY check_id',
  ].join('\n');
  return { sql, params: { accountId, checkIds: [...checkIds], ...rangeParams(ranges) } };
}
