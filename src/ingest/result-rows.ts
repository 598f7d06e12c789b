import { DETAIL_COLUMN, METRIC_COLUMNS, RESULT_DETAIL_KEYS, type ResultRow, ROW_COLUMNS } from '../model/results.js';
import { fromClickHouseTime, isoToClickHouseTime } from '../model/time.js';
import type { ResultItem } from './schemas.js';

/**
 * A result item as a positional row of ROW_COLUMNS: compact to queue and quick to insert. `detail` is the detail
 * column's text when the caller made it already (the ingest route measures it), else it is made here.
 */
export function toRow(accountId: string, id: string, item: ResultItem, detail = detailOf(item)): ResultRow {
  // Made at its full length and filled: grown by push from a literal, a row was copied twice on the way, most of a
  // batch's garbage (bench/README.md, "Ingest: where the main thread's time goes").
  const row: ResultRow = new Array<string | number | boolean | null>(ROW_LENGTH).fill(null);
  row[0] = accountId;
  row[1] = item.checkId;
  row[2] = item.checkType;
  row[3] = id;
  row[4] = isoToClickHouseTime(item.startedAt);
  row[5] = isoToClickHouseTime(item.stoppedAt);
  row[6] = item.runLocation;
  row[7] = item.hasFailures;
  row[8] = item.hasErrors;
  row[9] = item.isDegraded;
  row[10] = item.aborted;
  row[11] = item.attempts;
  // The metrics the item has, found from its own keys (a dozen) rather than by asking it for each of the ~30
  // metric columns, most of which it lacks: 250 against 400 ns a row.
  const fields = item as unknown as Record<string, unknown>;
  for (const key in fields) {
    const at = TOP_METRIC.get(key);
    if (at !== undefined) {
      const value = fields[key];
      if (value !== undefined) row[at] = value as number | null;
      continue;
    }
    const group = GROUP_METRICS.get(key);
    const values = group && (fields[key] as Record<string, unknown> | null | undefined);
    if (!group || !values) continue;
    for (const field in values) {
      const inGroup = group.get(field);
      if (inGroup !== undefined && values[field] !== undefined) row[inGroup] = values[field] as number | null;
    }
  }
  row[ROW_LENGTH - 1] = detail;
  return row;
}

const FIRST_METRIC = 12;
const ROW_LENGTH = FIRST_METRIC + METRIC_COLUMNS.length + 1;
if (ROW_COLUMNS.length !== ROW_LENGTH || ROW_COLUMNS[FIRST_METRIC - 1] !== 'attempts' || ROW_COLUMNS[ROW_LENGTH - 1] !== DETAIL_COLUMN) {
  throw new Error('toRow no longer matches ROW_COLUMNS');
}
/** Where each metric goes in a row: a field of the item itself, or of one of its groups (timings, webVitals). */
const TOP_METRIC = new Map<string, number>();
const GROUP_METRICS = new Map<string, Map<string, number>>();
METRIC_COLUMNS.forEach(([group, field], m) => {
  if (!group) TOP_METRIC.set(field, FIRST_METRIC + m);
  else {
    const fields = GROUP_METRICS.get(group) ?? new Map<string, number>();
    fields.set(field, FIRST_METRIC + m);
    GROUP_METRICS.set(group, fields);
  }
});

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
