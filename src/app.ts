import { Stream } from 'node:stream';
import zlib from 'node:zlib';
import Koa, { type Middleware } from 'koa';
import compress from 'koa-compress';
import { accountRoutes, authRoutes, memberRoutes, PrincipalCache, recordAudit } from './accounts/index.js';
import { agentRoutes, staticIpRoutes } from './agents/index.js';
import { alertChannelRoutes, alertRoutes } from './alerts/index.js';
import { analyticsRoutes, prometheusRoutes } from './analytics/index.js';
import { CheckTypeCache, checkGroupRoutes, checkRoutes } from './checks/index.js';
import { consolePages } from './console/index.js';
import { dashboardIncidentRoutes, dashboardPages, dashboardRoutes } from './dashboards/index.js';
import { heartbeatRoutes } from './heartbeats/index.js';
import { type AuditSink, auditWrites } from './http/audit.js';
import { authenticate, type Resolvers, serviceOrigin } from './http/auth.js';
import { jsonBody, type LargerBody, PLAIN_BODY_TEXT } from './http/body.js';
import { dispatchRoutes, type RouteEntry } from './http/dispatch.js';
import { errorMiddleware, HttpError } from './http/errors.js';
import { compileRouteInput } from './http/invoke.js';
import { buildOpenApi } from './http/openapi.js';
import { RateLimits } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { type AnyRoute, koaPath, type Reply } from './http/route.js';
import { compileResponseValidator } from './http/validation.js';
import { ingestRoutes } from './ingest/index.js';
import { mcpEndpoint } from './mcp/index.js';
import { apiReference } from './ops/docs.js';
import { httpMetrics, metricsEndpoint } from './ops/metrics-http.js';
import { opsRoutes } from './ops/routes.js';
import { requestSpans } from './ops/run-spans.js';
import type { Logger } from './platform/logger.js';
import { privateLocationRoutes } from './private-locations/index.js';
import { projectRoutes, storageRoutes } from './projects/index.js';
import { rcaRoutes, withRootCauseAnalyses } from './rca/index.js';
import { clientCertificateRoutes, customDomainRoutes, locationRoutes, runtimeRoutes, snippetRoutes, triggerRoutes, variableRoutes } from './resources/index.js';
import { checkSessionRoutes, runnerResourceRoutes } from './runners/index.js';
import { secretScanRoutes } from './secret-scans/index.js';
import { checkStatusRoutes } from './state/index.js';
import { badgeRoutes, maintenanceRoutes, maintenanceWindowRoutes, statusPageRoutes, statusPages } from './status-pages/index.js';
import type { Deps } from './storage/deps.js';
import { testSessionErrorGroupRoutes, testSessionRoutes } from './test-sessions/index.js';

export interface AppOptions {
  /** Check every reply against its declared response schema (on in tests). */
  validateResponses?: boolean;
}

/** The status logged for a request whose client went away before the answer (nginx's convention). */
const CLIENT_CLOSED_REQUEST = 499;

export const API_INFO = { title: 'Monitoring Management API', version: '1.0.0' };

/** Every route the service serves, in one list: the router and the OpenAPI document are both built from it. */
export function allRoutes(deps: Deps, getDocument: () => unknown, kept: { checkTypes: CheckTypeCache }): AnyRoute[] {
  return [
    ...opsRoutes(deps, getDocument),
    ...changesAccess(accountRoutes(deps)),
    ...changesAccess(authRoutes(deps)),
    ...changesAccess(memberRoutes(deps)),
    ...variableRoutes(deps),
    ...maintenanceWindowRoutes(deps),
    ...maintenanceRoutes(deps),
    ...statusPageRoutes(deps),
    ...customDomainRoutes(deps),
    ...dashboardIncidentRoutes(deps),
    ...badgeRoutes(deps),
    ...testSessionRoutes(deps),
    ...withRootCauseAnalyses(deps, testSessionErrorGroupRoutes(deps)),
    ...dashboardRoutes(deps),
    ...checkRoutes(deps),
    ...checkGroupRoutes(deps),
    ...alertChannelRoutes(deps),
    ...ingestRoutes(deps, kept.checkTypes),
    ...withRootCauseAnalyses(deps, analyticsRoutes(deps)),
    ...rcaRoutes(deps),
    ...checkStatusRoutes(deps),
    ...snippetRoutes(deps),
    ...privateLocationRoutes(deps),
    ...agentRoutes(deps),
    ...staticIpRoutes(deps),
    ...clientCertificateRoutes(deps),
    ...triggerRoutes(deps),
    ...checkSessionRoutes(deps),
    ...runnerResourceRoutes(deps),
    ...alertRoutes(deps),
    ...heartbeatRoutes(deps),
    ...prometheusRoutes(deps),
    ...projectRoutes(deps),
    ...secretScanRoutes(deps),
    ...storageRoutes(deps),
    ...runtimeRoutes(),
    ...locationRoutes(deps),
  ];
}

