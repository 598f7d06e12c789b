import { iso } from '../model/time.js';
import type { CheckIncidentHooks } from '../state/index.js';
import type { Sql } from '../storage/postgres.js';

/**
 * Status-page services and their incidents (docs/status-pages.md): what the API declares by hand and what a
 * check's triggerIncident opens and resolves in the alert transaction (state/records.ts), with the mail to the
 * subscribers of the pages that show an incident's services written in the same transaction.
 */

export const SEVERITIES = ['CRITICAL', 'MAJOR', 'MEDIUM', 'MINOR'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const PROGRESS = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED'] as const;
export type Progress = (typeof PROGRESS)[number];

export interface ServiceRow {
  id: string;
  account_id: string;
  name: string;
  created_at: Date;
  updated_at: Date | null;
}

export const toService = (r: ServiceRow) => ({ id: r.id, name: r.name, accountId: r.account_id, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });
export type ServiceView = ReturnType<typeof toService>;

interface IncidentRow {
  id: string;
  account_id: string;
  name: string;
  severity: Severity;
  last_update_status: Progress;
  check_incident_id: string | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}

interface UpdateRow {
  id: string;
  incident_id: string;
  status: Progress;
  description: string;
  public_at: Date;
  notify_subscribers: boolean;
  created_at: Date;
  updated_at: Date | null;
}

export const toUpdate = (u: UpdateRow) => ({
  id: u.id,
  description: u.description,
  status: u.status,
  publicIncidentUpdateDate: iso(u.public_at)!,
  notifySubscribers: u.notify_subscribers,
  created_at: iso(u.created_at)!,
  updated_at: iso(u.updated_at),
});
export type UpdateView = ReturnType<typeof toUpdate>;

export interface IncidentView {
  id: string;
  name: string;
  severity: Severity;
  services: ServiceView[];
  incidentUpdates: UpdateView[];
  lastUpdateStatus: Progress;
  /** Seconds from declared to resolved; null while open. */
  duration: number | null;
  created_at: string;
  updated_at: string;
}

export interface UpdateInput {
  status?: Progress;
  description: string;
  publicIncidentUpdateDate?: string;
  notifySubscribers?: boolean;
}

/** The account's services of `ids` that exist, in the order asked. */
export async function servicesOf(sql: Sql, accountId: string, ids: readonly string[]): Promise<ServiceRow[]> {
  if (!ids.length) return [];
  const rows = await sql<ServiceRow[]>`select * from status_page_services where account_id = ${accountId} and id = any(${[...ids]}::uuid[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Incidents of the account with their services and updates (updates oldest first), in the order of `ids`. */
export async function incidentsById(sql: Sql, accountId: string, ids: readonly string[]): Promise<IncidentView[]> {
  if (!ids.length) return [];
  const [rows, services, updates] = await Promise.all([
    sql<IncidentRow[]>`select * from status_page_incidents where account_id = ${accountId} and id = any(${[...ids]}::uuid[])`,
    sql<(ServiceRow & { incident_id: string })[]>`select s.*, l.incident_id from status_page_incident_services l
      join status_page_services s on s.id = l.service_id where l.incident_id = any(${[...ids]}::uuid[]) order by s.created_at, s.id`,
    sql<UpdateRow[]>`select * from status_page_incident_updates where incident_id = any(${[...ids]}::uuid[]) order by public_at, created_at, id`,
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id: r.id,
        name: r.name,
        severity: r.severity,
        services: services.filter((s) => s.incident_id === id).map(toService),
        incidentUpdates: updates.filter((u) => u.incident_id === id).map(toUpdate),
        lastUpdateStatus: r.last_update_status,
        duration: r.resolved_at ? Math.max(0, Math.round((r.resolved_at.getTime() - r.created_at.getTime()) / 1000)) : null,
        created_at: iso(r.created_at)!,
        // The anchor's incident always has one: its creation until it changes.
        updated_at: iso(r.updated_at ?? r.created_at)!,
      },
    ];
  });
}

/** One page of the account's incidents, newest first; `nextId` is where the next page starts. */
export async function listIncidents(
  sql: Sql,
  accountId: string,
  limit: number,
  nextId?: string,
  serviceIds?: readonly string[],
): Promise<{ entries: IncidentView[]; nextId: string | null }> {
  const from = nextId
    ? (await sql<{ created_at: Date; id: string }[]>`select created_at, id from status_page_incidents where account_id = ${accountId} and id = ${nextId}`)[0]
    : undefined;
  const rows = await sql<{ id: string }[]>`select id from status_page_incidents i where account_id = ${accountId}
    ${from ? sql`and (created_at, id) <= (${from.created_at}, ${from.id})` : sql``}
    ${serviceIds ? sql`and exists (select 1 from status_page_incident_services l where l.incident_id = i.id and l.service_id = any(${[...serviceIds]}::uuid[]))` : sql``}
    order by created_at desc, id desc limit ${limit + 1}`;
  const page = rows.slice(0, limit).map((r) => r.id);
  return { entries: await incidentsById(sql, accountId, page), nextId: rows[limit]?.id ?? null };
}

/** Declares an incident on services with its first update; answers its id. */
export async function createIncident(
  tx: Sql,
  accountId: string,
  input: { name: string; severity: Severity; serviceIds: readonly string[]; update: UpdateInput; checkIncidentId?: string; at?: Date },
): Promise<string> {
  const status = input.update.status ?? 'INVESTIGATING';
  const at = input.at ?? new Date();
  const [row] = await tx<
    { id: string }[]
  >`insert into status_page_incidents (account_id, name, severity, last_update_status, check_incident_id, resolved_at, created_at)
    values (${accountId}, ${input.name}, ${input.severity}, ${status}, ${input.checkIncidentId ?? null}, ${status === 'RESOLVED' ? at : null}, ${at}) returning id`;
  if (input.serviceIds.length) {
    await tx`insert into status_page_incident_services ${tx(input.serviceIds.map((service_id) => ({ incident_id: row!.id, service_id })))} on conflict do nothing`;
  }
  await insertUpdate(tx, row!.id, { ...input.update, status }, at);
  return row!.id;
}

async function insertUpdate(tx: Sql, incidentId: string, input: UpdateInput & { status: Progress }, at: Date): Promise<UpdateRow> {
  const publicAt = input.publicIncidentUpdateDate ? new Date(input.publicIncidentUpdateDate) : at;
  const [update] = await tx<UpdateRow[]>`insert into status_page_incident_updates (incident_id, status, description, public_at, notify_subscribers, created_at)
    values (${incidentId}, ${input.status}, ${input.description}, ${publicAt}, ${input.notifySubscribers ?? false}, ${at}) returning *`;
  if (update!.notify_subscribers) await queueIncidentMail(tx, incidentId, update!);
  return update!;
}

/**
 * Adds an update to the account's incident: its status becomes the incident's (RESOLVED resolves it, another
 * status reopens it). Undefined when the account has no such incident.
 */
export async function addUpdate(tx: Sql, accountId: string, incidentId: string, input: UpdateInput, at = new Date()): Promise<UpdateView | undefined> {
  const [incident] = await tx<IncidentRow[]>`select * from status_page_incidents where id = ${incidentId} and account_id = ${accountId} for update`;
  if (!incident) return undefined;
  const status = input.status ?? incident.last_update_status;
  const update = await insertUpdate(tx, incidentId, { ...input, status }, at);
  await tx`update status_page_incidents set last_update_status = ${status}, updated_at = ${at},
    resolved_at = case when ${status} = 'RESOLVED' then coalesce(resolved_at, ${at}) else null end
    where id = ${incidentId}`;
  return toUpdate(update);
}

/** Changes an update's text, status or date; the incident's status follows its latest update. */
export async function editUpdate(tx: Sql, accountId: string, incidentId: string, updateId: string, input: UpdateInput): Promise<UpdateView | undefined> {
  const [row] = await tx<UpdateRow[]>`update status_page_incident_updates u set
      description = ${input.description},
      status = coalesce(${input.status ?? null}, u.status),
      public_at = coalesce(${input.publicIncidentUpdateDate ? new Date(input.publicIncidentUpdateDate) : null}, u.public_at),
      notify_subscribers = coalesce(${input.notifySubscribers ?? null}, u.notify_subscribers),
      updated_at = now()
    from status_page_incidents i
    where u.id = ${updateId} and u.incident_id = ${incidentId} and i.id = u.incident_id and i.account_id = ${accountId}
    returning u.*`;
  if (!row) return undefined;
  await followLatest(tx, incidentId);
  return toUpdate(row);
}

export async function deleteUpdate(tx: Sql, accountId: string, incidentId: string, updateId: string): Promise<boolean> {
  const rows = await tx`delete from status_page_incident_updates u using status_page_incidents i
    where u.id = ${updateId} and u.incident_id = ${incidentId} and i.id = u.incident_id and i.account_id = ${accountId} returning u.id`;
  if (!rows.length) return false;
  await followLatest(tx, incidentId);
  return true;
}

async function followLatest(tx: Sql, incidentId: string): Promise<void> {
  await tx`update status_page_incidents i set
      last_update_status = coalesce((select status from status_page_incident_updates where incident_id = i.id order by public_at desc, created_at desc limit 1), i.last_update_status),
      updated_at = now()
    where id = ${incidentId}`;
  await tx`update status_page_incidents set resolved_at = case when last_update_status = 'RESOLVED' then coalesce(resolved_at, now()) else null end where id = ${incidentId}`;
}

/**
 * A check's triggerIncident, in the alert transaction: a failure opens an incident on the service it names (when
 * the account has that service), a recovery resolves it with an update. `checkIncidentId` is the alert incident.
 */
export async function openCheckIncident(
  tx: Sql,
  accountId: string,
  checkIncidentId: string,
  trigger: { serviceId: string; name: string; description?: string; severity?: string; notifySubscribers?: boolean },
  at: Date,
): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(trigger.serviceId)) return;
  const [service] = await servicesOf(tx, accountId, [trigger.serviceId.toLowerCase()]);
  if (!service) return;
  const [existing] = await tx`select 1 from status_page_incidents where check_incident_id = ${checkIncidentId}`;
  if (existing) return;
  const severity = (SEVERITIES as readonly string[]).includes(String(trigger.severity).toUpperCase())
    ? (String(trigger.severity).toUpperCase() as Severity)
    : 'MINOR';
  await createIncident(tx, accountId, {
    name: trigger.name,
    severity,
    serviceIds: [service.id],
    checkIncidentId,
    at,
    update: {
      status: 'INVESTIGATING',
      description: trigger.description?.trim() || `${trigger.name}: a check of this service is failing.`,
      notifySubscribers: trigger.notifySubscribers ?? false,
    },
  });
}

export async function resolveCheckIncident(tx: Sql, accountId: string, checkIncidentId: string, notifySubscribers: boolean, at: Date): Promise<void> {
  const [incident] = await tx<
    { id: string }[]
  >`select id from status_page_incidents where check_incident_id = ${checkIncidentId} and account_id = ${accountId} and resolved_at is null`;
  if (!incident) return;
  await addUpdate(tx, accountId, incident.id, { status: 'RESOLVED', description: 'The checks of this service pass again.', notifySubscribers }, at);
}

/**
 * An imported subscriber (autoVerify) who never confirmed gets at most this many incident and maintenance mails in any
 * 24 hours: an Admin's list cannot be mailed on every incident (a subscriber who confirmed gets every one).
 */
export const UNCONFIRMED_MAILS_PER_DAY = 3;

/** Mail about an incident update to the verified subscribers of every page showing one of its services. */
async function queueIncidentMail(tx: Sql, incidentId: string, update: UpdateRow): Promise<void> {
  const [incident] = await tx<{ name: string; severity: string }[]>`select name, severity from status_page_incidents where id = ${incidentId}`;
  if (!incident) return;
  const subject = `[${update.status}] ${incident.name}`;
  const body = `${incident.name} (${incident.severity.toLowerCase()} incident)\n\n${update.status}: ${update.description}\n\nPosted ${update.public_at.toISOString()}.`;
  await tx`insert into status_page_mails (subscription_id, kind, subject, body)
    select distinct s.id, 'incident', ${subject}, ${body}
    from status_page_subscriptions s
    join status_page_cards c on c.status_page_id = s.status_page_id
    join status_page_incident_services l on l.service_id = any(c.service_ids)
    where l.incident_id = ${incidentId} and s.status = 'VERIFIED'
      and (s.confirmed_at is not null or (select count(*) from status_page_mails d where d.subscription_id = s.id and d.kind <> 'confirm'
        and d.created_at > now() - interval '1 day') < ${UNCONFIRMED_MAILS_PER_DAY})`;
}

/** What check state hands its check incidents to (state/records.ts): they show on the account's status pages. */
export const checkIncidentHooks: CheckIncidentHooks = { opened: openCheckIncident, resolved: resolveCheckIncident };

export async function insertService(db: Sql, accountId: string, name: string): Promise<ServiceRow> {
  const [row] = await db<ServiceRow[]>`insert into status_page_services (account_id, name) values (${accountId}, ${name}) returning *`;
  return row!;
}

export async function renameService(db: Sql, accountId: string, id: string, name: string): Promise<ServiceRow | undefined> {
  const [row] = await db<ServiceRow[]>`update status_page_services set name = ${name}, updated_at = now()
    where id = ${id} and account_id = ${accountId} returning *`;
  return row;
}

/** Changes an incident's name, severity and services (each only when given). */
export async function changeIncident(
  tx: Sql,
  accountId: string,
  id: string,
  change: { name?: string; severity?: string; serviceIds?: readonly string[] },
): Promise<void> {
  await tx`update status_page_incidents set name = coalesce(${change.name ?? null}, name), severity = coalesce(${change.severity ?? null}, severity), updated_at = now()
    where id = ${id} and account_id = ${accountId}`;
  if (change.serviceIds) {
    await tx`delete from status_page_incident_services where incident_id = ${id}`;
    await tx`insert into status_page_incident_services ${tx(change.serviceIds.map((service_id) => ({ incident_id: id, service_id })))}`;
  }
}

/** Deletes an incident and its updates; false when the account has no such incident. */
export async function deleteIncident(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`delete from status_page_incidents where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}
