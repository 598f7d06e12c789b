import { CHECK_TYPE_FACTS, CHECK_TYPES, type CheckType, type CheckTypeFacts } from '../model/checks.js';

/** The anchor API's metric units. */
export const UNITS = ['milliseconds', 'score', 'count', 'percentage'] as const;
export type Unit = (typeof UNITS)[number];

export interface MetricDef {
  /** The check_results column; a fixed identifier, never taken from a request. */
  column: string;
  label: string;
  unit: Unit;
}

export const SUFFIXES = ['avg', 'max', 'median', 'min', 'p50', 'p90', 'p95', 'p99', 'stddev', 'sum'] as const;
export type Suffix = (typeof SUFFIXES)[number];

/** The quantile level of each percentile suffix. */
export const QUANTILE_LEVELS = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;
export type QuantileSuffix = keyof typeof QUANTILE_LEVELS;

function exactQuantile(suffix: QuantileSuffix): string {
  return `quantileExactInclusive(${QUANTILE_LEVELS[suffix]})({c})`;
}

/**
 * Suffix → aggregate over one column. Percentiles are exact (quantileExactInclusive: linear
 * interpolation between the two nearest ranks, as numpy's default and Excel's PERCENTILE.INC);
 * docs/analytics.md gives the reasons. `{c}` is replaced with a column from the catalog.
 */
export const AGGREGATES: Record<Suffix, { sql: string; label: string }> = {
  avg: { sql: 'avg({c})', label: 'average' },
  max: { sql: 'max({c})', label: 'maximum' },
  median: { sql: exactQuantile('median'), label: 'median' },
  min: { sql: 'min({c})', label: 'minimum' },
  p50: { sql: exactQuantile('p50'), label: '50th percentile' },
  p90: { sql: exactQuantile('p90'), label: '90th percentile' },
  p95: { sql: exactQuantile('p95'), label: '95th percentile' },
  p99: { sql: exactQuantile('p99'), label: '99th percentile' },
  stddev: { sql: 'stddevPop({c})', label: 'standard deviation (population)' },
  sum: { sql: 'sum({c})', label: 'sum' },
};

/**
 * The columns of the summary (POST /v1/analytics/checks): each metric, the aggregates it reports and the
 * headline of the check types whose runs carry it (CHECK_TYPE_FACTS; other types answer null). The query, the reply schema and the mapping
 * from one to the other are all derived from this table.
 */
export const SUMMARY_METRICS = [
  { name: 'responseTime', column: 'response_time', suffixes: ['avg', 'p50', 'p95', 'p99'], headline: 'responseTime' },
  { name: 'latency', column: 'latency_avg', suffixes: ['avg', 'p50', 'p95', 'p99'], headline: 'latency' },
  { name: 'packetLoss', column: 'packet_loss', suffixes: ['avg', 'p95', 'p99'], headline: 'latency' },
  { name: 'hopCount', column: 'hop_count', suffixes: ['avg'], headline: 'hopCount' },
] as const satisfies readonly {
  name: string;
  column: string;
  suffixes: readonly ('avg' | QuantileSuffix)[];
  headline: NonNullable<CheckTypeFacts['headline']>;
}[];

/** Every summary field after availability, in table order: `responseTime_avg`, ... */
export const SUMMARY_FIELDS = SUMMARY_METRICS.flatMap((m) => m.suffixes.map((s) => `${m.name}_${s}` as const));

/** Metrics every catalog has; they are aggregates over runs and take no suffix. */
export const RUN_METRICS = {
  availability: { sql: 'if(count() = 0, NULL, 100 * countIf(NOT has_failures) / count())', label: 'Availability', unit: 'percentage' },
  retries: { sql: 'countIf(attempts > 1)', label: 'Retried runs', unit: 'count' },
} as const;
export type RunMetric = keyof typeof RUN_METRICS;

/** Metric columns that hold whole numbers (counts): their raw values, min, max and sum are integers. */
export const INTEGER_COLUMNS: ReadonlySet<string> = new Set(['console_errors', 'network_errors', 'user_script_errors', 'document_errors', 'hop_count']);

export const GROUP_COLUMNS = { runLocation: 'run_location', statusCode: 'status_code' } as const;
export type GroupBy = keyof typeof GROUP_COLUMNS;

export interface Catalog {
  /** Path segment under /v1/analytics. */
  segment: string;
  title: string;
  checkTypes: CheckType[];
  metrics: Record<string, MetricDef>;
  groupBy: GroupBy[];
}

const ms = (column: string, label: string): MetricDef => ({ column, label, unit: 'milliseconds' });
const count = (column: string, label: string): MetricDef => ({ column, label, unit: 'count' });

const HTTP_METRICS = {
  responseTime: ms('response_time', 'Response time'),
  wait: ms('timing_wait', 'Wait'),
  dns: ms('timing_dns', 'DNS lookup'),
  tcp: ms('timing_tcp', 'TCP connect'),
  firstByte: ms('timing_first_byte', 'Time to first byte'),
  download: ms('timing_download', 'Download'),
};

