import Router from '@koa/router';
import { Stream } from 'node:stream';
import zlib from 'node:zlib';
import compress from 'koa-compress';
import Koa, { type Middleware } from 'koa';
import type { Deps } from './storage/deps.js';
import { authenticate } from './http/auth.js';
import { jsonBody } from './http/body.js';
import { errorMiddleware, HttpError } from './http/errors.js';
import { buildOpenApi } from './http/openapi.js';
import { checkSessionRoutes, runnerResourceRoutes } from './runners/routes.js';
import { RateLimits } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { type AnyRoute, koaPath } from './http/route.js';
import { compileResponseValidator } from './http/validation.js';
import { compileRouteInput } from './http/invoke.js';
import { ingestRoutes } from './ingest/routes.js';
import { accountRoutes } from './resources/accounts/routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { opsRoutes } from './ops/routes.js';
import { alertChannelRoutes } from './resources/alert-channels/routes.js';
import { checkGroupRoutes } from './resources/check-groups/routes.js';
import { checkRoutes } from './resources/checks/routes.js';
import { dashboardRoutes } from './resources/dashboards/routes.js';
import { maintenanceWindowRoutes } from './resources/maintenance-windows/routes.js';
import { statusPageRoutes } from './resources/status-pages/routes.js';
import { testSessionErrorGroupRoutes } from './resources/test-sessions/error-groups.js';
import { maintenanceRoutes } from './resources/maintenance-windows/maintenances.js';
import { dashboardIncidentRoutes } from './resources/dashboards/incidents.js';
import { badgeRoutes } from './status-pages/badges.js';
import { statusPages } from './status-pages/pages.js';
import { testSessionRoutes } from './resources/test-sessions/routes.js';
import { variableRoutes } from './resources/variables/routes.js';
import { runtimeRoutes } from './resources/runtimes/routes.js';
import { locationRoutes } from './resources/locations/routes.js';
import { checkStatusRoutes } from './state/routes.js';
import { snippetRoutes } from './resources/snippets/routes.js';
import { privateLocationRoutes } from './resources/private-locations/routes.js';
import { clientCertificateRoutes } from './resources/client-certificates/routes.js';
import { triggerRoutes } from './resources/triggers/routes.js';
import { alertRoutes } from './alerts/routes.js';
import { heartbeatRoutes } from './heartbeats/routes.js';
import { dashboardPages } from './dashboards/routes.js';
import { prometheusRoutes } from './analytics/prometheus.js';
import { apiReference } from './ops/docs.js';
import { projectRoutes } from './projects/routes.js';
import { storageRoutes } from './projects/storage-routes.js';
import { httpMetrics, metricsEndpoint } from './ops/metrics-http.js';

export interface AppOptions {
  /** Check every reply against its declared response schema (on in tests). */
  validateResponses?: boolean;
}

/** The status logged for a request whose client went away before the answer (nginx's convention). */
const CLIENT_CLOSED_REQUEST = 499;

export const API_INFO = { title: 'Monitoring Management API', version: '1.0.0' };

/** Every route the service serves, in one list: the router and the OpenAPI document are both built from it. */
export function allRoutes(deps: Deps, getDocument: () => unknown): AnyRoute[] {
  return [
    ...opsRoutes(deps, getDocument),
    ...accountRoutes(deps),
    ...variableRoutes(deps),
    ...maintenanceWindowRoutes(deps),
    ...maintenanceRoutes(deps),
    ...statusPageRoutes(deps),
    ...dashboardIncidentRoutes(deps),
    ...badgeRoutes(deps),
    ...testSessionRoutes(deps),
    ...testSessionErrorGroupRoutes(deps),
    ...dashboardRoutes(deps),
    ...checkRoutes(deps),
    ...checkGroupRoutes(deps),
    ...alertChannelRoutes(deps),
    ...ingestRoutes(deps),
    ...analyticsRoutes(deps),
    ...checkStatusRoutes(deps),
    ...snippetRoutes(deps),
    ...privateLocationRoutes(deps),
    ...clientCertificateRoutes(deps),
    ...triggerRoutes(deps),
    ...checkSessionRoutes(deps),
    ...runnerResourceRoutes(deps),
    ...alertRoutes(deps),
    ...heartbeatRoutes(deps),
    ...prometheusRoutes(deps),
    ...projectRoutes(deps),
    ...storageRoutes(deps),
    ...runtimeRoutes(),
    ...locationRoutes(),
  ];
}

