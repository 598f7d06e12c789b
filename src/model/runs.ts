import { clickHouseTimeMs } from './time.js';

/** What check state needs of one landed run. */
export interface Run {
  checkId: string;
  resultId: string;
  /** Epoch ms. */
  startedAt: number;
  stoppedAt: number;
  location: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  /** The run's own measure of its length when it has one (responseTime), else stoppedAt − startedAt. */
  durationMs: number;
  statusCode: number | null;
  sslDaysUntilExpiry: number | null;
  /** Where else a run with this id may have started (a scheduled slot's span): what deduplication searches. */
  span?: [number, number];
}

/** Runs from positional rows of a queued batch, read by column name. */
export function runsOf(columns: readonly string[], rows: readonly unknown[][]): Run[] {
  const at = (name: string) => columns.indexOf(name);
  const i = {
    check: at('check_id'),
    id: at('result_id'),
    started: at('started_at'),
    stopped: at('stopped_at'),
    loc: at('run_location'),
    failed: at('has_failures'),
    errors: at('has_errors'),
    degraded: at('is_degraded'),
    rt: at('response_time'),
    ssl: at('ssl_days_until_expiry'),
    code: at('status_code'),
  };
  // A number JSON cannot carry (NaN, Infinity) reads as null, as it would from the batch's copy in Redis: a worker
  // reads the same runs whether its own process handed it the batch or Redis did.
  const num = (row: unknown[], index: number) => (index >= 0 && Number.isFinite(row[index]) ? (row[index] as number) : null);
  return rows.map((row) => {
    const startedAt = clickHouseTimeMs(row[i.started]);
    const stoppedAt = i.stopped >= 0 ? clickHouseTimeMs(row[i.stopped]) : startedAt;
    return {
      checkId: String(row[i.check]),
      resultId: String(row[i.id]),
      startedAt,
      stoppedAt,
      location: i.loc >= 0 ? String(row[i.loc]) : '',
      hasFailures: row[i.failed] === true,
      hasErrors: row[i.errors] === true,
      isDegraded: row[i.degraded] === true,
      durationMs: num(row, i.rt) ?? Math.max(0, stoppedAt - startedAt),
      statusCode: num(row, i.code),
      sslDaysUntilExpiry: num(row, i.ssl),
    };
  });
}

/** Runs in the order state applies them: by start time, then run id. */
export function compareRuns(a: { startedAt: number; resultId: string }, b: { startedAt: number; resultId: string }): number {
  return a.startedAt - b.startedAt || (a.resultId < b.resultId ? -1 : a.resultId > b.resultId ? 1 : 0);
}
