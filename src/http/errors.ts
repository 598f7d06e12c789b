import { STATUS_CODES } from 'node:http';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

/** The contract's messages; statuses it does not list use Node's reason phrase. */
const CONTRACT_MESSAGES: Record<number, string> = {
  401: 'Bad Token',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
};

export function statusName(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  attributes?: Record<string, unknown>;
}

/** An error that is meant for the client: its status, message and attributes are sent as they are. */
export class HttpError extends Error {
  readonly headers: Record<string, string>;
  constructor(
    readonly status: number,
    message?: string,
    readonly attributes?: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    super(message ?? CONTRACT_MESSAGES[status] ?? statusName(status));
    this.name = 'HttpError';
    this.headers = headers;
  }

  body(): ErrorBody {
    const body: ErrorBody = { statusCode: this.status, error: statusName(this.status), message: this.message };
    if (this.attributes) body.attributes = this.attributes;
    return body;
  }
}

export const badRequest = (message: string, attributes?: Record<string, unknown>) =>
  new HttpError(400, message, attributes);
export const notFound = () => new HttpError(404);
export const conflict = (message = 'Conflict', attributes?: Record<string, unknown>) =>
  new HttpError(409, message, attributes);
export const forbidden = () => new HttpError(403);
export const unauthorized = () =>
  new HttpError(401, 'Bad Token', { error: 'Bad Token' }, { 'WWW-Authenticate': 'Bearer error="Bad Token"' });

/** Errors thrown by body parsers and Koa itself carry `status` and `expose`; keep their 4xx meaning. */
function fromLibraryError(err: unknown): HttpError | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown; expose?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 0;
  if (status < 400 || status >= 500) return undefined;
  if (status === 400 && e.type === 'entity.parse.failed') return badRequest('Malformed JSON body');
  if (status === 413) return new HttpError(413, 'Request body is larger than the allowed limit');
  if (status === 415) return new HttpError(415, 'Unsupported content type');
  if (status === 400) return badRequest(e.expose ? String((err as Error).message) : 'Bad Request');
  return new HttpError(status);
}

/** Maps every thrown error to the contract's body; unexpected errors become a 500 with a request id. */
export function errorMiddleware(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Koa's default 404 and the router's 405/501 leave an empty body: give them the contract's shape.
      if (ctx.body == null && ctx.status >= 400) throw new HttpError(ctx.status);
    } catch (err) {
      let httpError = err instanceof HttpError ? err : fromLibraryError(err);
      if (!httpError) {
        logger.error({ err, requestId: ctx.state.requestId }, 'unhandled error');
        httpError = new HttpError(500, 'Internal Server Error', { requestId: ctx.state.requestId });
      }
      ctx.status = httpError.status;
      for (const [name, value] of Object.entries(httpError.headers)) ctx.set(name, value);
      ctx.body = httpError.body();
    }
  };
}
