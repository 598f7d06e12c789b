import type { Static } from '@sinclair/typebox';
import { conflict, notFound } from '../http/errors.js';
import type { CheckType } from '../model/checks.js';
import { uniqueViolation } from '../storage/account-rows.js';
import type { Sql } from '../storage/postgres.js';
import type { ListQuery, Metadata, ResultInput, SessionState } from './schemas.js';

/** A result as stored: what the client sent, with its check's type resolved. */
export type StoredResult = Omit<Static<typeof ResultInput>, 'testSessionResultId'> & {
  checkType: CheckType;
  /** Announced, not ended yet (a Playwright reporter's result before its last call). */
  pending?: boolean;
  /** The reporter's test errors, as text. */
  errors?: string[];
};

export type SessionProvider = 'API' | 'TRIGGER' | 'PW_REPORTER';

export interface SessionRow {
  id: string;
  account_id: string;
  name: string;
  provider: SessionProvider;
  status: SessionState;
  metadata: { link?: string; metadata?: Static<typeof Metadata> } | null;
  started_at: Date;
  stopped_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}

export interface ResultRow {
  test_session_id: string;
  id: string;
  data: StoredResult;
  assets?: unknown;
  created_at: Date;
}

export interface SessionFilter extends Omit<Static<typeof ListQuery>, 'from' | 'to' | 'nextId' | 'quickRange'> {
  from?: number;
  to?: number;
  cursor?: { at: number; id: string };
}

/** One page of an account's sessions, newest first, filtered as the list route allows; one row more than `limit` says there is a next page. */
export async function listSessions(sql: Sql, accountId: string, f: SessionFilter): Promise<SessionRow[]> {
  const meta = (field: string) => sql`metadata->'metadata'->>${field}`;
  const like = f.textSearch === undefined ? undefined : `%${f.textSearch.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const users = f.users?.length
    ? sql`and (${meta('commitOwner')} = any(${f.users}::text[]) ${f.noUsers ? sql`or ${meta('commitOwner')} is null` : sql``})`
    : sql``;
  return sql<SessionRow[]>`select * from test_sessions
    where account_id = ${accountId}
      ${f.from !== undefined ? sql`and started_at >= ${new Date(f.from)}` : sql``}
      ${f.to !== undefined ? sql`and started_at < ${new Date(f.to)}` : sql``}
      ${f.statuses?.length ? sql`and status = any(${f.statuses}::text[])` : sql``}
      ${f.branches?.length ? sql`and ${meta('branchName')} = any(${f.branches}::text[])` : sql``}
      ${users}
      ${f.providers?.length ? sql`and provider = any(${f.providers}::text[])` : sql``}
      ${like ? sql`and (name ilike ${like} or ${meta('branchName')} ilike ${like} or ${meta('commitMessage')} ilike ${like} or ${meta('commitOwner')} ilike ${like})` : sql``}
      ${
        f.errorGroupId
          ? sql`and exists (select 1 from test_session_results r where r.test_session_id = test_sessions.id
          and r.data->'errorGroupIds' ? ${f.errorGroupId.toLowerCase()})`
          : sql``
      }
      ${f.cursor ? sql`and (started_at, id) < (${new Date(f.cursor.at)}, ${f.cursor.id}::uuid)` : sql``}
    order by started_at desc, id desc limit ${f.limit + 1}`;
}

/** The results of each session, in the order they were added. */
export async function resultRows(db: Sql, sessionIds: readonly string[]): Promise<ResultRow[]> {
  if (!sessionIds.length) return [];
  return db<ResultRow[]>`select test_session_id, id, data, created_at
    from test_session_results where test_session_id = any(${sessionIds}::uuid[]) order by test_session_id, position`;
}

/** Appends results after the session's last one; a result id used before is a 409. */
export async function appendResults(db: Sql, sessionId: string, results: readonly { id: string; data: StoredResult }[]): Promise<void> {
  if (!results.length) return;
  const [{ next }] = await db<{ next: number }[]>`select coalesce(max(position), -1) + 1 as next from test_session_results
    where test_session_id = ${sessionId}`;
  const rows = results.map(({ id, data }, i) => ({ id, test_session_id: sessionId, position: next + i, data: db.json(data as never) }));
  try {
    await db`insert into test_session_results ${db(rows, 'id', 'test_session_id', 'position', 'data')}`;
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw conflict('A result with this testSessionResultId already exists');
    throw err;
  }
}

/** The account's session (404 otherwise), locked for update when `lock`. */
export async function findSession(db: Sql, accountId: string, id: string, lock = false): Promise<SessionRow> {
  const [row] = lock
    ? await db<SessionRow[]>`select * from test_sessions where id = ${id} and account_id = ${accountId} for update`
    : await db<SessionRow[]>`select * from test_sessions where id = ${id} and account_id = ${accountId}`;
  if (!row) throw notFound();
  return row;
}

export async function insertSession(
  db: Sql,
  accountId: string,
  name: string,
  metadata: SessionRow['metadata'],
  provider: SessionProvider = 'API',
): Promise<string> {
  const [row] = await db<{ id: string }[]>`insert into test_sessions (account_id, name, status, metadata, provider)
    values (${accountId}, ${name}, 'RUNNING', ${db.json(metadata as never)}, ${provider}) returning id`;
  return row.id;
}

/** A result the session already has, by id (ad-hoc results and the reporter's are announced before they arrive). */
export async function upsertResult(db: Sql, sessionId: string, id: string, data: StoredResult, assets?: unknown): Promise<void> {
  const [{ next }] = await db<{ next: number }[]>`select coalesce(max(position), -1) + 1 as next from test_session_results
    where test_session_id = ${sessionId}`;
  await db`insert into test_session_results (id, test_session_id, position, data, assets)
    values (${id}, ${sessionId}, ${next}, ${db.json(data as never)}, ${assets === undefined ? null : db.json(assets as never)})
    on conflict (id) do update set data = excluded.data, assets = coalesce(excluded.assets, test_session_results.assets)
    where test_session_results.test_session_id = ${sessionId}`;
}

/** Sets the reporter's uploaded zip of a result (inserting the result row if the session has none yet). */
export async function setResultAssets(db: Sql, sessionId: string, id: string, assets: unknown): Promise<void> {
  await db`update test_session_results set assets = ${db.json(assets as never)} where id = ${id} and test_session_id = ${sessionId}`;
}

/** Ends a session (sets its status and stop time). */
export async function endSession(db: Sql, id: string, status: SessionState): Promise<void> {
  await db`update test_sessions set status = ${status}, stopped_at = now(), updated_at = now() where id = ${id}`;
}

export async function touchSession(db: Sql, id: string): Promise<void> {
  await db`update test_sessions set updated_at = now() where id = ${id}`;
}

/** Deletes the account's session and its results; false when it names none. */
export async function deleteSession(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`delete from test_sessions where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}

