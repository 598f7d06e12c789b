import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { HttpError } from '../http/errors.js';
import { hashSecret } from '../model/secrets.js';
import type { Metrics } from '../platform/metrics.js';

/** Counts and times every answered request by its route template (never the raw path: ids would explode the series). */
export function httpMetrics(metrics: Metrics): Middleware {
  return async function httpMetricsMiddleware(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? (ctx.state.pageRoute as string | undefined) ?? 'unmatched';
      metrics.httpRequests.inc({ route, method: ctx.method, status: String(ctx.status) });
      metrics.httpDuration.observe({ route, method: ctx.method }, (performance.now() - started) / 1000);
    }
  };
}

/** Equal secrets, compared by digest in constant time. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(hashSecret(given), hashSecret(expected));
}

/**
 * GET /metrics in Prometheus text format, for the operator's scraper: only with METRICS_TOKEN set, and only
 * with `Authorization: Bearer <METRICS_TOKEN>` (the API keys of accounts do not open it).
 */
export function metricsEndpoint(metrics: Metrics, token: string | undefined): Middleware {
  return async function metricsEndpointMiddleware(ctx, next) {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.state.pageRoute = '/metrics';
    if (!token) return next();
    const given = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
    if (!given || !sameSecret(given, token)) {
      throw new HttpError(401, 'Send Authorization: Bearer <METRICS_TOKEN>', undefined, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  };
}
