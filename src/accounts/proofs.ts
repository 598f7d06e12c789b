import { createHash } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { Deps } from '../storage/deps.js';
import type { Sql } from '../storage/postgres.js';
import { openSecret } from '../storage/secret-box.js';
import { takeTotpStep, type UserRow, useRecoveryCode } from './users.js';

/** What proves a person is who they say (docs/people.md): attempts limited per key, and the second factor (TOTP, recovery codes). */

/**
 * Sign-in attempts counted per key (an email, a browser, a client address) over 15 minutes. A point is taken before
 * any password is hashed, so a burst of concurrent attempts is refused past the limit instead of all hashed; a
 * sign-in that succeeds gives its address's point back and clears its email's count.
 */
export function attemptLimit(deps: Deps, name: string, points: number) {
  const rule = { keyPrefix: `${deps.config.redisPrefix}rl:${name}`, points, duration: 900 };
  const limiter = new RateLimiterRedis({ ...rule, storeClient: deps.redis, insuranceLimiter: new RateLimiterMemory(rule) });
  return {
    /** Takes a point: undefined when there was one, else the seconds until there is. */
    async take(key: string): Promise<number | undefined> {
      try {
        await limiter.consume(key);
        return undefined;
      } catch (res) {
        const ms = (res as { msBeforeNext?: number }).msBeforeNext;
        return typeof ms === 'number' ? Math.max(1, Math.ceil(ms / 1000)) : undefined;
      }
    },
    give: (key: string) => limiter.reward(key, 1).catch(() => undefined),
    clear: (key: string) => limiter.delete(key).catch(() => undefined),
  };
}

export const hashCode = (code: string) => createHash('sha256').update(code.replace(/[\s-]/g, '').toLowerCase()).digest();

export function totpOf(user: Pick<UserRow, 'email' | 'totp_secret'>): OTPAuth.TOTP | undefined {
  if (!user.totp_secret) return undefined;
  return new OTPAuth.TOTP({
    issuer: 'Monitoring',
    label: user.email,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    secret: OTPAuth.Secret.fromBase32(openSecret(user.totp_secret)),
  });
}

/** The time step a code of the app is for (one step either side of now), or undefined when it is none of them. */
export function totpStep(totp: OTPAuth.TOTP, code: string): number | undefined {
  const delta = totp.validate({ token: code, window: 1 });
  return delta === null ? undefined : totp.counter() + delta;
}

/**
 * A code of the user's authenticator (one step either side, each step accepted once: a code seen signing in cannot
 * sign in again), or one of their unused recovery codes (used up).
 */
export async function secondFactorHolds(db: Sql, user: UserRow, code: string): Promise<boolean> {
  const totp = totpOf(user);
  if (!totp) return false;
  const digits = code.trim();
  if (/^\d{6}$/.test(digits)) {
    const step = totpStep(totp, digits);
    return step !== undefined && takeTotpStep(db, user.id, step);
  }
  return useRecoveryCode(db, user.id, hashCode(code));
}
