import { toClickHouseTime } from '../model/time.js';
import type { Store } from '../storage/clickhouse/store.js';

/** Runs of a heartbeat check in a window: how many, and how many passed (pings; misses and /fail pings fail). */
export async function heartbeatCounts(store: Store, accountId: string, checkId: string, from: number, to: number): Promise<{ total: number; passed: number }> {
  const [row] = await store.query<{ total: number; passed: number }>(
    `SELECT count() AS total, countIf(NOT has_failures) AS passed FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id = {checkId:UUID}
       AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}`,
    { accountId, checkId, from: toClickHouseTime(from), to: toClickHouseTime(to) },
    { purpose: 'results' },
  );
  return { total: Number(row?.total ?? 0), passed: Number(row?.passed ?? 0) };
}

export interface HeartbeatEvent {
  id: string;
  failed: boolean;
  at: number;
}

/** The newest runs of a heartbeat check in a window (or the one with `id`). */
export async function heartbeatEvents(
  store: Store,
  accountId: string,
  checkId: string,
  opts: { from: number; to: number; limit: number; id?: string },
): Promise<HeartbeatEvent[]> {
  const rows = await store.query<{ id: string; failed: boolean; at: number }>(
    `SELECT toString(result_id) AS id, has_failures AS failed, toUnixTimestamp64Milli(started_at) AS at FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id = {checkId:UUID}
       AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}
       ${opts.id ? 'AND result_id = {id:UUID}' : ''}
     ORDER BY started_at DESC LIMIT {limit:UInt32}`,
    { accountId, checkId, from: toClickHouseTime(opts.from), to: toClickHouseTime(opts.to), limit: opts.limit, ...(opts.id ? { id: opts.id } : {}) },
    { purpose: 'results' },
  );
  return rows.map((r) => ({ id: r.id, failed: Boolean(r.failed), at: Number(r.at) }));
}
