import { budgetSettings, summarize } from '../analytics/index.js';
import { coverageNow } from '../coverage/index.js';
import { fromClickHouseTime, toClickHouseTime } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import type { PublishedDashboard } from './lookup.js';

/** The most checks one dashboard shows (the summary reads them 100 at a time). */
export const MAX_DASHBOARD_CHECKS = 500;
/** Recent runs shown per check. */
export const RECENT_RUNS = 10;

const DAY = 86_400_000;
export const WINDOWS = [
  { id: '24h', label: '24 hours', ms: DAY },
  { id: '7d', label: '7 days', ms: 7 * DAY },
  { id: '30d', label: '30 days', ms: 30 * DAY },
] as const;
export type WindowId = (typeof WINDOWS)[number]['id'];

export type Status = 'passing' | 'degraded' | 'failing' | 'unknown';

export interface WindowFigures {
  availability: number | null;
  /** Per cent of the runs the check should have made in the window that did not happen (docs/analytics.md); null when none were expected. */
  noData: number | null;
  p95: number | null;
  p99: number | null;
}

export interface RecentRun {
  id: string;
  startedAt: string;
  location: string;
  status: Exclude<Status, 'unknown'>;
  responseTime: number | null;
}

export interface CheckView {
  id: string;
  name: string;
  checkType: string;
  group: string | null;
  tags: string[];
  status: Status;
  lastRunAt: string | null;
  windows: Record<WindowId, WindowFigures>;
  recentRuns: RecentRun[];
}

export interface IncidentView {
  id: string;
  checkName: string;
  name: string;
  severity: string | null;
  openedAt: string;
  resolvedAt: string | null;
}

/** Everything a viewer's page shows: the one JSON document the page refreshes from. */
export interface DashboardView {
  generatedAt: string;
  checks: CheckView[];
  incidents: IncidentView[] | null;
}

interface CheckRow {
  id: string;
  name: string;
  check_type: string;
  tags: string[];
  group_name: string | null;
  has_failures: boolean | null;
  has_errors: boolean | null;
  is_degraded: boolean | null;
  last_run_at: Date | null;
}

const statusOf = (failed: boolean | null, errored: boolean | null, degraded: boolean | null): Status =>
  failed === null ? 'unknown' : failed || errored ? 'failing' : degraded ? 'degraded' : 'passing';

const rank: Record<Status, number> = { failing: 0, degraded: 1, unknown: 2, passing: 3 };

/**
 * The dashboard's checks: all of the account's, or those carrying any of its tags (every tag with
 * useTagsAndOperator). A check's tags include its group's, as for maintenance windows.
 */
async function selectChecks(deps: Deps, d: PublishedDashboard): Promise<CheckRow[]> {
  const tags = d.data.tags ?? [];
  const and = d.data.useTagsAndOperator === true;
  return deps.sql<CheckRow[]>`
    with c as (
      select c.id, c.name, c.check_type, c.tags, g.name as group_name,
        c.tags || coalesce(array(select jsonb_array_elements_text(g.data->'tags')), '{}') as all_tags
      from checks c left join check_groups g on g.id = c.group_id
      where c.account_id = ${d.accountId}
    )
    select c.id, c.name, c.check_type, c.tags, c.group_name, s.has_failures, s.has_errors, s.is_degraded, s.last_run_at
    from c left join check_statuses s on s.check_id = c.id
    where ${tags.length === 0 ? deps.sql`true` : and ? deps.sql`c.all_tags @> ${tags}::text[]` : deps.sql`c.all_tags && ${tags}::text[]`}
    order by lower(c.name), c.id
    limit ${MAX_DASHBOARD_CHECKS}`;
}

async function windowFigures(deps: Deps, accountId: string, ids: string[], now: number): Promise<Map<string, Record<WindowId, WindowFigures>>> {
  const out = new Map<string, Record<WindowId, WindowFigures>>(
    ids.map((id) => [
      id,
      Object.fromEntries(WINDOWS.map((w) => [w.id, { availability: null, noData: null, p95: null, p99: null }])) as Record<WindowId, WindowFigures>,
    ]),
  );
  const chunks: string[][] = [];
  for (let i = 0; i < ids.length; i += 100) chunks.push(ids.slice(i, i + 100));
  await Promise.all(
    WINDOWS.flatMap((w) =>
      chunks.map(async (chunk) => {
        const { items } = await summarize(deps, accountId, chunk, { from: now - w.ms, to: now }, { now, purpose: 'dashboard' });
        for (const item of items) {
          out.get(item.checkId)![w.id] = {
            availability: item.availability,
            noData: item.expectedRuns ? (item.noDataRatio ?? null) : null,
            p95: item.responseTime_p95 ?? item.latency_p95 ?? null,
            p99: item.responseTime_p99 ?? item.latency_p99 ?? null,
          };
        }
      }),
    ),
  );
  return out;
}

