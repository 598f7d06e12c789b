import { effectiveSettings } from '../checks/index.js';
import type { CheckType } from '../model/checks.js';
import { groupBy } from '../model/collections.js';
import { maintenanceEffect, type WindowData } from '../model/maintenance.js';
import type { Run } from '../model/runs.js';
import { insertSlices, type Sql, transaction } from '../storage/postgres.js';
import { type AlertMemory, type AlertSettings, FRESH, normaliseSettings, type Outcome, onRun, onTick } from './alerting.js';
import { type CheckIncidentHooks, type Raised, type RaisedAlert, raiseAlerts, type StateEvent } from './records.js';
import { applyRun, fromRow, isNewer, runsByCheck, type Status, type StatusRow } from './statuses.js';

/** A check as its state is evaluated: group settings applied, effective alert settings resolved. */
export interface CheckContext {
  id: string;
  name: string;
  checkType: CheckType;
  activated: boolean;
  muted: boolean;
  shouldFail: boolean;
  runParallel: boolean;
  tags: string[];
  groupId: number | null;
  data: Record<string, unknown>;
  settings: AlertSettings;
  triggerIncident: RaisedAlert['check']['triggerIncident'];
}

/** The account's alert settings and maintenance windows: what every check of a batch is evaluated against. */
export interface AccountContext {
  accountSettings: unknown;
  windows: WindowData[];
}

/** Where an account's context comes from: Postgres each time (accountContext), or kept between batches (AccountContextCache). */
export type ContextOf = (db: Sql, accountId: string) => Promise<AccountContext>;

/** The account's alert settings and maintenance windows, read from Postgres. */
export async function accountContext(db: Sql, accountId: string): Promise<AccountContext> {
  const [[account], windows] = await Promise.all([
    db<{ alert_settings: unknown }[]>`select alert_settings from accounts where id = ${accountId}`,
    db<{ data: WindowData }[]>`select data from maintenance_windows where account_id = ${accountId}`,
  ]);
  return { accountSettings: account?.alert_settings, windows: windows.map((w) => w.data) };
}

/**
 * What a check's definition holds that its state never reads, and may be long (a browser check's script, an API
 * check's request with its assertions and headers): left in Postgres when ingest applies a batch, which reads up to
 * a thousand checks at a time (bench/README.md, "Ingest: where the main thread's time goes").
 */
const RUN_ONLY_FIELDS = ['request', 'script', 'localSetupScript', 'localTearDownScript', 'environmentVariables', 'dependencies', 'playwrightConfig'];

/** A check's context for judging its runs' state (no definition: nothing there is read beyond these fields). */
export type StateCheck = Omit<CheckContext, 'data'>;

/** A check as its definition and group make it, without the settings that follow the account's (`own` is its own settings). */
export interface CheckBasis {
  check: Omit<StateCheck, 'settings'>;
  own: AlertSettings | undefined;
}

interface CheckRow {
  id: string;
  check_name: string;
  check_type: CheckType;
  activated: boolean;
  muted: boolean;
  tags: string[];
  group_id: number | null;
  data: Record<string, unknown>;
}

interface CheckRowWithStatus extends Omit<Partial<StatusRow>, keyof CheckRow>, CheckRow {}

/** The check's basis from its row and its definition with its group's settings applied. */
function basisOf(row: CheckRow, data: Record<string, unknown>): CheckBasis {
  return {
    check: {
      id: row.id,
      name: row.check_name,
      checkType: row.check_type,
      activated: data.activated !== false,
      muted: data.muted === true,
      shouldFail: data.shouldFail === true,
      runParallel: data.runParallel === true,
      tags: (data.tags as string[] | undefined) ?? [],
      groupId: row.group_id,
      triggerIncident: (data.triggerIncident as CheckContext['triggerIncident']) ?? null,
    },
    own: data.useGlobalAlertSettings !== false ? undefined : normaliseSettings(data.alertSettings),
  };
}

/**
 * The checks with their statuses, locked in id order (two workers applying batches of the same check take
 * turns, and never deadlock), each with its group's settings applied; `without` names fields of their definitions
 * left unread.
 */
export async function lockChecks(
  db: Sql,
  accountId: string,
  ids: string[],
  accountSettings: unknown,
  without: readonly string[] = [],
): Promise<{ check: CheckContext; row: CheckRowWithStatus }[]> {
  if (!ids.length) return [];
  const rows = await db<CheckRowWithStatus[]>`select c.id, c.name as check_name, c.check_type, c.activated, c.muted, c.tags, c.group_id,
      c.data - ${without as string[]}::text[] as data, s.*
    from checks c left join check_statuses s on s.check_id = c.id
    where c.account_id = ${accountId} and c.id = any(${[...ids].sort()}::uuid[])
    order by c.id for no key update of c`;
  const settings = normaliseSettings(accountSettings);
  return (await effectiveSettings(db, accountId, rows)).map(({ row, data }) => {
    const { check, own } = basisOf(row, data);
    return { row, check: { ...check, data, settings: own ?? settings } };
  });
}

