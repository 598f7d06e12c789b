import type { Deps } from '../storage/deps.js';

const TIMEOUT_MS = 2000;

export function withTimeout<T>(promise: Promise<T>, ms = TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function probe(fn: () => Promise<unknown>) {
  try {
    await withTimeout(fn());
    return { status: 'ok' as const };
  } catch (err) {
    return { status: 'unavailable' as const, error: (err as Error).message };
  }
}

export async function checkReadiness(deps: Deps) {
  const [postgres, redis, clickhouse] = await Promise.all([probe(() => deps.sql`select 1`), probe(() => deps.redis.ping()), probe(() => deps.store.ping())]);
  return { postgres, redis, clickhouse };
}

/** Queue depth, lag and the failed set: reported, but they do not make the service unready. */
export async function ingestDetails(deps: Deps) {
  try {
    return await withTimeout(deps.ingest.stats());
  } catch (err) {
    return { error: (err as Error).message };
  }
}