/** One result of the account's session, or undefined. */
export async function findResult(db: Sql, accountId: string, sessionId: string, resultId: string): Promise<ResultRow | undefined> {
  const [row] = await db<ResultRow[]>`select r.test_session_id, r.id, r.data, r.assets, r.created_at from test_session_results r
    join test_sessions s on s.id = r.test_session_id
    where r.id = ${resultId} and s.id = ${sessionId} and s.account_id = ${accountId}`;
  return row;
}

/** The check's maxResponseTime as stored (any JSON value), when the account has the check. */
export async function maxResponseTimeOf(db: Sql, accountId: string, checkId: string): Promise<unknown> {
  const [check] = await db<{ max: unknown }[]>`select data->'maxResponseTime' as max from checks where id = ${checkId} and account_id = ${accountId}`;
  return check?.max;
}

/** The account's newest test-session results that say why they failed, with their session's metadata. */
export async function resultsWithErrors(db: Sql, accountId: string, limit: number) {
  return db<{ data: { errors?: unknown; runError?: unknown; hasFailures?: boolean; hasErrors?: boolean }; created_at: Date; metadata: unknown }[]>`
    select r.data, r.created_at, s.metadata
    from test_session_results r join test_sessions s on s.id = r.test_session_id
    where s.account_id = ${accountId} and (r.data ? 'errors' or r.data ? 'runError')
    order by r.created_at desc limit ${limit}`;
}

/** Whether the account has the project (test sessions are not tied to one: its error groups are none). */
export async function projectExists(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`select 1 from projects where account_id = ${accountId} and id = ${id}`;
  return rows.length > 0;
}
