import { type Static, Type } from '@sinclair/typebox';
import { HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { CHECK_TYPES, LOCATIONS } from '../model/checks.js';
import { fleetAgents } from '../private-locations/index.js';
import type { Deps } from '../storage/deps.js';
import { cancelSession, findSession, isTerminal, type SessionRow } from './check-sessions.js';
import { locationHealth, locationRunCounts } from './health.js';
import { matchChecks, startSessions } from './on-demand.js';
import { deploymentTargetExists, listDeploymentTriggers, privateLocationExists, upsertDeploymentTrigger } from './repository.js';

const tag = 'Check sessions';

const SESSION_STATUSES = ['STARTED', 'PROGRESS', 'FAILED', 'PASSED', 'DEGRADED', 'PROGRESS_FAILED', 'PROGRESS_DEGRADED', 'TIMED_OUT', 'CANCELLED'] as const;
const RUN_SOURCES = [
  'CLI_DEPLOY',
  'DEPLOYMENT',
  'DEPLOYMENT_CACHE_WARMER',
  'EDITOR',
  'GROUP_RUN_ALL',
  'LEGACY_TRIGGER',
  'SCHEDULER',
  'SCHEDULE_NOW',
  'TEST_NO_RECORD',
  'TEST_RECORD',
  'TRIGGER_NO_RECORD',
  'TRIGGER_RECORD',
  'TRIGGER_API',
] as const;

const SessionResult = Type.Object({
  checkResultId: Type.String({ format: 'uuid' }),
  checkResultLink: Type.String({ format: 'uri' }),
  checkId: Type.String({ format: 'uuid' }),
  checkType: StringEnum(CHECK_TYPES),
  name: Type.String(),
  runLocation: Type.String(),
  resultType: Nullable(StringEnum(['FINAL', 'ATTEMPT'] as const)),
  hasErrors: Type.Boolean(),
  hasFailures: Type.Boolean(),
  isDegraded: Type.Boolean(),
  aborted: Type.Boolean(),
  isCancelled: Type.Boolean(),
  responseTime: Type.Optional(Nullable(Type.Number())),
  startedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  stoppedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
});

const SessionFields = {
  checkSessionId: Type.String({ format: 'uuid' }),
  checkSessionLink: Type.String({ format: 'uri' }),
  checkId: Type.String({ format: 'uuid' }),
  checkType: StringEnum(CHECK_TYPES),
  name: Type.Optional(Type.String()),
  status: StringEnum(SESSION_STATUSES),
  startedAt: Type.String({ format: 'date-time' }),
  stoppedAt: Nullable(Type.String({ format: 'date-time' })),
  timeElapsed: Type.Number({ description: 'Milliseconds the session took (so far, while it runs)' }),
  runLocations: Type.Array(Type.String()),
  runSource: Nullable(StringEnum(RUN_SOURCES)),
};
const Session = Type.Object(SessionFields);
const SessionWithResults = Type.Object({ ...SessionFields, results: Type.Array(SessionResult) });

const TriggerBody = Type.Object(
  {
    target: Type.Optional(
      Type.Object(
        {
          matchTags: Type.Optional(
            Type.Array(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 50 }), {
              maxItems: 50,
              description: "OR of AND-lists of tags (the group's tags count); `!tag` matches checks without it",
            }),
          ),
          checkId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 1000 })),
        },
        { additionalProperties: false },
      ),
    ),
    refreshCache: Type.Optional(Type.Boolean({ default: false, description: 'Accepted; this service keeps no dependency cache' })),
  },
  { additionalProperties: false },
);

