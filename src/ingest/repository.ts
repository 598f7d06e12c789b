import type { Store } from '../storage/clickhouse/store.js';
import { toClickHouseTime } from '../storage/clickhouse/time.js';
import { READ_COLUMNS, toItem } from './rows.js';

export interface ResultFilter {
  accountId: string;
  checkId: string;
  /** Half-open window in epoch ms; either bound may be open. */
  from?: number;
  to?: number;
  hasFailures?: boolean;
  location?: string;
}

/**
 * One page of a check's raw runs, newest first, and how many match. Each optional filter adds fixed SQL
 * text; its value travels only as a parameter.
 */
export async function readResults(store: Store, filter: ResultFilter, limit: number, offset: number) {
  const where = [
    'account_id = {accountId:UUID}',
    'check_id = {checkId:UUID}',
    ...(filter.from !== undefined ? ["started_at >= {from:DateTime64(3, 'UTC')}"] : []),
    ...(filter.to !== undefined ? ["started_at < {to:DateTime64(3, 'UTC')}"] : []),
    ...(filter.hasFailures !== undefined ? ['has_failures = {hasFailures:Bool}'] : []),
    ...(filter.location !== undefined ? ['run_location = {location:String}'] : []),
  ].join(' AND ');
  const params = {
    accountId: filter.accountId,
    checkId: filter.checkId,
    ...(filter.from !== undefined ? { from: toClickHouseTime(filter.from) } : {}),
    ...(filter.to !== undefined ? { to: toClickHouseTime(filter.to) } : {}),
    ...(filter.hasFailures !== undefined ? { hasFailures: filter.hasFailures } : {}),
    ...(filter.location !== undefined ? { location: filter.location } : {}),
    limit,
    offset,
  };
  const [rows, [{ total }]] = await Promise.all([
    store.query(
      `SELECT ${READ_COLUMNS.join(', ')} FROM check_results WHERE ${where}
       ORDER BY started_at DESC, result_id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      params,
    ),
    store.query<{ total: number }>(`SELECT count() AS total FROM check_results WHERE ${where}`, params),
  ]);
  return { items: rows.map(toItem), total: Number(total) };
}
