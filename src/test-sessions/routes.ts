import { Type } from '@sinclair/typebox';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { conflict, notFound } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { parseWindow } from '../http/time.js';
import { LivePublisher } from '../live/index.js';
import { RESULT_DETAIL_KEYS } from '../model/checks.js';
import { traceIdOfRun } from '../model/results.js';
import { iso } from '../model/time.js';
import { findAdhocRunOfResult } from '../runners/index.js';
import type { Deps } from '../storage/deps.js';
import { transaction } from '../storage/postgres.js';
import { type TestSessions, testSessions } from './lifecycle.js';
import { cancelRuns, liveRoutes } from './live.js';
import { reporterRoutes } from './reporter.js';
import { deleteSession, findResult, findSession, listSessions, maxResponseTimeOf, touchSession } from './repository.js';
import { CancelBody, CreateSession, ListQuery, Result, ResultInput, SessionEntry, TestSession } from './schemas.js';
import { trialRoutes } from './trials.js';

const tag = 'Test sessions';

const ResultDetail = Type.Object({
  ...Result.properties,
  id: Type.String({ format: 'uuid', description: 'The testSessionResultId' }),
  isCancelled: Type.Boolean(),
  overMaxResponseTime: Type.Boolean({ description: "responseTime above the check's maxResponseTime (false when either is unknown)" }),
  attempts: Type.Integer(),
  traceId: Nullable(Type.String({ description: 'The W3C trace id the run’s requests carried (docs/traces.md)' })),
  created_at: Type.String({ format: 'date-time' }),
  ...Object.fromEntries(
    RESULT_DETAIL_KEYS.map((k) => [
      k,
      Type.Optional(
        Type.Object(
          {},
          { additionalProperties: true, description: 'What the run saw, as a check result has it (a run this service made; none for a reported result)' },
        ),
      ),
    ]),
  ),
  errorMessage: Type.Optional(Nullable(Type.String({ description: 'Why the run failed, in a line' }))),
  logs: Type.Optional(Type.Array(Type.Object({ time: Type.Number(), msg: Type.String(), level: Type.String() }), { description: "A browser run's console" })),
});

const SessionParams = Type.Object({ testSessionId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export function testSessionRoutes(deps: Deps): AnyRoute[] {
  const sessions = testSessions(deps.sql, deps.config);
  // The live routes first: /v1/test-sessions/run and /trigger before /v1/test-sessions/{testSessionId}.
  return [...liveRoutes(deps, sessions), ...trialRoutes(deps), ...reporterRoutes(deps), ...readRoutes(deps, sessions), ...writeRoutes(deps, sessions)];
}

/** Listing and reading sessions and their results. */
function readRoutes({ sql }: Deps, { toResult, toEntry, loadResults, read }: TestSessions): AnyRoute[] {
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
        responses: {
          200: Type.Object({ length: Type.Integer(), entries: Type.Array(SessionEntry), nextId: Nullable(Type.String()) }, { additionalProperties: false }),
        },
      },
      handler: async ({ principal, query }) => {
        const { from, to } = parseWindow(query);
        const cursor = query.nextId === undefined ? undefined : decodeCursor(query.nextId);
        const rows = await listSessions(sql, principal.account.id, { ...query, from, to, cursor });
        const page = rows.slice(0, query.limit);
        const results = await loadResults(
          sql,
          page.map((r) => r.id),
        );
        const last = page[page.length - 1];
        const nextId = rows.length > query.limit && last ? encodeCursor({ at: last.started_at.getTime(), id: last.id }) : null;
        return { status: 200, body: { length: page.length, entries: page.map((r) => toEntry(r, results.get(r.id)!)), nextId } };
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
      method: 'GET',
      path: '/v1/test-sessions/{testSessionId}/results/{testSessionResultId}',
      operationId: 'getTestSessionResult',
      summary: 'Retrieve one result of a test session',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object(
          { testSessionId: Type.String({ format: 'uuid' }), testSessionResultId: Type.String({ minLength: 1, maxLength: 64 }) },
          { additionalProperties: false },
        ),
        responses: { 200: ResultDetail },
      },
      handler: async ({ principal, params }) => {
        if (!UUID.test(params.testSessionResultId)) throw notFound();
        const row = await findResult(sql, principal.account.id, params.testSessionId, params.testSessionResultId);
        if (!row) throw notFound();
        const result = toResult(params.testSessionId, row.id, row.data);
        const [max, run] = await Promise.all([
          maxResponseTimeOf(sql, principal.account.id, result.checkId),
          findAdhocRunOfResult(sql, principal.account.id, params.testSessionId, params.testSessionResultId),
        ]);
        // A run this service made (`checkly test --record`, `trigger --record`): what it saw, as `checkly test` printed it and more.
        const detail = run?.detail ?? {};
        const seen = Object.fromEntries(RESULT_DETAIL_KEYS.filter((k) => detail[k]).map((k) => [k, detail[k] as Record<string, unknown>]));
        // The anchor answers this route with a check result: its fields beside the session result's own.
        return {
          status: 200,
          body: {
            ...result,
            id: row.id,
            isCancelled: result.aborted,
            overMaxResponseTime: typeof max === 'number' && result.responseTime !== null && result.responseTime > max,
            attempts: run?.result?.attempts ?? 1,
            ...seen,
            ...(run ? { errorMessage: (typeof detail.error === 'string' ? detail.error : null) ?? run.result?.runError ?? null } : {}),
            ...(run?.result?.logs?.length ? { logs: run.result.logs } : {}),
            traceId: traceIdOfRun(seen),
            created_at: iso(row.created_at),
          },
        };
      },
    }),
  ];
}

/** Starting, running, feeding, ending and deleting sessions. */
function writeRoutes({ sql, redis, config }: Deps, { read, transition, create, insertResults }: TestSessions): AnyRoute[] {
  const live = new LivePublisher(redis, config.redisPrefix);
  return [
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
          const row = await findSession(db, principal.account.id, params.testSessionId, true);
          if (row.status !== 'RUNNING') throw conflict(`A ${row.status} test session takes no more results`, { status: row.status });
          await insertResults(db, principal.account.id, params.testSessionId, body.results, 'body.results');
          await touchSession(db, params.testSessionId);
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
        // Its runs not yet ended stop, and whoever follows them live sees each end cancelled.
        await cancelRuns(sql, live, principal.account.id, params.testSessionId);
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
        if (!(await deleteSession(sql, principal.account.id, params.testSessionId))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
