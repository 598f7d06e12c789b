import type { Static } from '@sinclair/typebox';
import type { Redis } from 'ioredis';
import { checkTypesOf } from '../checks/index.js';
import { expectationsOf, noDataRatio } from '../coverage/index.js';
import { UUID } from '../http/ids.js';
import type { RequestContext } from '../http/route.js';
import { CHECK_TYPE_FACTS, type CheckType } from '../model/checks.js';
import { figure, percentage } from '../model/figures.js';
import type { QueryBudget } from '../platform/config.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { QueryPurpose } from '../storage/clickhouse/store.js';
import type { Sql } from '../storage/postgres.js';
import { withinBudget } from './budget.js';
import { compileSummary, type SummaryRow, summaryQuantiles } from './compiler.js';
import { SUMMARY_METRICS } from './metrics.js';
import type { Precision } from './plan.js';
import { planSources } from './rollups.js';
import type { SummaryItem } from './schemas.js';
import { heldPerCheck } from './window-cache.js';
import { type QuickRange, resolveQuickRange, type Window } from './windows.js';

type Item = Static<typeof SummaryItem>;

/** One item from its row (absent when the window has no runs), reading each field where SUMMARY_METRICS put it. */
function toItem(checkId: string, checkType: CheckType, row: SummaryRow | undefined, expected: number | null): Item {
  const runs = Number(row?.run_count ?? 0);
  const item: Record<string, unknown> = {
    checkId,
    checkType,
    availability: percentage(row?.availability),
    ...(expected === null ? {} : { expectedRuns: expected, runs, noDataRatio: percentage(noDataRatio(expected, runs)) ?? 0 }),
  };
  SUMMARY_METRICS.forEach((m, i) => {
    const applies = CHECK_TYPE_FACTS[checkType].headline === m.headline;
    const quantiles = summaryQuantiles(i);
    for (const suffix of m.suffixes) {
      let value: number | null = null;
      if (applies && row) {
        value = suffix === 'avg' ? (row[`s${i}_avg`] as number | null) : ((row[`s${i}_q`] as (number | null)[])[quantiles.indexOf(suffix)] ?? null);
      }
      // Packet loss is a percentage: 4 decimals, as in reports.
      item[`${m.name}_${suffix}`] = m.name === 'packetLoss' ? percentage(value) : figure(value);
    }
  });
  return item as Item;
}

/** The distinct well-formed ids and the one query for them; the bench runs exactly this on the store. */
export function planSummary(
  accountId: string,
  checkIds: string[],
  range: QuickRange | Window,
  budget: QueryBudget,
  now = Date.now(),
  precision: Precision = 'auto',
) {
  const ids = [...new Set(checkIds.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  const window = typeof range === 'string' ? resolveQuickRange(range, now) : range;
  return { ids, window, ...compileSummary(accountId, ids, window, budget, precision) };
}

type SummaryDeps = {
  sql: Sql;
  store: Store;
  redis?: Redis;
  config: {
    analytics: QueryBudget;
    redisPrefix?: string;
    reportCache?: { enabled: boolean; maxBytes: number };
    alerts?: { noDataGraceMs: number };
  };
};

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
  // Which rollup ranges the window reads decide the arithmetic: part of the cache key.
  const split = precision === 'exact' ? [] : planSources(window.from, window.to, { sketches: true }).rollups.map((r) => [r.tier.id, r.from, r.to]);
  const read = async (some: string[]) => {
    // All of them: the plan's query as it is (the one the bench's floor runs); else the same for these ids.
    const part = some.length === ids.length ? { sql, params } : compileSummary(accountId, some, window, deps.config.analytics, precision);
    const rows = await withinBudget(
      deps.store.query<SummaryRow>(part.sql, part.params, {
        settings,
        queryId: options.context?.requestId,
        signal: options.context?.signal,
        purpose: options.purpose ?? 'summary',
      }),
    );
    return new Map(rows.map((r) => [r.checkId, [r]]));
  };
  const [types, { rows, cache }, expectations] = await Promise.all([
    checkTypesOf(deps.sql, accountId, ids),
    // Rows with their run count (`run_count`) since no data was counted: a new key, so rows held without it are not read.
    heldPerCheck<SummaryRow>(deps, accountId, ['summary', 2, precision, split], ids, window, read, options.noCache),
    expectationsOf(deps.sql, accountId, ids, { graceMs: deps.config.alerts?.noDataGraceMs ?? 60_000 }, options.now),
  ]);
  const items = ids.filter((id) => types.has(id)).map((id) => toItem(id, types.get(id)!, rows.get(id)?.[0], expectations.of(id, window.from, window.to)));
  return { items, tiers, ...(cache ? { cache } : {}) };
}
