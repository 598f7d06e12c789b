import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Assigns a request id (a caller's well-formed `x-request-id` is kept), echoes it and logs one line per request: at
 * `level` (LOG_REQUESTS, debug by default, so that at `info` the log is the events an operator follows), a 5xx at error.
 */
export function requestLog(logger: Logger, level: 'info' | 'debug' = 'debug'): Middleware {
  return async function requestLogMiddleware(ctx, next) {
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const status = ctx.status;
      // Only the path, method, status and who: never headers, query strings or bodies (they may hold secrets).
      logger[status >= 500 ? 'error' : level](
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          account: ctx.state.principal?.account?.id,
        },
        'request',
      );
    }
  };
}
