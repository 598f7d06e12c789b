import { budgetSettings, rollupHorizon } from '../analytics/index.js';
import { readCoverage } from '../coverage/index.js';
import type { WindowData } from '../model/maintenance.js';
import { toClickHouseTime } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import { type IncidentView, incidentsById } from './incident-repository.js';
import { maintenanceStatus, materialise } from './maintenance-repository.js';
import { type PageRow, type PageView, pageViews } from './repository.js';

/**
 * What a public status page shows (docs/status-pages.md), built from the page's account only:
 * - each service's state now: an open incident on it (its severity), a maintenance in progress, or the state
 *   of the checks linked to it (`triggerIncident.serviceId`): failing is an outage, degraded is degraded, a check
 *   that stopped running is no data (docs/analytics.md);
 * - 90 daily bars of those checks' uptime (runs that passed / runs, from the daily rollup), the share of their
 *   expected runs that did not happen (no data, never up) and their mean response time per day;
 * - open incidents, incidents of the last 90 days with their updates, maintenance in progress and coming.
 */

const DAY = 86_400_000;
export const HISTORY_DAYS = 90;

export type ServiceStatus = 'operational' | 'degraded' | 'partial-outage' | 'major-outage' | 'no-data' | 'maintenance';

export interface DayBar {
  /** YYYY-MM-DD (UTC). */
  date: string;
  runs: number;
  failed: number;
  /** Per cent of runs that passed; null without runs. */
  uptime: number | null;
  /** Runs the linked checks should have made that day. */
  expected: number;
  /** Per cent of those that did not happen (no data); null when none were expected. */
  noData: number | null;
  /** Mean response time that day, ms. */
  responseTime: number | null;
}

export interface ServiceView {
  id: string;
  name: string;
  status: ServiceStatus;
  days: DayBar[];
  /** Over the 90 days; null without runs. */
  uptime: number | null;
  /** Per cent of the 90 days' expected runs that did not happen; null when none were expected. */
  noData: number | null;
  checks: number;
}

export interface MaintenanceView {
  id: string;
  name: string;
  startsAt: string;
  endsAt: string;
  status: string;
  updates: { status: string; description: string; at: string }[];
}

export interface StatusPageView {
  page: PageView;
  cards: { name: string; services: ServiceView[] }[];
  overall: ServiceStatus;
  open: IncidentView[];
  past: IncidentView[];
  maintenances: MaintenanceView[];
  generatedAt: string;
}

const RANK: Record<ServiceStatus, number> = { 'major-outage': 0, 'partial-outage': 1, degraded: 2, 'no-data': 3, maintenance: 4, operational: 5 };
const worst = (a: ServiceStatus, b: ServiceStatus) => (RANK[a] <= RANK[b] ? a : b);
const BY_SEVERITY: Record<string, ServiceStatus> = { CRITICAL: 'major-outage', MAJOR: 'partial-outage', MEDIUM: 'degraded', MINOR: 'degraded' };

