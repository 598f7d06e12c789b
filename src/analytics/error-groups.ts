import { Type } from '@sinclair/typebox';
import { iso } from '../model/time.js';
import type { QueryBudget } from '../platform/config.js';
import type { Store } from '../storage/clickhouse/index.js';
import type { QueryParams } from '../storage/clickhouse/store.js';
import type { Sql } from '../storage/postgres.js';
import { budgetSettings, withinBudget } from './budget.js';

/**
 * Error groups (docs/analytics.md): failed runs of a check grouped by their error message with its variable parts
 * masked, kept by a materialized view (sql/clickhouse/0009_error_groups.sql) as runs land. An id is derived from
 * the check and the message's hash (stable, no table of ids); archiving is kept in Postgres.
 */

export const ErrorGroup = Type.Object({
  id: Type.String({ format: 'uuid' }),
  checkId: Type.String({ format: 'uuid' }),
  errorHash: Type.String(),
  rawErrorMessage: Type.Union([Type.String(), Type.Null()], { description: "The latest run's message as it was recorded" }),
  cleanedErrorMessage: Type.String({ description: "The message with URLs' paths, UUIDs, times, long hex ids and numbers masked: what the group is keyed by" }),
  firstSeen: Type.String({ format: 'date-time' }),
  lastSeen: Type.String({ format: 'date-time' }),
  archivedUntilNextEvent: Type.Boolean({ description: 'Archived: for good, or until a run fails with it again' }),
  occurrences: Type.Integer({ description: 'Failed runs with this error' }),
  locations: Type.Array(Type.String(), { description: 'Where they ran' }),
  rootCauseAnalyses: Type.Array(Type.Object({}, { additionalProperties: true }), {
    description: 'The root-cause analyses asked for this group, newest first (POST /v1/root-cause-analyses/error-groups/{id})',
  }),
});

interface GroupRow {
  id: string;
  checkId: string;
  errorHash: string;
  firstSeen: string;
  lastSeen: string;
  total: string | number;
  cleaned: string;
  raw: string;
  locations: string[];
}

export interface StateRow {
  id: string;
  archived_until_next_event: boolean;
  archived_forever: boolean;
  archived_at: Date | null;
}

const SELECT = `SELECT
    UUIDNumToString(toFixedString(substring(SHA256(concat(toString(check_id), ':', error_hash)), 1, 16), 16)) AS id,
    toString(check_id) AS checkId, error_hash AS errorHash,
    toString(toUnixTimestamp64Milli(min(first_seen))) AS firstSeen, toString(toUnixTimestamp64Milli(max(last_seen))) AS lastSeen,
    sum(occurrences) AS total, any(cleaned_message) AS cleaned, anyLast(raw_message) AS raw, arraySort(groupUniqArrayArray(locations)) AS locations
  FROM check_error_groups
  WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)}
  GROUP BY check_id, error_hash`;

type Deps = { sql: Sql; store: Store; config: { analytics: QueryBudget } };

/** The query of a page of error groups of some checks of the account (one by id when `id` is set); the bench runs it too. */
export function compileErrorGroups(
  accountId: string,
  checkIds: string[],
  filter: { id?: string; limit: number; page: number },
): { sql: string; params: QueryParams } {
  return {
    sql: `SELECT * FROM (${SELECT}) ${filter.id ? 'WHERE id = {id:String}' : ''} ORDER BY lastSeen DESC, id LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
    params: { accountId, checkIds, id: filter.id ?? '', limit: filter.limit, offset: (filter.page - 1) * filter.limit },
  };
}

/** The account's error groups, newest last failure first: of one check, of all its checks, or one by id. */
export async function errorGroups(deps: Deps, accountId: string, filter: { checkId?: string; id?: string; limit: number; page: number }) {
  const checks = filter.checkId
    ? await deps.sql<{ id: string }[]>`select id from checks where account_id = ${accountId} and id = ${filter.checkId}`
    : await deps.sql<{ id: string }[]>`select id from checks where account_id = ${accountId}`;
  if (!checks.length) return [];
  const { sql, params } = compileErrorGroups(
    accountId,
    checks.map((c) => c.id),
    filter,
  );
  const rows = await withinBudget(deps.store.query<GroupRow>(sql, params, { settings: budgetSettings(deps.config.analytics), purpose: 'report' }));
  const states = await errorGroupStates(
    deps.sql,
    accountId,
    rows.map((r) => r.id),
  );
  const stateOf = new Map(states.map((s) => [s.id, s]));
  return rows.map((r) => {
    const state = stateOf.get(r.id);
    const lastSeen = Number(r.lastSeen);
    // Archived until its next event: until a failure with it lands after the archiving.
    const archived = state
      ? state.archived_forever || (state.archived_until_next_event && state.archived_at !== null && lastSeen <= state.archived_at.getTime())
      : false;
    return {
      id: r.id,
      checkId: r.checkId,
      errorHash: r.errorHash,
      rawErrorMessage: r.raw || null,
      cleanedErrorMessage: r.cleaned,
      firstSeen: iso(new Date(Number(r.firstSeen)))!,
      lastSeen: iso(new Date(lastSeen))!,
      archivedUntilNextEvent: archived,
      occurrences: Number(r.total),
      locations: r.locations,
      rootCauseAnalyses: [],
    };
  });
}

/** Archives (for good, or until the next failure with it) or unarchives an error group of the account. */
export async function archiveErrorGroup(
  sql: Sql,
  accountId: string,
  group: { id: string; checkId: string | null; errorHash: string },
  change: { archiveForEver?: boolean; archivedUntilNextEvent?: boolean },
): Promise<void> {
  await sql`insert into error_group_states (id, account_id, check_id, error_hash, archived_until_next_event, archived_forever, archived_at)
    values (${group.id}, ${accountId}, ${group.checkId}, ${group.errorHash}, ${change.archivedUntilNextEvent ?? false}, ${change.archiveForEver ?? false}, now())
    on conflict (id) do update set
      archived_until_next_event = coalesce(${change.archivedUntilNextEvent ?? null}, error_group_states.archived_until_next_event),
      archived_forever = coalesce(${change.archiveForEver ?? null}, error_group_states.archived_forever),
      archived_at = now(), updated_at = now()`;
}

/**
 * The cleaning the view does (sql/clickhouse/0009_error_groups.sql), for errors that are not in ClickHouse (test
 * sessions' results): the same masks in the same order; a test holds the two to the same answers.
 */
export function cleanErrorMessage(raw: string): string {
  return raw
    .replace(/\u001b\[[0-9;]*m/g, '')
    .replace(/(https?:\/\/[^/\s'"<>]+)[^\s'"<>]*/g, '$1/…')
    .replace(/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g, '<uuid>')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>')
    .replace(/\b[0-9a-fA-F]{12,}\b/g, '<id>')
    .replace(/\d+/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 1000);
}

/** What the account decided about these groups (archived until the next failure, or for good). */
export async function errorGroupStates(sql: Sql, accountId: string, ids: readonly string[]): Promise<StateRow[]> {
  if (!ids.length) return [];
  return sql<StateRow[]>`select * from error_group_states where account_id = ${accountId} and id = any(${ids as string[]}::uuid[])`;
}