function routeHandler(route: AnyRoute, validateResponses: boolean): Middleware {
  const { headerNames, parse } = compileRouteInput(route);
  const checkResponse = new Map(
    Object.entries(route.schema.responses)
      .filter(([, schema]) => schema && validateResponses)
      .map(([status, schema]) => [Number(status), compileResponseValidator(schema!)]),
  );
  return async function routeHandlerMiddleware(ctx) {
    const hasBody = ctx.get('transfer-encoding') !== '' || (ctx.request.length ?? 0) > 0;
    if (route.rawBody) {
      if (hasBody && !ctx.request.is(route.rawBody.mediaType)) throw new HttpError(415, `Content-Type must be ${route.rawBody.mediaType}`);
      if ((ctx.request.length ?? 0) > route.rawBody.maxBytes) throw new HttpError(413, `Payload content length greater than maximum allowed: ${route.rawBody.maxBytes}`);
    } else if (route.schema.body && hasBody && !ctx.request.is('application/json')) {
      throw new HttpError(415, 'Content-Type must be application/json');
    }
    const input = parse({
      params: ctx.params as Record<string, string>,
      query: ctx.query,
      headers: Object.fromEntries(headerNames.filter((n) => ctx.get(n) !== '').map((n) => [n, ctx.get(n)])),
      body: route.rawBody ? ctx.req : ctx.request.body,
      hasBody,
    });
    // A client that hangs up before the answer aborts the work that honours the signal (analytics queries).
    const aborted = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableEnded) aborted.abort();
    };
    ctx.req.once('close', onClose);
    let reply;
    try {
      reply = await route.handler({ ...(input as Omit<Parameters<AnyRoute['handler']>[0], 'principal' | 'context'>), principal: ctx.state.principal, context: { requestId: ctx.state.requestId as string, signal: aborted.signal } });
    } catch (err) {
      // The client hung up and its query was stopped: nobody gets an answer, and nothing failed (nginx's 499).
      if (aborted.signal.aborted) {
        ctx.status = CLIENT_CLOSED_REQUEST;
        return;
      }
      throw err;
    } finally {
      ctx.req.off('close', onClose);
    }
    // A stream or bytes (events, a download) are not JSON: only JSON answers are checked against their schema.
    if (!(reply.body instanceof Stream) && !Buffer.isBuffer(reply.body)) checkResponse.get(reply.status)?.(reply.body);
    ctx.status = reply.status;
    if (reply.headers) ctx.set(reply.headers);
    // Events go out as they are written: compression would hold them back.
    if (reply.streaming) ctx.compress = false;
    if (reply.body !== undefined) ctx.body = reply.body;
  };
}

/** Routes whose JSON bodies may be larger than the service's limit (project deploys), by exact path. */
function largerBodies(routes: AnyRoute[]): Map<string, number> {
  return new Map(routes.filter((r) => r.bodyLimitBytes !== undefined && !r.path.includes('{')).map((r) => [r.path, r.bodyLimitBytes!]));
}

export function buildRouter(routes: AnyRoute[], sql: Deps['sql'], rateLimits: RateLimits, options: AppOptions): Router {
  const router = new Router();
  for (const route of routes) {
    const chain: Middleware[] = [];
    if (route.access !== 'public') {
      chain.push(authenticate(sql, route.access), rateLimits.middleware(route.operationId, route.rateLimit));
    } else if (route.rateLimit) {
      chain.push(rateLimits.middleware(route.operationId, route.rateLimit));
    }
    chain.push(routeHandler(route, options.validateResponses ?? false));
    router.register(koaPath(route.path), [route.method], chain, { name: route.operationId });
  }
  return router;
}

export function createApp(deps: Deps, options: AppOptions = {}) {
  let document: unknown;
  const routes = allRoutes(deps, () => document);
  document = buildOpenApi(routes, API_INFO);
  const rateLimits = new RateLimits(deps.redis, deps.config.redisPrefix, deps.config.rateLimit);
  const router = buildRouter(routes, deps.sql, rateLimits, options);

  const app = new Koa();
  app.silent = true;
  app.proxy = deps.config.trustProxy;
  app.use(requestLog(deps.logger));
  // Answers of 1 KiB or more go out compressed to clients that take it (gzip, deflate or br): dashboard
  // pages and data, reports, lists. Error bodies are compressed like any other.
  app.use(compress({ threshold: 1024, br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }, gzip: { level: 6 } }));
  app.use(errorMiddleware(deps.logger));
  app.use(httpMetrics(deps.metrics));
  // Pages and operator endpoints outside the API description: /metrics, /docs, rendered dashboards.
  app.use(metricsEndpoint(deps.metrics, deps.config.metricsToken));
  app.use(apiReference());
  app.use(dashboardPages(deps, rateLimits));
  app.use(statusPages(deps, rateLimits));
  app.use(jsonBody(deps.config.bodyLimitBytes, largerBodies(routes)));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, router, routes, document };
}