/** The bases of the account's checks among `ids` (ids of no check of the account are absent), read from Postgres. */
export async function readBases(db: Sql, accountId: string, ids: readonly string[]): Promise<Map<string, CheckBasis>> {
  const rows = await db<CheckRow[]>`select c.id, c.name as check_name, c.check_type, c.activated, c.muted, c.tags, c.group_id,
      c.data - ${RUN_ONLY_FIELDS}::text[] as data
    from checks c where c.account_id = ${accountId} and c.id = any(${ids as string[]}::uuid[])`;
  const out = new Map<string, CheckBasis>();
  for (const { row, data } of await effectiveSettings(db, accountId, rows)) out.set(row.id, basisOf(row, data));
  return out;
}

/** Where a batch's checks' bases come from: Postgres each time, or kept between batches (CheckBasisCache). */
export type BasesOf = (db: Sql, accountId: string, ids: readonly string[]) => Promise<Map<string, CheckBasis>>;

/**
 * The statuses of the checks among `ids`, the checks locked in id order (as lockChecks), each with its basis (from
 * `bases`) and the account's settings where it follows them. A check deleted meanwhile is left out.
 */
async function lockStatuses(
  db: Sql,
  accountId: string,
  ids: string[],
  accountSettings: unknown,
  bases: BasesOf,
): Promise<{ check: StateCheck; row: Partial<StatusRow> }[]> {
  if (!ids.length) return [];
  const rows = await db<(Partial<StatusRow> & { id: string })[]>`select c.id, s.*
    from checks c left join check_statuses s on s.check_id = c.id
    where c.account_id = ${accountId} and c.id = any(${[...ids].sort()}::uuid[])
    order by c.id for no key update of c`;
  const kept = await bases(
    db,
    accountId,
    rows.map((r) => r.id),
  );
  // One settings object for every check that follows the account's: nothing changes them.
  const settings = normaliseSettings(accountSettings);
  const out: { check: StateCheck; row: Partial<StatusRow> }[] = [];
  for (const row of rows) {
    const basis = kept.get(row.id);
    if (basis) out.push({ row, check: { ...basis.check, settings: basis.own ?? settings } });
  }
  return out;
}

export function memoryOf(row: Partial<StatusRow>): AlertMemory {
  if (!row.check_id) return FRESH;
  return {
    state: row.alert_state ?? 'PASSING',
    failureStreak: row.failure_streak ?? 0,
    degradedStreak: row.degraded_streak ?? 0,
    failingSince: row.failing_since ? row.failing_since.getTime() : null,
    remindersSent: row.reminders_sent ?? 0,
    nextReminderAt: row.next_reminder_at ? row.next_reminder_at.getTime() : null,
  };
}

/**
 * What one run means for alerting: with shouldFail a run that failed passes and one that passed fails; with
 * parallel runs and a parallel failure threshold the check fails only when at least that share of its
 * locations' latest runs failed.
 */
function outcomeOf(run: Run, failed: boolean, check: StateCheck, status: Status): Outcome {
  const threshold = check.settings.parallelRunFailureThreshold;
  if (check.runParallel && threshold.enabled) {
    const latest = Object.values(status.latestByLocation);
    const share = (100 * latest.filter((r) => r.failed).length) / Math.max(1, latest.length);
    if (share >= threshold.percentage) return 'fail';
  } else if (failed) {
    return 'fail';
  }
  return run.isDegraded ? 'degraded' : 'pass';
}

export async function saveStates(tx: Sql, accountId: string, states: { status: Status; memory: AlertMemory }[]): Promise<void> {
  if (!states.length) return;
  const rows = states.map(({ status: s, memory: m }) => ({
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
    alert_state: m.state,
    failure_streak: m.failureStreak,
    degraded_streak: m.degradedStreak,
    failing_since: m.failingSince === null ? null : new Date(m.failingSince),
    reminders_sent: m.remindersSent,
    next_reminder_at: m.nextReminderAt === null ? null : new Date(m.nextReminderAt),
  }));
  for (const slice of insertSlices(rows)) {
    await tx`insert into check_statuses ${tx(slice)}
    on conflict (check_id) do update set
      has_failures = excluded.has_failures, has_errors = excluded.has_errors, is_degraded = excluded.is_degraded,
      last_run_location = excluded.last_run_location, last_check_run_id = excluded.last_check_run_id,
      last_run_at = excluded.last_run_at, latest_by_location = excluded.latest_by_location,
      ssl_days_remaining = excluded.ssl_days_remaining, alert_state = excluded.alert_state,
      failure_streak = excluded.failure_streak, degraded_streak = excluded.degraded_streak,
      failing_since = excluded.failing_since, reminders_sent = excluded.reminders_sent,
      next_reminder_at = excluded.next_reminder_at, updated_at = now()`;
  }
}

export const alertCheck = (check: StateCheck): RaisedAlert['check'] => ({
  id: check.id,
  name: check.name,
  groupId: check.groupId,
  muted: check.muted,
  triggerIncident: check.triggerIncident,
});

