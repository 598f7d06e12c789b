import { randomUUID } from 'node:crypto';
import { HttpError } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import { Rules } from '../http/rules.js';
import type { ChannelType } from '../model/alerts.js';
import { type CheckType, frequencyOffsetProblem, SEGMENT_OF } from '../model/checks.js';
import { graceMs, type HeartbeatSettings, periodMs } from '../model/heartbeats.js';
import { iso } from '../model/time.js';
import { type EnvVar, maskSecrets } from '../model/variables.js';
import type { Sql } from '../storage/postgres.js';
import { resealVariables, sealVariables } from '../storage/secret-box.js';
import type { GroupData } from './group-schemas.js';
import { applyGroupSettings, type GroupSchedule } from './group-settings.js';
import { checkReferences, type References } from './references.js';
import { withReadDefaults } from './schemas.js';
import { checkChannelsExist } from './subscriptions.js';

export type CheckInput = Record<string, unknown> & {
  name: string;
  activated: boolean;
  muted: boolean;
  frequency: number;
  frequencyOffset?: number;
  tags?: string[];
  groupId?: number | null;
  alertChannelSubscriptions?: { alertChannelId: number; activated: boolean }[];
  environmentVariables?: EnvVar[] | null;
};

/** A row of the checks table: filtered columns, and the rest of the validated body in `data`. */
export interface CheckRow {
  id: string;
  account_id: string;
  check_type: CheckType;
  name: string;
  activated: boolean;
  muted: boolean;
  frequency: number;
  tags: string[];
  group_id: number | null;
  /** Heartbeat checks: the token of their ping URL. */
  ping_token: string | null;
  data: CheckInput;
  created_at: Date;
  updated_at: Date | null;
}

interface ChannelRow {
  check_id: string;
  alert_channel_id: number;
  activated: boolean;
  type: ChannelType;
  config: Record<string, unknown>;
}

/** Rules JSON Schema cannot state, plus references that must name rows of the same account. */
export async function checkRules(db: Sql, accountId: string, data: CheckInput): Promise<void> {
  const rules = new Rules();
  const offsetProblem = frequencyOffsetProblem(data.frequency, data.frequencyOffset);
  if (offsetProblem) rules.fail('body.frequencyOffset', 'frequencyOffset', offsetProblem);
  if (data.groupId != null) {
    const [group] = await db<{ id: number }[]>`select id from check_groups where id = ${data.groupId} and account_id = ${accountId}`;
    rules.check(!!group, 'body.groupId', 'exists', 'names no check group of this account');
  }
  const heartbeat = data.heartbeat as HeartbeatSettings | undefined;
  if (heartbeat && typeof heartbeat.period === 'number') {
    for (const [field, ms] of [
      ['period', periodMs(heartbeat)],
      ['grace', graceMs(heartbeat)],
    ] as const) {
      rules.check(ms <= MAX_HEARTBEAT_MS, `body.heartbeat.${field}`, 'range', 'must be at most 365 days');
    }
  }
  await checkChannelsExist(db, accountId, data.alertChannelSubscriptions, rules);
  await checkReferences(db, accountId, data as References, rules);
  rules.throwIfAny();
}

const MAX_HEARTBEAT_MS = 365 * 86_400_000;

/** Per-account cap on browser checks (unlimited when null); the account row lock serialises creators. */
export async function enforceBrowserLimit(db: Sql, accountId: string): Promise<void> {
  const [account] = await db<{ browser_check_limit: number | null }[]>`select browser_check_limit from accounts
    where id = ${accountId} for update`;
  const limit = account?.browser_check_limit;
  if (limit === null || limit === undefined) return;
  const [{ n }] = await db<{ n: number }[]>`select count(*)::int as n from checks where account_id = ${accountId} and check_type = 'BROWSER'`;
  if (n >= limit) throw new HttpError(402, 'Payment Required', { limit, browserChecks: n });
}

/** What is stored of a check: its subscriptions live elsewhere, and its secret variables are sealed. */
function storedData(data: CheckInput): Record<string, unknown> {
  const { alertChannelSubscriptions: _subs, ...rest } = data;
  return rest.environmentVariables ? { ...rest, environmentVariables: sealVariables(rest.environmentVariables) } : rest;
}

