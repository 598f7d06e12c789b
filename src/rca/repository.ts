import { UUID } from '../http/ids.js';
import { toClickHouseTime } from '../model/time.js';
import type { Store } from '../storage/clickhouse/store.js';
import type { Sql } from '../storage/postgres.js';
import type { Analysis } from './explain.js';

/** Root-cause analyses (sql/postgres/0022_root_cause_analyses.sql) and the reads that gather their evidence. */

export interface RcaRow {
  id: string;
  account_id: string;
  error_group_id: string | null;
  test_session_error_group_id: string | null;
  check_id: string | null;
  check_type: string;
  status: 'PENDING' | 'COMPLETED';
  user_context: string;
  analysis: Analysis | null;
  provider: string;
  model: string;
  duration_ms: number;
  created_at: Date;
  completed_at: Date | null;
}

export async function insertRca(
  sql: Sql,
  r: {
    accountId: string;
    errorGroupId?: string;
    testSessionErrorGroupId?: string;
    checkId: string | null;
    checkType: string;
    userContext: string;
    provider: string;
    model: string;
  },
): Promise<RcaRow> {
  const [row] = await sql<RcaRow[]>`insert into root_cause_analyses
      (account_id, error_group_id, test_session_error_group_id, check_id, check_type, user_context, provider, model)
    values (${r.accountId}, ${r.errorGroupId ?? null}, ${r.testSessionErrorGroupId ?? null}, ${r.checkId}, ${r.checkType}, ${r.userContext}, ${r.provider}, ${r.model})
    returning *`;
  return row!;
}

export async function completeRca(sql: Sql, id: string, analysis: Analysis, durationMs: number, madeBy?: { provider: string; model: string }): Promise<void> {
  await sql`update root_cause_analyses set status = 'COMPLETED', analysis = ${sql.json(analysis as never)}, duration_ms = ${durationMs}, completed_at = now(),
      provider = coalesce(${madeBy?.provider ?? null}, provider), model = coalesce(${madeBy?.model ?? null}, model)
    where id = ${id} and status = 'PENDING'`;
}

export async function findRca(sql: Sql, accountId: string, id: string): Promise<RcaRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [row] = await sql<RcaRow[]>`select * from root_cause_analyses where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** The newest completed analyses of these groups (check or test-session error groups): at most `perGroup` each, newest first. */
export async function rcasOfGroups(sql: Sql, accountId: string, groupIds: readonly string[], perGroup = 5): Promise<RcaRow[]> {
  if (!groupIds.length) return [];
  return sql<RcaRow[]>`select * from (
      select *, row_number() over (partition by coalesce(error_group_id, test_session_error_group_id) order by created_at desc, id) as nth
      from root_cause_analyses where account_id = ${accountId} and status = 'COMPLETED'
        and (error_group_id = any(${groupIds as string[]}::uuid[]) or test_session_error_group_id = any(${groupIds as string[]}::uuid[]))
    ) ranked where nth <= ${perGroup}
    order by created_at desc, id`;
}

/** Analyses left PENDING (a job lost with Redis): asked again at start. */
export async function pendingRcas(sql: Sql, olderThanSeconds: number): Promise<{ id: string; account_id: string }[]> {
  return sql`select id, account_id from root_cause_analyses where status = 'PENDING' and created_at < now() - ${`${olderThanSeconds} seconds`}::interval limit 100`;
}

// Evidence reads.

export async function checksOfAccount(sql: Sql, accountId: string) {
  return sql<{ id: string; name: string; check_type: string; tags: string[]; data: { request?: Record<string, unknown>; privateLocations?: string[] } }[]>`
    select id, name, check_type, tags, data from checks where account_id = ${accountId}`;
}

export async function maintenanceWindowsOf(sql: Sql, accountId: string) {
  return sql<{ id: number; data: Record<string, unknown> }[]>`select id, data from maintenance_windows where account_id = ${accountId}`;
}

/** Writes to the check, and deploys, between two times (what the audit log recorded as done). */
export async function changesBefore(sql: Sql, accountId: string, checkId: string, from: Date, to: Date) {
  return sql<{ at: Date; operation: string; actor_name: string | null; status: number }[]>`
    select at, operation, actor_name, status from audit_log
    where account_id = ${accountId} and at >= ${from} and at < ${to} and status < 400 and method <> 'GET'
      and (resource_id = ${checkId} or operation in ('deployProject', 'deployProjectSync'))
    order by at desc limit 10`;
}

export async function privateLocationsBySlug(sql: Sql, accountId: string, slugs: readonly string[]) {
  if (!slugs.length) return [];
  return sql<
    { id: string; slug_name: string }[]
  >`select id, slug_name from private_locations where account_id = ${accountId} and slug_name = any(${slugs as string[]})`;
}

const EVIDENCE = { purpose: 'report' } as const;

/** Runs and failed runs per location of a check between two times. */
export async function runsByLocation(store: Store, accountId: string, checkId: string, from: number, to: number) {
  return store.query<{ location: string; runs: string | number; failed: string | number }>(
    `SELECT run_location AS location, count() AS runs, countIf(has_failures) AS failed FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id = {checkId:UUID} AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at <= {to:DateTime64(3, 'UTC')}
     GROUP BY run_location ORDER BY run_location`,
    { accountId, checkId, from: toClickHouseTime(from), to: toClickHouseTime(to) },
    EVIDENCE,
  );
}

/** One location's runs in order (at most 200, the newest), to tell steady failures from flapping. */
export async function runSequence(store: Store, accountId: string, checkId: string, location: string, from: number, to: number) {
  const rows = await store.query<{ at: string; failed: boolean | number }>(
    `SELECT toString(toUnixTimestamp64Milli(started_at)) AS at, has_failures AS failed FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id = {checkId:UUID} AND run_location = {location:String}
       AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at <= {to:DateTime64(3, 'UTC')}
     ORDER BY started_at DESC LIMIT 200`,
    { accountId, checkId, location, from: toClickHouseTime(from), to: toClickHouseTime(to) },
    EVIDENCE,
  );
  return rows.reverse().map((r) => ({ at: new Date(Number(r.at)).toISOString(), failed: Boolean(Number(r.failed)) }));
}

/** Runs and failures of some checks between two times. */
export async function runsOfChecks(store: Store, accountId: string, checkIds: readonly string[], from: number, to: number) {
  if (!checkIds.length) return [];
  return store.query<{ checkId: string; runs: string | number; failed: string | number }>(
    `SELECT toString(check_id) AS checkId, count() AS runs, countIf(has_failures) AS failed FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)} AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at <= {to:DateTime64(3, 'UTC')}
     GROUP BY check_id`,
    { accountId, checkIds: [...checkIds], from: toClickHouseTime(from), to: toClickHouseTime(to) },
    EVIDENCE,
  );
}

/** Other checks whose error groups have the same (cleaned) error, seen since a time. */
export async function sameErrorElsewhere(store: Store, accountId: string, checkId: string, errorHash: string, since: number) {
  return store.query<{ checkId: string; occurrences: string | number }>(
    `SELECT toString(check_id) AS checkId, sum(occurrences) AS occurrences FROM check_error_groups
     WHERE account_id = {accountId:UUID} AND error_hash = {errorHash:String} AND check_id != {checkId:UUID}
     GROUP BY check_id HAVING max(last_seen) >= {since:DateTime64(3, 'UTC')}`,
    { accountId, checkId, errorHash, since: toClickHouseTime(since) },
    EVIDENCE,
  );
}
