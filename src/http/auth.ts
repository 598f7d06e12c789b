import type { Middleware } from 'koa';
import type { Role } from '../model/secrets.js';
import { resolvePrincipal } from '../accounts/repository.js';
import type { Sql } from '../storage/postgres.js';
import { forbidden, HttpError, unauthorized } from './errors.js';
import { UUID } from './ids.js';
import type { Access } from './route.js';

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i;

const ALLOWED_ROLES: Record<Exclude<Access, 'public'>, readonly Role[]> = {
  read: ['read-only', 'read-write', 'admin'],
  write: ['read-write', 'admin'],
  admin: ['admin'],
};

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

/** Resolves `Authorization: Bearer <key>` and the requested account to a principal in ctx.state.principal. */
export function authenticate(sql: Sql, access: Exclude<Access, 'public'>): Middleware {
  return async function authenticateMiddleware(ctx, next) {
    // Node keeps only the first of repeated Authorization headers; two keys in one request are ambiguous.
    if (countHeader(ctx.req.rawHeaders, 'authorization') > 1) throw new HttpError(400, 'Send one Authorization header');
    const match = BEARER.exec(ctx.get('authorization'));
    if (!match) throw unauthorized();
    const requested = requestedAccount(ctx.get('x-service-account'), ctx.get('x-checkly-account'));
    const wellFormed = requested === undefined || UUID.test(requested);
    const principal = await resolvePrincipal(sql, match[1], wellFormed ? requested : undefined);
    if (principal === undefined) throw unauthorized();
    // A malformed account id cannot be one the key belongs to.
    if (principal === 'forbidden' || !wellFormed) throw forbidden();
    if (!ALLOWED_ROLES[access].includes(principal.role)) throw forbidden();
    ctx.state.principal = principal;
    await next();
  };
}
