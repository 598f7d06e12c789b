import { fromClickHouseTime, isoToClickHouseTime } from '../storage/clickhouse/time.js';
import type { ResultItem } from './schemas.js';

/** Every optional metric: where it sits in a result item, and its column. One table for both directions. */
const METRIC_COLUMNS: ReadonlyArray<readonly [group: 'timings' | 'webVitals' | null, field: string, column: string]> = [
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
] as const;

export type ResultRow = (string | number | boolean | null)[];

/** A result item as a positional row of ROW_COLUMNS: compact to queue and quick to insert. */
export function toRow(accountId: string, id: string, item: ResultItem): ResultRow {
  const row: ResultRow = [
    accountId,
    item.checkId,
    item.checkType,
    id,
    isoToClickHouseTime(item.startedAt),
    isoToClickHouseTime(item.stoppedAt),
    item.runLocation,
    item.hasFailures,
    item.hasErrors,
    item.isDegraded,
    item.aborted,
    item.attempts,
  ];
  for (const [group, field] of METRIC_COLUMNS) {
    const source = (group ? item[group] : item) as Record<string, number | undefined> | undefined;
    row.push(source?.[field] ?? null);
  }
  return row;
}

/** Columns the read path selects (`toItem` reads them by name): every stored column but the account. */
export const READ_COLUMNS = ROW_COLUMNS.filter((c) => c !== 'account_id');

export function toItem(row: Record<string, unknown>) {
  const item: Record<string, unknown> = {
    id: row.result_id,
    checkId: row.check_id,
    checkType: row.check_type,
    runLocation: row.run_location,
    startedAt: fromClickHouseTime(row.started_at),
    stoppedAt: fromClickHouseTime(row.stopped_at),
    hasFailures: Boolean(row.has_failures),
    hasErrors: Boolean(row.has_errors),
    isDegraded: Boolean(row.is_degraded),
    aborted: Boolean(row.aborted),
    attempts: Number(row.attempts),
  };
  for (const [group, field, column] of METRIC_COLUMNS) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    if (group) item[group] = { ...((item[group] as object) ?? {}), [field]: Number(value) };
    else item[field] = Number(value);
  }
  return item;
}
