import type { Redis } from 'ioredis';
import type { QueryBudget } from '../platform/config.js';
import type { Store } from '../storage/clickhouse/index.js';
import { DAY_MS, Generations } from '../storage/generations.js';
import type { ReportRow } from './compiler.js';
import { firstRunsOf, reportCache } from './report.js';
import { MAX_DAYS } from './report-cache.js';
import { HOUR_MS, type Window } from './windows.js';

export interface HeldDeps {
  store: Store;
  redis?: Redis;
  config: { analytics: QueryBudget; redisPrefix?: string; reportCache?: { enabled: boolean; maxBytes: number } };
}

/**
 * Whole-window answers per check (the summary, `/v1/reporting`) from the report cache while they are current
 * (docs/analytics.md, "Report cache"): a check's rows are kept with the versions of the window's days and its
 * two moving bounds, and hold while no batch lands on those days and neither bound crosses a run of the check
 * (the start up to the first run at or after it, within the hour; the end up to the first run at or after it).
 * `key` holds everything else the rows depend on (for reads of rollups: which ranges the window reads, so a kept
 * answer is the one the query would give now). Checks not held are read with one call of `read`, their first
 * runs alongside. With the cache off (REPORT_CACHE, `noCache`) or a window too long to cache, every check is read
 * (and `cache` is absent).
 */
export async function heldPerCheck<T extends object>(
  deps: HeldDeps,
  accountId: string,
  key: unknown[],
  ids: string[],
  window: Window,
  read: (ids: string[]) => Promise<Map<string, T[]>>,
  noCache = false,
): Promise<{ rows: Map<string, T[]>; cache?: { hits: number; misses: number } }> {
  const day = (ms: number) => Math.floor(ms / DAY_MS);
  const fromDay = day(window.from);
  const toDay = day(window.to) + 1;
  const settings = deps.config.reportCache;
  if (!settings?.enabled || !deps.redis || noCache || toDay - fromDay + 1 > MAX_DAYS) return { rows: await read(ids) };
  const base = JSON.stringify([...key, accountId, fromDay, toDay]);
  const cache = reportCache(settings.maxBytes);
  // Versions first, then the reads: a batch landing meanwhile leaves what we keep stale, never the reverse.
  const { epoch, days } = await new Generations(deps.redis, deps.config.redisPrefix ?? '').readMany(ids, fromDay, toDay);
  const versionOf = (id: string) => Generations.versionOf(epoch, days.get(id)!, fromDay, toDay);
  const rows = new Map<string, T[]>();
  const lookUp = (some: string[]) => {
    const missing: string[] = [];
    for (const id of some) {
      const held = cache.get(`${base}|${id}`, versionOf(id), [window.from, window.to]);
      if (held) rows.set(id, held as unknown as T[]);
      else missing.push(id);
    }
    return missing;
  };
  let missing = lookUp(ids);
  // Checks another request is reading now: wait for them, then take what covers this window.
  const underWay = cache.readsOf(missing.map((id) => `${base}|${id}`));
  if (underWay) {
    await underWay;
    missing = lookUp(missing);
  }
  if (missing.length) {
    const release = cache.beginRead(missing.map((id) => `${base}|${id}`));
    try {
      const leadEnd = window.from + HOUR_MS;
      const trailEnd = (toDay + 1) * DAY_MS;
      const [read_, firsts] = await Promise.all([
        read(missing),
        firstRunsOf(deps, accountId, missing, [
          { from: window.from, to: leadEnd },
          { from: window.to, to: trailEnd },
        ]),
      ]);
      for (const id of missing) {
        const mine = read_.get(id) ?? [];
        rows.set(id, mine);
        const [lead, trail] = firsts.get(id) ?? [null, null];
        cache.set(`${base}|${id}`, versionOf(id), mine as unknown as ReportRow[], [
          { at: window.from, until: lead ?? leadEnd },
          { at: window.to, until: trail ?? trailEnd },
        ]);
      }
    } finally {
      release();
    }
  }
  return { rows, cache: { hits: ids.length - missing.length, misses: missing.length } };
}
