import type { Static } from '@sinclair/typebox';
import { UUID } from '../resources/checks/repository.js';
import type { CheckType } from '../resources/checks/catalog.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { Sql } from '../storage/postgres.js';
import { withinBudget, type QueryBudget } from './budget.js';
import { compileSummary, type SummaryRow } from './compiler.js';
import type { SummaryItem } from './schemas.js';
import { resolveQuickRange, type QuickRange } from './windows.js';

type Item = Static<typeof SummaryItem>;

/** Types whose runs carry a response time; the others answer null for responseTime_*. */
const RESPONSE_TIME_TYPES = new Set<CheckType>(['API', 'URL', 'BROWSER', 'MULTI_STEP', 'PLAYWRIGHT']);

const pick = (values: (number | null)[] | undefined, i: number) => values?.[i] ?? null;

function toItem(checkId: string, checkType: CheckType, row: SummaryRow | undefined): Item {
  const http = RESPONSE_TIME_TYPES.has(checkType);
  const icmp = checkType === 'ICMP';
  return {
    checkId,
    checkType,
    availability: row?.availability ?? null,
    responseTime_avg: http ? (row?.rt_avg ?? null) : null,
    responseTime_p50: http ? pick(row?.rt_q, 0) : null,
    responseTime_p95: http ? pick(row?.rt_q, 1) : null,
    responseTime_p99: http ? pick(row?.rt_q, 2) : null,
    latency_avg: icmp ? (row?.lat_avg ?? null) : null,
    latency_p50: icmp ? pick(row?.lat_q, 0) : null,
    latency_p95: icmp ? pick(row?.lat_q, 1) : null,
    latency_p99: icmp ? pick(row?.lat_q, 2) : null,
    packetLoss_avg: icmp ? (row?.loss_avg ?? null) : null,
    packetLoss_p95: icmp ? pick(row?.loss_q, 0) : null,
    packetLoss_p99: icmp ? pick(row?.loss_q, 1) : null,
  };
}

/** The distinct well-formed ids and the one query for them; the bench runs exactly this on the store. */
export function planSummary(accountId: string, checkIds: string[], range: QuickRange, budget: QueryBudget, now = Date.now()) {
  const ids = [...new Set(checkIds.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
  return { ids, ...compileSummary(accountId, ids, resolveQuickRange(range, now), budget) };
}

/**
 * Summaries of several checks from one ClickHouse query, run while Postgres says which of the ids are
 * checks of the account. Items follow the request order; ids that name no check of the account are left out.
 */
export async function summarize(
  deps: { sql: Sql; store: Store; config: { analytics: QueryBudget } },
  accountId: string,
  checkIds: string[],
  range: QuickRange,
  now = Date.now(),
): Promise<Item[]> {
  const { ids, sql, params } = planSummary(accountId, checkIds, range, deps.config.analytics, now);
  if (!ids.length) return [];
  const [checks, rows] = await Promise.all([
    deps.sql`select id, check_type from checks where account_id = ${accountId} and id = any(${ids}::uuid[])`,
    withinBudget(deps.store.query<SummaryRow>(sql, params)),
  ]);
  const types = new Map(checks.map((c) => [c.id as string, c.check_type as CheckType]));
  const byId = new Map(rows.map((r) => [r.checkId, r]));
  return ids.filter((id) => types.has(id)).map((id) => toItem(id, types.get(id)!, byId.get(id)));
}