interface RunRow {
  checkId: string;
  id: string;
  startedAt: string;
  location: string;
  failed: boolean;
  errored: boolean;
  degraded: boolean;
  responseTime: number | null;
}

/** The last runs of each check over the last day, newest first: one query for all checks. */
async function recentRuns(deps: Deps, accountId: string, ids: string[], now: number): Promise<Map<string, RecentRun[]>> {
  const out = new Map<string, RecentRun[]>(ids.map((id) => [id, []]));
  if (!ids.length) return out;
  const rows = await deps.store.query<RunRow>(
    `SELECT toString(check_id) AS checkId, toString(result_id) AS id, started_at AS startedAt, run_location AS location,
       has_failures AS failed, has_errors AS errored, is_degraded AS degraded, response_time AS responseTime
     FROM check_results
     WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)} AND started_at >= {from:DateTime64(3, 'UTC')}
     ORDER BY check_id, started_at DESC
     LIMIT {perCheck:UInt32} BY check_id`,
    { accountId, checkIds: ids, from: toClickHouseTime(now - DAY), perCheck: RECENT_RUNS },
    { settings: budgetSettings(deps.config.analytics), purpose: 'dashboard' },
  );
  for (const r of rows) {
    out.get(r.checkId)?.push({
      id: r.id,
      startedAt: fromClickHouseTime(r.startedAt),
      location: r.location,
      status: statusOf(r.failed, r.errored, r.degraded) as RecentRun['status'],
      responseTime: r.responseTime,
    });
  }
  return out;
}

/**
 * The incidents the dashboard shows: its checks' (opened by triggerIncident) and the ones declared on it
 * (`/v1/incidents`, with their latest update), open first, then resolved in the last 7 days.
 */
async function incidentsOf(deps: Deps, d: PublishedDashboard, ids: string[], now: number): Promise<IncidentView[]> {
  const since = new Date(now - 7 * DAY);
  const rows = await deps.sql<{ id: string; check_name: string; name: string; severity: string | null; opened_at: Date; resolved_at: Date | null }[]>`
    select * from (
      select i.id, c.name as check_name, i.name, i.severity, i.opened_at, i.resolved_at
      from incidents i join checks c on c.id = i.check_id
      where i.account_id = ${d.accountId} and i.check_id = any(${ids}::uuid[]) and (i.resolved_at is null or i.resolved_at > ${since})
      union all
      select i.id,
        coalesce((select u.status || ': ' || u.description from dashboard_incident_updates u where u.incident_id = i.id order by u.created_at desc, u.id desc limit 1), '') as check_name,
        i.name, i.impact as severity, coalesce(i.started_at, i.created_at) as opened_at, i.stopped_at as resolved_at
      from dashboard_incidents i
      where i.dashboard_id = ${d.id} and (i.stopped_at is null or i.stopped_at > ${since})
    ) all_incidents
    order by resolved_at is not null, opened_at desc
    limit 50`;
  return rows.map((r) => ({
    id: r.id,
    checkName: r.check_name,
    name: r.name,
    severity: r.severity,
    openedAt: r.opened_at.toISOString(),
    resolvedAt: r.resolved_at?.toISOString() ?? null,
  }));
}

/** What the dashboard shows now: its checks with status, figures per window and recent runs, and incidents. */
export async function buildDashboardView(deps: Deps, d: PublishedDashboard, now = Date.now()): Promise<DashboardView> {
  const rows = await selectChecks(deps, d);
  const ids = rows.map((r) => r.id);
  const [figures, runs, incidents, coverage] = await Promise.all([
    windowFigures(deps, d.accountId, ids, now),
    recentRuns(deps, d.accountId, ids, now),
    d.data.enableIncidents ? incidentsOf(deps, d, ids, now) : Promise.resolve(null),
    coverageNow(
      deps.sql,
      d.accountId,
      { afterPeriods: deps.config.alerts.noDataAfterPeriods, graceMs: deps.config.alerts.noDataGraceMs },
      { checkIds: ids, now },
    ),
  ]);
  let checks: CheckView[] = rows.map((r) => ({
    id: r.id,
    name: r.name,
    checkType: r.check_type,
    group: d.data.showGroupNames === false ? null : r.group_name,
    tags: d.data.hideTags ? [] : r.tags,
    // A check that stopped running says no data, whatever its last run said.
    status: coverage.get(r.id)?.state === 'NO_DATA' ? 'unknown' : statusOf(r.has_failures, r.has_errors, r.is_degraded),
    lastRunAt: r.last_run_at?.toISOString() ?? null,
    windows: figures.get(r.id)!,
    recentRuns: runs.get(r.id)!,
  }));
  if (d.data.sortByStatus) checks = [...checks].sort((a, b) => rank[a.status] - rank[b.status]);
  return { generatedAt: new Date(now).toISOString(), checks, incidents };
}
