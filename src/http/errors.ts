import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { isPostgresBusy } from '../storage/postgres.js';
import { isRedisUnavailable } from '../storage/redis.js';

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
  /** Top-level fields the body carries besides the contract's three (a 409's `deploymentId`, as the anchor sends it). */
  private fields: Record<string, unknown> = {};
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

  withFields(fields: Record<string, unknown>): this {
    this.fields = { ...this.fields, ...fields };
    return this;
  }

  body(): ErrorBody {
    const body: ErrorBody = { ...this.fields, statusCode: this.status, error: statusName(this.status), message: this.message };
    if (this.attributes) body.attributes = this.attributes;
    return body;
  }
}

export const badRequest = (message: string, attributes?: Record<string, unknown>) => new HttpError(400, message, attributes);
export const notFound = () => new HttpError(404);
export const conflict = (message = 'Conflict', attributes?: Record<string, unknown>) => new HttpError(409, message, attributes);
export const forbidden = () => new HttpError(403);
/** Why a request was not authenticated: the contract's `Bad Token` stays the message, `attributes.reason` says which. */
export const UNAUTHORIZED_REASONS = {
  'missing-credentials': 'Send your API key as `Authorization: Bearer <key>`, or sign in.',
  'not-bearer': 'The Authorization header must be `Bearer <key>`: the word Bearer, a space, then the key.',
  'invalid-key': 'This key is not valid here: mistyped, revoked or expired.',
  'session-ended': 'Your session has ended: sign in again.',
} as const;
export type UnauthorizedReason = keyof typeof UNAUTHORIZED_REASONS;

/**
 * 401 in the anchor's shape (`Bad Token`) with the mistake named in `attributes.reason` and `attributes.hint`.
 * An invalid key is one reason whatever the key is: whether it exists in another account is never told.
 */
export const unauthorized = (reason: UnauthorizedReason) =>
  new HttpError(401, 'Bad Token', { error: 'Bad Token', reason, hint: UNAUTHORIZED_REASONS[reason] }, { 'WWW-Authenticate': 'Bearer error="Bad Token"' });

function errorStatus(err: unknown): number {
  const e = err as { status?: unknown; statusCode?: unknown } | null;
  if (!e || typeof e !== 'object') return 0;
  return typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : 0;
}

/** The body parser's failures: a size error is a 413, anything else it rejects is malformed JSON. */
export function bodyParseError(err: unknown): HttpError {
  if (errorStatus(err) === 413) return new HttpError(413, 'Request body is larger than the allowed limit');
  return badRequest('Malformed JSON body');
}

/** Errors thrown by Koa and its libraries carry a 4xx `status`; keep that meaning without their text. */
function fromLibraryError(err: unknown): HttpError | undefined {
  const status = errorStatus(err);
  if (status < 400 || status >= 500) return undefined;
  // An error made to be said to the client (`expose`, as http-errors marks them) keeps its message.
  const said =
    (err as { expose?: unknown; message?: unknown }).expose === true && typeof (err as Error).message === 'string' ? (err as Error).message : undefined;
  return new HttpError(status, said);
}

/** How long a refused body may keep arriving after its 413 has gone out before the connection is closed. */
export const REFUSED_BODY_LINGER_MS = 1000;

/** Connections whose request body was refused unread: no request sent after it on them is handled. */
const refusedConnections = new WeakSet<object>();

/**
 * A body refused unread (413) ends its connection in stages (RFC 9112, 9.6): the answer says `Connection: close`
 * and goes out with a FIN after it, while what the client still sends is read and thrown away, so the client is not
 * cut off mid-write and reads the 413 instead of a reset; REFUSED_BODY_LINGER_MS after the answer went out the
 * connection is closed whatever the client does, so no client makes the server read an unbounded body. A request the
 * client sent after that body is not handled (errorMiddleware closes the connection instead). Node closes a
 * `Connection: close` socket as soon as the FIN after the answer is out, a reset for a client still sending: on this
 * socket it only sends the FIN. Kept alive instead, a client that sent the rest of the body within the linger held a
 * connection it had no answer left on (a 1 GiB body announced by Content-Length, taken whole in the second, waited
 * out the keep-alive timeout).
 */
function endAfterRefusal(ctx: Context): void {
  const { req, res } = ctx;
  if (req.complete) return;
  const socket = req.socket;
  refusedConnections.add(socket);
  ctx.set('Connection', 'close');
  // A reader that stopped at the limit left the request paused (raw-body halts it) or piped into an inflater nobody
  // reads any more, and Node drains only a request nobody read: unpiped and flowing with no listener, the rest is
  // thrown away.
  req.unpipe();
  req.resume();
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
  // From the answer, not from the refusal: until then the connection may still be answering requests sent before it.
  res.once('finish', () => {
    const timer = setTimeout(() => socket.destroy(), REFUSED_BODY_LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}

/** Maps every thrown error to the contract's body; unexpected errors become a 500 with a request id. */
export function errorMiddleware(logger: Logger): Middleware {
  return async function errorMiddleware(ctx, next) {
    if (refusedConnections.has(ctx.req.socket)) {
      // Sent after a body refused unread, on a connection the 413 closed: not handled (RFC 9112, 9.6).
      ctx.req.socket.destroy();
      return;
    }
    try {
      await next();
      // Koa's default 404 and the router's 405/501 leave an empty body: give them the contract's shape.
      if (ctx.body == null && ctx.status >= 400) throw new HttpError(ctx.status);
    } catch (err) {
      let httpError = err instanceof HttpError ? err : fromLibraryError(err);
      if (!httpError && isRedisUnavailable(err)) {
        // What needs Redis (the ingest queue, idempotency keys, pings) waits at most REDIS_COMMAND_TIMEOUT_MS for it.
        logger.warn({ err: (err as Error).message, requestId: ctx.state.requestId }, 'Redis unavailable');
        httpError = new HttpError(503, 'Redis is unavailable; retry later', { requestId: ctx.state.requestId }, { 'Retry-After': '5' });
      }
      if (!httpError && isPostgresBusy(err)) {
        // Every pooled connection stayed taken for PG_ACQUIRE_TIMEOUT_MS: what the request asked for did not run.
        logger.warn({ err: (err as Error).message, requestId: ctx.state.requestId }, 'Postgres busy');
        httpError = new HttpError(503, 'The database is busy; retry later', { requestId: ctx.state.requestId }, { 'Retry-After': '5' });
      }
      if (!httpError) {
        logger.error({ err, requestId: ctx.state.requestId }, 'unhandled error');
        httpError = new HttpError(500, 'Internal Server Error', { requestId: ctx.state.requestId });
      }
      ctx.status = httpError.status;
      for (const [name, value] of Object.entries(httpError.headers)) ctx.set(name, value);
      ctx.body = httpError.body();
      if (httpError.status === 413) endAfterRefusal(ctx);
    }
  };
}

const CLIENT_ERROR_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * Node answers requests it cannot parse (oversized headers, control characters in a header, a broken
 * request line) before the app sees them, with an empty body. This answers them in the error shape.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? 400;
  const message = status === 431 ? 'Request headers are too large' : status === 408 ? 'Request timed out' : 'Malformed HTTP request';
  const body = JSON.stringify(new HttpError(status, message).body());
  socket.end(
    `HTTP/1.1 ${status} ${statusName(status)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
