import { METRIC_COLUMN_NAMES } from '../model/results.js';

/**
 * Rollups of check_results: per (account, check, bucket, run location, status code, failed or not), the run
 * counts and, for each metric column, its count, sum, min, max, a mergeable variance state and a DDSketch
 * quantile state. AggregatingMergeTree tables, one per tier, filled by materialized views at insert time
 * (ROLLUPS=views) or once a minute by rollup-ticks.ts (ROLLUPS=ticks, the embedded engine's default).
 * This module is the one source of their DDL, of the names the compiler reads, and of the backfill's SELECT.
 *
 * Rollup DDL only grows through append-only migrations: sql/clickhouse/0006_rollups.sql created the tables
 * with the columns of ROLLUP_COLUMNS_AT_CREATION (a test keeps the file as it was), and a metric column added
 * since reaches existing databases through a new file that adds its parts and changes the views' query
 * (`npm run cli -- rollup-ddl --add <column>` prints it). A test checks that a database made from the files
 * has exactly the columns and view queries this module describes.
 */

export interface Tier {
  id: 'hour' | 'day';
  table: string;
  view: string;
  ms: number;
  /** The bucket of a raw row, as the view computes it. */
  bucket: string;
  /** `{{...}}` placeholder of its retention (days), filled from the settings when the DDL is applied. */
  retention: string;
  /**
   * Whether the tier keeps quantile sketches. Reading a sketch state costs as much as scanning ~100 raw rows
   * (measured, docs/analytics.md), so a tier whose rows stand for fewer runs than that would make
   * percentiles slower, not faster: the hourly tier keeps counts, sums, min, max and variance only.
   */
  sketches: boolean;
}

/** Coarsest first: the planner serves the middle of a window from the coarsest tier that fits. */
export const TIERS: readonly Tier[] = [
  {
    id: 'day',
    table: 'check_results_1d',
    view: 'check_results_1d_mv',
    ms: 86_400_000,
    bucket: 'toStartOfDay(started_at)',
    retention: 'rollup_day_retention_days',
    sketches: true,
  },
  {
    id: 'hour',
    table: 'check_results_1h',
    view: 'check_results_1h_mv',
    ms: 3_600_000,
    bucket: 'toStartOfHour(started_at)',
    retention: 'rollup_hour_retention_days',
    sketches: false,
  },
];

/**
 * The relative accuracy the sketches are built with (ClickHouse quantileDD). Measured (docs/analytics.md): a
 * percentile is within this share of a value between its two nearest ranks for values of magnitude ≥ 1, and
 * within 3× it below 1 (ClickHouse's mapping is coarser there).
 */
export const SKETCH_ACCURACY = 0.01;

/**
 * The levels every sketch state is typed with. ClickHouse merges a state only with the parameters it was
 * made with, so one state serves all levels: merged with quantilesDDMerge over these, the wanted one picked.
 */
export const SKETCH_LEVELS = [0.5, 0.9, 0.95, 0.99] as const;
const SKETCH_PARAMS = [SKETCH_ACCURACY, ...SKETCH_LEVELS].join(', ');

/** The merge of a metric column's sketches at `level` (one of SKETCH_LEVELS). */
export function sketchAt(stateColumn: string, level: number): string {
  const index = SKETCH_LEVELS.indexOf(level as (typeof SKETCH_LEVELS)[number]);
  if (index < 0) throw new Error(`no sketch level ${level}`);
  return `quantilesDDMerge(${SKETCH_PARAMS})(${stateColumn})[${index + 1}]`;
}

/** Every metric column but status_code (a grouping key, not a measure). */
export const ROLLUP_METRIC_COLUMNS: readonly string[] = METRIC_COLUMN_NAMES.filter((c) => c !== 'status_code');

/** The metric columns 0006_rollups.sql created the rollup tables with; frozen, as that file is. */
export const ROLLUP_COLUMNS_AT_CREATION: readonly string[] = [
  'response_time',
  'timing_wait',
  'timing_dns',
  'timing_tcp',
  'timing_first_byte',
  'timing_download',
  'timing_total',
  'timing_connection',
  'timing_data',
  'ttfb',
  'fcp',
  'lcp',
  'cls',
  'tbt',
  'console_errors',
  'network_errors',
  'user_script_errors',
  'document_errors',
  'packet_loss',
  'latency_min',
  'latency_max',
  'latency_avg',
  'latency_stddev',
  'ssl_handshake_time',
  'ssl_days_until_expiry',
  'hop_count',
  'final_hop_latency',
  'grpc_status_code',
];

export type Part = 'n' | 'sum' | 'min' | 'max' | 'var' | 'q';
export const part = (column: string, p: Part) => `${column}__${p}`;

/** A metric value as the states take it: every metric column as Nullable(Float64). */
const asFloat = (column: string) => `CAST(${column} AS Nullable(Float64))`;

export const PARTS: readonly Part[] = ['n', 'sum', 'min', 'max', 'var', 'q'];

