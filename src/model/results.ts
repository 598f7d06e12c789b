/**
 * What a result is on its way into ClickHouse, shared by everything that makes or reads results (ingest, the
 * runners, heartbeats, seeding, analytics): the stored columns, the positional row, the queued batch.
 */

/** Every optional metric: where it sits in a result item, and its column. One table for both directions. */
export const METRIC_COLUMNS: ReadonlyArray<readonly [group: 'timings' | 'webVitals' | null, field: string, column: string]> = [
  [null, 'responseTime', 'response_time'],
  [null, 'statusCode', 'status_code'],
  ['timings', 'wait', 'timing_wait'],
  ['timings', 'dns', 'timing_dns'],
  ['timings', 'tcp', 'timing_tcp'],
  ['timings', 'firstByte', 'timing_first_byte'],
  ['timings', 'download', 'timing_download'],
  ['timings', 'total', 'timing_total'],
  ['timings', 'connection', 'timing_connection'],
  ['timings', 'data', 'timing_data'],
  ['webVitals', 'TTFB', 'ttfb'],
  ['webVitals', 'FCP', 'fcp'],
  ['webVitals', 'LCP', 'lcp'],
  ['webVitals', 'CLS', 'cls'],
  ['webVitals', 'TBT', 'tbt'],
  ['webVitals', 'consoleErrors', 'console_errors'],
  ['webVitals', 'networkErrors', 'network_errors'],
  ['webVitals', 'userScriptErrors', 'user_script_errors'],
  ['webVitals', 'documentErrors', 'document_errors'],
  [null, 'packetLoss', 'packet_loss'],
  [null, 'latencyMin', 'latency_min'],
  [null, 'latencyMax', 'latency_max'],
  [null, 'latencyAvg', 'latency_avg'],
  [null, 'latencyStdDev', 'latency_stddev'],
  [null, 'handshakeTimeMs', 'ssl_handshake_time'],
  [null, 'daysUntilExpiry', 'ssl_days_until_expiry'],
  [null, 'hopCount', 'hop_count'],
  [null, 'finalHopLatency', 'final_hop_latency'],
  [null, 'grpcStatusCode', 'grpc_status_code'],
];

/** The metric columns of check_results, in table order. */
export const METRIC_COLUMN_NAMES = METRIC_COLUMNS.map(([, , column]) => column);

/** The column holding a run's per-type result objects as JSON ('' when it reported none). */
export const DETAIL_COLUMN = 'detail';

/**
 * The anchor's per-type result objects a run may carry (`apiCheckResult`, …): stored together in DETAIL_COLUMN.
 * TCP, DNS and ICMP have no object in the anchor's document; runners report theirs under these names.
 */
export const RESULT_DETAIL_KEYS = [
  'apiCheckResult',
  'browserCheckResult',
  'multiStepCheckResult',
  'playwrightCheckResult',
  'agenticCheckResult',
  'tcpCheckResult',
  'dnsCheckResult',
  'icmpCheckResult',
  'sslCheckResult',
  'grpcCheckResult',
  'tracerouteCheckResult',
] as const;
export type ResultDetailKey = (typeof RESULT_DETAIL_KEYS)[number];

/** The most JSON a run's detail may hold; a larger one is cut (its bodies first) by whoever made it. */
export const MAX_DETAIL_BYTES = 64 * 1024;

/** Columns of an inserted row, in the positional order of `ResultRow` (JSONCompactEachRow). */
export const ROW_COLUMNS = [
  'account_id',
  'check_id',
  'check_type',
  'result_id',
  'started_at',
  'stopped_at',
  'run_location',
  'has_failures',
  'has_errors',
  'is_degraded',
  'aborted',
  'attempts',
  ...METRIC_COLUMNS.map(([, , column]) => column),
  DETAIL_COLUMN,
] as const;

export type ResultRow = (string | number | boolean | null)[];

export const INGEST_QUEUE = 'check-results';

/** The layout of a queued batch; a worker refuses a version it does not know instead of guessing. */
export const JOB_VERSION = 2;

/**
 * A queued batch, self-describing: `rows` are positional in the order `columns` names, so a worker of
 * another version reads them by name or refuses them, and never pairs values with the wrong columns.
 */
export interface IngestJob {
  v: number;
  batchId: string;
  accountId: string;
  columns: readonly string[];
  rows: ResultRow[];
}

export function ingestJob(batchId: string, accountId: string, rows: ResultRow[]): IngestJob {
  return { v: JOB_VERSION, batchId, accountId, columns: ROW_COLUMNS, rows };
}


/** Depth and lag of the result queue, for /ready and /metrics. */
export interface ResultQueueStats {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldestWaitingSeconds: number;
  acceptedResults: number;
}

/** Where results go to be stored: the ingest queue. Features that record runs depend on this, not on ingest. */
export interface ResultQueue {
  enqueue(job: IngestJob): Promise<void>;
  stats(): Promise<ResultQueueStats>;
}

/** A file a browser or multi-step run kept in the blob store (its result's `assets`). */
export interface KeptAsset {
  type: 'screenshot' | 'trace' | 'video';
  /** Unique within the result: its download route's last segment. */
  name: string;
  contentType: string;
  /** The blob store key. */
  key: string;
  size: number;
}

/** The result objects of runs that keep files (browser, multi-step, Playwright check suites). */
const ASSET_DETAIL_KEYS = ['browserCheckResult', 'multiStepCheckResult', 'playwrightCheckResult'] as const;

/** The files a result's run kept (none for other types and for results posted without them). */
export function keptAssetsOf(item: Record<string, unknown>): KeptAsset[] {
  for (const key of ASSET_DETAIL_KEYS) {
    const detail = item[key] as { assets?: unknown } | null | undefined;
    if (detail && Array.isArray(detail.assets)) return detail.assets as KeptAsset[];
  }
  return [];
}
