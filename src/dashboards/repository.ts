import type { Sql } from '../storage/postgres.js';
import type { DashboardBody } from './schemas.js';

/** Every statement about dashboards and their keys (the rendered pages read through lookup.ts). */

export interface DashboardRow {
  id: number;
  dashboard_id: string;
  data: DashboardBody;
  created_at: Date;
  updated_at: Date | null;
}

export interface DashboardKeyRow {
  id: string;
  dashboard_id: number;
  key_suffix: string;
  created_at: Date;
  updated_at: Date;
}

/** `dashboardId` is a uuid; an all-digit value is the numeric id. */
const byIdentifier = (db: Sql, identifier: string) => (/^\d{1,15}$/.test(identifier) ? db`id = ${Number(identifier)}` : db`dashboard_id = ${identifier}`);

export async function findDashboard(db: Sql, accountId: string, identifier: string, lock = false): Promise<DashboardRow | undefined> {
  const [row] = await db<
    DashboardRow[]
  >`select * from dashboards where account_id = ${accountId} and ${byIdentifier(db, identifier)} ${lock ? db`for update` : db``}`;
  return row;
}

export async function insertDashboard(db: Sql, accountId: string, dashboardId: string, data: DashboardBody): Promise<DashboardRow> {
  const [row] = await db<DashboardRow[]>`insert into dashboards (dashboard_id, account_id, custom_url, custom_domain, data)
    values (${dashboardId}, ${accountId}, ${data.customUrl ?? null}, ${data.customDomain ?? null}, ${db.json(data as never)}) returning *`;
  return row!;
}

export async function updateDashboard(db: Sql, id: number, data: DashboardBody): Promise<DashboardRow> {
  const [row] = await db<DashboardRow[]>`update dashboards set custom_url = ${data.customUrl ?? null},
      custom_domain = ${data.customDomain ?? null}, data = ${db.json(data as never)}, updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

export async function deleteDashboard(db: Sql, accountId: string, identifier: string): Promise<boolean> {
  const rows = await db`delete from dashboards where account_id = ${accountId} and ${byIdentifier(db, identifier)} returning id`;
  return rows.length > 0;
}

/** The keys of each dashboard, by its numeric id. */
export async function keysOf(db: Sql, dashboardIds: number[]): Promise<Map<number, DashboardKeyRow[]>> {
  const map = new Map<number, DashboardKeyRow[]>(dashboardIds.map((id) => [id, []]));
  if (!dashboardIds.length) return map;
  const rows = await db<DashboardKeyRow[]>`select * from dashboard_keys where dashboard_id = any(${dashboardIds}::bigint[]) order by created_at, id`;
  for (const r of rows) map.get(r.dashboard_id)!.push(r);
  return map;
}

export async function hasDashboardKey(db: Sql, dashboardId: number): Promise<boolean> {
  const rows = await db`select id from dashboard_keys where dashboard_id = ${dashboardId} limit 1`;
  return rows.length > 0;
}

/** Stores a key's hash and its last characters; answers its id. */
export async function insertDashboardKey(db: Sql, dashboardId: number, hash: Buffer, suffix: string): Promise<string> {
  const [row] = await db<
    { id: string }[]
  >`insert into dashboard_keys (dashboard_id, key_hash, key_suffix) values (${dashboardId}, ${hash}, ${suffix}) returning id`;
  return row!.id;
}

export async function deleteDashboardKeys(db: Sql, dashboardId: number): Promise<void> {
  await db`delete from dashboard_keys where dashboard_id = ${dashboardId}`;
}
