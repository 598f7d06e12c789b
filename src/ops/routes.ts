import { Type } from '@sinclair/typebox';
import { countGaps } from '../coverage/index.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { LOCATIONS } from '../model/checks.js';
import { type LocationHealth as LocationHealthValue, locationHealth } from '../runners/index.js';
import type { Deps } from '../storage/deps.js';
import { checkReadiness, ingestDetails, withTimeout } from './readiness.js';

const DependencyStatus = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  error: Type.Optional(Type.String()),
});

const IngestDetails = Type.Object({
  waiting: Type.Optional(Type.Integer({ description: 'Batches queued' })),
  active: Type.Optional(Type.Integer()),
  delayed: Type.Optional(Type.Integer({ description: 'Batches waiting to retry' })),
  failed: Type.Optional(Type.Integer({ description: 'Batches that failed every attempt; kept for inspection' })),
  oldestWaitingSeconds: Type.Optional(Type.Number()),
  acceptedResults: Type.Optional(Type.Integer({ description: 'Results accepted by POST /v1/check-results since the queue was created' })),
  error: Type.Optional(Type.String()),
});

const ReadyBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  dependencies: Type.Record(Type.String(), DependencyStatus),
  ingest: IngestDetails,
  checksNotRunning: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'Activated checks past their periods without a run in a location (docs/analytics.md, "No data"); they do not make the service unready',
    }),
  ),
});

const LocationHealth = Type.Object({
  location: Type.String(),
  runners: Type.Integer({ description: 'Runners serving it seen in the last 30 s' }),
  waiting: Type.Integer({ description: "Run jobs due and waiting for a runner (a window's scheduled runs of a location are one job)" }),
  delayed: Type.Integer({ description: 'Run jobs scheduled for later (within the lookahead) and retries' }),
  lagSeconds: Type.Number({ description: 'How long the oldest due run has waited' }),
});

const HealthBody = Type.Object({
  status: Type.Literal('ok'),
  runners: Type.Optional(
    Type.Union([
      Type.Object({ locations: Type.Array(LocationHealth) }),
      Type.Object({ error: Type.String({ description: 'Redis did not answer: the runners cannot be looked at' }) }),
    ]),
  ),
});

const OpenApiDocument = Type.Object({ openapi: Type.String() }, { additionalProperties: true });

/** Liveness, readiness and the API description: unauthenticated and not rate limited. */
export function opsRoutes(deps: Deps, getDocument: () => unknown): AnyRoute[] {
  // Every public location and any other this process serves; read at most every 2 s (probes may poll /health).
  const locations = [...new Set([...LOCATIONS, ...deps.config.runner.locations])];
  let cached: { at: number; value: Promise<{ locations: LocationHealthValue[] } | { error: string }> } | undefined;
  const runnerDetail = () => {
    if (!cached || Date.now() - cached.at > 2000) {
      cached = {
        at: Date.now(),
        value: withTimeout(locationHealth(deps.queues, deps.redis, deps.config.redisPrefix, locations), 1500).then(
          (list: LocationHealthValue[]) => ({ locations: list }),
          (err: Error) => ({ error: err.message }),
        ),
      };
    }
    return cached.value;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/health',
      operationId: 'getHealth',
      summary: "Liveness: the process is up; and each run location's runners, queue and lag",
      description: 'A location whose runs wait with no runner shows here as `runners: 0` and a growing lagSeconds (runner_run_lateness_seconds on /metrics).',
      tag: 'Operations',
      access: 'public',
      schema: { responses: { 200: HealthBody } },
      handler: async () => ({ status: 200, body: { status: 'ok', runners: await runnerDetail() } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/ready',
      operationId: 'getReadiness',
      summary: 'Readiness: Postgres, Redis and the analytics store answer',
      tag: 'Operations',
      access: 'public',
      schema: { responses: { 200: ReadyBody, 503: ReadyBody } },
      handler: async () => {
        const [dependencies, ingest, notRunning] = await Promise.all([
          checkReadiness(deps),
          ingestDetails(deps),
          withTimeout(countGaps(deps.sql)).catch(() => undefined),
        ]);
        const ok = Object.values(dependencies).every((d) => d.status === 'ok');
        return {
          status: ok ? 200 : 503,
          body: { status: ok ? 'ready' : 'unavailable', dependencies, ingest, ...(notRunning === undefined ? {} : { checksNotRunning: notRunning }) },
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'OpenAPI 3.1 description of this API',
      tag: 'Operations',
      access: 'public',
      schema: { responses: { 200: OpenApiDocument } },
      handler: () => ({ status: 200, body: getDocument() }),
    }),
    defineRoute({
      method: 'GET',
      path: '/swagger.json',
      operationId: 'getSwagger',
      summary: 'Deprecated location of the API description; use /openapi.json',
      tag: 'Operations',
      access: 'public',
      deprecated: true,
      schema: { responses: { 200: OpenApiDocument } },
      handler: () => ({
        status: 200,
        body: getDocument(),
        headers: { Deprecation: 'true', Link: '</openapi.json>; rel="successor-version"' },
      }),
    }),
  ];
}
