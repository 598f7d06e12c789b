import type { Static } from '@sinclair/typebox';
import { UUID } from '../http/ids.js';
import type { CheckType } from '../model/checks.js';
import { checkTypesOf } from '../checks/repository.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { QueryPurpose } from '../storage/clickhouse/store.js';
import type { Sql } from '../storage/postgres.js';
import type { QueryBudget } from '../platform/config.js';
import { withinBudget } from './budget.js';
import { compileSummary, summaryQuantiles, type ReportRow, type SummaryRow } from './compiler.js';
import type { Redis } from 'ioredis';
import type { QueryParams } from '../storage/clickhouse/store.js';
import { DAY_MS, Generations } from '../storage/generations.js';
import { planSources } from './rollups.js';
import { firstRunsOf, reportCache } from './report.js';
import type { Precision } from './plan.js';
import type { RequestContext } from '../http/route.js';
import { SUMMARY_METRICS } from './metrics.js';
import type { SummaryItem } from './schemas.js';
import { resolveQuickRange, type QuickRange, type Window } from './windows.js';

type Item = Static<typeof SummaryItem>;

/** One item from its row (absent when the window has no runs), reading each field where SUMMARY_METRICS put it. */
function toItem(checkId: string, checkType: CheckType, row: SummaryRow | undefined): Item {
  const item: Record<string, unknown> = { checkId, checkType, availability: row?.availability ?? null };
  SUMMARY_METRICS.forEach((m, i) => {
    const applies = (m.checkTypes as readonly CheckType[]).includes(checkType);
    const quantiles = summaryQuantiles(i);
    for (const suffix of m.suffixes) {
      let value: number | null = null;
      if (applies && row) {
        value = suffix === 'avg' ? (row[`s${i}_avg`] as number | null) : ((row[`s${i}_q`] as (number | null)[])[quantiles.indexOf(suffix)] ?? null);
      }
      item[`${m.name}_${suffix}`] = value;
    }
  });
  return item as Item;
}

