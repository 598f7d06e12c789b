import { transaction, type Sql } from '../storage/postgres.js';
import { compareRuns, type Run } from './runs.js';

interface LocationRun {
  duration: number;
  at: number;
}

/** A check's current status as the worker keeps it (a row of check_statuses). */
export interface Status {
  checkId: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  lastRunLocation: string;
  lastCheckRunId: string;
  lastRunAt: number;
  latestByLocation: Record<string, LocationRun>;
  sslDaysRemaining: number | null;
}

export interface StatusRow {
  check_id: string;
  name: string;
  has_failures: boolean;
  has_errors: boolean;
  is_degraded: boolean;
  last_run_location: string;
  last_check_run_id: string;
  last_run_at: Date;
  latest_by_location: Record<string, LocationRun>;
  ssl_days_remaining: number | null;
  created_at: Date;
  updated_at: Date | null;
}

function fromRow(row: StatusRow): Status {
  return {
    checkId: row.check_id,
    hasFailures: row.has_failures,
    hasErrors: row.has_errors,
    isDegraded: row.is_degraded,
    lastRunLocation: row.last_run_location,
    lastCheckRunId: row.last_check_run_id,
    lastRunAt: row.last_run_at.getTime(),
    latestByLocation: row.latest_by_location,
    sslDaysRemaining: row.ssl_days_remaining,
  };
}

/** True when `run` comes after the last run the status applied. */
export function isNewer(status: Status | undefined, run: Run): boolean {
  return !status || compareRuns(run, { startedAt: status.lastRunAt, resultId: status.lastCheckRunId }) > 0;
}

/** The status after one run: the run's outcome, and its length as the latest of its location. */
export function applyRun(status: Status | undefined, run: Run): Status {
  return {
    checkId: run.checkId,
    hasFailures: run.hasFailures,
    hasErrors: run.hasErrors,
    isDegraded: run.isDegraded,
    lastRunLocation: run.location,
    lastCheckRunId: run.resultId,
    lastRunAt: run.startedAt,
    latestByLocation: { ...status?.latestByLocation, [run.location]: { duration: run.durationMs, at: run.startedAt } },
    sslDaysRemaining: run.sslDaysUntilExpiry ?? status?.sslDaysRemaining ?? null,
  };
}

/** Runs grouped by check, each group in apply order. */
export function runsByCheck(runs: readonly Run[]): Map<string, Run[]> {
  const out = new Map<string, Run[]>();
  for (const run of runs) {
    const list = out.get(run.checkId);
    if (list) list.push(run);
    else out.set(run.checkId, [run]);
  }
  for (const list of out.values()) list.sort(compareRuns);
  return out;
}

/**
 * Applies a landed batch to the statuses of its checks, in one transaction. The checks' rows are locked in
 * id order, so two workers applying batches of the same check take turns and never deadlock; runs not newer
 * than a status's last run are skipped, so a batch applied again (a retried job) changes nothing.
 */
export async function applyBatch(sql: Sql, accountId: string, runs: readonly Run[]): Promise<number> {
  const grouped = runsByCheck(runs);
  if (!grouped.size) return 0;
  return transaction(sql, async (tx) => {
    const ids = [...grouped.keys()].sort();
    const rows = await tx<(StatusRow & { id: string })[]>`select c.id, c.name, s.*
      from checks c left join check_statuses s on s.check_id = c.id
      where c.account_id = ${accountId} and c.id = any(${ids}::uuid[])
      order by c.id for no key update of c`;
    const changed: Status[] = [];
    for (const row of rows) {
      let status = row.check_id ? fromRow(row) : undefined;
      let moved = false;
      for (const run of grouped.get(row.id) ?? []) {
        if (!isNewer(status, run)) continue;
        status = applyRun(status, run);
        moved = true;
      }
      if (moved && status) changed.push(status);
    }
    if (changed.length) await saveStatuses(tx, accountId, changed);
    return changed.length;
  });
}

async function saveStatuses(tx: Sql, accountId: string, statuses: Status[]): Promise<void> {
  const rows = statuses.map((s) => ({
    check_id: s.checkId,
    account_id: accountId,
    has_failures: s.hasFailures,
    has_errors: s.hasErrors,
    is_degraded: s.isDegraded,
    last_run_location: s.lastRunLocation,
    last_check_run_id: s.lastCheckRunId,
    last_run_at: new Date(s.lastRunAt),
    latest_by_location: tx.json(s.latestByLocation as never),
    ssl_days_remaining: s.sslDaysRemaining,
  }));
  await tx`insert into check_statuses ${tx(rows)}
    on conflict (check_id) do update set
      has_failures = excluded.has_failures, has_errors = excluded.has_errors, is_degraded = excluded.is_degraded,
      last_run_location = excluded.last_run_location, last_check_run_id = excluded.last_check_run_id,
      last_run_at = excluded.last_run_at, latest_by_location = excluded.latest_by_location,
      ssl_days_remaining = excluded.ssl_days_remaining, updated_at = now()`;
}

/** The statuses of an account's checks (optionally some), with the check's name, in check creation order. */
export async function readStatuses(sql: Sql, accountId: string, checkIds?: string[]): Promise<StatusRow[]> {
  return sql<StatusRow[]>`select s.*, c.name from check_statuses s join checks c on c.id = s.check_id
    where s.account_id = ${accountId} ${checkIds ? sql`and s.check_id = any(${checkIds}::uuid[])` : sql``}
    order by c.created_at, c.id`;
}

/** The anchor's check-status shape. */
export function toCheckStatus(row: StatusRow) {
  const durations = Object.values(row.latest_by_location).map((r) => r.duration);
  return {
    name: row.name,
    checkId: row.check_id,
    hasFailures: row.has_failures,
    hasErrors: row.has_errors,
    isDegraded: row.is_degraded,
    longestRun: durations.length ? Math.max(...durations) : null,
    shortestRun: durations.length ? Math.min(...durations) : null,
    lastRunLocation: row.last_run_location,
    lastCheckRunId: row.last_check_run_id,
    sslDaysRemaining: row.ssl_days_remaining,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at ? row.updated_at.toISOString() : null,
  };
}