/** The accounts feature's routes: keys, members, roles, sign-in and the account's own rules. */
const changesAccess = (routes: AnyRoute[]): AnyRoute[] => routes.map((route) => ({ ...route, changesAccess: true }));

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
      if ((ctx.request.length ?? 0) > route.rawBody.maxBytes)
        throw new HttpError(413, `Payload content length greater than maximum allowed: ${route.rawBody.maxBytes}`);
    } else if (route.schema.body && hasBody && !ctx.request.is('application/json')) {
      throw new HttpError(415, 'Content-Type must be application/json');
    }
    const input = parse({
      params: ctx.params as Record<string, string>,
      query: ctx.query,
      headers: Object.fromEntries(headerNames.filter((n) => ctx.get(n) !== '').map((n) => [n, ctx.get(n)])),
      body: route.rawBody ? ctx.req : ctx.request.body,
      hasBody,
      plainText: ctx.state[PLAIN_BODY_TEXT] === true,
    });
    // A client that hangs up before the answer aborts the work that honours the signal (analytics queries). The
    // response's close says so; the request's would also fire once its body was read through, or let go by a route.
    const aborted = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableEnded) aborted.abort();
    };
    ctx.res.once('close', onClose);
    let reply: Reply;
    try {
      reply = await route.handler({
        ...(input as Omit<Parameters<AnyRoute['handler']>[0], 'principal' | 'context'>),
        principal: ctx.state.principal,
        context: {
          requestId: ctx.state.requestId as string,
          signal: aborted.signal,
          method: ctx.method,
          path: ctx.path,
          cookie: (name) => ctx.cookies.get(name),
          client: { address: ctx.ip, userAgent: ctx.get('user-agent'), secure: ctx.secure, origin: serviceOrigin(ctx) },
        },
      });
    } catch (err) {
      // The client hung up and its query was stopped: nobody gets an answer, and nothing failed (nginx's 499).
      if (aborted.signal.aborted) {
        ctx.status = CLIENT_CLOSED_REQUEST;
        return;
      }
      throw err;
    } finally {
      ctx.res.off('close', onClose);
    }
    // A stream or bytes (events, a download) are not JSON: only JSON answers are checked against their schema.
    if (!(reply.body instanceof Stream) && !Buffer.isBuffer(reply.body)) checkResponse.get(reply.status)?.(reply.body);
    ctx.status = reply.status;
    if (reply.headers) ctx.set(reply.headers);
    for (const c of reply.cookies ?? []) {
      ctx.cookies.set(c.name, c.value, {
        httpOnly: true,
        sameSite: c.sameSite ?? 'lax',
        secure: ctx.secure,
        path: '/',
        overwrite: true,
        ...(c.maxAgeMs !== undefined ? { maxAge: c.maxAgeMs } : {}),
        ...(c.value === null ? { maxAge: 0 } : {}),
      });
    }
    // Events go out as they are written: compression would hold them back.
    if (reply.streaming) ctx.compress = false;
    if (reply.body === undefined) return;
    // A read's JSON is written once: Koa would write it to learn its length and koa-compress again to send it.
    // Writes keep their object (the audit log reads a created resource's id from it).
    if (
      ctx.method === 'GET' &&
      reply.body !== null &&
      typeof reply.body === 'object' &&
      (Array.isArray(reply.body) || Object.getPrototypeOf(reply.body) === Object.prototype)
    ) {
      if (!ctx.response.get('Content-Type')) ctx.type = 'application/json';
      ctx.body = JSON.stringify(reply.body);
    } else {
      ctx.body = reply.body;
    }
  };
}

/** Routes whose JSON bodies may be larger than the service's limit (project deploys, agents), by exact path. */
function largerBodies(routes: AnyRoute[]): Map<string, LargerBody> {
  return new Map(
    routes
      .filter((r) => r.bodyLimitBytes !== undefined && !r.path.includes('{'))
      .map((r) => [r.path, { limitBytes: r.bodyLimitBytes!, beforeBody: r.beforeBody }]),
  );
}

