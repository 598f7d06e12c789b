import type { Static } from '@sinclair/typebox';
import type { Redis } from 'ioredis';
import { type CheckRow, effectiveSchedule, findCheckRow, findCheckWithGroupSchedule, type GroupSchedule } from '../checks/index.js';
import { badRequest, notFound } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import type { RequestContext } from '../http/route.js';
import { figure, percentage } from '../model/figures.js';
import type { QueryBudget } from '../platform/config.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { QueryParams } from '../storage/clickhouse/store.js';
import { Generations } from '../storage/generations.js';
import type { Sql } from '../storage/postgres.js';
import { budgetSettings, withinBudget } from './budget.js';
import { type CompiledReport, compileFirstRuns, compileReport, type ReportRow } from './compiler.js';
import { type Catalog, metadataOf } from './metrics.js';
import { BucketCache, bucketedRows, pageOf, rawPage } from './report-cache.js';
import type { Report, reportQuery } from './schemas.js';
import { resolveWindow, type Window } from './windows.js';

export type ReportQuery = Static<ReturnType<typeof reportQuery>>;
type Row = Record<string, string | number | boolean | null>;

function shapeRow(plan: CompiledReport, row: ReportRow): Row {
  const out: Row = {};
  if (plan.mode === 'raw') {
    out.startedAt = new Date(row.t!).toISOString();
    out.runLocation = row.loc!;
    out.hasFailures = row.failed!;
  } else if (plan.bucketed) {
    out.bucketStart = new Date(row.b!).toISOString();
  }
  plan.metrics.forEach((m, i) => {
    // One rounding for every figure (model/figures.ts): no float noise, and no value stays null.
    const value = row[`m${i}`] as number | boolean | string | null | undefined;
    const unit = metadataOf(m).unit;
    out[m.name] = typeof value === 'number' ? (unit === 'percentage' || unit === 'score' ? percentage(value) : figure(value)) : (value ?? null);
  });
  return out;
}

/** Rows arrive ordered by group key, so each group is one contiguous run. */
export function toSeries(plan: CompiledReport, rows: ReportRow[]): Static<typeof Report>['series'] {
  if (!plan.groupBy) return [{ data: rows.map((r) => shapeRow(plan, r)) }];
  const series: Static<typeof Report>['series'] = [];
  let current: unknown = Symbol('none');
  for (const row of rows) {
    if (series.length === 0 || row.g !== current) {
      current = row.g;
      series.push({ [plan.groupBy]: row.g as never, data: [] });
    }
    series[series.length - 1].data.push(shapeRow(plan, row));
  }
  return series;
}

/**
 * Runs per minute in each location of a check, from its effective schedule (its group's settings laid over its
 * own): one per period in every location when it runs in parallel, otherwise in one location at a time.
 */
export function locationRunsPerMinute(check: Parameters<typeof effectiveSchedule>[0], group?: GroupSchedule | null): number {
  const schedule = effectiveSchedule(check, group);
  const perMinute = 60_000 / schedule.periodMs;
  return schedule.runParallel ? perMinute : perMinute / Math.max(1, schedule.locations);
}

/** The window and compiled query of a report request; the bench runs exactly this on the store. */
export function planReport(
  catalog: Catalog,
  accountId: string,
  id: string,
  query: ReportQuery,
  budget: QueryBudget,
  now = Date.now(),
  check?: Pick<CheckRow, 'frequency' | 'data'> & { group_schedule?: GroupSchedule | null },
) {
  const window = resolveWindow(query, now);
  if (!UUID.test(id)) throw notFound();
  const plan = compileReport({
    catalog,
    accountId,
    checkId: id.toLowerCase(),
    window,
    metrics: query.metrics,
    aggregationInterval: query.aggregationInterval,
    filterByStatus: query.filterByStatus,
    groupBy: query.groupBy,
    limit: query.limit,
    page: query.page,
    budget,
    precision: query.precision,
    locationRunsPerMinute: check && locationRunsPerMinute(check, check.group_schedule),
  });
  return { window, plan };
}

/**
 * One report: the check's own fields come from Postgres while ClickHouse computes the series; the
 * check decides 404 (not in the account) and 400 (another type) once both are back. When reading only the
 * page's part of the window may pay, the check comes first: its volume decides (compiler, pageBounds).
 */