/**
 * Applies a landed batch to its checks, in one transaction: each check's status follows its runs in order
 * (a run not newer than the last applied one is skipped, so a retried batch changes nothing), and its alert
 * state moves per its effective alert settings, raising alerts (silenced while a maintenance window says
 * so). Returns the notifications to deliver once the transaction has committed.
 */
export async function applyBatch(
  sql: Sql,
  accountId: string,
  runs: readonly Run[],
  hooks: CheckIncidentHooks,
  now = Date.now(),
  bases: BasesOf = readBases,
  contextOf: ContextOf = accountContext,
): Promise<{ statuses: number } & Raised> {
  const grouped = runsByCheck(runs);
  if (!grouped.size) return { statuses: 0, notifications: [], events: [] };
  return transaction(sql, async (tx) => {
    const { accountSettings, windows } = await contextOf(tx, accountId);
    const checks = await lockStatuses(tx, accountId, [...grouped.keys()], accountSettings, bases);
    const changed: { status: Status; memory: AlertMemory }[] = [];
    const alerts: RaisedAlert[] = [];
    for (const { check, row } of checks) {
      let status = row.check_id ? fromRow(row as StatusRow) : undefined;
      let memory = memoryOf(row);
      let moved = false;
      for (const run of grouped.get(check.id) ?? []) {
        if (!isNewer(status, run)) continue;
        const failed = (run.hasFailures || run.hasErrors) !== check.shouldFail;
        status = applyRun(status, run, failed);
        const step = onRun(memory, outcomeOf(run, failed, check, status), run.startedAt, check.settings, now);
        memory = step.memory;
        moved = true;
        if (step.alert) {
          const { silenced } = maintenanceEffect(windows, check.tags, run.startedAt);
          alerts.push({ check: alertCheck(check), type: step.alert, run, at: run.startedAt, silenced });
        }
      }
      if (moved && status) changed.push({ status, memory });
    }
    await saveStates(tx, accountId, changed);
    return { statuses: changed.length, ...(await raiseAlerts(tx, accountId, alerts, hooks)) };
  });
}

/**
 * Time passing: reminders that fell due and TIME_BASED stretches that reached their threshold, for up to
 * `limit` checks. Rows are taken with SKIP LOCKED, so several sweepers share the work and none does a
 * check twice.
 */
export async function tickStates(sql: Sql, now: number, hooks: CheckIncidentHooks, limit = 200): Promise<Raised> {
  return transaction(sql, async (tx) => {
    const due = await tx<{ check_id: string; account_id: string }[]>`select check_id, account_id from check_statuses
      where next_reminder_at <= ${new Date(now)} or (alert_state = 'PASSING' and failing_since is not null)
      order by check_id limit ${limit} for update skip locked`;
    const byAccount = groupBy(
      due,
      (d) => d.account_id,
      (d) => d.check_id,
    );
    const notifications: string[] = [];
    const events: StateEvent[] = [];
    for (const [accountId, ids] of byAccount) {
      const { accountSettings, windows } = await accountContext(tx, accountId);
      const changed: { status: Status; memory: AlertMemory }[] = [];
      const alerts: RaisedAlert[] = [];
      for (const { check, row } of await lockChecks(tx, accountId, ids, accountSettings, RUN_ONLY_FIELDS)) {
        if (!row.check_id) continue;
        const step = onTick(memoryOf(row), now, check.settings);
        const before = memoryOf(row);
        if (JSON.stringify(step.memory) === JSON.stringify(before)) continue;
        changed.push({ status: fromRow(row as StatusRow), memory: step.memory });
        if (step.alert) alerts.push({ check: alertCheck(check), type: step.alert, at: now, silenced: maintenanceEffect(windows, check.tags, now).silenced });
      }
      await saveStates(tx, accountId, changed);
      const raised = await raiseAlerts(tx, accountId, alerts, hooks);
      notifications.push(...raised.notifications);
      events.push(...raised.events);
    }
    return { notifications, events };
  });
}

/**
 * The runs of a batch whose check a maintenance window paused when they started: they land flagged
 * `in_maintenance`. One cheap query when the account has no windows.
 */
export async function pausedRunIds(sql: Sql, accountId: string, runs: readonly Run[], contextOf: ContextOf = accountContext): Promise<Set<string>> {
  const { windows } = await contextOf(sql, accountId);
  const out = new Set<string>();
  if (!windows.some((w) => w.pauseAllChecks) || !runs.length) return out;
  const ids = [...new Set(runs.map((r) => r.checkId))];
  const rows = await sql<{ id: string; tags: string[]; group_tags: string[] | null }[]>`select c.id, c.tags, g.data->'tags' as group_tags
    from checks c left join check_groups g on g.id = c.group_id
    where c.account_id = ${accountId} and c.id = any(${ids}::uuid[])`;
  const tags = new Map(rows.map((r) => [r.id, [...r.tags, ...(r.group_tags ?? [])]]));
  for (const run of runs) if (maintenanceEffect(windows, tags.get(run.checkId) ?? [], run.startedAt).paused) out.add(run.resultId);
  return out;
}
