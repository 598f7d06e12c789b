import { Type } from '@sinclair/typebox';
import { findCheckRow } from '../checks/index.js';
import { HttpError, notFound } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { Deps } from '../storage/deps.js';
import { type HeartbeatEvent, heartbeatCounts, heartbeatEvents } from './history.js';
import { recordPing } from './pings.js';

const Token = Type.Object(
  { token: Type.String({ format: 'uuid', description: "The check's ping token (heartbeat.pingToken)" }) },
  { additionalProperties: false },
);
const Pinged = Type.Object({ status: Type.Literal('ok'), checkId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

/** Heartbeat pings: no key (the token is the credential), limited per token; GET also answers HEAD. */
export function heartbeatRoutes({ sql, ingest, store }: Deps): AnyRoute[] {
  const routes = (['GET', 'POST'] as const).flatMap((method) =>
    ([false, true] as const).map((failed) =>
      defineRoute({
        method,
        path: failed ? '/ping/{token}/fail' : '/ping/{token}',
        operationId: `ping${failed ? 'Fail' : ''}${method === 'POST' ? 'Post' : ''}`,
        summary: failed ? 'Report a failed run of a heartbeat check (its job ran and failed)' : 'Ping a heartbeat check: its job ran',
        description:
          'Records a run through the normal ingest path and moves the deadline to period + grace from now; a check that ' +
          'is not pinged by then gets a failed run. At most 120 pings a minute per token, GET, HEAD and POST, passing or failing, together.',
        tag: 'Heartbeats',
        access: 'public',
        rateLimit: { points: 120, windowSeconds: 60, bucket: 'ping' },
        errors: [400, 404, 503],
        schema: { params: Token, responses: { 200: Pinged } },
        handler: async ({ params }) => {
          const pinged = await recordPing(sql, ingest, params.token.toLowerCase(), failed);
          if (!pinged) throw notFound();
          return { status: 200, body: { status: 'ok' as const, checkId: pinged.checkId } };
        },
      }),
    ),
  );
  return [...routes, ...historyRoutes({ sql, store, ingest } as Deps)];
}

const DAY_MS = 86_400_000;
const Availability = Type.Object({
  successRatio: Type.Object({ previousPeriod: Type.Number(), currentPeriod: Type.Number() }),
  totalEntitiesCurrentPeriod: Type.Integer(),
});
const Event = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: StringEnum(['FAILING', 'EARLY', 'RECEIVED', 'GRACE', 'LATE'] as const, {
    description: 'RECEIVED: a ping came; FAILING: a ping to /fail, or a deadline passed without one',
  }),
  timestamp: Type.String({ format: 'date-time' }),
  source: Nullable(Type.String()),
  userAgent: Nullable(Type.String()),
});
const Stats = Type.Object({ last24Hours: Availability, last7Days: Availability });
const CheckParams = Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
const Window = Type.Object(
  {
    startTime: Type.Optional(Type.String({ format: 'date', description: 'First day (UTC) of the window; default 7 days before endTime' })),
    endTime: Type.Optional(Type.String({ format: 'date', description: 'Last day (UTC) of the window; default today' })),
  },
  { additionalProperties: false },
);

/** Availability and events of heartbeat checks, from their runs (a ping, a /fail ping, a missed deadline). */
function historyRoutes({ sql, store }: Deps): AnyRoute[] {
  const tag = 'Heartbeats';
  async function heartbeat(accountId: string, checkId: string) {
    const row = UUID.test(checkId) ? await findCheckRow(sql, accountId, checkId) : undefined;
    if (row?.check_type !== 'HEARTBEAT') throw notFound();
    return row.id;
  }
  const windowOf = (q: { startTime?: string; endTime?: string }, now: number) => {
    const to = q.endTime ? Date.parse(`${q.endTime}T00:00:00Z`) + DAY_MS : now;
    const from = q.startTime ? Date.parse(`${q.startTime}T00:00:00Z`) : to - 7 * DAY_MS;
    if (!(from < to))
      throw new HttpError(400, 'startTime must be before endTime', {
        errors: [{ field: 'query.startTime', rule: 'before', message: 'must be before endTime' }],
      });
    return { from, to };
  };
  const availability = async (accountId: string, id: string, from: number, to: number) => {
    const [current, previous] = await Promise.all([
      heartbeatCounts(store, accountId, id, from, to),
      heartbeatCounts(store, accountId, id, from - (to - from), from),
    ]);
    const ratio = (c: { total: number; passed: number }) => (c.total ? Math.round((10000 * c.passed) / c.total) / 100 : 100);
    return { successRatio: { previousPeriod: ratio(previous), currentPeriod: ratio(current) }, totalEntitiesCurrentPeriod: current.total };
  };
  const stats = async (accountId: string, id: string, now: number) => ({
    last24Hours: await availability(accountId, id, now - DAY_MS, now),
    last7Days: await availability(accountId, id, now - 7 * DAY_MS, now),
  });
  const toEvent = (e: HeartbeatEvent) => ({
    id: e.id,
    state: e.failed ? ('FAILING' as const) : ('RECEIVED' as const),
    timestamp: new Date(e.at).toISOString(),
    source: null,
    userAgent: null,
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/checks/heartbeats/{checkId}/availability',
      operationId: 'getHeartbeatAvailability',
      summary: "A heartbeat check's share of passing runs in a window, and in the window before it",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: CheckParams, query: Window, responses: { 200: Availability } },
      handler: async ({ principal, params, query }) => {
        const id = await heartbeat(principal.account.id, params.checkId);
        const { from, to } = windowOf(query, Date.now());
        return { status: 200, body: await availability(principal.account.id, id, from, to) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/checks/heartbeats/{checkId}/events',
      operationId: 'listHeartbeatEvents',
      summary: "A heartbeat check's newest events (pings received, pings missed) with its availability",
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: CheckParams,
        query: Type.Object({ ...Window.properties, limit: Type.Integer({ minimum: 1, maximum: 10, default: 10 }) }, { additionalProperties: false }),
        responses: { 200: Type.Array(Type.Object({ events: Type.Array(Event), stats: Stats })) },
      },
      handler: async ({ principal, params, query }) => {
        const id = await heartbeat(principal.account.id, params.checkId);
        const now = Date.now();
        const { from, to } = windowOf(query, now);
        const events = await heartbeatEvents(store, principal.account.id, id, { from, to, limit: query.limit });
        return { status: 200, body: [{ events: events.map(toEvent), stats: await stats(principal.account.id, id, now) }] };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/checks/heartbeats/{checkId}/events/{id}',
      operationId: 'getHeartbeatEvent',
      summary: 'One event of a heartbeat check',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object(
          { checkId: Type.String({ minLength: 1, maxLength: 64 }), id: Type.String({ minLength: 1, maxLength: 64 }) },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Object({ event: Event, stats: Stats }) },
      },
      handler: async ({ principal, params }) => {
        const id = await heartbeat(principal.account.id, params.checkId);
        if (!UUID.test(params.id)) throw notFound();
        const now = Date.now();
        const [event] = await heartbeatEvents(store, principal.account.id, id, { from: 0, to: now + DAY_MS, limit: 1, id: params.id.toLowerCase() });
        if (!event) throw notFound();
        return { status: 200, body: { event: toEvent(event), stats: await stats(principal.account.id, id, now) } };
      },
    }),
  ];
}
