import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Principal } from '../model/accounts.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a route: `public` needs no key; `read` any member; `write` a read-write or admin member;
 * `admin` an admin member.
 */
export type Access = 'public' | 'read' | 'run' | 'write' | 'admin';

export interface RateLimitRule {
  points: number;
  windowSeconds: number;
  /** Routes naming the same bucket count together (the ways to ping one token); by default each route its own. */
  bucket?: string;
  /**
   * A public route that takes a credential of its own (an agent's location key): counted per credential sent,
   * so that one caller, or anyone sending junk, never uses up the others' allowance.
   */
  perCredential?: boolean;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A stream answered as it is written (server-sent events): never buffered by compression. */
  streaming?: boolean;
  /** Cookies to set (a session's, sign-in state): HTTP-only and SameSite=Lax always, Secure behind TLS. */
  cookies?: { name: string; value: string | null; maxAgeMs?: number; sameSite?: 'lax' | 'strict' }[];
}

export interface RouteSchemas<P extends TSchema, Q extends TSchema, B extends TSchema, H extends TSchema> {
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers the route reads, by lower-case name (documented as header parameters). */
  headers?: H;
  /** Success responses by status; error responses are added from `errors`. */
  responses: Record<number, TSchema | null>;
}

/** About the HTTP exchange itself: its id, and a signal aborted when the client goes away before the answer. */
export interface RequestContext {
  requestId: string;
  signal: AbortSignal;
  /** The request's method (HEAD on a GET route). */
  method: string;
  /** The request's path (what the audit log names). */
  path: string;
  /** A cookie the request carries (none in an in-process call). */
  cookie: (name: string) => string | undefined;
  /** The client's address (X-Forwarded-For's with TRUST_PROXY), its user agent, whether it came over TLS. */
  client: { address: string; userAgent: string; secure: boolean; origin: string };
}

export interface Request<P, Q, B, H> {
  params: P;
  query: Q;
  body: B;
  headers: H;
  /** Set on every route whose access is not `public`. */
  principal: Principal;
  context: RequestContext;
}

export interface RouteDef<P extends TSchema = TObject, Q extends TSchema = TObject, B extends TSchema = TSchema, H extends TSchema = TObject> {
  method: Method;
  /** OpenAPI-style path, e.g. `/v1/checks/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  access: Access;
  /**
   * A person's own settings (their session, password, second factor): reachable by a session even where the
   * account requires a second factor the person has not turned on yet, so that they can.
   */
  personal?: boolean;
  /**
   * A write here may change what API keys resolve to (keys, members, roles, the account's rules): the process forgets
   * the keys it keeps once it has answered (docs/people.md, "Keys kept a few seconds").
   */
  changesAccess?: boolean;
  /** A POST that only reads (a query too long for a URL): kept out of the audit log, which records writes. */
  reads?: boolean;
  /** A route's own limit; otherwise the account's or the service default applies. */
  rateLimit?: RateLimitRule;
  /** Error statuses this route can answer besides the ones every authenticated route has. */
  errors?: number[];
  deprecated?: boolean;
  /** Media type of the success responses; JSON unless set (the handler sets the Content-Type header to match). */
  contentType?: string;
  /**
   * The body is bytes of this media type, not JSON: the handler gets the request stream as `body` (its schema
   * only documents it) and reads at most `maxBytes` (a declared larger length is a 413 before any is read).
   */
  rawBody?: { mediaType: string; maxBytes: number };
  /** A JSON body may be this large (after content decoding) instead of the service's BODY_LIMIT_BYTES. */
  bodyLimitBytes?: number;
  /**
   * With bodyLimitBytes: checked from the headers before a byte of the body is read (throws an HttpError, such as a
   * 401 for a key that opens nothing), so nobody makes the service parse a large body it would refuse anyway.
   */
  beforeBody?: (headers: Readonly<Record<string, string | string[] | undefined>>) => Promise<void>;
  schema: RouteSchemas<P, Q, B, H>;
  handler: (req: Request<Static<P>, Static<Q>, Static<B>, Static<H>>) => Promise<Reply> | Reply;
}

// Handlers are typed at definition; the registry only needs the erased shape.
// biome-ignore lint/suspicious/noExplicitAny: the registry holds routes of every input type
export type AnyRoute = RouteDef<any, any, any, any>;

export function defineRoute<P extends TSchema = TObject, Q extends TSchema = TObject, B extends TSchema = TSchema, H extends TSchema = TObject>(
  def: RouteDef<P, Q, B, H>,
): AnyRoute {
  return def as AnyRoute;
}

/** `/v1/checks/{id}` → `/v1/checks/:id` for @koa/router. */
export function koaPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}
