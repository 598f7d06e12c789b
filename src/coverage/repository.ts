import { effectiveSchedule, type GroupData } from '../checks/index.js';
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
  fields: {
    frequencyOffset?: number | null;
    locations?: string[] | null;
    privateLocations?: string[] | null;
    runParallel?: boolean | null;
    retryStrategy?: unknown;
  };
  group_data: GroupData | null;
  created_at: Date;
  updated_at: Date | null;
  last_run_at: Date | null;
  /** The latest run's start in each location (epoch ms). */
  latest_at: Record<string, number> | null;
  activity: [number, number | null][];
}

/** How long a run with retries may take before its result lands: the retry strategy's limit (600 s unless it says). */
function retryGraceMs(strategy: unknown): number {
  if (!strategy || typeof strategy !== 'object') return 0;
  const s = strategy as { type?: string; maxRetries?: number; maxDurationSeconds?: number };
  if (!s.type || s.type === 'NONE' || s.maxRetries === 0) return 0;
  return Math.min(600, s.maxDurationSeconds ?? 600) * 1000;
}

/**
 * A row as its runs are counted: the group's schedule laid over the check's (effectiveSchedule, as the scheduler
 * reads it), and the group's switch, mute, tags and retries as applyGroupSettings lays them.
 */
export function toPlan(row: PlanRow, graceMs: number): CheckPlan {
  const f = row.fields;
  const g = row.group_data;
  const schedule = effectiveSchedule(
    {
      frequency: row.frequency,
      data: {
        frequencyOffset: f.frequencyOffset ?? undefined,
        runParallel: f.runParallel ?? undefined,
        locations: f.locations,
        privateLocations: f.privateLocations,
      },
    },
    g,
  );
  const latest: Record<string, number> = {};
  for (const [location, at] of Object.entries(row.latest_at ?? {})) if (typeof at === 'number') latest[location] = at;
  return {
    checkId: row.id,
    accountId: row.account_id,
    name: row.name,
    checkType: row.check_type,
    groupId: row.group_id === null ? null : Number(row.group_id),
    muted: row.muted || g?.muted === true,
    periodMs: schedule.periodMs,
    phaseMs: phaseOf(row.id, schedule.periodMs),
    locations: schedule.names.length ? schedule.names : [DEFAULT_LOCATION],
    runParallel: schedule.runParallel === true,
    activated: row.activated && g?.activated !== false,
    tags: g?.tags?.length ? [...new Set([...row.tags, ...g.tags])] : row.tags,
    activity: row.activity.map(([from, to]) => ({ from: Number(from), to: to === null ? null : Number(to) })),
    graceMs: graceMs + retryGraceMs(g && g.retryStrategy !== undefined ? g.retryStrategy : f.retryStrategy),
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
  scope: { accountId?: string; checkIds?: readonly string[]; activatedOnly?: boolean; mayHaveStopped?: { now: number; periods: number } },
  graceMs: number,
): Promise<CheckPlan[]> {
  // Ids as a caller named them: only well-formed ones can name a check.
  const ids = scope.checkIds?.filter((id) => UUID.test(id));
  if (ids && !ids.length) return [];
  const filter = sql`${scope.accountId ? sql`and c.account_id = ${scope.accountId}` : sql``}
      ${ids ? sql`and c.id = any(${ids}::uuid[])` : sql``}
      ${scope.activatedOnly ? sql`and c.activated` : sql``}
      ${scope.mayHaveStopped ? mayHaveStopped(sql, scope.mayHaveStopped.now, scope.mayHaveStopped.periods) : sql``}`;
  // Two plain reads (a correlated aggregate per check cost 30 µs a check): the checks with their statuses, then
  // the stretches of activation of the same checks.
  const [rows, stretches] = await Promise.all([
    sql<Omit<PlanRow, 'activity'>[]>`
      select c.id, c.account_id, c.name, c.check_type, c.activated, c.muted, c.tags, c.group_id, c.frequency,
        jsonb_build_object('frequencyOffset', c.data->'frequencyOffset', 'locations', c.data->'locations',
          'privateLocations', c.data->'privateLocations', 'runParallel', c.data->'runParallel', 'retryStrategy', c.data->'retryStrategy') as fields,
        g.data as group_data, c.created_at, c.updated_at, s.last_run_at,
        (select jsonb_object_agg(l.key, l.value->'at') from jsonb_each(s.latest_by_location) l) as latest_at
      from checks c left join check_groups g on g.id = c.group_id left join check_statuses s on s.check_id = c.id
      where c.check_type = any(${RUNNABLE_TYPES}::text[]) ${filter}
      order by c.created_at, c.id`,
    sql<{ check_id: string; from_at: Date; to_at: Date | null }[]>`
      select a.check_id, a.from_at, a.to_at from check_activity a join checks c on c.id = a.check_id
        left join check_groups g on g.id = c.group_id left join check_statuses s on s.check_id = c.id
      where c.check_type = any(${RUNNABLE_TYPES}::text[]) ${filter}
      order by a.check_id, a.from_at`,
  ]);
  const activity = new Map<string, [number, number | null][]>();
  for (const a of stretches) {
    const list = activity.get(a.check_id) ?? [];
    list.push([a.from_at.getTime(), a.to_at ? a.to_at.getTime() : null]);
    activity.set(a.check_id, list);
  }
  return rows.map((r) => toPlan({ ...r, activity: activity.get(r.id) ?? [] }, graceMs));
}

/**
 * Leaves out the checks that certainly run: no open gap, and every location the check runs in (its group's when the
 * group names some, else its own, else the default, as effectiveSchedule names them) ran within `periods` of its
 * period (its group's frequency when set; a seconds frequency counted as the shortest period, 10 s). A location is
 * silent only past `periods` of its turns plus the grace, and a turn is at least a period, so coverageOf finds such a
 * check with no silent location (running, or paused or in maintenance): with no gap, the sweep has nothing to do with
 * it (issue 57: the sweep read every activated check twice a minute; most of them run). Checks with an open gap stay
 * in, to be closed or kept. The rows and their activity stretches are filtered by two statements: a check whose last
 * stale location runs between them is read without stretches, as activated now (no gap opened, the safe side).
 */
function mayHaveStopped(sql: Sql, now: number, periods: number) {
  const array = (json: ReturnType<Sql>) => sql`(case jsonb_typeof(${json}) when 'array' then ${json} else '[]'::jsonb end)`;
  const groupNames = sql`(${array(sql`g.data->'locations'`)} || ${array(sql`g.data->'privateLocations'`)})`;
  const ownNames = sql`(${array(sql`c.data->'locations'`)} || ${array(sql`c.data->'privateLocations'`)})`;
  const names = sql`(case when jsonb_array_length(${groupNames}) > 0 then ${groupNames}
    when jsonb_array_length(${ownNames}) > 0 then ${ownNames} else jsonb_build_array(${DEFAULT_LOCATION}::text) end)`;
  // Only JSON numbers are read as numbers, as toPlan reads them: a stray `at` keeps the check in, a stray group frequency
  // falls back to the check's, and neither fails the sweep.
  const number = (json: ReturnType<Sql>) => sql`(case jsonb_typeof(${json}) when 'number' then (${json})::text::double precision end)`;
  const frequency = sql`coalesce(nullif(${number(sql`g.data->'frequency'`)}, 0), c.frequency)`;
  const since = sql`(${now}::bigint - ${periods}::int * (case when ${frequency} > 0 then ${frequency} * 60000 else 10000 end))`;
  return sql`and (exists (select 1 from check_gaps gap where gap.check_id = c.id)
    or s.last_run_at is null or extract(epoch from s.last_run_at) * 1000 < ${since}
    or exists (select 1 from jsonb_array_elements_text(${names}) n
      where coalesce(${number(sql`s.latest_by_location->n->'at'`)}, 0) < ${since}))`;
}

/** The maintenance windows of some accounts, by account. */
export async function maintenanceWindows(sql: Sql, accountIds: readonly string[]): Promise<Map<string, WindowData[]>> {
  const out = new Map<string, WindowData[]>();
  if (!accountIds.length) return out;
  for (const r of await sql<
    { account_id: string; data: WindowData }[]
  >`select account_id, data from maintenance_windows where account_id = any(${[...accountIds]}::uuid[])`) {
    const list = out.get(r.account_id);
    if (list) list.push(r.data);
    else out.set(r.account_id, [r.data]);
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

/** Opens gaps (one statement); answers the checks whose gap is new (an open one is left as it is). */
export async function saveGaps(sql: Sql, gaps: readonly { checkId: string; accountId: string; since: number; locations: string[] }[]): Promise<Set<string>> {
  if (!gaps.length) return new Set();
  const rows = await sql<{ check_id: string }[]>`insert into check_gaps (check_id, account_id, since, locations)
    select g.check_id, g.account_id, g.since, string_to_array(g.locations, E'\n')
    from unnest(${gaps.map((g) => g.checkId)}::uuid[], ${gaps.map((g) => g.accountId)}::uuid[],
      ${gaps.map((g) => new Date(g.since).toISOString())}::timestamptz[], ${gaps.map((g) => g.locations.join('\n'))}::text[])
      as g(check_id, account_id, since, locations)
    on conflict (check_id) do nothing returning check_id`;
  return new Set(rows.map((r) => r.check_id));
}

/** Sets the silent locations of open gaps (one statement). */
export async function updateGapLocations(sql: Sql, gaps: readonly { checkId: string; locations: string[] }[]): Promise<void> {
  if (!gaps.length) return;
  // Locations joined by newlines (a name holds none): one text per gap.
  await sql`update check_gaps set locations = string_to_array(u.locations, E'\n')
    from unnest(${gaps.map((g) => g.checkId)}::uuid[], ${gaps.map((g) => g.locations.join('\n'))}::text[]) as u(check_id, locations)
    where check_gaps.check_id = u.check_id`;
}

/** Closes gaps (one statement); answers the checks whose gap was open. */
export async function dropGaps(sql: Sql, checkIds: readonly string[]): Promise<Set<string>> {
  if (!checkIds.length) return new Set();
  const rows = await sql<{ check_id: string }[]>`delete from check_gaps where check_id = any(${[...checkIds]}::uuid[]) returning check_id`;
  return new Set(rows.map((r) => r.check_id));
}

/** How many activated checks are not running now (open gaps), for /ready and /metrics. */
export async function countGaps(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: string }[]>`select count(*)::text as n from check_gaps g join checks c on c.id = g.check_id where c.activated`;
  return Number(row?.n ?? 0);
}