export async function runReport(
  deps: {
    sql: Sql;
    store: Store;
    redis?: Redis;
    config: { analytics: QueryBudget; redisPrefix: string; reportCache?: { enabled: boolean; maxBytes: number; closeAfterMs: number } };
  },
  catalog: Catalog,
  accountId: string,
  id: string,
  query: ReportQuery,
  options: { context?: RequestContext; now?: number; noCache?: boolean } = {},
): Promise<{ report: Static<typeof Report>; tiers: string[]; pageTiers: string[]; cache?: { hits: number; misses: number } }> {
  const now = options.now ?? Date.now();
  let { window, plan } = planReport(catalog, accountId, id, query, deps.config.analytics, now);
  const settings = deps.config.reportCache;
  if (settings?.enabled && deps.redis && !options.noCache) {
    const checkId = id.toLowerCase();
    const cache = reportCache(settings.maxBytes);
    const generations = new Generations(deps.redis, deps.config.redisPrefix);
    // Parts run side by side: each its own query id (a server refuses a second query under a running one's id).
    let parts = 0;
    const partId = () => options.context?.requestId && `${options.context.requestId}-${++parts}`;
    const firstRuns = async (ranges: Window[]) => (await firstRunsOf(deps, accountId, [checkId], ranges, partId())).get(checkId) ?? ranges.map(() => null);
    const readRows = (sql: string, params: QueryParams, settings: Record<string, number>) =>
      withinBudget(deps.store.query<ReportRow>(sql, params, { settings, queryId: partId(), signal: options.context?.signal, purpose: 'report' }));
    if (plan.mode === 'aggregated' && plan.bucketed) {
      const bucketMs = Math.round(query.aggregationInterval! * 60_000);
      // Everything the rows depend on besides the window; reading whole buckets of any window, the same rows.
      const key = JSON.stringify([
        catalog.segment,
        accountId,
        checkId,
        query.metrics,
        bucketMs,
        query.groupBy ?? null,
        query.filterByStatus ?? null,
        query.precision ?? 'auto',
      ]);
      // The parts are read as the whole window is: from merged rollups and sketches when it reads rollups.
      const partOfMerged = plan.tiers.length > 0;
      const compute = async (w: Window, ranges?: Window[]) => {
        const part = compileReport({
          catalog,
          accountId,
          checkId,
          window: w,
          metrics: query.metrics,
          aggregationInterval: query.aggregationInterval,
          filterByStatus: query.filterByStatus,
          groupBy: query.groupBy,
          limit: 100,
          page: 1,
          budget: deps.config.analytics,
          precision: query.precision,
          partOfMerged,
          ranges,
        });
        // Every row of the part, not a page of it: the page is cut once all parts are together.
        return { rows: await readRows(part.sql, { ...part.params, limit: 1_000_000_000, offset: 0 }, part.settings), tiers: part.tiers };
      };
      const [check, cached] = await Promise.all([
        findCheckRow(deps.sql, accountId, id),
        bucketedRows({ cache, generations, key, checkId, window, bucketMs, now, closeAfterMs: settings.closeAfterMs, compute, firstRuns }),
      ]);
      if (cached) {
        const rows = pageOf(cached.rows, plan.groupBy !== undefined, query.limit, (query.page - 1) * query.limit);
        return {
          ...shapeReport(catalog, id, check, window, plan, query, rows),
          tiers: cached.tiers,
          pageTiers: [],
          cache: { hits: cached.hits, misses: cached.misses },
        };
      }
    } else if (plan.mode === 'raw' && !plan.groupBy) {
      // Raw runs of one series (by start); grouped raw pages are paged per series and read live.
      const key = JSON.stringify([catalog.segment, accountId, checkId, query.metrics, query.filterByStatus ?? null]);
      const { sql, params, settings: engine } = plan;
      const read = (count: number) => readRows(sql, { ...params, limit: count, offset: 0 }, engine);
      const [check, page] = await Promise.all([
        findCheckRow(deps.sql, accountId, id),
        rawPage({ cache, generations, key, checkId, window, offset: (query.page - 1) * query.limit, limit: query.limit, read, firstRuns }),
      ]);
      return {
        ...shapeReport(catalog, id, check, window, plan, query, page.rows),
        tiers: [],
        pageTiers: [],
        cache: { hits: page.hit ? 1 : 0, misses: page.hit ? 0 : 1 },
      };
    }
  }
  const run = () =>
    withinBudget(
      deps.store.query<ReportRow>(plan.sql, plan.params, {
        settings: plan.settings,
        queryId: options.context?.requestId,
        signal: options.context?.signal,
        purpose: 'report',
      }),
    );
  let check: CheckRow | undefined;
  let rows: ReportRow[] = [];
  if (plan.pageCandidate) {
    const scheduled = await findCheckWithGroupSchedule(deps.sql, accountId, id);
    check = scheduled;
    if (scheduled && catalog.checkTypes.includes(scheduled.check_type)) {
      ({ window, plan } = planReport(catalog, accountId, id, query, deps.config.analytics, now, scheduled));
      rows = await run();
    }
  } else {
    [check, rows] = await Promise.all([findCheckRow(deps.sql, accountId, id), run()]);
  }
  return { ...shapeReport(catalog, id, check, window, plan, query, rows), tiers: plan.tiers, pageTiers: plan.pageTiers };
}