/** The distinct well-formed ids and the one query for them; the bench runs exactly this on the store. */
export function planSummary(accountId: string, checkIds: string[], range: QuickRange | Window, budget: QueryBudget, now = Date.now(), precision: Precision = 'auto') {
  const ids = [...new Set(checkIds.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  const window = typeof range === 'string' ? resolveQuickRange(range, now) : range;
  return { ids, window, ...compileSummary(accountId, ids, window, budget, precision) };
}

type SummaryDeps = {
  sql: Sql;
  store: Store;
  redis?: Redis;
  config: { analytics: QueryBudget; redisPrefix?: string; reportCache?: { enabled: boolean; maxBytes: number } };
};

const HOUR_MS = 3_600_000;
/** The most days of versions one summary reads per check (a longer window is answered live). */
const MAX_DAYS = 100;

/**
 * The summary rows of `ids` over `window`, each check's from the report cache while it is current
 * (docs/analytics.md, "Report cache"): a check's answer is kept with the versions of the window's days and its
 * two moving bounds, and holds while no batch lands on those days and neither bound crosses a run of the check
 * (the start up to the first run at or after it, within the hour; the end up to the first run at or after it).
 * The key holds which rollup ranges the window reads, so a kept answer is one the query would give now.
 * Checks not held are read in one query, with their first runs. Undefined: the window is too long to cache.
 */
async function cachedSummaryRows(
  deps: SummaryDeps & { redis: Redis; config: { reportCache: { maxBytes: number } } },
  accountId: string,
  ids: string[],
  window: Window,
  precision: Precision,
  run: (ids: string[]) => Promise<SummaryRow[]>,
): Promise<{ rows: Map<string, SummaryRow>; hits: number; misses: number } | undefined> {
  const day = (ms: number) => Math.floor(ms / DAY_MS);
  const fromDay = day(window.from);
  const toDay = day(window.to) + 1;
  if (toDay - fromDay + 1 > MAX_DAYS) return undefined;
  const split = precision === 'exact' ? [] : planSources(window.from, window.to, { sketches: true }).rollups.map((r) => [r.tier.id, r.from, r.to]);
  const base = JSON.stringify(['summary', accountId, precision, split, fromDay, toDay]);
  const cache = reportCache(deps.config.reportCache.maxBytes);
  // Versions first, then the reads: a batch landing meanwhile leaves what we keep stale, never the reverse.
  const { epoch, days } = await new Generations(deps.redis, deps.config.redisPrefix ?? '').readMany(ids, fromDay, toDay);
  const versionOf = (id: string) => {
    let sum = 0;
    for (const v of days.get(id)!.values()) sum += v;
    return `${epoch}:${sum}`;
  };
  const rows = new Map<string, SummaryRow>();
  const missing: string[] = [];
  for (const id of ids) {
    const held = cache.get(`${base}|${id}`, versionOf(id), [window.from, window.to]);
    if (!held) missing.push(id);
    else if (held[0]) rows.set(id, held[0] as SummaryRow);
  }
  if (missing.length) {
    const leadEnd = window.from + HOUR_MS;
    const trailEnd = (toDay + 1) * DAY_MS;
    const [read, firsts] = await Promise.all([
      run(missing),
      firstRunsOf(deps, accountId, missing, [{ from: window.from, to: leadEnd }, { from: window.to, to: trailEnd }]),
    ]);
    const byId = new Map(read.map((r) => [r.checkId, r]));
    for (const id of missing) {
      const row = byId.get(id);
      if (row) rows.set(id, row);
      const [lead, trail] = firsts.get(id) ?? [null, null];
      cache.set(`${base}|${id}`, versionOf(id), row ? [row as ReportRow] : [], [
        { at: window.from, until: lead ?? leadEnd },
        { at: window.to, until: trail ?? trailEnd },
      ]);
    }
  }
  return { rows, hits: ids.length - missing.length, misses: missing.length };
}

/**
 * Summaries of several checks from one ClickHouse query, run while Postgres says which of the ids are
 * checks of the account. Items follow the request order; ids that name no check of the account are left out.
 */
export async function summarize(
  deps: SummaryDeps,
  accountId: string,
  checkIds: string[],
  range: QuickRange | Window,
  options: { precision?: Precision; context?: RequestContext; now?: number; purpose?: QueryPurpose; noCache?: boolean } = {},
): Promise<{ items: Item[]; tiers: string[]; cache?: { hits: number; misses: number } }> {
  const precision = options.precision ?? 'auto';
  const { ids, window, sql, params, settings, tiers } = planSummary(accountId, checkIds, range, deps.config.analytics, options.now ?? Date.now(), precision);
  if (!ids.length) return { items: [], tiers };
  const query = (sql: string, params: QueryParams) =>
    withinBudget(deps.store.query<SummaryRow>(sql, params, { settings, queryId: options.context?.requestId, signal: options.context?.signal, purpose: options.purpose ?? 'summary' }));
  const cacheSettings = deps.config.reportCache;
  const { redis } = deps;
  const cached = cacheSettings?.enabled && redis && !options.noCache
    ? () => cachedSummaryRows({ ...deps, redis, config: { ...deps.config, reportCache: cacheSettings } }, accountId, ids, window, precision, (some) => {
      const part = compileSummary(accountId, some, window, deps.config.analytics, precision);
      return query(part.sql, part.params);
    })
    : undefined;
  const [types, answer] = await Promise.all([
    checkTypesOf(deps.sql, accountId, ids),
    (async () => (await cached?.()) ?? { rows: new Map((await query(sql, params)).map((r) => [r.checkId, r])), hits: undefined, misses: undefined })(),
  ]);
  const items = ids.filter((id) => types.has(id)).map((id) => toItem(id, types.get(id)!, answer.rows.get(id)));
  return { items, tiers, ...(answer.hits !== undefined ? { cache: { hits: answer.hits, misses: answer.misses! } } : {}) };
}
