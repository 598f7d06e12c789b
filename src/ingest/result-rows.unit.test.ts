import { describe, expect, it } from 'vitest';
import { DETAIL_COLUMN, METRIC_COLUMNS, ROW_COLUMNS } from '../model/results.js';
import { isoToClickHouseTime } from '../model/time.js';
import { toRow } from './result-rows.js';
import type { ResultItem } from './schemas.js';

/** A row as ROW_COLUMNS read it, made the plain way: every column asked of the item by name. */
function expectedRow(accountId: string, id: string, item: Record<string, unknown>, detail: string) {
  const metric = new Map(
    METRIC_COLUMNS.map(([group, field, column]) => {
      const source = (group ? item[group] : item) as Record<string, unknown> | undefined;
      return [column, source?.[field] ?? null] as const;
    }),
  );
  const fixed: Record<string, unknown> = {
    account_id: accountId,
    check_id: item.checkId,
    check_type: item.checkType,
    result_id: id,
    started_at: isoToClickHouseTime(item.startedAt as string),
    stopped_at: isoToClickHouseTime(item.stoppedAt as string),
    run_location: item.runLocation,
    has_failures: item.hasFailures,
    has_errors: item.hasErrors,
    is_degraded: item.isDegraded,
    aborted: item.aborted,
    attempts: item.attempts,
    [DETAIL_COLUMN]: detail,
  };
  return ROW_COLUMNS.map((column) => (metric.has(column) ? metric.get(column) : fixed[column]));
}

describe('toRow', () => {
  it('puts every metric an item has in its column, null for the rest, whatever the item carries besides', () => {
    const base = {
      checkId: 'c',
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: '2026-11-30T10:00:00.000Z',
      stoppedAt: '2026-11-30T10:00:01.250Z',
      hasFailures: false,
      hasErrors: true,
      isDegraded: false,
      aborted: false,
      attempts: 2,
    };
    const items: Record<string, unknown>[] = [
      base,
      { ...base, responseTime: 150.5, statusCode: 200, timings: { wait: 2, dns: 8, tcp: 12, firstByte: 90, download: 38 } },
      { ...base, checkType: 'BROWSER', webVitals: { TTFB: 80, FCP: 300, LCP: null, CLS: 0.01, TBT: 5, consoleErrors: 1 }, browserCheckResult: { x: 1 } },
      { ...base, checkType: 'ICMP', packetLoss: 0, latencyMin: 1, latencyMax: 9, latencyAvg: 4, latencyStdDev: null, hopCount: 7 },
      { ...base, timings: null, webVitals: { unknownVital: 3 }, daysUntilExpiry: 30, handshakeTimeMs: 12, grpcStatusCode: 0, responseTime: null },
    ];
    for (const item of items) {
      expect(toRow('a', 'r', item as unknown as ResultItem, 'd'), JSON.stringify(item)).toEqual(expectedRow('a', 'r', item, 'd'));
    }
  });
});