export async function insertCheck(db: Sql, accountId: string, checkType: CheckType, data: CheckInput): Promise<string> {
  const pingToken = checkType === 'HEARTBEAT' ? randomUUID() : null;
  const [row] = await db<{ id: string }[]>`insert into checks (account_id, check_type, name, activated, muted, frequency, tags, group_id, ping_token, data)
    values (${accountId}, ${checkType}, ${data.name}, ${data.activated}, ${data.muted}, ${data.frequency},
      ${data.tags ?? []}, ${data.groupId ?? null}, ${pingToken}, ${db.json(storedData(data) as never)}) returning id`;
  return row.id;
}

export async function updateCheck(db: Sql, id: string, data: CheckInput): Promise<void> {
  await db`update checks set name = ${data.name}, activated = ${data.activated}, muted = ${data.muted},
      frequency = ${data.frequency}, tags = ${data.tags ?? []}, group_id = ${data.groupId ?? null},
      data = ${db.json(storedData(data) as never)}, updated_at = now()
    where id = ${id}`;
}

type ChannelGroups = { email: { address: string }[]; webhook: Record<string, unknown>[]; slack: { url: string }[]; sms: { number: string; name: string }[] };

/** Where each channel kind goes in the anchor's `alertChannels` of a check: one entry per kind, or it does not compile. */
const CHANNEL_GROUPS: Record<ChannelType, (out: ChannelGroups, c: Record<string, unknown>, revealHeaders: boolean) => void> = {
  EMAIL: (out, c) => out.email.push({ address: c.address as string }),
  SLACK: (out, c) => out.slack.push({ url: c.url as string }),
  SMS: (out, c) => out.sms.push({ number: c.number as string, name: c.name as string }),
  WEBHOOK: (out, c, revealHeaders) => {
    const headers = ((c.headers ?? []) as { key: string; value: string; locked?: boolean; secret?: boolean }[]).map((h) => ({
      key: h.key,
      value: h.secret || !revealHeaders ? '' : h.value,
      locked: h.locked ?? false,
    }));
    out.webhook.push({ url: c.url, name: c.name, method: c.method, headers, queryParameters: c.queryParameters });
  },
  // The anchor's alertChannels has no place for these (its subscriptions do): they are listed there only.
  PAGERDUTY: () => undefined,
  OPSGENIE: () => undefined,
};

/** The check's channels as the anchor shows them; webhook header values only to keys that may write, never a secret one. */
function groupChannels(rows: ChannelRow[], revealHeaders: boolean): ChannelGroups {
  const out: ChannelGroups = { email: [], webhook: [], slack: [], sms: [] };
  for (const r of rows) {
    if (r.activated) CHANNEL_GROUPS[r.type]?.(out, r.config, revealHeaders);
  }
  return out;
}

export interface ReadOptions {
  includeDependencies?: boolean;
  applyGroupSettings?: boolean;
  /** Where clients reach this service: heartbeat checks show their ping URL under it. */
  publicUrl?: string;
  /** The caller may write: webhook header values of the check's channels are shown (secret ones never are). */
  revealHeaders?: boolean;
}

/** Loads checks of one account with their subscriptions (and groups when asked), in three queries at most. */
export async function readChecks(db: Sql, accountId: string, rows: CheckRow[], opts: ReadOptions = {}) {
  const ids = rows.map((r) => r.id);
  const channelRows = ids.length
    ? await db<ChannelRow[]>`select s.check_id, s.alert_channel_id, s.activated, c.type, c.config
        from alert_subscriptions s join alert_channels c on c.id = s.alert_channel_id
        where s.check_id = any(${ids}::uuid[]) and c.account_id = ${accountId}
        order by s.alert_channel_id`
    : [];
  return shapeChecks(db, accountId, rows, channelRows, opts);
}

/**
 * One check of the account as readChecks shows it, its row and its subscriptions read in one query (a second
 * only for its group's settings, when asked): GET /v1/checks/{id} is the API's most frequent read.
 */
export async function readCheck(db: Sql, accountId: string, id: string, opts: ReadOptions = {}) {
  if (!UUID.test(id)) return undefined;
  const [row] = await db<(CheckRow & { channel_rows: ChannelRow[] })[]>`select c.*, coalesce((
      select json_agg(json_build_object('check_id', s.check_id, 'alert_channel_id', s.alert_channel_id, 'activated', s.activated,
          'type', ch.type, 'config', ch.config) order by s.alert_channel_id)
        from alert_subscriptions s join alert_channels ch on ch.id = s.alert_channel_id
        where s.check_id = c.id and ch.account_id = c.account_id), '[]'::json) as channel_rows
    from checks c where c.id = ${id} and c.account_id = ${accountId}`;
  if (!row) return undefined;
  const { channel_rows: channelRows, ...checkRow } = row;
  return (await shapeChecks(db, accountId, [checkRow], channelRows, opts))[0];
}

