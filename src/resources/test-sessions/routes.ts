import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { conflict, notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { transaction, type Sql } from '../../storage/postgres.js';
import { iso, listAccountRows, uniqueViolation } from '../common.js';

export const SESSION_STATES = ['RUNNING', 'FAILED', 'PASSED', 'CANCELLED'] as const;
type SessionState = (typeof SESSION_STATES)[number];

/** RUNNING is the only state with a way out; the three end states are final. */
const TRANSITIONS: Record<SessionState, readonly SessionState[]> = {
  RUNNING: ['PASSED', 'FAILED', 'CANCELLED'],
  PASSED: [],
  FAILED: [],
  CANCELLED: [],
};

const Uuid = Type.String({ format: 'uuid' });
const Text = Type.String({ maxLength: 2048 });

const Metadata = Type.Object(
  {
    environment: Type.Optional(Text),
    repoUrl: Type.Optional(Text),
    commitId: Type.Optional(Text),
    commitOwner: Type.Optional(Text),
    commitMessage: Type.Optional(Type.String({ maxLength: 10000 })),
    branchName: Type.Optional(Text),
  },
  { additionalProperties: false },
);

const ResultInput = Type.Object(
  {
    testSessionResultId: Type.Optional(Uuid),
    testSessionResultLink: Type.Optional(Text),
    errorGroupIds: Type.Array(Uuid, { maxItems: 1000, default: [] }),
    hasErrors: Type.Boolean({ default: false }),
    hasFailures: Type.Boolean({ default: false }),
    isDegraded: Type.Boolean({ default: false }),
    aborted: Type.Boolean({ default: false }),
    checkId: Uuid,
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    runLocation: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);

const Result = Type.Object({
  testSessionResultId: Uuid,
  testSessionResultLink: Type.Optional(Type.String()),
  errorGroupIds: Type.Array(Uuid),
  hasErrors: Type.Boolean(),
  hasFailures: Type.Boolean(),
  isDegraded: Type.Boolean(),
  aborted: Type.Boolean(),
  checkId: Uuid,
  name: Type.String(),
  runLocation: Type.String(),
});

const TestSession = Type.Object({
  testSessionId: Uuid,
  testSessionLink: Type.Optional(Type.String()),
  name: Type.String(),
  status: StringEnum(SESSION_STATES),
  errorGroupIds: Type.Array(Uuid, { description: 'Error groups seen in the results of the session' }),
  startedAt: Type.String({ format: 'date-time' }),
  timeElapsed: Type.Number({ description: 'Milliseconds from startedAt to stoppedAt, or to now while running' }),
  stoppedAt: Nullable(Type.String({ format: 'date-time' })),
  metadata: Type.Optional(Metadata),
  results: Type.Optional(Type.Array(Result)),
});

const CreateSession = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    testSessionLink: Type.Optional(Text),
    metadata: Type.Optional(Metadata),
    results: Type.Optional(Type.Array(ResultInput, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

const SessionParams = Type.Object({ testSessionId: Uuid }, { additionalProperties: false });

type ResultData = Static<typeof Result>;

interface SessionRow {
  id: string;
  name: string;
  status: SessionState;
  metadata: { link?: string; metadata?: Static<typeof Metadata> } | null;
  started_at: Date;
  stopped_at: Date | null;
}

function toSession(row: SessionRow, results: ResultData[]) {
  const started = row.started_at;
  const stopped = row.stopped_at;
  const errorGroupIds = [...new Set(results.flatMap((r) => r.errorGroupIds))];
  const data = row.metadata ?? {};
  return {
    testSessionId: row.id,
    ...(data.link ? { testSessionLink: data.link } : {}),
    name: row.name,
    status: row.status,
    errorGroupIds,
    startedAt: iso(started),
    timeElapsed: (stopped ?? new Date()).getTime() - started.getTime(),
    stoppedAt: iso(stopped),
    ...(data.metadata ? { metadata: data.metadata } : {}),
    results,
  };
}

async function loadResults(sql: Sql, sessionIds: string[]): Promise<Map<string, ResultData[]>> {
  const byId = new Map<string, ResultData[]>(sessionIds.map((id) => [id, []]));
  if (!sessionIds.length) return byId;
  const rows = await sql<{ test_session_id: string; id: string; data: ResultData }[]>`select test_session_id, id, data
    from test_session_results where test_session_id = any(${sessionIds}::uuid[]) order by test_session_id, position`;
  for (const r of rows) byId.get(r.test_session_id)!.push({ ...r.data, testSessionResultId: r.id });
  return byId;
}

async function insertResults(sql: Sql, sessionId: string, results: Static<typeof ResultInput>[]): Promise<void> {
  if (!results.length) return;
  const [{ next }] = await sql<{ next: number }[]>`select coalesce(max(position), -1) + 1 as next from test_session_results
    where test_session_id = ${sessionId}`;
  const rows = results.map(({ testSessionResultId, ...data }, i) => ({
    id: testSessionResultId ?? randomUUID(),
    test_session_id: sessionId,
    position: next + i,
    data: sql.json(data as never),
  }));
  try {
    await sql`insert into test_session_results ${sql(rows, 'id', 'test_session_id', 'position', 'data')}`;
  } catch (err) {
    if (uniqueViolation(err) !== undefined) throw conflict('A result with this testSessionResultId already exists');
    throw err;
  }
}

export function testSessionRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Test sessions';

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

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions',
      operationId: 'listTestSessions',
      summary: 'List test sessions, newest first',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(TestSession) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<SessionRow>(sql, 'test_sessions', principal.account.id, query);
        const results = await loadResults(sql, rows.map((r) => r.id));
        return listReply(rows.map((r) => toSession(r, results.get(r.id)!)), total, query);
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
      handler: async ({ principal, body }) => {
        const session = await transaction(sql, async (db) => {
          const extra = { link: body.testSessionLink, metadata: body.metadata };
          const [row] = await db<{ id: string }[]>`insert into test_sessions (account_id, name, status, metadata)
            values (${principal.account.id}, ${body.name}, 'RUNNING', ${sql.json(extra as never)}) returning id`;
          await insertResults(db, row.id, body.results ?? []);
          return read(db, principal.account.id, row.id);
        });
        return { status: 201, body: session };
      },
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
          await insertResults(db, params.testSessionId, body.results);
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
      summary: 'Cancel a running test session',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: SessionParams, responses: { 200: TestSession } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: await transition(principal.account.id, params.testSessionId, 'CANCELLED'),
      }),
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
