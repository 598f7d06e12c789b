import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { may, type PrincipalResolver, ROLES_FOR, type SessionResolver } from '../model/accounts.js';
import { forbidden, HttpError, unauthorized } from './errors.js';
import { UUID } from './ids.js';
import type { Access } from './route.js';

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i;

/** The browser session's cookie (docs/people.md): HTTP-only, SameSite=Lax, Secure behind TLS. */
export const SESSION_COOKIE = 'monitoring_session';
/** The header a write made with a session cookie carries its CSRF token in (else a verified Origin). */
export const CSRF_HEADER = 'x-csrf-token';

function countHeader(rawHeaders: string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) n++;
  return n;
}

/** The account a request names: `x-service-account`, or the anchor API's `x-checkly-account`; both must agree. */
function requestedAccount(service: string, checkly: string): string | undefined {
  if (service && checkly && service !== checkly) throw new HttpError(400, 'x-service-account and x-checkly-account name different accounts; send one');
  return service || checkly || undefined;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A write made with a session cookie must show it comes from this service's own pages: its CSRF token in
 * `x-csrf-token`, or an `Origin` that is this service's (PUBLIC_URL's, or the one the request was sent to). A page
 * of another site can make the browser send the cookie (SameSite=Lax still sends it on top-level POSTs), never either.
 */
export function fromOwnPages(sent: { csrfToken: string; origin: string }, serviceOrigin: string, csrfToken: string, publicUrl: string | undefined): boolean {
  if (sent.csrfToken && sent.csrfToken.length === csrfToken.length && timingSafeEqual(Buffer.from(sent.csrfToken), Buffer.from(csrfToken))) return true;
  if (!sent.origin || sent.origin === 'null') return false;
  return sent.origin === serviceOrigin || (publicUrl !== undefined && sent.origin === new URL(publicUrl).origin);
}

/** Where this request was sent: scheme and host (Koa 3's `ctx.origin` is the Origin header, not this). */
export const serviceOrigin = (ctx: { protocol: string; host: string }) => `${ctx.protocol}://${ctx.host}`;

export interface Resolvers {
  key: PrincipalResolver;
  session: SessionResolver;
  /** Where clients reach the service (PUBLIC_URL), for the Origin check. */
  publicUrl: () => string | undefined;
}

/**
 * Resolves `Authorization: Bearer <key>` or the session cookie, and the requested account, to a principal in
 * ctx.state.principal; the route's access level decides whether its role may. A key wins over a cookie.
 */
export function authenticate(resolvers: Resolvers, access: Exclude<Access, 'public'>, personal = false): Middleware {
  return async function authenticateMiddleware(ctx, next) {
    // Node keeps only the first of repeated Authorization headers; two keys in one request are ambiguous.
    if (countHeader(ctx.req.rawHeaders, 'authorization') > 1) throw new HttpError(400, 'Send one Authorization header');
    const requested = requestedAccount(ctx.get('x-service-account'), ctx.get('x-checkly-account'));
    const wellFormed = requested === undefined || UUID.test(requested);
    const authorization = ctx.get('authorization');
    const cookie = authorization ? undefined : ctx.cookies.get(SESSION_COOKIE);
    let principal: Awaited<ReturnType<PrincipalResolver>> | Awaited<ReturnType<SessionResolver>> | undefined;
    if (authorization || !cookie) {
      const match = BEARER.exec(authorization);
      if (!match) throw unauthorized(authorization ? 'not-bearer' : 'missing-credentials');
      principal = await resolvers.key(match[1], wellFormed ? requested : undefined);
      if (principal === undefined) throw unauthorized('invalid-key');
    } else {
      const session = /^[\w-]{20,100}$/.test(cookie) ? await resolvers.session(cookie, wellFormed ? requested : undefined) : undefined;
      if (
        session &&
        session !== 'forbidden' &&
        !SAFE.has(ctx.method) &&
        !fromOwnPages({ csrfToken: ctx.get(CSRF_HEADER), origin: ctx.get('origin') }, serviceOrigin(ctx), session.csrfToken, resolvers.publicUrl())
      ) {
        // Named first: the audit log records the refused write with whose session it came (a forged request is worth seeing).
        ctx.state.principal = session;
        throw new HttpError(403, `A write made with a session cookie needs its CSRF token (${CSRF_HEADER}) or this service's Origin`);
      }
      principal = session;
    }
    if (principal === undefined) throw unauthorized('session-ended');
    // A malformed account id cannot be one the key belongs to.
    if (principal === 'forbidden' || !wellFormed) throw forbidden();
    // Named before the role is checked: the audit log records a refused write with who tried it.
    ctx.state.principal = principal;
    if (principal.secondFactorMissing && !personal) {
      throw new HttpError(403, 'This account requires a second factor: turn yours on (POST /v1/auth/two-factor/setup) to use it', {
        reason: 'second-factor-required',
      });
    }
    if (!may(principal.role, access)) {
      throw new HttpError(403, `Your role here (${principal.role}) may not do this: it takes ${ROLES_FOR[access].join(', ')}`, {
        reason: 'role',
        roles: [...ROLES_FOR[access]],
      });
    }
    await next();
  };
}
