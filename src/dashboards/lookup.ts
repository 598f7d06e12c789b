import type { Sql } from '../storage/postgres.js';
import type { DashboardBody } from './schemas.js';

/** A dashboard as the viewer pages need it. */
export interface PublishedDashboard {
  id: number;
  dashboardId: string;
  accountId: string;
  data: DashboardBody;
  updatedAt: number;
}

interface Row {
  id: number;
  dashboard_id: string;
  account_id: string;
  data: DashboardBody;
  created_at: Date;
  updated_at: Date | null;
}

const toDashboard = (r: Row): PublishedDashboard => ({
  id: r.id,
  dashboardId: r.dashboard_id,
  accountId: r.account_id,
  data: r.data,
  updatedAt: (r.updated_at ?? r.created_at).getTime(),
});

/** The dashboard published at /dashboards/{customUrl} (names are unique whatever the case). */
export async function dashboardByUrl(sql: Sql, customUrl: string): Promise<PublishedDashboard | undefined> {
  const [row] = await sql<Row[]>`select id, dashboard_id, account_id, data, created_at, updated_at from dashboards
    where lower(custom_url) = ${customUrl.toLowerCase()}`;
  return row && toDashboard(row);
}

/** The dashboard whose customDomain is the request's host, once its account verified the domain. */
export async function dashboardByDomain(sql: Sql, host: string): Promise<PublishedDashboard | undefined> {
  const [row] = await sql<Row[]>`select d.id, d.dashboard_id, d.account_id, d.data, d.created_at, d.updated_at from dashboards d
    join domain_claims c on c.account_id = d.account_id and c.domain = lower(d.custom_domain)
    where lower(d.custom_domain) = ${host.toLowerCase()} and c.verified_at is not null`;
  return row && toDashboard(row);
}

/** The stored hashes of a private dashboard's keys, with their ids. */
export async function dashboardKeyHashes(sql: Sql, dashboardId: number): Promise<{ id: string; hash: Buffer }[]> {
  const rows = await sql<{ id: string; key_hash: Buffer }[]>`select id, key_hash from dashboard_keys where dashboard_id = ${dashboardId}`;
  return rows.map((r) => ({ id: r.id, hash: r.key_hash }));
}
