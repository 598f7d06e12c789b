import type { Redis } from 'ioredis';
import { journalKey, payloadKey, REDIS_NOW_MS, recoveringKey } from './queue.js';

/**
 * Renews the entries a worker still holds, and names those it no longer holds (a sweeper took them: their jobs are
 * or will be queued). KEYS: the journal. ARGV: the lease in ms, then the entries.
 */
const RENEW_SCRIPT = `${REDIS_NOW_MS}
local lost = {}
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then redis.call('ZADD', KEYS[1], 'XX', now + ARGV[1], ARGV[i]) else lost[#lost + 1] = ARGV[i] end
end
return lost`;

/**
 * Landed batches leave the journal; the rows of each go only if its entry was still there: a batch a sweeper took
 * meanwhile (its worker stalled past its lease) keeps them for the job it queued. KEYS: the journal, then each
 * batch's rows. ARGV: the entries, in the same order.
 */
const LANDED_SCRIPT = `for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then redis.call('DEL', KEYS[i + 1]) end
end
return #ARGV`;

/**
 * Takes the journal's entries whose worker let their deadline pass (it died, or lost Redis for longer than its
 * lease) into the recovering set, with those a sweeper took before and did not finish queueing; each gets a new
 * deadline there, so a sweeper that dies before queueing them leaves them to the next.
 * KEYS: the journal, the recovering set. ARGV: how long a sweeper has to queue them (ms), the most entries taken.
 */
const SWEEP_SCRIPT = `${REDIS_NOW_MS}
local taken = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, ARGV[2])
for _, e in ipairs(taken) do
  redis.call('ZREM', KEYS[1], e)
  redis.call('ZADD', KEYS[2], now + ARGV[1], e)
end
for _, e in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, ARGV[2])) do
  redis.call('ZADD', KEYS[2], now + ARGV[1], e)
  taken[#taken + 1] = e
end
return taken`;

type JournalRedis = Redis & {
  ingestJournalRenew(journal: string, leaseMs: number, ...entries: string[]): Promise<string[]>;
  ingestJournalLanded(numberOfKeys: number, ...keysThenEntries: string[]): Promise<number>;
  ingestJournalSweep(journal: string, recovering: string, retakeAfterMs: number, limit: number): Promise<string[]>;
};

/**
 * The ingest journal as a worker sees it: the batches it took from its own process (ResultQueue.direct), which it
 * holds by a lease it renews, removes once they landed, and, in any process, takes back from a worker that is gone.
 * Deadlines are on Redis's clock (REDIS_NOW_MS).
 */
export class IngestJournal {
  private readonly redis: JournalRedis;
  private readonly journal: string;
  private readonly recovering: string;

  constructor(
    redis: Redis,
    private readonly redisPrefix: string,
  ) {
    this.redis = redis as JournalRedis;
    if (typeof this.redis.ingestJournalRenew !== 'function') {
      this.redis.defineCommand('ingestJournalRenew', { numberOfKeys: 1, lua: RENEW_SCRIPT });
      // Its number of keys is the call's first argument: one, then a batch's rows each.
      this.redis.defineCommand('ingestJournalLanded', { lua: LANDED_SCRIPT });
      this.redis.defineCommand('ingestJournalSweep', { numberOfKeys: 2, lua: SWEEP_SCRIPT });
    }
    this.journal = journalKey(redisPrefix);
    this.recovering = recoveringKey(redisPrefix);
  }

  /** Moves the entries' deadline to `leaseMs` from now; answers those no longer held (a sweeper took them). */
  async renew(entries: readonly string[], leaseMs: number): Promise<Set<string>> {
    if (!entries.length) return new Set();
    return new Set(await this.redis.ingestJournalRenew(this.journal, leaseMs, ...entries));
  }

  /** The batches landed: their entries go, and the rows of those still held, in one round trip. */
  async landed(entries: readonly { entry: string; batchId: string }[]): Promise<void> {
    if (!entries.length) return;
    const rows = entries.map((e) => payloadKey(this.redisPrefix, e.batchId));
    await this.redis.ingestJournalLanded(1 + rows.length, this.journal, ...rows, ...entries.map((e) => e.entry));
  }

  /** The entry's batch is queued (to be tried again): it leaves the journal. */
  async queued(entries: readonly string[]): Promise<void> {
    if (entries.length) await this.redis.zrem(this.journal, ...entries);
  }

  /** Entries whose deadline passed, taken for queueing within `retakeAfterMs` (`recoveredQueued` once their jobs are). */
  async sweep(retakeAfterMs: number, limit = 500): Promise<string[]> {
    return this.redis.ingestJournalSweep(this.journal, this.recovering, retakeAfterMs, limit);
  }

  async recoveredQueued(entries: readonly string[]): Promise<void> {
    if (entries.length) await this.redis.zrem(this.recovering, ...entries);
  }
}
