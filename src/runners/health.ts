import type { Redis } from 'ioredis';
import type { RunJob } from '../run-kernel/index.js';
import type { Queues } from '../storage/queues.js';

/** How often a runner says it is alive, and how long that holds. */
const BEAT_MS = 10_000;
const SEEN_TTL_SECONDS = 30;

const runnerKey = (prefix: string, id: string) => `${prefix}runner:${id}`;

/** Keeps `{prefix}runner:<id>` (its locations) alive while the runner runs; resolves the stop function. */
export function registerRunner(redis: Redis, prefix: string, id: string, locations: readonly string[]): () => Promise<void> {
  const beat = () => redis.set(runnerKey(prefix, id), JSON.stringify({ locations, seenAt: Date.now() }), 'EX', SEEN_TTL_SECONDS).catch(() => {});
  // A connection without an offline queue refuses commands until it is ready: the first beat waits for it, else the
  // runner would be unseen (its locations "without a runner") for a whole beat after it starts.
  if (redis.status === 'ready') void beat();
  else redis.once('ready', () => void beat());
  const timer = setInterval(() => void beat(), BEAT_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await redis.del(runnerKey(prefix, id)).catch(() => {});
  };
}

/** The runners seen in the last 30 s: id → locations. */
export async function runnersSeen(redis: Redis, prefix: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}runner:*`, 'COUNT', 500);
    cursor = next;
    if (keys.length) {
      const values = await redis.mget(...keys);
      keys.forEach((k, i) => {
        try {
          out.set(k.slice(`${prefix}runner:`.length), (JSON.parse(values[i] ?? '{}') as { locations?: string[] }).locations ?? []);
        } catch {
          // a value another version wrote: skip it
        }
      });
    }
  } while (cursor !== '0');
  return out;
}

export interface LocationHealth {
  location: string;
  runners: number;
  /** Run jobs due and waiting for a runner (a window's scheduled runs of the location are one job). */
  waiting: number;
  /** Run jobs scheduled for later (slots within the lookahead, retries). */
  delayed: number;
  /** How long the oldest due run has waited: a location without a runner shows here, never as loss. */
  lagSeconds: number;
}

/** Each location's runners, queue and lag. */
export async function locationHealth(queues: Queues, redis: Redis, prefix: string, locations: readonly string[], now = Date.now()): Promise<LocationHealth[]> {
  const seen = await runnersSeen(redis, prefix);
  return Promise.all(
    locations.map(async (location) => {
      const queue = queues.queue<RunJob>(`runs-${location}`);
      const [counts, [oldest]] = await Promise.all([queue.getJobCounts('waiting', 'delayed', 'prioritized'), queue.getJobs(['wait'], 0, 0, true)]);
      const dueAt = oldest ? oldest.timestamp + (oldest.opts.delay ?? 0) : now;
      return {
        location,
        runners: [...seen.values()].filter((l) => l.includes(location)).length,
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        delayed: counts.delayed ?? 0,
        lagSeconds: Math.max(0, Math.round((now - dueAt) / 100) / 10),
      };
    }),
  );
}

/** Runs of each location now: queued (due, waiting), delayed (later), in flight (taken by a runner or agent). */
export async function locationRunCounts(
  queues: Queues,
  locations: readonly { location: string; slug: string }[],
): Promise<{ location: string; name: string; queued: number; delayed: number; inFlight: number }[]> {
  return Promise.all(
    locations.map(async ({ location, slug }) => {
      const c = await queues.queue<RunJob>(`runs-${location}`).getJobCounts('waiting', 'prioritized', 'delayed', 'active');
      return { location, name: slug, queued: (c.waiting ?? 0) + (c.prioritized ?? 0), delayed: c.delayed ?? 0, inFlight: c.active ?? 0 };
    }),
  );
}
