import type { Redis } from 'ioredis';
import { toClickHouseTime } from '../model/time.js';
import type { Store } from '../storage/clickhouse/store.js';

/**
 * Claims result ids for a batch: `SET id batch NX EX window` for each, and an id already claimed counts as
 * this batch's when its value is this batch (a retry of the same job). Returns 1 for every id the batch may
 * write, 0 for ids another batch holds.
 */
const CLAIM_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'NX', 'EX', ARGV[2]) then
    out[i] = 1
  elseif redis.call('GET', key) == ARGV[1] then
    out[i] = 1
  else
    out[i] = 0
  end
end
return out`;

/** Drops this batch's claims (when the batch has failed for good), leaving other batches' alone. */
const RELEASE_SCRIPT = `
local n = 0
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then n = n + redis.call('DEL', key) end
end
return n`;

/** What the dedup needs of each row: its run id, its check, when it started (epoch ms). */
export interface RunRef {
  resultId: string;
  checkId: string;
  startedAt: number;
  /** Where else a run with this id may have started (a scheduled slot's span). */
  span?: [number, number];
}

/**
 * Run ids are the deduplication key across batches: a run posted twice, in two batches, lands once.
 *
 * Two layers: rows already in ClickHouse are found by one primary-key-bounded query per insert and account
 * (landedIds: the checks, their time span, the ids), and batches in flight at the same time are kept apart by
 * short Redis claims on the ids, released as soon as the batch's insert returns (the expiry only covers a
 * worker that died in between). Rows are dropped before the insert, so nothing downstream of the table
 * (reads, rollups fed by materialized views) ever sees a duplicate.
 */
export class ResultDedup {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly claimSeconds = 120,
  ) {}

  private keys(ids: readonly string[]): string[] {
    return ids.map((id) => `${this.keyPrefix}rid:${id}`);
  }

  /** The runs this batch may insert unless already stored: not held by another batch in flight. */
  async claim<R extends RunRef>(batchId: string, runs: readonly R[]): Promise<R[]> {
    if (!runs.length) return [];
    const ids = runs.map((r) => r.resultId);
    const claims = (await this.redis.eval(CLAIM_SCRIPT, ids.length, ...this.keys(ids), batchId, this.claimSeconds)) as number[];
    return runs.filter((_, i) => claims[i] === 1);
  }

  async release(batchId: string, ids: readonly string[]): Promise<void> {
    if (ids.length) await this.redis.eval(RELEASE_SCRIPT, ids.length, ...this.keys(ids), batchId);
  }
}

/** Which of `runs` are already stored: one query over the primary-key range the runs span. */
export async function landedIds(store: Store, accountId: string, runs: readonly RunRef[]): Promise<Set<string>> {
  if (!runs.length) return new Set();
  let from = Infinity;
  let to = -Infinity;
  for (const r of runs) {
    from = Math.min(from, r.startedAt, r.span?.[0] ?? Infinity);
    to = Math.max(to, r.startedAt, r.span?.[1] ?? -Infinity);
  }
  const rows = await store.query<{ id: string }>(
    `SELECT toString(result_id) AS id FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)}
       AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at <= {to:DateTime64(3, 'UTC')}
       AND result_id IN {ids:Array(UUID)}`,
    {
      accountId,
      checkIds: [...new Set(runs.map((r) => r.checkId))],
      from: toClickHouseTime(from),
      to: toClickHouseTime(to),
      ids: runs.map((r) => r.resultId),
    },
    { purpose: 'ingest' },
  );
  return new Set(rows.map((r) => r.id));
}