/** One part of a metric column aggregated over raw rows, as the rollup column holds it. */
export function rawAggregate(column: string, p: Part): string {
  const v = asFloat(column);
  switch (p) {
    case 'n':
      return `count(${column})`;
    case 'sum':
      return `coalesce(sum(${v}), 0)`;
    case 'min':
      return `min(${v})`;
    case 'max':
      return `max(${v})`;
    case 'var':
      return `varPopState(${v})`;
    case 'q':
      return `quantilesDDState(${SKETCH_PARAMS})(${v})`;
  }
}

/** The parts a tier keeps per metric column. */
export const partsOf = (tier: Tier): Part[] => PARTS.filter((p) => p !== 'q' || tier.sketches);

/** Every part a tier keeps of one metric column, over raw rows, named as the rollup columns. */
export function rawAggregates(column: string, tier: Tier): string[] {
  return partsOf(tier).map((p) => `${rawAggregate(column, p)} AS ${part(column, p)}`);
}

/** The key of a rollup row; status_code 0 stands for "none" (no HTTP status is 0). */
export const ROLLUP_KEY = ['account_id', 'check_id', 'bucket', 'run_location', 'status_code', 'has_failures'];

/** The SELECT a tier's view runs over inserted rows (the ticks and the backfill over stored ones, with `where`). */
export function rollupSelect(tier: Tier, where = '', metricColumns: readonly string[] = ROLLUP_METRIC_COLUMNS): string {
  return [
    'SELECT',
    `    account_id, check_id, ${tier.bucket} AS bucket, run_location, coalesce(status_code, 0) AS status_code, has_failures,`,
    '    count() AS runs,',
    '    countIf(attempts > 1) AS retried,',
    metricColumns
      .flatMap((c) => rawAggregates(c, tier))
      .map((a) => `    ${a}`)
      .join(',\n'),
    'FROM check_results',
    ...(where ? [`WHERE ${where}`] : []),
    `GROUP BY ${ROLLUP_KEY.join(', ')}`,
  ].join('\n');
}

const COLUMN_TYPES: Record<Part, string> = {
  n: 'SimpleAggregateFunction(sum, UInt64)',
  sum: 'SimpleAggregateFunction(sum, Float64)',
  min: 'SimpleAggregateFunction(min, Nullable(Float64))',
  max: 'SimpleAggregateFunction(max, Nullable(Float64))',
  var: 'AggregateFunction(varPop, Nullable(Float64))',
  q: `AggregateFunction(quantilesDD(${SKETCH_PARAMS}), Nullable(Float64))`,
};

/** A tier's columns as `name type`, for the given metric columns. */
export function rollupColumns(tier: Tier, metricColumns: readonly string[] = ROLLUP_METRIC_COLUMNS): string[] {
  return [
    'account_id UUID',
    'check_id UUID',
    "bucket DateTime('UTC')",
    'run_location LowCardinality(String)',
    'status_code UInt16',
    'has_failures Bool',
    'runs SimpleAggregateFunction(sum, UInt64)',
    'retried SimpleAggregateFunction(sum, UInt64)',
    ...metricColumns.flatMap((c) => partsOf(tier).map((p) => `${part(c, p)} ${COLUMN_TYPES[p]}`)),
  ];
}

function tableDdl(tier: Tier, metricColumns: readonly string[]): string {
  const columns = rollupColumns(tier, metricColumns);
  return [
    `CREATE TABLE IF NOT EXISTS ${tier.table}`,
    '(',
    columns.map((c) => `    ${c}`).join(',\n'),
    ')',
    'ENGINE = AggregatingMergeTree',
    'PARTITION BY toYYYYMM(bucket)',
    `ORDER BY (${ROLLUP_KEY.join(', ')})`,
    `TTL bucket + INTERVAL {{${tier.retention}}} DAY`,
    'SETTINGS non_replicated_deduplication_window = 10000',
  ].join('\n');
}

/** The rollup DDL as created from scratch with `metricColumns` (0006_rollups.sql: those of ROLLUP_COLUMNS_AT_CREATION). */
export function rollupDdl(metricColumns: readonly string[] = ROLLUP_METRIC_COLUMNS): string {
  const header = [
    '-- GENERATED by `npm run cli -- rollup-ddl` from src/analytics/rollups.ts; a test checks this file is its output.',
    '-- Rollups of check_results per (account, check, bucket, run location, status code, failed), one table per tier,',
    '-- filled at insert time by materialized views. Per metric column: count, sum, min, max (exact), a varPop state',
    `-- (exact standard deviation) and, in the daily tier, a quantilesDD(${SKETCH_ACCURACY}) sketch (percentiles within a documented`,
    '-- bound, docs/analytics.md).',
    '-- rollup_state.views_created marks when the views began: rows inserted before it are what `backfill-rollups` adds.',
  ];
  const statements = [
    ...TIERS.map((tier) => tableDdl(tier, metricColumns)),
    ...TIERS.map((tier) => `CREATE MATERIALIZED VIEW IF NOT EXISTS ${tier.view} TO ${tier.table} AS\n${rollupSelect(tier, '', metricColumns)}`),
    ['CREATE TABLE IF NOT EXISTS rollup_state', '(', '    key String,', "    at DateTime64(3, 'UTC')", ')', 'ENGINE = ReplacingMergeTree', 'ORDER BY key'].join(
      '\n',
    ),
    "INSERT INTO rollup_state (key, at) SELECT 'views_created', now64(3) WHERE (SELECT count() FROM rollup_state WHERE key = 'views_created') = 0",
  ];
  return `${header.join('\n')}\n${statements.join(';\n\n')}\n`;
}

