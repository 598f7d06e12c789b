import { Redis } from 'ioredis';
import { UnreachableError } from './postgres.js';

/** Connects and fails fast with a message that says which Redis and how to start it. */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3, connectTimeout: 5000 });
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