/** The answer around a report's rows: the check's own fields, 404 for no check of the account, 400 for another type. */
function shapeReport(catalog: Catalog, id: string, check: CheckRow | undefined, window: Window, plan: CompiledReport, query: ReportQuery, rows: ReportRow[]) {
  if (!check) throw notFound();
  const checkType = check.check_type;
  if (!catalog.checkTypes.includes(checkType)) {
    throw badRequest(`Check ${id} is a ${checkType} check; this report is for ${catalog.checkTypes.join(', ')} checks`, {
      errors: [{ field: 'path.id', rule: 'checkType', message: `names a ${checkType} check, not a ${catalog.title}` }],
    });
  }
  const report = {
    checkId: check.id,
    name: check.name,
    checkType,
    activated: check.activated,
    muted: check.muted,
    frequency: check.frequency,
    from: new Date(window.from).toISOString(),
    to: new Date(window.to).toISOString(),
    tags: check.tags,
    series: toSeries(plan, rows),
    pagination: { page: query.page, limit: query.limit },
    metadata: Object.fromEntries(plan.metrics.map((m) => [m.name, metadataOf(m)])),
  };
  return { report };
}

/** When the first run of each range started, per check (compileFirstRuns); a check without runs in them is absent. */
export async function firstRunsOf(
  deps: { store: Store; config: { analytics: QueryBudget } },
  accountId: string,
  checkIds: string[],
  ranges: Window[],
  queryId?: string,
): Promise<Map<string, (number | null)[]>> {
  const { sql, params } = compileFirstRuns(accountId, checkIds, ranges);
  const rows = await withinBudget(
    deps.store.query<Record<string, number | string | null>>(sql, params, { settings: budgetSettings(deps.config.analytics), queryId, purpose: 'report' }),
  );
  return new Map(
    rows.map((row) => [String(row.checkId), ranges.map((_, i) => (row[`f${i}`] === null || row[`f${i}`] === undefined ? null : Number(row[`f${i}`])))]),
  );
}

let cacheInstance: BucketCache | undefined;
/** This process's cache of closed report buckets (one per process, sized by REPORT_CACHE_MB). */
export function reportCache(maxBytes: number): BucketCache {
  if (!cacheInstance || cacheInstance.maxBytes !== maxBytes) cacheInstance = new BucketCache(maxBytes);
  return cacheInstance;
}

/**
 * Which sources answered, for the X-Analytics-Sources header: `raw`, or the rollup tiers plus raw edges; and,
 * when the report read only its page's part of the window, what found the page (`; page=rollup:hour`).
 */
export function sourcesHeader(tiers: string[], pageTiers: string[] = []): Record<string, string> {
  const values = tiers.length ? `rollup:${tiers.join('+')}` : 'raw';
  return { 'X-Analytics-Sources': pageTiers.length ? `${values}; page=rollup:${pageTiers.join('+')}` : values };
}
