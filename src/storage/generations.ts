import type { Redis } from 'ioredis';

/**
 * Versions of what ClickHouse holds per check and UTC day (docs/analytics.md, "Report cache"): ingest bumps the
 * (check, day) pairs of every batch after its insert has landed, late results for old days included; a cached
 * report bucket remembers the versions of the days it covers when it was read, and is used only while they are
 * unchanged. One Redis hash per check (`<prefix>rgen:<checkId>`, field = day number since the epoch), shared by
 * every API and worker process. `epoch` is bumped by whatever changes results other than ingest (backfilling
 * rollups): every cached bucket goes.
 */
export const DAY_MS = 86_400_000;
/** A check's versions go a year after its last write (a cached bucket of an older day reads version 0 again: still valid). */
const TTL_SECONDS = 400 * 86_400;

/** KEYS: the checks' hashes; ARGV[1]: their time to live; ARGV[i + 1]: the days of KEYS[i], separated by commas. */
const BUMP_SCRIPT = `for i, key in ipairs(KEYS) do
  for day in string.gmatch(ARGV[i + 1], '[^,]+') do redis.call('HINCRBY', key, day, 1) end
  redis.call('EXPIRE', key, ARGV[1])
end
return #KEYS`;
/** Checks a script call marks: Redis runs nothing else while one runs (about a millisecond for a thousand). */
const BUMP_CHECKS = 1000;

export class Generations {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(checkId: string): string {
    return `${this.prefix}rgen:${checkId}`;
  }

  /**
   * Marks the days of `runs` (check id and start, epoch ms) as changed: one script call per BUMP_CHECKS checks, all
   * sent at once (a pipeline of a HINCRBY and an EXPIRE per check cost ingest about 0.4 µs a result in ioredis's
   * commands alone).
   */
  async bump(runs: Iterable<{ checkId: string; at: number }>): Promise<void> {
    const days = new Map<string, Set<number>>();
    for (const r of runs) {
      const set = days.get(r.checkId) ?? new Set<number>();
      set.add(Math.floor(r.at / DAY_MS));
      days.set(r.checkId, set);
    }
    if (!days.size) return;
    const checks = [...days];
    const calls: Promise<unknown>[] = [];
    for (let from = 0; from < checks.length; from += BUMP_CHECKS) {
      const part = checks.slice(from, from + BUMP_CHECKS);
      calls.push(
        this.redis.eval(BUMP_SCRIPT, part.length, ...part.map(([checkId]) => this.key(checkId)), TTL_SECONDS, ...part.map(([, set]) => [...set].join(','))),
      );
    }
    await Promise.all(calls);
  }

  /** The versions of days `fromDay` to `toDay` (inclusive) of a check, and the global epoch; one round trip. */
  async read(checkId: string, fromDay: number, toDay: number): Promise<{ epoch: number; days: Map<number, number> }> {
    const { epoch, days } = await this.readMany([checkId], fromDay, toDay);
    return { epoch, days: days.get(checkId)! };
  }

  /** The versions of days `fromDay` to `toDay` of several checks, and the global epoch; one round trip. */
  async readMany(checkIds: readonly string[], fromDay: number, toDay: number): Promise<{ epoch: number; days: Map<string, Map<number, number>> }> {
    const fields = Array.from({ length: toDay - fromDay + 1 }, (_, i) => String(fromDay + i));
    const pipeline = this.redis.pipeline().get(`${this.prefix}rgen-epoch`);
    for (const id of checkIds) pipeline.hmget(this.key(id), ...fields);
    const replies = (await pipeline.exec()) ?? [];
    const failed = replies.find(([err]) => err);
    if (failed) throw failed[0] as Error;
    const days = new Map<string, Map<number, number>>();
    checkIds.forEach((id, c) => {
      const values = (replies[c + 1]?.[1] ?? []) as (string | null)[];
      days.set(id, new Map(fields.map((f, i) => [Number(f), Number(values[i] ?? 0)])));
    });
    return { epoch: Number(replies[0]?.[1] ?? 0), days };
  }

  /** The version of days `fromDay` to `toDay` as read (`read`/one check of `readMany`): the epoch and their sum. */
  static versionOf(epoch: number, days: Map<number, number>, fromDay: number, toDay: number): string {
    let sum = 0;
    for (let d = fromDay; d <= toDay; d++) sum += days.get(d) ?? 0;
    return `${epoch}:${sum}`;
  }

  /** Invalidates every cached bucket (after a backfill of rollups). */
  async bumpEpoch(): Promise<void> {
    await this.redis.incr(`${this.prefix}rgen-epoch`);
  }
}
