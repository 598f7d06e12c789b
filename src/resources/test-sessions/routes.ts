import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { conflict, notFound } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/cursor.js';
import { UUID } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Rules } from '../../http/rules.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { parseWindow } from '../../http/time.js';
import { transaction, type Sql } from '../../storage/postgres.js';
import { checkTypesOf } from '../checks/repository.js';
import type { CheckType } from '../checks/enums.js';
import { iso, uniqueViolation } from '../common.js';
import {
  CancelBody,
  CreateSession,
  ListQuery,
  Metadata,
  Result,
  ResultInput,
  RunBody,
  SessionEntry,
  TestSession,
  type SessionState,
} from './schemas.js';

/** RUNNING is the only state with a way out; the three end states are final. */
const TRANSITIONS: Record<SessionState, readonly SessionState[]> = {
  RUNNING: ['PASSED', 'FAILED', 'CANCELLED'],
  PASSED: [],
  FAILED: [],
  CANCELLED: [],
};

const ResultDetail = Type.Object({
  ...Result.properties,
  id: Type.String({ format: 'uuid', description: 'The testSessionResultId' }),
  isCancelled: Type.Boolean(),
  overMaxResponseTime: Type.Boolean({ description: "responseTime above the check's maxResponseTime (false when either is unknown)" }),
  attempts: Type.Integer(),
  traceId: Type.Null(),
  created_at: Type.String({ format: 'date-time' }),
});

