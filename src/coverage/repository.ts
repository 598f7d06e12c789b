import { applyGroupSettings, type GroupData } from '../checks/index.js';
import { periodOf } from '../model/checks.js';
import type { WindowData } from '../model/maintenance.js';
import { phaseOf, RUNNABLE_TYPES } from '../model/schedule.js';
import type { Sql } from '../storage/postgres.js';
import type { CheckPlan } from './expected.js';

/** Where a check without locations runs (the anchor asks for at least one; older checks may have none). */
export const DEFAULT_LOCATION = 'eu-west-1';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface PlanRow {
  id: string;
  account_id: string;
  name: string;
  check_type: string;
  activated: boolean;
  muted: boolean;
  tags: string[];
  group_id: number | null;
  frequency: number;
  fields: Record<string, unknown>;
  group_data: GroupData | null;
  created_at: Date;
  updated_at: Date | null;
  last_run_at: Date | null;
  latest_by_location: Record<string, { at?: number }> | null;
  activity: [number, number | null][];
}

/** How long a run with retries may take before its result lands: the retry strategy's limit (600 s unless it says). */
function retryGraceMs(strategy: unknown): number {
  if (!strategy || typeof strategy !== 'object') return 0;
  const s = strategy as { type?: string; maxRetries?: number; maxDurationSeconds?: number };
  if (!s.type || s.type === 'NONE' || s.maxRetries === 0) return 0;
  return Math.min(600, s.maxDurationSeconds ?? 600) * 1000;
}

/** A row as its runs are counted: the group's settings laid over the check's, as the runners apply them. */
export function toPlan(row: PlanRow, graceMs: number): CheckPlan {
  const base: Record<string, unknown> = {
    ...row.fields,
    checkType: row.check_type,
    tags: row.tags,
    activated: row.activated,
    muted: row.muted,
    frequency: row.frequency,
  };
  const data = row.group_data ? applyGroupSettings(base, row.group_data) : base;
  const periodMs = periodOf(Number(data.frequency ?? 10), data.frequencyOffset as number | undefined);
  const named = [...((data.locations as string[] | undefined) ?? []), ...((data.privateLocations as string[] | undefined) ?? [])];
  const latest: Record<string, number> = {};
  for (const [location, run] of Object.entries(row.latest_by_location ?? {})) if (typeof run?.at === 'number') latest[location] = run.at;
  return {
    checkId: row.id,
    accountId: row.account_id,
    name: row.name,
    checkType: row.check_type,
    groupId: row.group_id === null ? null : Number(row.group_id),
    muted: data.muted === true,
    periodMs,
    phaseMs: phaseOf(row.id, periodMs),
    locations: named.length ? [...new Set(named)] : [DEFAULT_LOCATION],
    runParallel: data.runParallel === true,
    activated: data.activated !== false,
    tags: (data.tags as string[] | undefined) ?? [],
    activity: row.activity.map(([from, to]) => ({ from: Number(from), to: to === null ? null : Number(to) })),
    graceMs: graceMs + retryGraceMs(data.retryStrategy),
    changedAt: (row.updated_at ?? row.created_at).getTime(),
    lastRunAt: row.last_run_at ? row.last_run_at.getTime() : null,
    latestByLocation: latest,
  };
}

/**
 * The plans of the runnable checks of an account (or of every account), optionally some of them, optionally only
 * the activated ones: what counting expected runs and silences needs, with the statuses' last runs.
 */
export async function loadPlans(
  sql: Sql,
  scope: { accountId?: string; checkIds?: readonly string[]; activatedOnly?: boolean },
  graceMs: number,
): Promise<CheckPlan[]> {
  // Ids as a caller named them: only well-formed ones can name a check.
  const ids = scope.checkIds?.filter((id) => UUID.test(id));
  if (ids && !ids.length) return [];
  const rows = await sql<PlanRow[]>`
    select c.id, c.account_id, c.name, c.check_type, c.activated, c.muted, c.tags, c.group_id, c.frequency,
      jsonb_build_object('frequencyOffset', c.data->'frequencyOffset', 'locations', c.data->'locations',
        'privateLocations', c.data->'privateLocations', 'runParallel', c.data->'runParallel', 'retryStrategy', c.data->'retryStrategy') as fields,
      g.data as group_data, c.created_at, c.updated_at, s.last_run_at, s.latest_by_location,
      coalesce((select json_agg(json_build_array(floor(extract(epoch from a.from_at) * 1000), floor(extract(epoch from a.to_at) * 1000)) order by a.from_at)
        from check_activity a where a.check_id = c.id), '[]') as activity
    from checks c left join check_groups g on g.id = c.group_id left join check_statuses s on s.check_id = c.id
    where c.check_type = any(${RUNNABLE_TYPES}::text[])
      ${scope.accountId ? sql`and c.account_id = ${scope.accountId}` : sql``}
      ${ids ? sql`and c.id = any(${ids}::uuid[])` : sql``}
      ${scope.activatedOnly ? sql`and c.activated` : sql``}
    order by c.created_at, c.id`;
  return rows.map((r) => toPlan(r, graceMs));
}

/** The maintenance windows of some accounts, by account. */
export async function maintenanceWindows(sql: Sql, accountIds: readonly string[]): Promise<Map<string, WindowData[]>> {
  const out = new Map<string, WindowData[]>();
  if (!accountIds.length) return out;
  for (const r of await sql<
    { account_id: string; data: WindowData }[]
  >`select account_id, data from maintenance_windows where account_id = any(${[...accountIds]}::uuid[])`) {
    out.set(r.account_id, [...(out.get(r.account_id) ?? []), r.data]);
  }
  return out;
}

export interface GapRow {
  check_id: string;
  account_id: string;
  since: Date;
  locations: string[];
  opened_at: Date;
}

/** The open gaps (checks whose "not running" alert was raised), of one account or all. */
export async function openGaps(sql: Sql, accountId?: string): Promise<GapRow[]> {
  return sql<GapRow[]>`select * from check_gaps ${accountId ? sql`where account_id = ${accountId}` : sql``}`;
}

export async function saveGap(sql: Sql, gap: { checkId: string; accountId: string; since: number; locations: string[] }): Promise<boolean> {
  const rows = await sql`insert into check_gaps (check_id, account_id, since, locations) values
    (${gap.checkId}, ${gap.accountId}, ${new Date(gap.since)}, ${gap.locations}) on conflict (check_id) do nothing returning check_id`;
  return rows.length > 0;
}

export async function updateGapLocations(sql: Sql, checkId: string, locations: string[]): Promise<void> {
  await sql`update check_gaps set locations = ${locations} where check_id = ${checkId}`;
}

export async function dropGap(sql: Sql, checkId: string): Promise<boolean> {
  return (await sql`delete from check_gaps where check_id = ${checkId} returning check_id`).length > 0;
}

/** How many activated checks are not running now (open gaps), for /ready and /metrics. */
export async function countGaps(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: string }[]>`select count(*)::text as n from check_gaps g join checks c on c.id = g.check_id where c.activated`;
  return Number(row?.n ?? 0);
}