export function buildRouter(
  routes: AnyRoute[],
  resolvers: Resolvers,
  rateLimits: RateLimits,
  options: AppOptions & { audit?: { sink: AuditSink; logger: Logger }; forgetKeys?: () => void },
) {
  const entries: RouteEntry[] = [];
  for (const route of routes) {
    const chain: Middleware[] = [];
    const forget = options.forgetKeys;
    // Before the answer goes out, whatever it did: the writer's next request is resolved afresh. Other processes
    // hear of the commit from Postgres (PrincipalCache).
    if (forget && route.changesAccess && route.method !== 'GET') {
      chain.push(async function forgetKeysAfterWrite(_ctx, next) {
        try {
          await next();
        } finally {
          forget();
        }
      });
    }
    if (route.access !== 'public') {
      // Outside authentication: a write its role refused is recorded too (authenticate names the principal first).
      if (options.audit && route.method !== 'GET' && !route.reads) chain.push(auditWrites(route, options.audit.sink, options.audit.logger));
      chain.push(authenticate(resolvers, route.access, route.personal ?? false));
      chain.push(rateLimits.middleware(route.operationId, route.rateLimit));
    } else if (route.rateLimit) {
      chain.push(rateLimits.middleware(route.operationId, route.rateLimit));
    }
    chain.push(routeHandler(route, options.validateResponses ?? false));
    entries.push({ path: koaPath(route.path), method: route.method, name: route.operationId, chain });
  }
  return dispatchRoutes(entries);
}

export function createApp(deps: Deps, options: AppOptions = {}) {
  let document: unknown;
  // Kept between ingest's batches, forgotten when a change of checks is announced (stopped with the principals).
  const checkTypes = new CheckTypeCache(deps.sql, deps.logger);
  const routes = allRoutes(deps, () => document, { checkTypes });
  document = buildOpenApi(routes, API_INFO);
  const rateLimits = new RateLimits(deps.redis, deps.config.redisPrefix, deps.config.rateLimit);
  const { sql, config } = deps;
  const sessions = { idleMs: config.people.sessionIdleMs, absoluteMs: config.people.sessionAbsoluteMs };
  const principals = new PrincipalCache(sql, config.people.keyCacheMs, deps.logger);
  const resolvers: Resolvers = {
    key: (key, account) => principals.resolve(key, account),
    session: (token, account) => principals.resolveSession(token, account, sessions),
    publicUrl: () => config.publicUrl,
  };
  const audit = { sink: (entry: Parameters<AuditSink>[0]) => recordAudit(sql, entry), logger: deps.logger };
  const { router, middleware: dispatch } = buildRouter(routes, resolvers, rateLimits, { ...options, audit, forgetKeys: () => principals.forget() });

  const app = new Koa();
  app.silent = true;
  app.proxy = deps.config.trustProxy;
  // Only the addresses the trusted proxies added (the rightmost TRUST_PROXY_HOPS of X-Forwarded-For): what a client
  // writes there itself is never its address.
  app.maxIpsCount = deps.config.trustProxyHops;
  // Requests still being handled, whether or not their client is still there: shutdown waits for them before the
  // pools close (a handler that committed a write still records its audit entry).
  const inFlight = new InFlight();
  app.use(async function countInFlight(_ctx, next) {
    inFlight.start();
    try {
      await next();
    } finally {
      inFlight.end();
    }
  });
  app.use(requestLog(deps.logger, deps.config.requestLogLevel));
  // The service's own requests as spans, when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/traces.md).
  const spans = requestSpans(deps.config.otel, deps.logger, deps.metrics);
  if (spans) app.use(spans.middleware);
  // Answers of 1 KiB or more go out compressed to clients that take it (gzip, deflate or br): dashboard
  // pages and data, reports, lists. Error bodies are compressed like any other.
  app.use(compress({ threshold: 1024, br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }, gzip: { level: 6 } }));
  // Outside the error middleware: a thrown error is counted with the status it answered (a 400, a 503), not
  // with Koa's default 404 of a context no one set a status on yet.
  app.use(httpMetrics(deps.metrics));
  app.use(errorMiddleware(deps.logger));
  // Pages and operator endpoints outside the API description: /metrics, /docs, rendered dashboards.
  app.use(metricsEndpoint(deps.metrics, deps.config.metricsToken));
  app.use(apiReference(() => document));
  app.use(dashboardPages(deps, rateLimits));
  app.use(statusPages(deps, rateLimits));
  app.use(consolePages(deps.config));
  app.use(jsonBody(deps.config.bodyLimitBytes, largerBodies(routes)));
  // AI tools: an MCP server whose tools call the routes below with the caller's key (docs/mcp.md).
  app.use(mcpEndpoint({ resolveKey: resolvers.key, logger: deps.logger, version: API_INFO.version }));
  app.use(dispatch);
  return { app, router, routes, document, principals, checkTypes, inFlight, spans };
}

/** A count of requests being handled, and a wait for it to reach zero. */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];
  get size(): number {
    return this.count;
  }
  start(): void {
    this.count++;
  }
  end(): void {
    this.count--;
    if (this.count === 0) for (const w of this.waiters.splice(0)) w();
  }
  /** Resolves once no request is being handled, or after `ms` (true: all ended). */
  idle(ms: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, ms);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(done);
    });
  }
}
