import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Principal } from '../model/accounts.js';
import { HttpError } from './errors.js';
import type { RateLimitRule } from './route.js';

/**
 * Fixed-window limits per account, counted in Redis so every API process shares them. If Redis fails,
 * an in-memory limiter with the same rule takes over (per process) instead of letting requests through
 * unlimited or failing them.
 */
export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly defaults: RateLimitRule,
  ) {}

  private limiter(scope: string, rule: RateLimitRule): RateLimiterRedis {
    const id = `${scope}:${rule.points}:${rule.windowSeconds}`;
    let limiter = this.limiters.get(id);
    if (!limiter) {
      const opts = { keyPrefix: `${this.keyPrefix}rl:${id}`, points: rule.points, duration: rule.windowSeconds };
      limiter = new RateLimiterRedis({
        ...opts,
        storeClient: this.redis,
        insuranceLimiter: new RateLimiterMemory(opts),
      });
      this.limiters.set(id, limiter);
    }
    return limiter;
  }

  /**
   * Counts one event for `key` under `scope`'s rule; resolves with the seconds to wait when the rule is
   * exhausted, else undefined (failed dashboard logins are counted this way).
   */
  async hit(scope: string, key: string, rule: RateLimitRule): Promise<number | undefined> {
    try {
      await this.limiter(scope, rule).consume(key);
      return undefined;
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    }
  }

  /** Seconds until `key` may try again under `scope`'s rule, or undefined when it may now. */
  async blocked(scope: string, key: string, rule: RateLimitRule): Promise<number | undefined> {
    const res = await this.limiter(scope, rule).get(key);
    return res && res.remainingPoints <= 0 ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : undefined;
  }

  ruleFor(principal: Principal, routeRule?: RateLimitRule): { scope: string; rule: RateLimitRule } {
    if (routeRule) return { scope: 'route', rule: routeRule };
    const { rateLimitPoints, rateLimitWindowSeconds } = principal.account;
    if (rateLimitPoints && rateLimitWindowSeconds) {
      return { scope: 'account', rule: { points: rateLimitPoints, windowSeconds: rateLimitWindowSeconds } };
    }
    return { scope: 'account', rule: this.defaults };
  }

  /**
   * Middleware for one route: `routeId` keeps a route's own limit in its own bucket. A public route (no key,
   * so no account) counts per the values of its path, whatever their letter case (a ping token answers in
   * either): a ping or trigger URL is limited per token; one without path values (a password reset) counts per
   * client address, never one bucket for everyone.
   */
  middleware(routeId: string, routeRule?: RateLimitRule): Middleware {
    const limits = this;
    return async function rateLimitMiddleware(ctx, next) {
      const principal = ctx.state.principal as Principal | undefined;
      const { scope, rule } = principal ? limits.ruleFor(principal, routeRule) : { scope: 'route', rule: routeRule ?? limits.defaults };
      const credential = !principal && routeRule?.perCredential ? ctx.get('authorization') : '';
      const owner = principal
        ? principal.account.id
        : credential
          ? `credential:${createHash('sha256').update(credential).digest('base64url').slice(0, 22)}`
          : Object.keys(ctx.params ?? {}).length
            ? `path:${Object.values(ctx.params as Record<string, string>)
                .join('/')
                .toLowerCase()}`
            : `address:${ctx.ip}`;
      const bucket = routeRule?.bucket ?? routeId;
      const key = scope === 'route' ? `${bucket}:${owner}` : owner;
      let res: RateLimiterRes;
      let limited = false;
      try {
        res = await limits.limiter(scope === 'route' ? `route:${bucket}` : 'account', rule).consume(key);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        res = rejection;
        limited = true;
      }
      const reset = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      const remaining = Math.max(0, res.remainingPoints);
      const headers = {
        'RateLimit-Limit': String(rule.points),
        'RateLimit-Remaining': String(remaining),
        'RateLimit-Reset': String(reset),
      };
      ctx.set(headers);
      if (limited) {
        throw new HttpError(429, 'Too Many Requests', { limit: rule.points, remaining, reset }, { ...headers, 'Retry-After': String(reset) });
      }
      await next();
    };
  }
}