const SessionParams = Type.Object({ checkSessionId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
const CompletionQuery = Type.Object(
  { maxWaitSeconds: Type.Integer({ minimum: 1, maximum: 30, default: 30, description: 'How long to wait for the session to end before answering 408' }) },
  { additionalProperties: false },
);

const NO_MATCH = () => new HttpError(404, 'No matching checks were found.');
const STILL_RUNNING = 'Check session is still in progress, but maximum per-request wait time was exceeded. Please retry.';

const DeploymentTrigger = Type.Object({
  id: Type.Integer(),
  checkId: Nullable(Type.String({ format: 'uuid' })),
  groupId: Nullable(Type.Integer()),
  provider: Type.String(),
  repoId: Type.String(),
  repoName: Type.String(),
  repoLink: Nullable(Type.String()),
  useEnvironmentUrl: Type.Boolean(),
  includeScreenshots: Type.Boolean(),
  environmentRegexFilter: Nullable(Type.String()),
  environmentUrlRegexFilter: Nullable(Type.String()),
  runLocation: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

const CreateDeploymentTrigger = Type.Object(
  {
    checkId: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
    groupId: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
    repoId: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ minLength: 1, maxLength: 255 })]),
    repoName: Type.String({ minLength: 1, maxLength: 255 }),
    repoLink: Type.String({ maxLength: 2048, default: '' }),
    useEnvironmentUrl: Type.Boolean({ default: true }),
    includeScreenshots: Type.Boolean({ default: false }),
    provider: StringEnum(['GITHUB'] as const, { default: 'GITHUB' }),
    runLocation: StringEnum(LOCATIONS, { default: 'us-east-1' }),
    environmentRegexFilter: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    environmentUrlRegexFilter: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  },
  { additionalProperties: false },
);

interface TriggerRow {
  id: number;
  check_id: string | null;
  group_id: number | null;
  data: Static<typeof CreateDeploymentTrigger>;
  created_at: Date;
  updated_at: Date | null;
}