async function shapeChecks(db: Sql, accountId: string, rows: CheckRow[], channelRows: ChannelRow[], opts: ReadOptions) {
  const groupIds = opts.applyGroupSettings ? [...new Set(rows.flatMap((r) => (r.group_id === null ? [] : [r.group_id])))] : [];
  const groups = new Map<number, GroupData>();
  if (groupIds.length) {
    const found = await db<{ id: number; data: GroupData }[]>`select id, data from check_groups
      where id = any(${groupIds}::bigint[]) and account_id = ${accountId}`;
    for (const g of found) groups.set(g.id, g.data);
  }
  return rows.map((row) => {
    const own = channelRows.filter((c) => c.check_id === row.id);
    let data: Record<string, unknown> = withReadDefaults(SEGMENT_OF[row.check_type], { ...row.data, checkType: row.check_type });
    const group = row.group_id !== null ? groups.get(row.group_id) : undefined;
    if (group) data = applyGroupSettings(data, group);
    if (row.ping_token) {
      const pingUrl = `${opts.publicUrl ?? ''}/ping/${row.ping_token}`;
      data.heartbeat = { ...(data.heartbeat as object), pingToken: row.ping_token, pingUrl };
    }
    const { dependencies, environmentVariables, ...rest } = data;
    return {
      id: row.id,
      ...rest,
      checkType: row.check_type,
      tags: (rest.tags as string[] | undefined) ?? [],
      ...(environmentVariables ? { environmentVariables: maskSecrets(environmentVariables as EnvVar[]) } : {}),
      ...(opts.includeDependencies ? { dependencies: (dependencies as unknown[] | null | undefined) ?? [] } : {}),
      alertChannelSubscriptions: own.map((c) => ({ alertChannelId: c.alert_channel_id, activated: c.activated })),
      alertChannels: groupChannels(own, opts.revealHeaders === true),
      created_at: iso(row.created_at),
      updated_at: iso(row.updated_at),
    };
  });
}

export async function findCheckRow(db: Sql, accountId: string, id: string, lock = false): Promise<CheckRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const [row] = lock
    ? await db<CheckRow[]>`select * from checks where id = ${id} and account_id = ${accountId} for update`
    : await db<CheckRow[]>`select * from checks where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** The check with what its group's settings say of its schedule (null when it has no group). */
export async function findCheckWithGroupSchedule(
  db: Sql,
  accountId: string,
  id: string,
): Promise<(CheckRow & { group_schedule: GroupSchedule | null }) | undefined> {
  if (!UUID.test(id)) return undefined;
  const [row] = await db<(CheckRow & { group_schedule: GroupSchedule | null })[]>`select c.*,
      case when g.id is null then null else jsonb_build_object('frequency', g.data->'frequency', 'runParallel', g.data->'runParallel',
        'locations', g.data->'locations', 'privateLocations', g.data->'privateLocations') end as group_schedule
    from checks c left join check_groups g on g.id = c.group_id where c.id = ${id} and c.account_id = ${accountId}`;
  return row;
}

/** The type of each of `ids` that names a check of the account; ids that do not are absent. */
export async function checkTypesOf(db: Sql, accountId: string, ids: readonly string[]): Promise<Map<string, CheckType>> {
  const wellFormed = [...new Set(ids.filter((id) => UUID.test(id)))];
  if (!wellFormed.length) return new Map();
  const rows = await db<{ id: string; check_type: CheckType }[]>`select id, check_type from checks
    where account_id = ${accountId} and id = any(${wellFormed}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.check_type]));
}

/** The checks' tags with their groups' (what maintenance windows match), for the checks of the account among `ids`. */
export async function checkTagsOf(db: Sql, accountId: string, ids: readonly string[]): Promise<Map<string, string[]>> {
  const wellFormed = [...new Set(ids.filter((id) => UUID.test(id)))];
  if (!wellFormed.length) return new Map();
  const rows = await db<{ id: string; tags: string[]; group_tags: string[] | null }[]>`select c.id, c.tags, g.data->'tags' as group_tags
    from checks c left join check_groups g on g.id = c.group_id
    where c.account_id = ${accountId} and c.id = any(${wellFormed}::uuid[])`;
  return new Map(rows.map((r) => [r.id, [...r.tags, ...(r.group_tags ?? [])]]));
}

