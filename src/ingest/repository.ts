import type { Cursor } from '../http/cursor.js';
import { DETAIL_COLUMN } from '../model/results.js';
import { fromClickHouseTime, toClickHouseTime } from '../model/time.js';
import type { Store } from '../storage/clickhouse/store.js';
import { READ_COLUMNS, toItem } from './result-rows.js';

export interface ResultFilter {
  accountId: string;
  checkId: string;
  /** Half-open window in epoch ms; either bound may be open. */
  from?: number;
  to?: number;
  hasFailures?: boolean;
  location?: string;
}

/** Every read orders runs the same way: newest first, ties by run id (descending), so cursors are stable. */
const ORDER = 'ORDER BY started_at DESC, result_id DESC';
const SELECT = `SELECT ${READ_COLUMNS.join(', ')}, inserted_at FROM check_results`;

/** Each optional filter adds fixed SQL text; its value travels only as a parameter. */
function whereOf(filter: ResultFilter, cursor?: Cursor) {
  const where = [
    'account_id = {accountId:UUID}',
    'check_id = {checkId:UUID}',
    ...(filter.from !== undefined ? ["started_at >= {from:DateTime64(3, 'UTC')}"] : []),
    ...(filter.to !== undefined ? ["started_at < {to:DateTime64(3, 'UTC')}"] : []),
    ...(filter.hasFailures !== undefined ? ['has_failures = {hasFailures:Bool}'] : []),
    ...(filter.location !== undefined ? ['run_location = {location:String}'] : []),
    ...(cursor ? ["(started_at < {cursorAt:DateTime64(3, 'UTC')} OR (started_at = {cursorAt:DateTime64(3, 'UTC')} AND result_id < {cursorId:UUID}))"] : []),
  ].join(' AND ');
  const params = {
    accountId: filter.accountId,
    checkId: filter.checkId,
    ...(filter.from !== undefined ? { from: toClickHouseTime(filter.from) } : {}),
    ...(filter.to !== undefined ? { to: toClickHouseTime(filter.to) } : {}),
    ...(filter.hasFailures !== undefined ? { hasFailures: filter.hasFailures } : {}),
    ...(filter.location !== undefined ? { location: filter.location } : {}),
    ...(cursor ? { cursorAt: toClickHouseTime(cursor.at), cursorId: cursor.id } : {}),
  };
  return { where, params };
}

export type StoredItem = ReturnType<typeof toItem> & { created_at: string };

function toStoredItem(row: Record<string, unknown>): StoredItem {
  return { ...toItem(row), created_at: fromClickHouseTime(row.inserted_at) };
}

const RESULTS = { purpose: 'results' } as const;

/** One page of a check's raw runs, newest first, and how many match. */
export async function readResults(store: Store, filter: ResultFilter, limit: number, offset: number) {
  const { where, params } = whereOf(filter);
  const [rows, [{ total }]] = await Promise.all([
    store.query(`${SELECT} WHERE ${where} ${ORDER} LIMIT {limit:UInt32} OFFSET {offset:UInt64}`, { ...params, limit, offset }, RESULTS),
    store.query<{ total: number }>(`SELECT count() AS total FROM check_results WHERE ${where}`, params, RESULTS),
  ]);
  return { items: rows.map(toStoredItem), total: Number(total) };
}

/** Up to `limit` runs after `cursor` (from the newest without one), and the cursor of the page after, if any. */
export async function readResultsAfter(store: Store, filter: ResultFilter, limit: number, cursor?: Cursor) {
  const { where, params } = whereOf(filter, cursor);
  const rows = await store.query(`${SELECT} WHERE ${where} ${ORDER} LIMIT {limit:UInt32}`, { ...params, limit: limit + 1 }, RESULTS);
  const items = rows.slice(0, limit).map(toStoredItem);
  const last = items[items.length - 1];
  const next: Cursor | undefined = rows.length > limit && last ? { at: Date.parse(last.startedAt as string), id: last.id as string } : undefined;
  return { items, next };
}

/** One run of a check by its id, with what it reported beyond its metrics (its per-type result objects). */
export async function readResult(store: Store, accountId: string, checkId: string, resultId: string): Promise<StoredItem | undefined> {
  const [row] = await store.query(
    `SELECT ${READ_COLUMNS.join(', ')}, ${DETAIL_COLUMN}, inserted_at FROM check_results WHERE account_id = {accountId:UUID} AND check_id = {checkId:UUID} AND result_id = {resultId:UUID} LIMIT 1`,
    { accountId, checkId, resultId },
    RESULTS,
  );
  return row ? toStoredItem(row) : undefined;
}
