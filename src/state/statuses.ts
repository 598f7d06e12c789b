import { compareRuns, type Run } from '../model/runs.js';
import type { Sql } from '../storage/postgres.js';

interface LocationRun {
  duration: number;
  at: number;
  /** The run counted as failing (after shouldFail). */
  failed?: boolean;
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
  alert_state: 'PASSING' | 'DEGRADED' | 'FAILING';
  failure_streak: number;
  degraded_streak: number;
  failing_since: Date | null;
  reminders_sent: number;
  next_reminder_at: Date | null;
  name: string;
  /** The check's own switch (not its group's). */
  activated: boolean;
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

export function fromRow(row: StatusRow): Status {
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

/** The status after one run: the run's outcome, and its length (and whether it failed) as the latest of its location. */
export function applyRun(status: Status | undefined, run: Run, failed: boolean): Status {
  return {
    checkId: run.checkId,
    hasFailures: run.hasFailures,
    hasErrors: run.hasErrors,
    isDegraded: run.isDegraded,
    lastRunLocation: run.location,
    lastCheckRunId: run.resultId,
    lastRunAt: run.startedAt,
    latestByLocation: { ...status?.latestByLocation, [run.location]: { duration: run.durationMs, at: run.startedAt, failed } },
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
  // Most checks have one run in a batch: no sort called for it.
  for (const list of out.values()) if (list.length > 1) list.sort(compareRuns);
  return out;
}

/** The statuses of an account's checks (optionally some), with the check's name, in check creation order. */
export async function readStatuses(sql: Sql, accountId: string, checkIds?: string[]): Promise<StatusRow[]> {
  return sql<StatusRow[]>`select s.*, c.name, c.activated from check_statuses s join checks c on c.id = s.check_id
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
