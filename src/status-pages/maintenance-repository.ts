import { occurrences, type WindowData } from '../model/maintenance.js';
import type { Sql } from '../storage/postgres.js';
import { UNCONFIRMED_MAILS_PER_DAY } from './incident-repository.js';

/** The occurrences of maintenance windows (maintenances) and their status updates: every statement about them. */

export const STATUSES = ['SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED', 'CANCELLED'] as const;
export type Status = (typeof STATUSES)[number];
const DAY = 86_400_000;

export interface MaintenanceRow {
  id: string;
  window_id: number;
  starts_at: Date;
  ends_at: Date;
  status: Status | null;
  created_at: Date;
  updated_at: Date;
}
export interface UpdateRow {
  id: string;
  maintenance_id: string;
  status: Status;
  description: string;
  notify_subscribers: boolean;
  previous_status: string | null;
  previous_starts_at: Date | null;
  previous_ends_at: Date | null;
  date_adjustments: { startsAt: string; endsAt: string } | null;
  created_at: Date;
}

/** A maintenance's status: the one an update set, else what its dates say now. */
export function maintenanceStatus(m: { status: Status | null; starts_at: Date; ends_at: Date }, now = Date.now()): Status {
  if (m.status) return m.status;
  return now < m.starts_at.getTime() ? 'SCHEDULED' : now < m.ends_at.getTime() ? 'IN_PROGRESS' : 'COMPLETED';
}

export async function updatesOf(db: Sql, maintenanceIds: readonly string[]): Promise<UpdateRow[]> {
  if (!maintenanceIds.length) return [];
  return db<UpdateRow[]>`select * from maintenance_updates where maintenance_id = any(${maintenanceIds as string[]}::uuid[]) order by created_at, id`;
}

/** Stores the window's occurrences around now that are not stored yet (a deleted one stays deleted). */
export async function materialise(sql: Sql, accountId: string, windowId: number, data: WindowData, now = Date.now()): Promise<void> {
  const due = occurrences(data, now - 30 * DAY, now + 90 * DAY, 200);
  if (!due.length) return;
  await sql`insert into maintenances ${sql(due.map((o) => ({ account_id: accountId, window_id: windowId, occurrence_at: new Date(o.start), starts_at: new Date(o.start), ends_at: new Date(o.end) })))}
    on conflict (window_id, occurrence_at) do nothing`;
}

/** Mail about a maintenance update to the verified subscribers of the pages its window names (all the account's when it names none). */
export async function queueMaintenanceMail(
  tx: Sql,
  accountId: string,
  window: { data: WindowData & { name?: string; statusPageVisibility?: { statusPageIds?: string[]; serviceIds?: string[] } } },
  m: MaintenanceRow,
  u: UpdateRow,
): Promise<void> {
  const pages = window.data.statusPageVisibility?.statusPageIds ?? [];
  const services = window.data.statusPageVisibility?.serviceIds ?? [];
  const subject = `[Maintenance ${u.status.replace('_', ' ').toLowerCase()}] ${window.data.name ?? 'Scheduled maintenance'}`;
  const body = `${window.data.name ?? 'Scheduled maintenance'}: ${m.starts_at.toISOString()} to ${m.ends_at.toISOString()}\n\n${u.status}: ${u.description}`;
  await tx`insert into status_page_mails (subscription_id, kind, subject, body)
    select distinct s.id, 'maintenance', ${subject}, ${body}
    from status_page_subscriptions s join status_pages p on p.id = s.status_page_id
    where p.account_id = ${accountId} and s.status = 'VERIFIED'
      and (s.confirmed_at is not null or (select count(*) from status_page_mails d where d.subscription_id = s.id and d.kind <> 'confirm'
        and d.created_at > now() - interval '1 day') < ${UNCONFIRMED_MAILS_PER_DAY})
      and (${pages.length + services.length === 0}
        or p.id = any(${pages}::uuid[])
        or exists (select 1 from status_page_cards c where c.status_page_id = p.id and c.service_ids && ${services}::uuid[]))`;
}

export async function findWindowData(db: Sql, accountId: string, id: number): Promise<{ id: number; data: WindowData & { name?: string } } | undefined> {
  const [row] = await db<
    { id: number; data: WindowData & { name?: string } }[]
  >`select id, data from maintenance_windows where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function findMaintenance(db: Sql, windowId: number, id: string): Promise<MaintenanceRow | undefined> {
  const [row] = await db<MaintenanceRow[]>`select * from maintenances where id = ${id} and window_id = ${windowId} and deleted_at is null`;
  return row;
}

/** A page of a window's maintenances, oldest first (deleted ones left out). */
export async function listMaintenances(db: Sql, windowId: number, limit: number, offset: number): Promise<MaintenanceRow[]> {
  return db<MaintenanceRow[]>`select * from maintenances where window_id = ${windowId} and deleted_at is null
    order by starts_at, id limit ${limit} offset ${offset}`;
}

export async function moveMaintenance(db: Sql, id: string, startsAt: Date, endsAt: Date): Promise<MaintenanceRow> {
  const [moved] = await db<
    MaintenanceRow[]
  >`update maintenances set starts_at = ${startsAt}, ends_at = ${endsAt}, updated_at = now() where id = ${id} returning *`;
  return moved!;
}

/** Marks a maintenance deleted: it is not made again from its window. */
export async function deleteMaintenance(db: Sql, id: string): Promise<void> {
  await db`update maintenances set deleted_at = now() where id = ${id}`;
}

/** Records a status update and sets the maintenance's status to it (what it was stays in the update). */
export async function addMaintenanceUpdate(
  tx: Sql,
  m: MaintenanceRow,
  u: { status: Status; description: string; notifySubscribers: boolean },
): Promise<UpdateRow> {
  const [update] = await tx<
    UpdateRow[]
  >`insert into maintenance_updates (maintenance_id, status, description, notify_subscribers, previous_status, previous_starts_at, previous_ends_at)
    values (${m.id}, ${u.status}, ${u.description}, ${u.notifySubscribers}, ${maintenanceStatus(m)}, ${m.starts_at}, ${m.ends_at}) returning *`;
  await tx`update maintenances set status = ${u.status}, updated_at = now() where id = ${m.id}`;
  return update!;
}

export async function editMaintenanceUpdate(
  db: Sql,
  maintenanceId: string,
  id: string,
  u: { status?: Status; description: string },
): Promise<UpdateRow | undefined> {
  const [update] = await db<UpdateRow[]>`update maintenance_updates set description = ${u.description}, status = coalesce(${u.status ?? null}, status)
    where id = ${id} and maintenance_id = ${maintenanceId} returning *`;
  return update;
}

export async function deleteMaintenanceUpdate(db: Sql, maintenanceId: string, id: string): Promise<boolean> {
  const rows = await db`delete from maintenance_updates where id = ${id} and maintenance_id = ${maintenanceId} returning id`;
  return rows.length > 0;
}
