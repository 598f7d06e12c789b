import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Redis } from 'ioredis';

export const IdempotencyKeyHeader = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  title: '1 to 255 printable ASCII characters',
  description: 'Makes a retried request safe: the same key within 24 hours answers the first reply again and does nothing more.',
});

interface Remembered<T> {
  fingerprint: string;
  reply: T;
}

/**
 * Replies remembered by `Idempotency-Key`, per account, for a day. The first request with a key stores its
 * reply before acting; a repeat with the same body gets that reply back, one with another body a conflict.
 */
export class IdempotencyKeys {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly ttlSeconds = 86_400,
  ) {}

  private redisKey(accountId: string, key: string): string {
    return `${this.keyPrefix}idem:${accountId}:${createHash('sha256').update(key).digest('base64url')}`;
  }

  /** The body's hash in a canonical form: the same JSON with its keys in another order is the same request. */
  static fingerprint(body: unknown): string {
    return createHash('sha256').update(canonicalJson(body)).digest('base64url');
  }

  /** `undefined` when this is the first use (and `reply` is now stored); otherwise what the first use stored. */
  async claim<T>(accountId: string, key: string, fingerprint: string, reply: T): Promise<Remembered<T> | undefined> {
    const redisKey = this.redisKey(accountId, key);
    const stored = await this.redis.set(redisKey, JSON.stringify({ fingerprint, reply }), 'EX', this.ttlSeconds, 'NX');
    if (stored === 'OK') return undefined;
    const prior = await this.redis.get(redisKey);
    // Expired between the two calls: claim again.
    return prior ? (JSON.parse(prior) as Remembered<T>) : this.claim(accountId, key, fingerprint, reply);
  }

  /** Undoes a claim whose action failed, so the client's retry acts. */
  async forget(accountId: string, key: string): Promise<void> {
    await this.redis.del(this.redisKey(accountId, key));
  }
}

/** JSON with object keys sorted at every level (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
