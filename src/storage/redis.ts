import { Redis } from 'ioredis';
import { UnreachableError } from './postgres.js';

/** The longest any request waits on Redis before it is answered 503 (docs/ingest.md, "Without Redis"). */
export const REDIS_COMMAND_TIMEOUT_MS = 1500;

/**
 * Options of every connection a request waits on: while Redis is unreachable a command fails at once (no
 * offline queue, no retries), and one that gets no answer fails after REDIS_COMMAND_TIMEOUT_MS; ioredis
 * keeps reconnecting in the background.
 */
export const FAIL_FAST = { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: REDIS_COMMAND_TIMEOUT_MS } as const;

/** Whether an error says Redis could not be reached or did not answer in time (the caller answers 503). */
export function isRedisUnavailable(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string } | null;
  if (!e || typeof e !== 'object') return false;
  if (e.name === 'MaxRetriesPerRequestError') return true;
  return /Stream isn't writeable|Connection is closed|Command timed out|connect ECONNREFUSED|connect ETIMEDOUT|Reached the max retries/.test(e.message ?? '');
}

/**
 * Connects and fails fast with a message that says which Redis and how to start it. Commands issued in one tick
 * leave in one write (auto-pipelining: the rate limiter's command per request was the read path's largest cost);
 * a command queued behind a pipeline that waits on a silent Redis can take two command timeouts to fail.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 5000, enableAutoPipelining: true, ...FAIL_FAST });
  redis.on('error', () => {
    // Connection errors surface on the commands that hit them and in /ready; ioredis reconnects by itself.
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    const u = new URL(url);
    throw new UnreachableError(
      `Cannot connect to Redis at ${u.hostname}:${u.port || 6379} (REDIS_URL): ${(err as Error).message}. ` +
        'Start it (for example: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no) ' +
        'or point REDIS_URL at a running server.',
    );
  }
  return redis;
}

/** Deletes every key under `prefix` (a test run's or a bench run's namespace). */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
