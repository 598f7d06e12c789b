import { Type } from '@sinclair/typebox';
import { PageQuery } from '../http/pagination.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { TimeParam } from '../http/time.js';
import { CHECK_TYPES } from '../model/checks.js';
import { type Catalog, metricNames, SUFFIXES, SUMMARY_FIELDS, UNITS } from './metrics.js';
import { MAX_INTERVAL_MINUTES, PRECISIONS, STATUSES } from './plan.js';
import { QUICK_RANGES, SUMMARY_RANGES } from './windows.js';

export function reportQuery(catalog: Catalog) {
  const names = metricNames(catalog);
  return Type.Object(
    {
      from: Type.Optional({ ...TimeParam, description: 'Start of the window (unix seconds or ISO 8601, UTC); overrides quickRange' }),
      to: Type.Optional({ ...TimeParam, description: 'End of the window, exclusive; overrides quickRange' }),
      quickRange: StringEnum(QUICK_RANGES, { default: 'last24Hours', description: 'Preset window, resolved in UTC; weeks start Monday' }),
      aggregationInterval: Type.Optional(
        Type.Number({
          minimum: 1,
          maximum: MAX_INTERVAL_MINUTES,
          description: 'Bucket width in minutes, aligned to the Unix epoch (60 = UTC hours, 1440 = UTC days). Buckets without runs are left out.',
        }),
      ),
      filterByStatus: Type.Optional(
        Type.Array(StringEnum(STATUSES), { minItems: 1, maxItems: 2, description: 'Keep only passing (success) or only failing (failure) runs' }),
      ),
      groupBy: Type.Optional(StringEnum(catalog.groupBy, { description: 'One series per value' })),
      metrics: Type.Array(StringEnum(names), {
        minItems: 1,
        maxItems: names.length,
        description:
          `Comma-separated. A bare name is the raw per-run value; a name with a suffix (${SUFFIXES.map((s) => `_${s}`).join(', ')}) ` +
          'and availability/retries are aggregated. Raw and aggregated metrics cannot be mixed.',
      }),
      ...PageQuery.properties,
      precision: StringEnum(PRECISIONS, {
        default: 'auto',
        description:
          'auto: the aligned middle of the window is read from hourly/daily rollups and the edges from raw runs; counts, ' +
          'availability, sums, averages, min, max and stddev are exact; over windows longer than 32 days, percentiles of whole ' +
          'days come from daily DDSketch sketches (within 1% of a value between the two nearest ranks, 3% for values below 1); ' +
          'otherwise percentiles are exact. ' +
          'exact: every run of the window is read and percentiles interpolate exactly.',
      }),
    },
    { additionalProperties: false },
  );
}

const MetricValue = Type.Union([Type.Number(), Type.String(), Type.Boolean(), Type.Null()]);

const Series = Type.Object(
  {
    runLocation: Type.Optional(Type.String({ description: 'Present when grouped by runLocation' })),
    statusCode: Type.Optional(Nullable(Type.Integer(), { description: 'Present when grouped by statusCode' })),
    data: Type.Array(Type.Record(Type.String(), MetricValue), {
      description:
        'Rows in time order. Raw: one per run with startedAt, runLocation, hasFailures and the metrics. ' +
        'Aggregated: one per bucket with runs (bucketStart when aggregationInterval is given), or one for the window.',
    }),
  },
  { additionalProperties: false },
);

export const MetricMetadata = Type.Object(
  {
    label: Type.String(),
    unit: StringEnum(UNITS),
    aggregation: Type.Optional(StringEnum(SUFFIXES)),
  },
  { additionalProperties: false },
);

/**
 * Ours beside the anchor's figures (docs/analytics.md, "No data"): the runs the check should have made, the runs it
 * made (what `over` is over) and the share of the first that did not happen. Absent for heartbeats, whose missed
 * pings are failed runs.
 */
export function noDataFields(over: string) {
  return {
    expectedRuns: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Ours: the runs the check should have made (activated, not paused by maintenance; a run per location with runParallel)',
      }),
    ),
    runs: Type.Optional(Type.Integer({ minimum: 0, description: `Ours: the runs it made, which ${over} is over` })),
    noDataRatio: Type.Optional(
      Type.Number({ minimum: 0, maximum: 100, description: 'Ours: the percentage of expected runs that did not happen: no data, never up' }),
    ),
  };
}

export const Report = Type.Object(
  {
    checkId: Type.String(),
    name: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    frequency: Type.Number(),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    tags: Type.Array(Type.String()),
    series: Type.Array(Series),
    pagination: Type.Object({ page: Type.Number(), limit: Type.Number() }, { additionalProperties: false }),
    metadata: Type.Record(Type.String(), MetricMetadata),
    noData: Type.Optional(
      Type.Required(Type.Object(noDataFields('availability')), {
        additionalProperties: false,
        description:
          'Ours (docs/analytics.md, "No data"): over the window, the runs the check should have made, the runs it made (what availability ' +
          'is over) and the percentage of expected runs that did not happen; absent for heartbeats',
      }),
    ),
  },
  { additionalProperties: false },
);

const num = () => Nullable(Type.Number());

type SummaryField = (typeof SUMMARY_FIELDS)[number];

export const SummaryItem = Type.Object(
  {
    checkId: Type.String(),
    checkType: StringEnum(CHECK_TYPES),
    availability: num(),
    ...noDataFields('availability'),
    ...(Object.fromEntries(SUMMARY_FIELDS.map((f) => [f, num()])) as Record<SummaryField, ReturnType<typeof num>>),
  },
  { additionalProperties: false },
);

export const SummaryQuery = Type.Object(
  {
    quickRange: StringEnum(SUMMARY_RANGES, { default: 'last24Hours', description: 'Preset window, resolved in UTC; weeks start Monday' }),
    precision: StringEnum(PRECISIONS, { default: 'auto', description: 'As on the reports: exact reads every run; auto reads rollups where it can' }),
    noData: Type.Boolean({
      default: false,
      description: 'Ours: add expectedRuns, runs and noDataRatio to each item (docs/analytics.md, "No data"); off, the items are the anchor\'s exactly',
    }),
  },
  { additionalProperties: false },
);

export const SummaryBody = Type.Object(
  { checkIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);

export const MetricDescriptor = Type.Object(
  {
    name: Type.String(),
    label: Type.String(),
    unit: StringEnum(UNITS),
    type: StringEnum(['Int', 'Float'] as const, { description: 'The type of the value a report row holds' }),
    aggregated: Type.Boolean({ description: 'false: a raw per-run value' }),
    aggregation: Type.Optional(StringEnum(SUFFIXES)),
    checkType: Type.Optional(StringEnum(CHECK_TYPES, { description: 'Without the checkType query: the type whose report takes it' })),
    path: Type.Optional(Type.String({ description: 'Without the checkType query: the report route' })),
  },
  { additionalProperties: false },
);