/** The reports under /v1/analytics/{segment}: their metrics and groupings. */
const CATALOG_DEFS = {
  'multistep-checks': {
    title: 'multi-step check',
    metrics: { responseTime: ms('response_time', 'Response time') },
    groupBy: ['runLocation'],
  },
  icmp: {
    title: 'ICMP monitor',
    metrics: {
      packetLoss: { column: 'packet_loss', label: 'Packet loss', unit: 'percentage' },
      latencyMin: ms('latency_min', 'Minimum latency'),
      latencyMax: ms('latency_max', 'Maximum latency'),
      latencyAvg: ms('latency_avg', 'Average latency'),
      latencyStdDev: ms('latency_stddev', 'Latency standard deviation'),
    },
    groupBy: ['runLocation'],
  },
  'api-checks': { title: 'API check', metrics: HTTP_METRICS, groupBy: ['runLocation', 'statusCode'] },
  'url-monitors': { title: 'URL monitor', metrics: HTTP_METRICS, groupBy: ['runLocation', 'statusCode'] },
  'browser-checks': {
    title: 'browser check',
    metrics: {
      responseTime: ms('response_time', 'Response time'),
      TTFB: ms('ttfb', 'Time to first byte'),
      FCP: ms('fcp', 'First contentful paint'),
      LCP: ms('lcp', 'Largest contentful paint'),
      CLS: { column: 'cls', label: 'Cumulative layout shift', unit: 'score' },
      TBT: ms('tbt', 'Total blocking time'),
      consoleErrors: count('console_errors', 'Console errors'),
      networkErrors: count('network_errors', 'Network errors'),
      userScriptErrors: count('user_script_errors', 'User script errors'),
      documentErrors: count('document_errors', 'Document errors'),
    },
    groupBy: ['runLocation'],
  },
  'playwright-checks': {
    title: 'Playwright check',
    metrics: { responseTime: ms('response_time', 'Response time') },
    groupBy: ['runLocation'],
  },
  'tcp-checks': {
    title: 'TCP monitor',
    metrics: {
      total: ms('timing_total', 'Total'),
      dns: ms('timing_dns', 'DNS lookup'),
      connection: ms('timing_connection', 'Connection'),
      data: ms('timing_data', 'Data transfer'),
    },
    groupBy: ['runLocation'],
  },
  dns: { title: 'DNS monitor', metrics: { total: ms('timing_total', 'Total') }, groupBy: ['runLocation'] },
  'heartbeat-checks': { title: 'heartbeat monitor', metrics: {}, groupBy: ['runLocation'] },
  'agentic-checks': {
    title: 'agentic check',
    metrics: { responseTime: ms('response_time', 'Run duration') },
    groupBy: ['runLocation'],
  },
  traceroute: {
    title: 'traceroute monitor',
    metrics: {
      responseTime: ms('response_time', 'Trace duration'),
      hopCount: count('hop_count', 'Hops'),
      finalHopLatency: ms('final_hop_latency', 'Final hop latency'),
    },
    groupBy: ['runLocation'],
  },
  ssl: {
    title: 'SSL monitor',
    metrics: {
      handshakeTimeMs: ms('ssl_handshake_time', 'TLS handshake time'),
      daysUntilExpiry: count('ssl_days_until_expiry', 'Days until the certificate expires'),
    },
    groupBy: ['runLocation'],
  },
  'grpc-checks': {
    title: 'gRPC monitor',
    metrics: { responseTime: ms('response_time', 'Response time') },
    groupBy: ['runLocation'],
  },
} satisfies Record<string, Omit<Catalog, 'segment' | 'checkTypes'>>;
export type CatalogSegment = keyof typeof CATALOG_DEFS;

/** The report of each check type, from its facts (model/checks.ts): one that names no report here does not compile. */
export const REPORT_OF = Object.fromEntries(CHECK_TYPES.map((t) => [t, CHECK_TYPE_FACTS[t].report])) as {
  [T in CheckType]: (typeof CHECK_TYPE_FACTS)[T]['report'];
};
const _reportsExist: Record<CheckType, CatalogSegment> = REPORT_OF;
void _reportsExist;

/** The one table the compiler, the OpenAPI enums and GET /v1/analytics/metrics are built from. */
export const CATALOGS: Catalog[] = (Object.keys(CATALOG_DEFS) as CatalogSegment[]).map((segment) => ({
  segment,
  checkTypes: CHECK_TYPES.filter((t) => REPORT_OF[t] === segment),
  ...CATALOG_DEFS[segment],
}));

/** Every metric name a catalog accepts: run metrics, bare metrics and each with each suffix. */
export function metricNames(catalog: Catalog): string[] {
  const bases = Object.keys(catalog.metrics);
  return [...Object.keys(RUN_METRICS), ...bases, ...bases.flatMap((b) => SUFFIXES.map((s) => `${b}_${s}`))];
}

export type ParsedMetric =
  | { name: string; kind: 'run'; metric: RunMetric }
  | { name: string; kind: 'raw'; def: MetricDef }
  | { name: string; kind: 'aggregated'; def: MetricDef; suffix: Suffix };

/** Resolves one requested name against a catalog; undefined when the catalog does not have it. */
export function resolveMetric(catalog: Catalog, name: string): ParsedMetric | undefined {
  if (Object.hasOwn(RUN_METRICS, name)) return { name, kind: 'run', metric: name as RunMetric };
  if (Object.hasOwn(catalog.metrics, name)) return { name, kind: 'raw', def: catalog.metrics[name] };
  const cut = name.lastIndexOf('_');
  if (cut <= 0) return undefined;
  const base = name.slice(0, cut);
  const suffix = name.slice(cut + 1);
  if (!Object.hasOwn(catalog.metrics, base) || !(SUFFIXES as readonly string[]).includes(suffix)) return undefined;
  return { name, kind: 'aggregated', def: catalog.metrics[base], suffix: suffix as Suffix };
}

export function metadataOf(m: ParsedMetric): { label: string; unit: Unit; aggregation?: Suffix } {
  if (m.kind === 'run') return { label: RUN_METRICS[m.metric].label, unit: RUN_METRICS[m.metric].unit };
  if (m.kind === 'raw') return { label: m.def.label, unit: m.def.unit };
  return { label: `${m.def.label} (${AGGREGATES[m.suffix].label})`, unit: m.def.unit, aggregation: m.suffix };
}
