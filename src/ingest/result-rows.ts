import { DETAIL_COLUMN, METRIC_COLUMNS, RESULT_DETAIL_KEYS, type ResultRow, ROW_COLUMNS } from '../model/results.js';
import { fromClickHouseTime, isoToClickHouseTime } from '../model/time.js';
import type { ResultItem } from './schemas.js';

/**
 * A result item as a positional row of ROW_COLUMNS: compact to queue and quick to insert. `detail` is the detail
 * column's text when the caller made it already (the ingest route measures it), else it is made here.
 */
export function toRow(accountId: string, id: string, item: ResultItem, detail = detailOf(item)): ResultRow {
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
  row.push(detail);
  return row;
}

/** The run's per-type result objects as one JSON text ('' without any). */
function detailOf(item: ResultItem): string {
  let detail: Record<string, unknown> | undefined;
  for (const key of RESULT_DETAIL_KEYS) {
    const value = (item as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) (detail ??= {})[key] = value;
  }
  return detail ? JSON.stringify(detail) : '';
}

/** Columns the read path selects (`toItem` reads them by name): every stored column but the account and the detail. */
export const READ_COLUMNS = ROW_COLUMNS.filter((c) => c !== 'account_id' && c !== DETAIL_COLUMN);

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
  if (typeof row[DETAIL_COLUMN] === 'string' && row[DETAIL_COLUMN]) {
    try {
      Object.assign(item, JSON.parse(row[DETAIL_COLUMN] as string));
    } catch {
      // a detail that does not parse is left out, never guessed at
    }
  }
  for (const [group, field, column] of METRIC_COLUMNS) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    if (group) item[group] = { ...((item[group] as object) ?? {}), [field]: Number(value) };
    else item[field] = Number(value);
  }
  return item;
}
