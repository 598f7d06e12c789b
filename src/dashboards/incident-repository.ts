import type { Sql } from '../storage/postgres.js';

/** Every statement about the anchor's dashboard incidents (`/v1/incidents`) and their updates. */

export const STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE'] as const;
export const IMPACTS = ['MAINTENANCE', 'MAJOR', 'MINOR'] as const;

export interface IncidentRow {
  id: string;
  dashboard_id: number;
  name: string;
  impact: (typeof IMPACTS)[number];
  started_at: Date | null;
  stopped_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}
export interface UpdateRow {
  id: string;
  incident_id: string;
  status: (typeof STATUSES)[number];
  description: string;
  created_at: Date;
  updated_at: Date | null;
}

type IncidentFields = { name: string; impact: (typeof IMPACTS)[number]; startedAt?: string | null; stoppedAt?: string | null };

export async function dashboardExists(db: Sql, accountId: string, id: number): Promise<boolean> {
  const rows = await db`select id from dashboards where id = ${id} and account_id = ${accountId}`;
  return rows.length > 0;
}

export async function findDashboardIncident(db: Sql, accountId: string, id: string): Promise<IncidentRow | undefined> {
  const [row] = await db<IncidentRow[]>`select * from dashboard_incidents where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** Newest first; all of them, or only the latest. */
export async function updatesOf(db: Sql, incidentId: string, all: boolean): Promise<UpdateRow[]> {
  return db<
    UpdateRow[]
  >`select * from dashboard_incident_updates where incident_id = ${incidentId} order by created_at desc, id desc ${all ? db`` : db`limit 1`}`;
}

export async function insertDashboardIncident(db: Sql, accountId: string, i: IncidentFields & { dashboardId: number }): Promise<IncidentRow> {
  const [row] = await db<IncidentRow[]>`insert into dashboard_incidents (account_id, dashboard_id, name, impact, started_at, stopped_at)
    values (${accountId}, ${i.dashboardId}, ${i.name}, ${i.impact}, ${i.startedAt ?? null}, ${i.stoppedAt ?? null}) returning *`;
  return row!;
}

export async function replaceDashboardIncident(db: Sql, accountId: string, id: string, i: IncidentFields): Promise<IncidentRow | undefined> {
  const [row] = await db<IncidentRow[]>`update dashboard_incidents set name = ${i.name}, impact = ${i.impact},
      started_at = ${i.startedAt ?? null}, stopped_at = ${i.stoppedAt ?? null}, updated_at = now()
    where id = ${id} and account_id = ${accountId} returning *`;
  return row;
}

export async function deleteDashboardIncident(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`delete from dashboard_incidents where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}

/** Adds an update; unless it is the incident's first, the incident counts as updated now. */
export async function insertIncidentUpdate(
  db: Sql,
  incidentId: string,
  u: { status: (typeof STATUSES)[number]; description: string },
  first = false,
): Promise<UpdateRow> {
  const [row] = await db<
    UpdateRow[]
  >`insert into dashboard_incident_updates (incident_id, status, description) values (${incidentId}, ${u.status}, ${u.description}) returning *`;
  if (!first) await db`update dashboard_incidents set updated_at = now() where id = ${incidentId}`;
  return row!;
}

export async function editIncidentUpdate(db: Sql, incidentId: string, id: string, description: string): Promise<UpdateRow | undefined> {
  const [row] = await db<UpdateRow[]>`update dashboard_incident_updates set description = ${description}, updated_at = now()
    where id = ${id} and incident_id = ${incidentId} returning *`;
  return row;
}

export async function deleteIncidentUpdate(db: Sql, incidentId: string, id: string): Promise<boolean> {
  const rows = await db`delete from dashboard_incident_updates where id = ${id} and incident_id = ${incidentId} returning id`;
  return rows.length > 0;
}
