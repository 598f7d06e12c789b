import type { RunSource } from '../run-kernel/index.js';
import { type Sql, transaction } from '../storage/postgres.js';

/**
 * Check sessions: on-demand runs of a check (the anchor's `POST /v2/check-sessions/trigger`, trigger URLs,
 * deployment triggers). A session waits for one final result per run location; it is PASSED, DEGRADED or FAILED
 * once all are in, CANCELLED when cancelled first, TIMED_OUT when its time runs out first (a location without a
 * runner shows this way, never as a session that stays open for good).
 */

export const TERMINAL = ['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED'] as const;
export type SessionStatus = 'STARTED' | 'PROGRESS' | 'PROGRESS_FAILED' | 'PROGRESS_DEGRADED' | (typeof TERMINAL)[number];

/** One final result of a session, as its routes show it. */
export interface SessionResult {
  checkResultId: string;
  runLocation: string;
  resultType: 'FINAL';
  hasErrors: boolean;
  hasFailures: boolean;
  isDegraded: boolean;
  aborted: boolean;
  responseTime: number | null;
  startedAt: string;
  stoppedAt: string;
  attempts: number;
  error?: string;
}

export interface SessionRow {
  id: string;
  account_id: string;
  check_id: string;
  check_type: string;
  name: string;
  status: SessionStatus;
  run_source: RunSource;
  run_locations: string[];
  results: SessionResult[];
  started_at: Date;
  stopped_at: Date | null;
  timeout_at: Date;
}

export const isTerminal = (s: string) => (TERMINAL as readonly string[]).includes(s);

/** Starts one session per check; each runs in its locations (all with runParallel, else its first). */
export async function createSessions(
  db: Sql,
  accountId: string,
  checks: readonly { id: string; name: string; checkType: string; locations: string[] }[],
  source: RunSource,
  timeoutMs: number,
): Promise<SessionRow[]> {
  if (!checks.length) return [];
  const timeoutAt = new Date(Date.now() + timeoutMs);
  return db<SessionRow[]>`insert into check_sessions (account_id, check_id, check_type, name, status, run_source, run_locations, timeout_at)
    select ${accountId}, x.check_id, x.check_type, x.name, 'STARTED', ${source}, string_to_array(x.locations, ','), ${timeoutAt}
    from unnest(${checks.map((c) => c.id)}::uuid[], ${checks.map((c) => c.checkType)}::text[], ${checks.map((c) => c.name)}::text[],
      ${checks.map((c) => c.locations.join(','))}::text[]) as x(check_id, check_type, name, locations)
    returning *`;
}

/** A session's status from its results so far. */
function statusOf(results: readonly SessionResult[], expected: number): SessionStatus {
  const failed = results.some((r) => r.hasFailures || r.hasErrors);
  const degraded = results.some((r) => r.isDegraded);
  if (results.length >= expected) return failed ? 'FAILED' : degraded ? 'DEGRADED' : 'PASSED';
  return failed ? 'PROGRESS_FAILED' : degraded ? 'PROGRESS_DEGRADED' : 'PROGRESS';
}

/** Adds a location's final result; the session ends when every location has one. A session already ended keeps its state. */
export async function recordSessionResult(sql: Sql, sessionId: string, result: SessionResult): Promise<void> {
  await transaction(sql, async (tx) => {
    const [row] = await tx<SessionRow[]>`select * from check_sessions where id = ${sessionId} for update`;
    if (!row || isTerminal(row.status)) return;
    if (row.results.some((r) => r.runLocation === result.runLocation)) return;
    const results = [...row.results, result];
    const status = statusOf(results, row.run_locations.length);
    await tx`update check_sessions set results = ${tx.json(results as never)}, status = ${status},
      stopped_at = ${isTerminal(status) ? new Date() : null} where id = ${sessionId}`;
  });
}

/** Sessions whose time ran out, ended as TIMED_OUT (checked when one is read, and by the sweep). */
export async function expireSessions(sql: Sql, accountId?: string): Promise<number> {
  const rows = accountId
    ? await sql`update check_sessions set status = 'TIMED_OUT', stopped_at = timeout_at
        where stopped_at is null and timeout_at <= now() and account_id = ${accountId} returning id`
    : await sql`update check_sessions set status = 'TIMED_OUT', stopped_at = timeout_at where stopped_at is null and timeout_at <= now() returning id`;
  return rows.length;
}

export async function findSession(sql: Sql, accountId: string, id: string): Promise<SessionRow | undefined> {
  await expireSessions(sql, accountId);
  const [row] = await sql<SessionRow[]>`select * from check_sessions where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** The session's status (whatever the account), for a runner deciding whether to go on. */
export async function sessionStatus(sql: Sql, id: string): Promise<SessionStatus | undefined> {
  const [row] = await sql<{ status: SessionStatus }[]>`select status from check_sessions where id = ${id}`;
  return row?.status;
}

/** Cancels a session still running; false when the account has no such session. */
export async function cancelSession(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const [row] = await sql<{ id: string }[]>`select id from check_sessions where id = ${id} and account_id = ${accountId}`;
  if (!row) return false;
  await sql`update check_sessions set status = 'CANCELLED', stopped_at = now() where id = ${id} and stopped_at is null`;
  return true;
}