export async function buildStatusPage(deps: Deps, row: PageRow, now = Date.now()): Promise<StatusPageView> {
  const { sql } = deps;
  const [page] = await pageViews(sql, [row]);
  const services = [...new Map(page!.cards.flatMap((c) => c.services).map((s) => [s.id, s])).values()];
  const serviceIds = services.map((s) => s.id);
  const accountId = row.account_id;

  const [checks, incidentIds, windows] = await Promise.all([
    serviceIds.length
      ? sql<{ id: string; service_id: string; has_failures: boolean | null; has_errors: boolean | null; is_degraded: boolean | null }[]>`
          select c.id, lower(c.data->'triggerIncident'->>'serviceId') as service_id, s.has_failures, s.has_errors, s.is_degraded
          from checks c left join check_statuses s on s.check_id = c.id
          where c.account_id = ${accountId} and c.activated and lower(c.data->'triggerIncident'->>'serviceId') = any(${serviceIds}::text[])`
      : Promise.resolve([]),
    serviceIds.length
      ? sql<{ id: string }[]>`select distinct i.id, i.created_at from status_page_incidents i join status_page_incident_services l on l.incident_id = i.id
          where i.account_id = ${accountId} and l.service_id = any(${serviceIds}::uuid[]) and (i.resolved_at is null or i.resolved_at > ${new Date(now - HISTORY_DAYS * DAY)})
          order by i.created_at desc limit 100`
      : Promise.resolve([]),
    sql<{ id: number; data: WindowData & { name?: string; statusPageVisibility?: { enabled?: boolean; statusPageIds?: string[] } } }[]>`
      select id, data from maintenance_windows where account_id = ${accountId} and coalesce((data->'statusPageVisibility'->>'enabled')::boolean, false)`,
  ]);
  const incidents = await incidentsById(
    sql,
    accountId,
    incidentIds.map((r) => r.id),
  );

  // Daily uptime and response time of the linked checks, from the daily rollup; with ROLLUPS=ticks, the days from
  // the one its horizon is in from the runs themselves (the rollup holds that day only up to the horizon, and a tick
  // between reading the horizon and this query adds only to days read from the runs).
  const checkIds = checks.map((c) => c.id);
  const days = Array.from({ length: HISTORY_DAYS }, (_, i) => new Date(startOfDay(now) - (HISTORY_DAYS - 1 - i) * DAY).toISOString().slice(0, 10));
  const noDataSettings = { afterPeriods: deps.config.alerts.noDataAfterPeriods, graceMs: deps.config.alerts.noDataGraceMs };
  const read = await readCoverage(sql, accountId, noDataSettings, { checkIds, now });
  const coverage = read.current();
  const { expectations } = read;
  const horizon = rollupHorizon();
  const rawFrom = Number.isFinite(horizon) ? startOfDay(horizon) : undefined;
  const tail =
    rawFrom !== undefined
      ? `UNION ALL
           SELECT check_id, toDate(started_at) AS d, toUInt64(1) AS runs, has_failures, coalesce(response_time, 0) AS rs, toUInt64(response_time IS NOT NULL) AS rn
           FROM check_results
           WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)} AND started_at >= {rawFrom:DateTime64(3, 'UTC')}`
      : '';
  const daily = checkIds.length
    ? await deps.store.query<{ checkId: string; day: string; total: string | number; failed: string | number; rtSum: number; rtN: string | number }>(
        `SELECT toString(check_id) AS checkId, toString(d) AS day, sum(runs) AS total, sumIf(runs, has_failures) AS failed, sum(rs) AS rtSum, sum(rn) AS rtN
         FROM (
           SELECT check_id, toDate(bucket) AS d, runs, has_failures, response_time__sum AS rs, response_time__n AS rn
           FROM check_results_1d
           WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)} AND bucket >= {from:DateTime('UTC')}${rawFrom !== undefined ? " AND bucket < {rawFrom:DateTime64(3, 'UTC')}" : ''}
           ${tail}
         )
         GROUP BY check_id, d`,
        {
          accountId,
          checkIds,
          from: toClickHouseTime(startOfDay(now) - (HISTORY_DAYS - 1) * DAY).slice(0, 19),
          ...(rawFrom !== undefined ? { rawFrom: toClickHouseTime(Math.max(rawFrom, startOfDay(now) - (HISTORY_DAYS - 1) * DAY)) } : {}),
        },
        { settings: budgetSettings(deps.config.analytics), purpose: 'status-page' },
      )
    : [];
  const serviceOfCheck = new Map(checks.map((c) => [c.id, c.service_id]));
  type Tally = { runs: number; failed: number; rtSum: number; rtN: number; expected: number; missing: number };
  const tally = new Map<string, Map<string, Tally>>();
  const tallyOf = (service: string, day: string): Tally => {
    const perDay = tally.get(service) ?? new Map<string, Tally>();
    tally.set(service, perDay);
    const t = perDay.get(day) ?? { runs: 0, failed: 0, rtSum: 0, rtN: 0, expected: 0, missing: 0 };
    perDay.set(day, t);
    return t;
  };
  const runsOfCheckDay = new Map<string, number>();
  for (const d of daily) {
    const service = serviceOfCheck.get(d.checkId);
    if (!service) continue;
    const t = tallyOf(service, d.day);
    t.runs += Number(d.total);
    t.failed += Number(d.failed);
    t.rtSum += Number(d.rtSum);
    t.rtN += Number(d.rtN);
    runsOfCheckDay.set(`${d.checkId}|${d.day}`, Number(d.total));
  }
  // The runs each check should have made each day, and the part of them that did not happen (check by check).
  for (const c of checks) {
    const perDay = expectations.buckets(c.id, Date.parse(`${days[0]}T00:00:00Z`), DAY, days.length) ?? [];
    days.forEach((day, i) => {
      const expected = perDay[i] ?? 0;
      if (!expected) return;
      const t = tallyOf(c.service_id, day);
      t.expected += expected;
      t.missing += Math.max(0, expected - (runsOfCheckDay.get(`${c.id}|${day}`) ?? 0));
    });
  }

  // Maintenance of the windows shown on this page: in progress, or starting in the next 14 days.
  const shown = windows.filter((w) => !w.data.statusPageVisibility?.statusPageIds?.length || w.data.statusPageVisibility.statusPageIds.includes(row.id));
  for (const w of shown) await materialise(sql, accountId, w.id, w.data, now);
  const maintenanceRows = shown.length
    ? await sql<{ id: string; window_id: number; starts_at: Date; ends_at: Date; status: null; created_at: Date; updated_at: Date }[]>`
        select * from maintenances where window_id = any(${shown.map((w) => w.id)}::bigint[]) and deleted_at is null
          and ends_at > ${new Date(now)} and starts_at < ${new Date(now + 14 * DAY)} order by starts_at limit 20`
    : [];
  const maintenanceUpdates = maintenanceRows.length
    ? await sql<{ maintenance_id: string; status: string; description: string; created_at: Date }[]>`
        select maintenance_id, status, description, created_at from maintenance_updates where maintenance_id = any(${maintenanceRows.map((m) => m.id)}::uuid[]) order by created_at`
    : [];
  const maintenances = maintenanceRows
    .map((m) => ({
      id: m.id,
      name: shown.find((w) => Number(w.id) === Number(m.window_id))?.data.name ?? 'Scheduled maintenance',
      startsAt: m.starts_at.toISOString(),
      endsAt: m.ends_at.toISOString(),
      status: maintenanceStatus(m, now),
      updates: maintenanceUpdates
        .filter((u) => u.maintenance_id === m.id)
        .map((u) => ({ status: u.status, description: u.description, at: u.created_at.toISOString() })),
    }))
    .filter((m) => m.status !== 'COMPLETED' && m.status !== 'CANCELLED');
  const inMaintenance = maintenances.some((m) => m.status === 'IN_PROGRESS' || m.status === 'VERIFYING');

  const open = incidents.filter((i) => i.lastUpdateStatus !== 'RESOLVED');
  const view = (s: PageView['cards'][number]['services'][number]): ServiceView => {
    let status: ServiceStatus = 'operational';
    for (const c of checks.filter((c) => c.service_id === s.id)) {
      if (coverage.get(c.id)?.state === 'NO_DATA') status = worst(status, 'no-data');
      else if (c.has_failures || c.has_errors) status = worst(status, 'partial-outage');
      else if (c.is_degraded) status = worst(status, 'degraded');
    }
    for (const i of open) if (i.services.some((x) => x.id === s.id)) status = worst(status, BY_SEVERITY[i.severity] ?? 'degraded');
    if (status === 'operational' && inMaintenance) status = 'maintenance';
    const perDay = tally.get(s.id);
    let runs = 0;
    let failed = 0;
    let expected = 0;
    let missing = 0;
    const bars = days.map((date) => {
      const t = perDay?.get(date);
      runs += t?.runs ?? 0;
      failed += t?.failed ?? 0;
      expected += t?.expected ?? 0;
      missing += t?.missing ?? 0;
      return {
        date,
        runs: t?.runs ?? 0,
        failed: t?.failed ?? 0,
        uptime: t?.runs ? (100 * (t.runs - t.failed)) / t.runs : null,
        expected: t?.expected ?? 0,
        noData: t?.expected ? (100 * t.missing) / t.expected : null,
        responseTime: t?.rtN ? t.rtSum / t.rtN : null,
      };
    });
    return {
      id: s.id,
      name: s.name,
      status,
      days: bars,
      uptime: runs ? (100 * (runs - failed)) / runs : null,
      noData: expected ? (100 * missing) / expected : null,
      checks: checks.filter((c) => c.service_id === s.id).length,
    };
  };
  const cards = page!.cards.map((c) => ({ name: c.name, services: c.services.map(view) }));
  const overall = cards.flatMap((c) => c.services).reduce<ServiceStatus>((acc, s) => worst(acc, s.status), inMaintenance ? 'maintenance' : 'operational');
  return {
    page: page!,
    cards,
    overall,
    open,
    past: incidents.filter((i) => i.lastUpdateStatus === 'RESOLVED'),
    maintenances,
    generatedAt: new Date(now).toISOString(),
  };
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY) * DAY;
}