/**
 * The migration that brings existing rollups up to new metric columns (already in check_results): their parts
 * added to each tier's table, and each view's query replaced by the current one (which aggregates them too).
 * Idempotent, as every file of sql/clickhouse must be.
 */
export function rollupMigration(added: readonly string[]): string {
  for (const c of added) if (!ROLLUP_METRIC_COLUMNS.includes(c)) throw new Error(`${c} is not a metric column of check_results (METRIC_COLUMNS)`);
  const statements = TIERS.flatMap((tier) => [
    ...added.flatMap((c) => partsOf(tier).map((p) => `ALTER TABLE ${tier.table} ADD COLUMN IF NOT EXISTS ${part(c, p)} ${COLUMN_TYPES[p]}`)),
    `ALTER TABLE ${tier.view} MODIFY QUERY\n${rollupSelect(tier)}`,
  ]);
  return `-- GENERATED by \`npm run cli -- rollup-ddl --add ${added.join(',')}\`: rollup parts of ${added.join(', ')} and the views' new query.\n${statements.join(';\n\n')};\n`;
}

/**
 * Percentiles are read from sketches only over windows longer than this. Measured on the embedded engine
 * (bench/README.md): up to a month, reading raw runs with exact quantiles was as fast or faster than merging
 * daily sketches (the 100-check summary of last month: 37 ms raw, 58 ms from sketches; the 30-day hourly
 * p95: 76 ms raw, 122 ms from hourly sketches), while a year of a 1-minute check in 22 locations is 82 ms from
 * daily sketches against ~1 s raw. So a month or less stays exact, and longer windows use the sketches.
 */
export const SKETCH_MIN_WINDOW_MS = 32 * 86_400_000;

/** Where a window's rows come from: rollup tiers for the aligned middle, raw rows for the ragged edges. */
export interface SourcePlan {
  rollups: { tier: Tier; from: number; to: number }[];
  raw: { from: number; to: number }[];
}

/**
 * How far the rollup tables are complete: with ROLLUPS=ticks, every run started before the horizon is in them
 * (rollup-ticks.ts); with the views, always (no horizon registered). Several registered (services in one process,
 * as in tests): the earliest, which is true of each.
 */
const horizons = new Set<() => number>();

/** Registers a horizon; the returned function takes it back. */
export function registerRollupHorizon(horizon: () => number): () => void {
  horizons.add(horizon);
  return () => void horizons.delete(horizon);
}

/** The time before which the rollup tables hold every run (Infinity: all of them). */
export function rollupHorizon(): number {
  let at = Infinity;
  for (const horizon of horizons) at = Math.min(at, horizon());
  return at;
}

/**
 * Splits [from, to) between the tiers a bucket width allows (a tier serves a report bucket only when the
 * bucket is a whole number of its buckets; no width: any tier; percentiles: only tiers with sketches, and only
 * over windows longer than SKETCH_MIN_WINDOW_MS) and raw
 * rows: the coarsest tier takes the part of the window its buckets cover whole, the next tier the edges left,
 * raw rows what no tier covers. No rollup bucket ending after the rollups' horizon is read.
 */
export function planSources(from: number, to: number, opts: { bucketMs?: number; sketches: boolean; anyLength?: boolean; horizon?: number }): SourcePlan {
  const { bucketMs } = opts;
  const horizon = opts.horizon ?? rollupHorizon();
  if (opts.sketches && !opts.anyLength && to - from < SKETCH_MIN_WINDOW_MS) return { rollups: [], raw: [{ from, to }] };
  const tiers = TIERS.filter((t) => (bucketMs === undefined || bucketMs % t.ms === 0) && (t.sketches || !opts.sketches));
  const plan: SourcePlan = { rollups: [], raw: [] };
  const split = (a: number, b: number, rest: readonly Tier[]) => {
    if (a >= b) return;
    const [tier, ...finer] = rest;
    if (!tier) {
      const last = plan.raw[plan.raw.length - 1];
      if (last && last.to === a) last.to = b;
      else plan.raw.push({ from: a, to: b });
      return;
    }
    const start = Math.ceil(a / tier.ms) * tier.ms;
    const end = Math.floor(Math.min(b, horizon) / tier.ms) * tier.ms;
    if (start >= end) return split(a, b, finer);
    split(a, start, finer);
    plan.rollups.push({ tier, from: start, to: end });
    split(end, b, finer);
  };
  split(from, to, tiers);
  return plan;
}
