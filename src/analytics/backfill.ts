import { toClickHouseTime } from '../model/time.js';
import type { Store } from '../storage/clickhouse/store.js';
import { rollupSelect, TIERS } from './rollups.js';

const DAY_MS = 86_400_000;

export interface BackfillResult {
  /** Days of runs the rollups had not seen, and how many of them this run filled (the rest were done before). */
  days: number;
  filled: number;
  rows: number;
}

/**
 * Fills the rollups from runs stored before their views existed: the rows of check_results inserted before
 * rollup_state.views_created, which the views never saw (every later insert went through them). One
 * INSERT ... SELECT per tier and day, recorded in rollup_state when done, so a second run (or one after a
 * crash) skips what is done; the insert's deduplication token makes a day repeated after a crash land once.
 * Safe while ingest runs: new rows are inserted after the marker and are not read here.
 */
export async function backfillRollups(
  store: Store,
  opts: { from?: number; to?: number; onStart?: (days: number) => void; onDay?: () => void } = {},
): Promise<BackfillResult> {
  const [marker] = await store.query<{ at: string }>("SELECT toString(max(at)) AS at FROM rollup_state WHERE key = 'views_created'");
  if (!marker?.at) throw new Error('The rollup views are not created yet: start the service once (it applies the DDL)');
  const [span] = await store.query<{ first: number | null; last: number | null; n: number }>(
    `SELECT toUnixTimestamp64Milli(min(started_at)) AS first, toUnixTimestamp64Milli(max(started_at)) AS last, count() AS n
     FROM check_results WHERE inserted_at < {marker:DateTime64(3, 'UTC')}`,
    { marker: marker.at },
  );
  if (!span || !Number(span.n)) return { days: 0, filled: 0, rows: 0 };
  const first = Math.max(Math.floor(Number(span.first) / DAY_MS) * DAY_MS, opts.from === undefined ? -Infinity : Math.floor(opts.from / DAY_MS) * DAY_MS);
  const last = Math.min(Number(span.last), opts.to === undefined ? Infinity : opts.to - 1);
  const done = new Set((await store.query<{ key: string }>("SELECT DISTINCT key FROM rollup_state WHERE startsWith(key, 'backfill:')")).map((r) => r.key));
  let days = 0;
  let filled = 0;
  opts.onStart?.(Math.max(0, Math.floor((last - first) / DAY_MS) + 1));
  for (let day = first; day <= last; day += DAY_MS) {
    days++;
    const date = new Date(day).toISOString().slice(0, 10);
    for (const tier of TIERS) {
      const key = `backfill:${tier.id}:${date}`;
      if (done.has(key)) continue;
      // The token is made of a tier id and a date, never of a request: it may sit in the text.
      const token = `backfill_${tier.id}_${date.replaceAll('-', '')}`;
      const where = "started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')} AND inserted_at < {marker:DateTime64(3, 'UTC')}";
      await store.command(`INSERT INTO ${tier.table} SETTINGS insert_deduplication_token = '${token}'\n${rollupSelect(tier, where)}`, {
        from: toClickHouseTime(day),
        to: toClickHouseTime(day + DAY_MS),
        marker: marker.at,
      });
      await store.command('INSERT INTO rollup_state (key, at) VALUES ({key:String}, now64(3))', { key });
      filled++;
    }
    opts.onDay?.();
  }
  return { days, filled, rows: Number(span.n) };
}