const SessionParams = Type.Object({ testSessionId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

type StoredResult = Omit<Static<typeof ResultInput>, 'testSessionResultId'> & { checkType: CheckType };

interface SessionRow {
  id: string;
  account_id: string;
  name: string;
  status: SessionState;
  metadata: { link?: string; metadata?: Static<typeof Metadata> } | null;
  started_at: Date;
  stopped_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}

/** A result's status as the anchor reports it. */
function resultStatus(r: { aborted: boolean; hasFailures: boolean; hasErrors: boolean }): SessionState {
  return r.aborted ? 'CANCELLED' : r.hasFailures || r.hasErrors ? 'FAILED' : 'PASSED';
}

export function testSessionRoutes({ sql, config }: Deps): AnyRoute[] {
  const tag = 'Test sessions';
  const sessionUrl = (id: string) => `${config.publicUrl ?? ''}/v1/test-sessions/${id}`;

  function toResult(sessionId: string, id: string, data: StoredResult): Static<typeof Result> {
    return {
      testSessionResultId: id,
      testSessionResultLink: data.testSessionResultLink ?? `${sessionUrl(sessionId)}/results/${id}`,
      errorGroupIds: data.errorGroupIds,
      hasErrors: data.hasErrors,
      hasFailures: data.hasFailures,
      isDegraded: data.isDegraded,
      aborted: data.aborted,
      checkId: data.checkId,
      checkType: data.checkType,
      name: data.name,
      runLocation: data.runLocation,
      resultType: 'FINAL',
      status: resultStatus(data),
      responseTime: data.responseTime ?? null,
      startedAt: data.startedAt ?? null,
      stoppedAt: data.stoppedAt ?? null,
    };
  }

  function toSession(row: SessionRow, results: Static<typeof Result>[]) {
    const stopped = row.stopped_at;
    const data = row.metadata ?? {};
    return {
      testSessionId: row.id,
      testSessionLink: data.link ?? sessionUrl(row.id),
      name: row.name,
      status: row.status,
      errorGroupIds: [...new Set(results.flatMap((r) => r.errorGroupIds))],
      startedAt: iso(row.started_at),
      timeElapsed: (stopped ?? new Date()).getTime() - row.started_at.getTime(),
      stoppedAt: iso(stopped),
      ...(data.metadata ? { metadata: data.metadata } : {}),
      results,
    };
  }

  function toEntry(row: SessionRow, results: Static<typeof Result>[]): Static<typeof SessionEntry> {
    const meta = row.metadata?.metadata ?? {};
    const ids = (status: SessionState) => results.filter((r) => (status === 'RUNNING' ? false : r.status === status)).map((r) => r.testSessionResultId);
    return {
      id: row.id,
      accountId: row.account_id,
      projectId: null,
      name: row.name,
      provider: 'API',
      errorGroupIds: [...new Set(results.flatMap((r) => r.errorGroupIds))],
      running: ids('RUNNING'),
      passed: ids('PASSED'),
      failed: ids('FAILED'),
      cancelled: ids('CANCELLED'),
      status: row.status,
      region: results[0]?.runLocation ?? '',
      privateLocationId: null,
      invoker: null,
      repoUrl: meta.repoUrl ?? null,
      commitId: meta.commitId ?? null,
      commitOwner: meta.commitOwner ?? null,
      commitMessage: meta.commitMessage ?? null,
      branchName: meta.branchName ?? null,
      environment: meta.environment ?? null,
      startedAt: iso(row.started_at),
      stoppedAt: iso(row.stopped_at),
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  }

  async function loadResults(db: Sql, sessionIds: string[]): Promise<Map<string, Static<typeof Result>[]>> {
    const byId = new Map<string, Static<typeof Result>[]>(sessionIds.map((id) => [id, []]));
    if (!sessionIds.length) return byId;
    const rows = await db<{ test_session_id: string; id: string; data: StoredResult }[]>`select test_session_id, id, data
      from test_session_results where test_session_id = any(${sessionIds}::uuid[]) order by test_session_id, position`;
    for (const r of rows) byId.get(r.test_session_id)!.push(toResult(r.test_session_id, r.id, r.data));
    return byId;
  }

  /** Results with their check's type: from the account's check, else as sent; a result with neither is a 400. */
  async function insertResults(db: Sql, accountId: string, sessionId: string, results: Static<typeof ResultInput>[], at: string): Promise<void> {
    if (!results.length) return;
    const types = await checkTypesOf(db, accountId, results.map((r) => r.checkId));
    const rules = new Rules();
    const stored = results.map(({ testSessionResultId, ...data }, i) => {
      const checkType = types.get(data.checkId.toLowerCase()) ?? data.checkType;
      rules.check(checkType !== undefined, `${at}[${i}].checkType`, 'required', "is required when checkId names no check of this account");
      return { id: testSessionResultId ?? randomUUID(), data: { ...data, checkType } as StoredResult };
    });
    rules.throwIfAny();
    const [{ next }] = await db<{ next: number }[]>`select coalesce(max(position), -1) + 1 as next from test_session_results
      where test_session_id = ${sessionId}`;
    const rows = stored.map(({ id, data }, i) => ({ id, test_session_id: sessionId, position: next + i, data: db.json(data as never) }));
    try {
      await db`insert into test_session_results ${db(rows, 'id', 'test_session_id', 'position', 'data')}`;
    } catch (err) {
      if (uniqueViolation(err) !== undefined) throw conflict('A result with this testSessionResultId already exists');
      throw err;
    }
  }

  async function lockSession(tx: Sql, accountId: string, id: string) {
    const [row] = await tx<SessionRow[]>`select * from test_sessions where id = ${id} and account_id = ${accountId} for update`;
    if (!row) throw notFound();
    return row;
  }

  async function read(tx: Sql, accountId: string, id: string) {
    const [row] = await tx<SessionRow[]>`select * from test_sessions where id = ${id} and account_id = ${accountId}`;
    if (!row) throw notFound();
    return toSession(row, (await loadResults(tx, [id])).get(id)!);
  }

  /** Moves a RUNNING session to an end state; any other move is a 409 that changes nothing. */
  async function transition(accountId: string, id: string, to: SessionState) {
    return transaction(sql, async (db) => {
      const row = await lockSession(db, accountId, id);
      const from = row.status;
      if (!TRANSITIONS[from].includes(to)) {
        throw conflict(`A ${from} test session cannot become ${to}`, { status: from });
      }
      await db`update test_sessions set status = ${to}, stopped_at = now(), updated_at = now() where id = ${id}`;
      return read(db, accountId, id);
    });
  }

  async function create(db: Sql, accountId: string, body: Static<typeof CreateSession>): Promise<string> {
    const extra = { link: body.testSessionLink, metadata: body.metadata };
    const [row] = await db<{ id: string }[]>`insert into test_sessions (account_id, name, status, metadata)
      values (${accountId}, ${body.name}, 'RUNNING', ${db.json(extra as never)}) returning id`;
    await insertResults(db, accountId, row.id, body.results ?? [], 'body.results');
    return row.id;
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions',
      operationId: 'listTestSessions',
      summary: 'List test sessions, newest first, by cursor',
      description: "The anchor API's shape: `{length, entries, nextId}`; pass nextId back for the next page (null: no more).",
      tag,
      access: 'read',
      schema: {
        query: ListQuery,
        responses: { 200: Type.Object({ length: Type.Integer(), entries: Type.Array(SessionEntry), nextId: Nullable(Type.String()) }, { additionalProperties: false }) },
      },
      handler: async ({ principal, query }) => {
        const { from, to } = parseWindow(query);
        const cursor = query.nextId === undefined ? undefined : decodeCursor(query.nextId);
        const meta = (field: string) => sql`metadata->'metadata'->>${field}`;
        const like = query.textSearch === undefined ? undefined : `%${query.textSearch.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        const users = query.users?.length
          ? sql`and (${meta('commitOwner')} = any(${query.users}::text[]) ${query.noUsers ? sql`or ${meta('commitOwner')} is null` : sql``})`
          : sql``;
        const rows = await sql<SessionRow[]>`select * from test_sessions
          where account_id = ${principal.account.id}
            ${from !== undefined ? sql`and started_at >= ${new Date(from)}` : sql``}
            ${to !== undefined ? sql`and started_at < ${new Date(to)}` : sql``}
            ${query.statuses?.length ? sql`and status = any(${query.statuses}::text[])` : sql``}
            ${query.branches?.length ? sql`and ${meta('branchName')} = any(${query.branches}::text[])` : sql``}
            ${users}
            ${query.providers?.length && !query.providers.includes('API') ? sql`and false` : sql``}
            ${like ? sql`and (name ilike ${like} or ${meta('branchName')} ilike ${like} or ${meta('commitMessage')} ilike ${like} or ${meta('commitOwner')} ilike ${like})` : sql``}
            ${query.errorGroupId ? sql`and exists (select 1 from test_session_results r where r.test_session_id = test_sessions.id
                and r.data->'errorGroupIds' ? ${query.errorGroupId.toLowerCase()})` : sql``}
            ${cursor ? sql`and (started_at, id) < (${new Date(cursor.at)}, ${cursor.id}::uuid)` : sql``}
          order by started_at desc, id desc limit ${query.limit + 1}`;
        const page = rows.slice(0, query.limit);
        const results = await loadResults(sql, page.map((r) => r.id));
        const last = page[page.length - 1];
        const nextId = rows.length > query.limit && last ? encodeCursor({ at: last.started_at.getTime(), id: last.id }) : null;
        return { status: 200, body: { length: page.length, entries: page.map((r) => toEntry(r, results.get(r.id)!)), nextId } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/test-sessions',
      operationId: 'createTestSession',
      summary: 'Start a test session (RUNNING)',
      tag,
      access: 'write',
      errors: [409],
      schema: { body: CreateSession, responses: { 201: TestSession } },
      handler: async ({ principal, body }) => ({
        status: 201,
        body: await transaction(sql, async (db) => read(db, principal.account.id, await create(db, principal.account.id, body))),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/test-sessions/run',
      operationId: 'runTestSession',
      summary: 'Request a run of the checks a client sends (the anchor CLI\'s `checkly test`)',
      description:
        'Records a run request holding the checks as sent, for runners to execute, and (with shouldRecord) a RUNNING test ' +
        'session they report results to (POST /v1/test-sessions/{id}/results, then finish). This service runs no checks itself.',
      tag,
      access: 'write',
      schema: {
        body: RunBody,
        responses: {
          202: Type.Object(
            {
              schedulingId: Type.String({ description: 'The run request' }),
              testSessionId: Type.Optional(Type.String({ format: 'uuid' })),
              testResultIds: Type.Record(Type.String(), Type.String()),
              sequenceIds: Type.Record(Type.String(), Type.String()),
            },
            { additionalProperties: false },
          ),
        },
      },
      handler: async ({ principal, body }) =>
        transaction(sql, async (db) => {
          const accountId = principal.account.id;
          const repo = (body.repoInfo ?? {}) as Record<string, unknown>;
          const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
          const sessionId = body.shouldRecord
            ? await create(db, accountId, {
                name: body.name,
                metadata: {
                  ...(body.environment ? { environment: body.environment } : {}),
                  repoUrl: text(repo.repoUrl) ?? null,
                  commitId: text(repo.commitId) ?? null,
                  commitOwner: text(repo.commitOwner) ?? null,
                  commitMessage: text(repo.commitMessage) ?? null,
                  branchName: text(repo.branchName) ?? null,
                },
              })
            : null;
          const [request] = await db<{ id: number }[]>`insert into run_requests (account_id, test_session_id, source, payload)
            values (${accountId}, ${sessionId}, 'TEST_SESSION', ${db.json(body as never)}) returning id`;
          return {
            status: 202,
            body: { schedulingId: String(request.id), ...(sessionId ? { testSessionId: sessionId } : {}), testResultIds: {}, sequenceIds: {} },
          };
        }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions/{testSessionId}',
      operationId: 'getTestSession',
      summary: 'Retrieve a test session',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: SessionParams, responses: { 200: TestSession } },
      handler: async ({ principal, params }) => ({ status: 200, body: await read(sql, principal.account.id, params.testSessionId) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions/{testSessionId}/results/{testSessionResultId}',
      operationId: 'getTestSessionResult',
      summary: 'Retrieve one result of a test session',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ testSessionId: Type.String({ format: 'uuid' }), testSessionResultId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        responses: { 200: ResultDetail },
      },
      handler: async ({ principal, params }) => {
        if (!UUID.test(params.testSessionResultId)) throw notFound();
        const [row] = await sql<{ id: string; data: StoredResult; created_at: Date }[]>`select r.id, r.data, r.created_at from test_session_results r
          join test_sessions s on s.id = r.test_session_id
          where r.id = ${params.testSessionResultId} and s.id = ${params.testSessionId} and s.account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        const result = toResult(params.testSessionId, row.id, row.data);
        const [check] = await sql<{ max: unknown }[]>`select data->'maxResponseTime' as max from checks
          where id = ${result.checkId} and account_id = ${principal.account.id}`;
        const max = check?.max;
        // The anchor answers this route with a check result: its fields beside the session result's own.
        return {
          status: 200,
          body: {
            ...result,
            id: row.id,
            isCancelled: result.aborted,
            overMaxResponseTime: typeof max === 'number' && result.responseTime !== null && result.responseTime > max,
            attempts: 1,
            traceId: null,
            created_at: iso(row.created_at),
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/test-sessions/{testSessionId}/results',
      operationId: 'addTestSessionResults',
      summary: 'Add results to a running test session',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: {
        params: SessionParams,
        body: Type.Object({ results: Type.Array(ResultInput, { minItems: 1, maxItems: 1000 }) }, { additionalProperties: false }),
        responses: { 200: TestSession },
      },
      handler: async ({ principal, params, body }) => {
        const session = await transaction(sql, async (db) => {
          const row = await lockSession(db, principal.account.id, params.testSessionId);
          if (row.status !== 'RUNNING') throw conflict(`A ${row.status} test session takes no more results`, { status: row.status });
          await insertResults(db, principal.account.id, params.testSessionId, body.results, 'body.results');
          await db`update test_sessions set updated_at = now() where id = ${params.testSessionId}`;
          return read(db, principal.account.id, params.testSessionId);
        });
        return { status: 200, body: session };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/test-sessions/{testSessionId}/finish',
      operationId: 'finishTestSession',
      summary: 'Finish a running test session as PASSED or FAILED',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: {
        params: SessionParams,
        body: Type.Object({ status: StringEnum(['PASSED', 'FAILED'] as const) }, { additionalProperties: false }),
        responses: { 200: TestSession },
      },
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: await transition(principal.account.id, params.testSessionId, body.status),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/test-sessions/{testSessionId}/cancel',
      operationId: 'cancelTestSession',
      summary: 'Cancel a running test session (204, as the anchor answers)',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: SessionParams, body: CancelBody, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        await transition(principal.account.id, params.testSessionId, 'CANCELLED');
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/test-sessions/{testSessionId}',
      operationId: 'deleteTestSession',
      summary: 'Delete a test session and its results',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: SessionParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const rows = await sql`delete from test_sessions where id = ${params.testSessionId}
          and account_id = ${principal.account.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