/** Deployment triggers (stored as the anchor keeps them) and a private location's queue and runners. */
export function runnerResourceRoutes({ sql, queues, redis, config }: Deps): AnyRoute[] {
  const toTrigger = (r: TriggerRow) => ({
    id: Number(r.id),
    checkId: r.check_id,
    groupId: r.group_id === null ? null : Number(r.group_id),
    provider: r.data.provider ?? 'GITHUB',
    repoId: String(r.data.repoId),
    repoName: r.data.repoName,
    repoLink: r.data.repoLink || null,
    useEnvironmentUrl: r.data.useEnvironmentUrl,
    includeScreenshots: r.data.includeScreenshots,
    environmentRegexFilter: r.data.environmentRegexFilter ?? null,
    environmentUrlRegexFilter: r.data.environmentUrlRegexFilter ?? null,
    runLocation: r.data.runLocation,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at?.toISOString() ?? null,
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/deployment-triggers',
      operationId: 'listDeploymentTriggers',
      summary: "The account's deployment triggers",
      tag: 'Deployment triggers',
      access: 'read',
      schema: { responses: { 200: Type.Array(DeploymentTrigger) } },
      handler: async ({ principal }) => ({
        status: 200,
        body: (await listDeploymentTriggers<Static<typeof CreateDeploymentTrigger>>(sql, principal.account.id)).map(toTrigger),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/deployment-triggers',
      operationId: 'createDeploymentTrigger',
      summary: 'A deployment trigger for a check or group (201; 200 with the existing one when its target has one)',
      description: 'Kept as the anchor keeps it; this service receives no provider webhooks, so it starts no runs by itself.',
      tag: 'Deployment triggers',
      access: 'write',
      errors: [404],
      schema: { body: CreateDeploymentTrigger, responses: { 201: DeploymentTrigger, 200: DeploymentTrigger } },
      handler: async ({ principal, body }) => {
        const accountId = principal.account.id;
        new Rules().check(Boolean(body.checkId || body.groupId), 'body.checkId', 'required', 'name a check (checkId) or a check group (groupId)').throwIfAny();
        // With both, the check is the target (as the anchor reads checkId first).
        const target = body.checkId ? { ...body, groupId: null } : { ...body, checkId: null };
        if (!(await deploymentTargetExists(sql, accountId, target.checkId ?? null, target.groupId ?? null))) throw notFound();
        const { row, created } = await upsertDeploymentTrigger(sql, accountId, target);
        return { status: created ? 201 : 200, body: toTrigger(row) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/private-locations/{id}/fleet',
      operationId: 'getPrivateLocationFleet',
      summary: "A private location's fleet now (our addition): each agent seen this week, online or not, and the location's runs queued and in flight",
      description: `An agent is online when it called within AGENT_SEEN_SECONDS; outdated below AGENT_MIN_VERSION. The console's private-locations screen reads this.`,
      tag: 'Private locations',
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        responses: {
          200: Type.Object({
            agents: Type.Array(
              Type.Object({
                id: Type.String(),
                version: Type.String(),
                isOutdated: Type.Boolean(),
                online: Type.Boolean(),
                lastSeenAt: Type.String({ format: 'date-time' }),
                startedAt: Type.String({ format: 'date-time' }),
                concurrency: Type.Integer(),
              }),
            ),
            runs: Type.Object({
              queued: Type.Integer({ description: 'Due and waiting for an agent' }),
              delayed: Type.Integer({ description: 'Scheduled for later (a slot ahead, a retry)' }),
              inFlight: Type.Integer({ description: 'Taken by an agent, not finished' }),
              oldestWaitingSeconds: Type.Number({ description: 'How long the oldest due run has waited' }),
            }),
            checkedAt: Type.String({ format: 'date-time' }),
          }),
        },
      },
      handler: async ({ principal, params }) => {
        if (!(await privateLocationExists(sql, principal.account.id, params.id))) throw notFound();
        const queue = `private-${params.id.toLowerCase()}`;
        const [agents, [health], [counts]] = await Promise.all([
          fleetAgents(sql, params.id.toLowerCase(), config.agents),
          locationHealth(queues, redis, config.redisPrefix, [queue]),
          locationRunCounts(queues, [{ location: queue, slug: queue }]),
        ]);
        return {
          status: 200,
          body: {
            agents,
            runs: { queued: counts!.queued, delayed: counts!.delayed, inFlight: counts!.inFlight, oldestWaitingSeconds: health!.lagSeconds },
            checkedAt: new Date().toISOString(),
          },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/private-locations/{id}/metrics',
      operationId: 'getPrivateLocationMetrics',
      summary: "A private location's run queue: its size and the age of its oldest due run (now), and its runners",
      tag: 'Private locations',
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        query: Type.Object(
          { from: Type.String({ minLength: 1, maxLength: 40 }), to: Type.String({ minLength: 1, maxLength: 40 }) },
          { additionalProperties: false },
        ),
        responses: {
          200: Type.Object({
            timestamps: Type.Array(Type.String({ format: 'date-time' })),
            queueSize: Type.Array(Type.Number()),
            oldestScheduledCheckRun: Type.Array(Type.Number({ description: 'Seconds the oldest due run has waited' })),
            runners: Type.Integer({ description: 'Runners serving it seen in the last 30 s' }),
          }),
        },
      },
      handler: async ({ principal, params }) => {
        if (!(await privateLocationExists(sql, principal.account.id, params.id))) throw notFound();
        const [h] = await locationHealth(queues, redis, config.redisPrefix, [`private-${params.id.toLowerCase()}`]);
        return {
          status: 200,
          body: { timestamps: [new Date().toISOString()], queueSize: [h.waiting], oldestScheduledCheckRun: [h.lagSeconds], runners: h.runners },
        };
      },
    }),
  ];
}

export function checkSessionRoutes({ sql, queues, config }: Deps): AnyRoute[] {
  const base = () => config.publicUrl ?? '';
  const toSession = (row: SessionRow) => ({
    checkSessionId: row.id,
    checkSessionLink: `${base()}/v2/check-sessions/${row.id}`,
    checkId: row.check_id,
    checkType: row.check_type as (typeof CHECK_TYPES)[number],
    name: row.name,
    status: row.status,
    startedAt: row.started_at.toISOString(),
    stoppedAt: row.stopped_at?.toISOString() ?? null,
    timeElapsed: (row.stopped_at ?? new Date()).getTime() - row.started_at.getTime(),
    runLocations: row.run_locations,
    runSource: row.run_source,
  });
  const withResults = (row: SessionRow) => ({
    ...toSession(row),
    results: row.results.map((r) => ({
      checkResultId: r.checkResultId,
      checkResultLink: `${base()}/v1/check-results/${row.check_id}/${r.checkResultId}`,
      checkId: row.check_id,
      checkType: row.check_type as (typeof CHECK_TYPES)[number],
      name: row.name,
      runLocation: r.runLocation,
      resultType: r.resultType,
      hasErrors: r.hasErrors,
      hasFailures: r.hasFailures,
      isDegraded: r.isDegraded,
      aborted: r.aborted,
      isCancelled: r.aborted,
      responseTime: r.responseTime,
      startedAt: r.startedAt,
      stoppedAt: r.stoppedAt,
    })),
  });

  async function trigger(accountId: string, body: Static<typeof TriggerBody> | undefined) {
    const ids = await matchChecks(sql, accountId, body?.target ?? {});
    if (!ids.length) throw NO_MATCH();
    const sessions = await startSessions(sql, queues, accountId, ids, 'TRIGGER_API', config.runner.sessionTimeoutSeconds * 1000);
    if (!sessions.length) throw NO_MATCH();
    return { status: 201, body: { sessions: sessions.map(toSession) } };
  }

  /** Answers once the session ended, or 408 after maxWaitSeconds (the client asks again). */
  async function completion(accountId: string, id: string, maxWaitSeconds: number, signal: AbortSignal) {
    const until = Date.now() + maxWaitSeconds * 1000;
    for (;;) {
      const row = await findSession(sql, accountId, id);
      if (!row) throw notFound();
      if (isTerminal(row.status)) return { status: 200, body: withResults(row) };
      if (Date.now() >= until || signal.aborted) throw new HttpError(408, STILL_RUNNING, undefined, { 'Retry-After': '1' });
      await new Promise((r) => setTimeout(r, Math.min(250, until - Date.now())));
    }
  }

  const read = async (accountId: string, id: string) => {
    const row = await findSession(sql, accountId, id);
    if (!row) throw new HttpError(404, 'No such check session.');
    return { status: 200, body: withResults(row) };
  };

  return (['v1', 'v2'] as const).flatMap((v) => [
    defineRoute({
      method: 'POST',
      path: `/${v}/check-sessions/trigger`,
      operationId: v === 'v1' ? 'triggerCheckSessionV1' : 'triggerCheckSession',
      summary: "Run checks now: one check session per matching check (the anchor's Schedule Now)",
      description:
        "Matches the account's activated checks of runnable types: any of `target.checkId`, or any matching `target.matchTags`; no target matches them all. " +
        "No match is a 404. Runs start at once in the check's locations (all with runParallel, else its first); alerting applies as to scheduled runs.",
      tag,
      access: 'run',
      errors: [404],
      schema: { body: v === 'v1' ? Type.Optional(TriggerBody) : TriggerBody, responses: { 201: Type.Object({ sessions: Type.Array(Session) }) } },
      handler: async ({ principal, body }) => trigger(principal.account.id, body),
    }),
    defineRoute({
      method: 'GET',
      path: `/${v}/check-sessions/{checkSessionId}`,
      operationId: v === 'v1' ? 'getCheckSessionV1' : 'getCheckSession',
      summary: 'A check session and its results so far',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: SessionParams, responses: { 200: SessionWithResults } },
      handler: async ({ principal, params }) => read(principal.account.id, params.checkSessionId),
    }),
    defineRoute({
      method: 'GET',
      path: `/${v}/check-sessions/{checkSessionId}/completion`,
      operationId: v === 'v1' ? 'awaitCheckSessionV1' : 'awaitCheckSession',
      summary: 'Wait for a check session to end (408 while it still runs: ask again)',
      tag,
      access: 'read',
      errors: [404, 408],
      schema: { params: SessionParams, query: CompletionQuery, responses: { 200: SessionWithResults } },
      handler: async ({ principal, params, query, context }) => completion(principal.account.id, params.checkSessionId, query.maxWaitSeconds, context.signal),
    }),
    ...(v === 'v1'
      ? [
          defineRoute({
            method: 'POST',
            path: '/v1/check-sessions/{checkSessionId}/cancel',
            operationId: 'cancelCheckSession',
            summary: 'Cancel a check session: runs not started yet are not made (204)',
            tag,
            access: 'run',
            errors: [404],
            schema: {
              params: SessionParams,
              body: Type.Optional(
                Type.Object(
                  { sequenceId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { minItems: 1, maxItems: 1000 })) },
                  { additionalProperties: false },
                ),
              ),
              responses: { 204: null },
            },
            handler: async ({ principal, params }) => {
              if (!(await cancelSession(sql, principal.account.id, params.checkSessionId))) throw new HttpError(404, 'No such check session.');
              return { status: 204 };
            },
          }),
        ]
      : []),
  ]);
}