export interface CheckFilter {
  checkType?: CheckType;
  groupId?: number;
  /** Any of these tags. */
  tags?: string[];
  /** Part of the name, any case. */
  search?: string;
  /** Part of an API check's request URL. */
  apiUrlContains?: string;
  /** By the current status (checks without results have none and match no status). */
  status?: 'passing' | 'failing' | 'degraded';
}

/** A status filter as SQL over check_statuses (fixed text per value). */
const STATUS_CONDITION = {
  failing: '(has_failures or has_errors)',
  degraded: '(not has_failures and not has_errors and is_degraded)',
  passing: '(not has_failures and not has_errors and not is_degraded)',
} as const;

/** A LIKE pattern matching `text` anywhere, its wildcards taken literally. */
function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** One page of an account's checks (oldest first) matching the filter, and how many match. */
export async function listCheckRows(db: Sql, accountId: string, filter: CheckFilter, limit: number, offset: number) {
  const where = db`account_id = ${accountId}
    ${filter.checkType ? db`and check_type = ${filter.checkType}` : db``}
    ${filter.groupId !== undefined ? db`and group_id = ${filter.groupId}` : db``}
    ${filter.tags?.length ? db`and tags && ${filter.tags}::text[]` : db``}
    ${filter.search ? db`and name ilike ${containing(filter.search)}` : db``}
    ${filter.apiUrlContains ? db`and check_type = 'API' and data->'request'->>'url' like ${containing(filter.apiUrlContains)}` : db``}
    ${filter.status ? db`and id in (select check_id from check_statuses where account_id = ${accountId} and ${db.unsafe(STATUS_CONDITION[filter.status])})` : db``}`;
  const [rows, [{ n }]] = await Promise.all([
    db<CheckRow[]>`select * from checks where ${where} order by created_at, id limit ${limit} offset ${offset}`,
    db<{ n: number }[]>`select count(*)::int as n from checks where ${where}`,
  ]);
  return { rows, total: n };
}

export async function deleteCheck(db: Sql, accountId: string, id: string): Promise<void> {
  await db`delete from checks where id = ${id} and account_id = ${accountId}`;
}

/** The next ping is due `period + grace` after `from` (a ping, or the check being saved). */
export async function expectPing(db: Sql, accountId: string, checkId: string, heartbeat: HeartbeatSettings, from: number): Promise<void> {
  const deadline = new Date(from + periodMs(heartbeat) + graceMs(heartbeat));
  await db`insert into heartbeat_deadlines (check_id, account_id, next_deadline_at) values (${checkId}, ${accountId}, ${deadline})
    on conflict (check_id) do update set next_deadline_at = excluded.next_deadline_at`;
}

/** Whether the account has the check. */
export async function checkExists(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`select 1 from checks where account_id = ${accountId} and id = ${id}`;
  return rows.length > 0;
}

/** The account's checks that can run (all but heartbeats), deactivated ones too, oldest first. */
export async function runnableCheckIds(db: Sql, accountId: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from checks where account_id = ${accountId} and check_type <> 'HEARTBEAT' order by created_at, id`;
  return rows.map((r) => r.id);
}

export interface CheckWithStatus {
  id: string;
  name: string;
  check_type: string;
  activated: boolean;
  muted: boolean;
  tags: string[];
  has_failures: boolean | null;
  has_errors: boolean | null;
  is_degraded: boolean | null;
}

/** Every check of the account with its current status (none before its first result), oldest first. */
export async function checksWithStatus(db: Sql, accountId: string): Promise<CheckWithStatus[]> {
  return db<CheckWithStatus[]>`select c.id, c.name, c.check_type, c.activated, c.muted, c.tags, s.has_failures, s.has_errors, s.is_degraded
    from checks c left join check_statuses s on s.check_id = c.id
    where c.account_id = ${accountId} order by c.created_at, c.id`;
}

/**
 * Passes the secret variables of every check and group through `f` (sealing begins, or a key rotation): only rows
 * that hold a secret are read; answers how many rows changed.
 */
export async function resealCheckVariables(db: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  for (const table of ['checks', 'check_groups'] as const) {
    const rows = await db<{ id: string; vars: EnvVar[] }[]>`select id::text as id, data->'environmentVariables' as vars from ${db(table)}
      where data->'environmentVariables' @> '[{"secret": true}]'`;
    for (const row of rows) {
      const next = resealVariables(row.vars, f);
      if (!next) continue;
      await db`update ${db(table)} set data = jsonb_set(data, '{environmentVariables}', ${db.json(next as never)}) where id::text = ${row.id}`;
      changed++;
    }
  }
  return changed;
}
