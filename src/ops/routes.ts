import { Type } from '@sinclair/typebox';
import type { Deps } from '../deps.js';
import { defineRoute, type AnyRoute } from '../http/route.js';
import { checkReadiness, ingestDetails } from './readiness.js';

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
});

const OpenApiDocument = Type.Object({ openapi: Type.String() }, { additionalProperties: true });

/** Liveness, readiness and the API description: unauthenticated and not rate limited. */
export function opsRoutes(deps: Deps, getDocument: () => unknown): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/health',
      operationId: 'getHealth',
      summary: 'Liveness: the process is up',
      tag: 'Operations',
      access: 'public',
      schema: { responses: { 200: Type.Object({ status: Type.Literal('ok') }) } },
      handler: () => ({ status: 200, body: { status: 'ok' } }),
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
        const [dependencies, ingest] = await Promise.all([checkReadiness(deps), ingestDetails(deps)]);
        const ok = Object.values(dependencies).every((d) => d.status === 'ok');
        return { status: ok ? 200 : 503, body: { status: ok ? 'ready' : 'unavailable', dependencies, ingest } };
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
