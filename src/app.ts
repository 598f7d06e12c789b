import Router from '@koa/router';
import { OptionalKind, type TObject } from '@sinclair/typebox';
import Koa, { type Middleware } from 'koa';
import type { Deps } from './deps.js';
import { authenticate } from './http/auth.js';
import { jsonBody } from './http/body.js';
import { errorMiddleware, HttpError, notFound } from './http/errors.js';
import { buildOpenApi } from './http/openapi.js';
import { RateLimits } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { type AnyRoute, koaPath } from './http/route.js';
import { compileResponseValidator, compileValidator } from './http/validation.js';
import { ingestRoutes } from './ingest/routes.js';
import { accountRoutes } from './accounts/routes.js';
import { analyticsRoutes } from './analytics/routes.js';
import { opsRoutes } from './ops/routes.js';
import { alertChannelRoutes } from './resources/alert-channels/routes.js';
import { checkGroupRoutes } from './resources/check-groups/routes.js';
import { checkRoutes } from './resources/checks/routes.js';
import { dashboardRoutes } from './resources/dashboards/routes.js';
import { maintenanceWindowRoutes } from './resources/maintenance-windows/routes.js';
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
import { heartbeatRoutes } from './state/heartbeat-routes.js';
import { dashboardPages } from './dashboards/routes.js';
import { prometheusRoutes } from './state/prometheus.js';
import { apiReference } from './ops/docs.js';
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
    ...testSessionRoutes(deps),
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
    ...alertRoutes(deps),
    ...heartbeatRoutes(deps),
    ...prometheusRoutes(deps),
    ...runtimeRoutes(),
    ...locationRoutes(),
  ];
}

function routeHandler(route: AnyRoute, validateResponses: boolean): Middleware {
  const { params, query, body, headers } = route.schema;
  const headerNames = headers ? Object.keys((headers as TObject).properties) : [];
  const checkHeaders = headers && compileValidator('header', headers, { strings: true });
  const checkParams = params && compileValidator('path', params, { strings: true });
  const checkQuery = query && compileValidator('query', query, { strings: true });
  const checkBody = body && compileValidator('body', body);
  // A body schema marked optional (Type.Optional) may be left out entirely.
  const bodyOptional = body !== undefined && OptionalKind in body;
  const checkResponse = new Map(
    Object.entries(route.schema.responses)
      .filter(([, schema]) => schema && validateResponses)
      .map(([status, schema]) => [Number(status), compileResponseValidator(schema!)]),
  );
  return async (ctx) => {
    // A path value no stored id can hold (NUL cannot be stored) names nothing: 404, as an unknown id would.
    if (Object.values(ctx.params as Record<string, string>).some((v) => v.includes('\u0000'))) throw notFound();
    const input = {
      params: checkParams ? checkParams({ ...ctx.params }) : {},
      query: checkQuery ? checkQuery(ctx.query) : {},
      body: undefined as unknown,
      headers: checkHeaders ? checkHeaders(Object.fromEntries(headerNames.filter((n) => ctx.get(n) !== '').map((n) => [n, ctx.get(n)]))) : {},
    };
    if (checkBody) {
      const hasContent = ctx.get('transfer-encoding') !== '' || (ctx.request.length ?? 0) > 0;
      if (hasContent && !ctx.request.is('application/json')) {
        throw new HttpError(415, 'Content-Type must be application/json');
      }
      if (hasContent || !bodyOptional) input.body = checkBody(ctx.request.body);
    }
    // A client that hangs up before the answer aborts the work that honours the signal (analytics queries).
    const aborted = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableEnded) aborted.abort();
    };
    ctx.req.once('close', onClose);
    let reply;
    try {
      reply = await route.handler({ ...input, principal: ctx.state.principal, context: { requestId: ctx.state.requestId as string, signal: aborted.signal } });
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
    checkResponse.get(reply.status)?.(reply.body);
    ctx.status = reply.status;
    if (reply.headers) ctx.set(reply.headers);
    if (reply.body !== undefined) ctx.body = reply.body;
  };
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
  app.use(errorMiddleware(deps.logger));
  app.use(httpMetrics(deps.metrics));
  // Pages and operator endpoints outside the API description: /metrics, /docs, rendered dashboards.
  app.use(metricsEndpoint(deps.metrics, deps.config.metricsToken));
  app.use(apiReference());
  app.use(dashboardPages(deps, rateLimits));
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, router, routes, document };
}
