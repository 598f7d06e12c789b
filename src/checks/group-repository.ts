import { overlay } from '../model/collections.js';
import type { Sql } from '../storage/postgres.js';
import { sealVariables } from '../storage/secret-box.js';
import type { GroupData } from './group-schemas.js';
import { applyGroupSettings } from './group-settings.js';
import type { ChannelSubscription } from './subscriptions.js';

export interface GroupRow {
  id: number;
  data: GroupData;
  created_at: Date;
  updated_at: Date | null;
}

/** What the group list route filters by. */
export interface GroupFilter {
  /** Groups with at least one of these tags. */
  tag?: string[];
  /** Groups with exactly one of these names. */
  name?: string[];
}

/** Each group's alert channel subscriptions, by group id. */
export async function groupSubscriptions(db: Sql, groupIds: number[]): Promise<Map<number, ChannelSubscription[]>> {
  const out = new Map(groupIds.map((id) => [id, [] as ChannelSubscription[]]));
  if (!groupIds.length) return out;
  const rows = await db<{ group_id: number; alert_channel_id: number; activated: boolean }[]>`select group_id, alert_channel_id, activated
    from alert_subscriptions where group_id = any(${groupIds}::bigint[]) order by alert_channel_id`;
  for (const r of rows) out.get(r.group_id)!.push({ alertChannelId: r.alert_channel_id, activated: r.activated });
  return out;
}

/** What of a check's row its effective settings are made of. */
export interface SettingsRow {
  check_type: string;
  activated: boolean;
  muted: boolean;
  tags: string[];
  group_id: number | null;
  data: Record<string, unknown>;
}

/**
 * Each row's settings as the check runs and alerts: its data with its type, tags, activation and mute laid in, then
 * its group's settings over them (applyGroupSettings). The rows' groups are read in one query, the account's only.
 * The one way runs (runners/definitions.ts) and state (state/apply.ts) see a check.
 */
export async function effectiveSettings<R extends SettingsRow>(
  db: Sql,
  accountId: string,
  rows: readonly R[],
): Promise<{ row: R; data: Record<string, unknown> }[]> {
  const groupIds = [...new Set(rows.flatMap((r) => (r.group_id === null ? [] : [r.group_id])))];
  const groups = new Map<number, GroupData>();
  if (groupIds.length) {
    for (const g of await db<{ id: number; data: GroupData }[]>`select id, data from check_groups
      where id = any(${groupIds}::bigint[]) and account_id = ${accountId}`)
      groups.set(g.id, g.data);
  }
  return rows.map((row) => {
    const group = row.group_id === null ? undefined : groups.get(row.group_id);
    const base: Record<string, unknown> = overlay(row.data, { checkType: row.check_type, tags: row.tags, activated: row.activated, muted: row.muted });
    return { row, data: group ? applyGroupSettings(base, group) : base };
  });
}

/** Whether the account has the group. */
export async function groupExists(db: Sql, accountId: string, id: number): Promise<boolean> {
  const [row] = await db`select id from check_groups where id = ${id} and account_id = ${accountId}`;
  return row !== undefined;
}

/** The account's group, or undefined. */
export async function findGroupRow(db: Sql, accountId: string, id: number): Promise<GroupRow | undefined> {
  const [row] = await db<GroupRow[]>`select * from check_groups where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** One page of an account's groups (by id) matching the filter, and how many match. */
export async function listGroupRows(db: Sql, accountId: string, filter: GroupFilter, limit: number, offset: number) {
  const where = db`account_id = ${accountId}
    ${filter.tag ? db`and data->'tags' ?| ${filter.tag}::text[]` : db``}
    ${filter.name ? db`and name = any(${filter.name}::text[])` : db``}`;
  const [rows, [{ n }]] = await Promise.all([
    db<GroupRow[]>`select * from check_groups where ${where} order by id limit ${limit} offset ${offset}`,
    db<{ n: number }[]>`select count(*)::int as n from check_groups where ${where}`,
  ]);
  return { rows, total: n };
}

/** A group as stored: its secret variables sealed. */
const sealedGroup = (data: GroupData): GroupData =>
  data.environmentVariables ? { ...data, environmentVariables: sealVariables(data.environmentVariables) } : data;

/** Inserts a group of the account; returns its row. */
export async function insertGroup(db: Sql, accountId: string, name: string, data: GroupData): Promise<GroupRow> {
  const [row] = await db<GroupRow[]>`insert into check_groups (account_id, name, data)
    values (${accountId}, ${name}, ${db.json(sealedGroup(data) as never)}) returning *`;
  return row;
}

/** The stored data of the account's group, its row locked for update; undefined when the account has no such group. */
export async function lockGroupData(db: Sql, accountId: string, id: number): Promise<GroupData | undefined> {
  const [current] = await db<Pick<GroupRow, 'data'>[]>`select data from check_groups
    where id = ${id} and account_id = ${accountId} for update`;
  return current?.data;
}

/** Sets a group's name and data (the caller has checked the account's); returns its row. */
export async function updateGroup(db: Sql, id: number, name: string, data: GroupData): Promise<GroupRow> {
  const [row] = await db<GroupRow[]>`update check_groups set name = ${name}, data = ${db.json(sealedGroup(data) as never)}, updated_at = now()
    where id = ${id} returning *`;
  return row;
}

/** Locks the account's group for update; false when the account has no such group. */
export async function lockGroup(db: Sql, accountId: string, id: number): Promise<boolean> {
  const [group] = await db`select id from check_groups where id = ${id}
    and account_id = ${accountId} for update`;
  return group !== undefined;
}

/** How many checks are in the group. */
export async function countGroupChecks(db: Sql, groupId: number): Promise<number> {
  const [{ n }] = await db<{ n: number }[]>`select count(*)::int as n from checks where group_id = ${groupId}`;
  return n;
}

/** Deletes a group (the caller has checked the account's and that it has no checks). */
export async function deleteGroup(db: Sql, id: number): Promise<void> {
  await db`delete from check_groups where id = ${id}`;
}
