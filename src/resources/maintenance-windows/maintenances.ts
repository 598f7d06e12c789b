import { Type } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { notFound } from '../../http/errors.js';
import { PositiveId } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Rules } from '../../http/rules.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { transaction, type Sql } from '../../storage/postgres.js';
import { occurrences, type WindowData } from '../../model/maintenance.js';
import { iso } from '../../model/time.js';

/**
 * Maintenances: the occurrences of a maintenance window, as status pages show them (docs/status-pages.md). An
 * occurrence is made (stored) when it is first listed: those that overlap the last 30 days and the next 90.
 * Its status follows its dates (SCHEDULED, IN_PROGRESS, COMPLETED) until an update sets one; updates may
 * notify the subscribers of the pages the window's statusPageVisibility names.
 */

const STATUSES = ['SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED', 'CANCELLED'] as const;
type Status = (typeof STATUSES)[number];
const DAY = 86_400_000;
const Uuid = Type.String({ format: 'uuid' });
const DateOrTime = Type.Union([Type.String({ format: 'date-time' }), Type.String({ format: 'date' })]);

const Update = Type.Object({
  id: Uuid,
  maintenanceWindowId: Type.Integer(),
  maintenanceId: Uuid,
  status: StringEnum(STATUSES),
  description: Type.String(),
  notifySubscribers: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  previousStatus: Nullable(Type.String()),
  previousStartsAt: Nullable(Type.String({ format: 'date-time' })),
  previousEndsAt: Nullable(Type.String({ format: 'date-time' })),
  dateAdjustments: Nullable(Type.Object({ startsAt: Type.String({ format: 'date-time' }), endsAt: Type.String({ format: 'date-time' }) })),
});
const Maintenance = Type.Object({
  id: Uuid,
  maintenanceWindowId: Type.Integer(),
  startsAt: Type.String({ format: 'date-time' }),
  endsAt: Type.String({ format: 'date-time' }),
  status: StringEnum(STATUSES),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  updates: Type.Array(Update),
});

interface MaintenanceRow {
  id: string;
  window_id: number;
  starts_at: Date;
  ends_at: Date;
  status: Status | null;
  created_at: Date;
  updated_at: Date;
}
interface UpdateRow {
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

const toUpdate = (windowId: number, u: UpdateRow) => ({
  id: u.id,
  maintenanceWindowId: Number(windowId),
  maintenanceId: u.maintenance_id,
  status: u.status,
  description: u.description,
  notifySubscribers: u.notify_subscribers,
  created_at: iso(u.created_at)!,
  previousStatus: u.previous_status,
  previousStartsAt: iso(u.previous_starts_at),
  previousEndsAt: iso(u.previous_ends_at),
  dateAdjustments: u.date_adjustments,
});

async function views(sql: Sql, rows: MaintenanceRow[]) {
  const ids = rows.map((r) => r.id);
  const updates = ids.length ? await sql<UpdateRow[]>`select * from maintenance_updates where maintenance_id = any(${ids}::uuid[]) order by created_at, id` : [];
  return rows.map((r) => ({
    id: r.id,
    maintenanceWindowId: Number(r.window_id),
    startsAt: iso(r.starts_at)!,
    endsAt: iso(r.ends_at)!,
    status: maintenanceStatus(r),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    updates: updates.filter((u) => u.maintenance_id === r.id).map((u) => toUpdate(r.window_id, u)),
  }));
}

/** Stores the window's occurrences around now that are not stored yet (a deleted one stays deleted). */
export async function materialise(sql: Sql, accountId: string, windowId: number, data: WindowData, now = Date.now()): Promise<void> {
  const due = occurrences(data, now - 30 * DAY, now + 90 * DAY, 200);
  if (!due.length) return;
  await sql`insert into maintenances ${sql(due.map((o) => ({ account_id: accountId, window_id: windowId, occurrence_at: new Date(o.start), starts_at: new Date(o.start), ends_at: new Date(o.end) })))}
    on conflict (window_id, occurrence_at) do nothing`;
}

/** Mail about a maintenance update to the verified subscribers of the pages its window names (all the account's when it names none). */
async function queueMaintenanceMail(tx: Sql, accountId: string, window: { data: WindowData & { name?: string; statusPageVisibility?: { statusPageIds?: string[]; serviceIds?: string[] } } }, m: MaintenanceRow, u: UpdateRow): Promise<void> {
  const pages = window.data.statusPageVisibility?.statusPageIds ?? [];
  const services = window.data.statusPageVisibility?.serviceIds ?? [];
  const subject = `[Maintenance ${u.status.replace('_', ' ').toLowerCase()}] ${window.data.name ?? 'Scheduled maintenance'}`;
  const body = `${window.data.name ?? 'Scheduled maintenance'}: ${m.starts_at.toISOString()} to ${m.ends_at.toISOString()}\n\n${u.status}: ${u.description}`;
  await tx`insert into status_page_mails (subscription_id, kind, subject, body)
    select distinct s.id, 'maintenance', ${subject}, ${body}
    from status_page_subscriptions s join status_pages p on p.id = s.status_page_id
    where p.account_id = ${accountId} and s.status = 'VERIFIED'
      and (${pages.length + services.length === 0}
        or p.id = any(${pages}::uuid[])
        or exists (select 1 from status_page_cards c where c.status_page_id = p.id and c.service_ids && ${services}::uuid[]))`;
}

export function maintenanceRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Maintenance windows';
  const WindowParams = Type.Object({ id: PositiveId }, { additionalProperties: false });
  const Params = Type.Object({ id: PositiveId, maintenanceId: Uuid }, { additionalProperties: false });
  const UpdateParams = Type.Object({ id: PositiveId, maintenanceId: Uuid, updateId: Uuid }, { additionalProperties: false });

  const windowOf = async (accountId: string, id: number) => {
    const [row] = await sql<{ id: number; data: WindowData & { name?: string } }[]>`select id, data from maintenance_windows where id = ${id} and account_id = ${accountId}`;
    if (!row) throw notFound();
    return row;
  };
  const maintenanceOf = async (accountId: string, windowId: number, id: string) => {
    const window = await windowOf(accountId, windowId);
    const [row] = await sql<MaintenanceRow[]>`select * from maintenances where id = ${id} and window_id = ${window.id} and deleted_at is null`;
    if (!row) throw notFound();
    return { window, row };
  };

  return [
    defineRoute({
      method: 'GET', path: '/v1/maintenance-windows/{id}/maintenances', operationId: 'listMaintenances', summary: "A window's occurrences (the last 30 days and the next 90), oldest first", tag, access: 'read', errors: [404],
      schema: { params: WindowParams, query: Type.Object({ page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }), limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }) }, { additionalProperties: false }), responses: { 200: Type.Array(Maintenance) } },
      handler: async ({ principal, params, query }) => {
        const window = await windowOf(principal.account.id, params.id);
        await materialise(sql, principal.account.id, window.id, window.data);
        const rows = await sql<MaintenanceRow[]>`select * from maintenances where window_id = ${window.id} and deleted_at is null
          order by starts_at, id limit ${query.limit} offset ${(query.page - 1) * query.limit}`;
        return { status: 200, body: await views(sql, rows) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}', operationId: 'getMaintenance', summary: 'Retrieve a maintenance with its updates', tag, access: 'read', errors: [404],
      schema: { params: Params, responses: { 200: Maintenance } },
      handler: async ({ principal, params }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        return { status: 200, body: (await views(sql, [row]))[0]! };
      },
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}', operationId: 'rescheduleMaintenance', summary: "Move a maintenance's dates", tag, access: 'write', errors: [404],
      schema: { params: Params, body: Type.Object({ startsAt: Type.Optional(DateOrTime), endsAt: Type.Optional(DateOrTime) }, { additionalProperties: false }), responses: { 200: Maintenance } },
      handler: async ({ principal, params, body }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const startsAt = body.startsAt ? new Date(body.startsAt) : row.starts_at;
        const endsAt = body.endsAt ? new Date(body.endsAt) : row.ends_at;
        const rules = new Rules();
        rules.check(endsAt > startsAt, body.endsAt ? 'body.endsAt' : 'body.startsAt', 'after', 'endsAt must be after startsAt');
        rules.throwIfAny();
        const [moved] = await sql<MaintenanceRow[]>`update maintenances set starts_at = ${startsAt}, ends_at = ${endsAt}, updated_at = now() where id = ${row.id} returning *`;
        return { status: 200, body: (await views(sql, [moved!]))[0]! };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}', operationId: 'deleteMaintenance', summary: 'Delete a maintenance (it is not made again)', tag, access: 'write', errors: [404],
      schema: { params: Params, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        await sql`update maintenances set deleted_at = now() where id = ${row.id}`;
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates', operationId: 'createMaintenanceUpdate', summary: 'Post a status update (it sets the maintenance\'s status)', tag, access: 'write', errors: [404],
      schema: {
        params: Params,
        body: Type.Object({ status: StringEnum(STATUSES), description: Type.String({ minLength: 1, maxLength: 2000 }), notifySubscribers: Type.Boolean({ default: false }) }, { additionalProperties: false }),
        responses: { 201: Update },
      },
      handler: async ({ principal, params, body }) => {
        const { window, row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const update = await transaction(sql, async (tx) => {
          const [update] = await tx<UpdateRow[]>`insert into maintenance_updates (maintenance_id, status, description, notify_subscribers, previous_status, previous_starts_at, previous_ends_at)
            values (${row.id}, ${body.status}, ${body.description}, ${body.notifySubscribers}, ${maintenanceStatus(row)}, ${row.starts_at}, ${row.ends_at}) returning *`;
          await tx`update maintenances set status = ${body.status}, updated_at = now() where id = ${row.id}`;
          if (body.notifySubscribers) await queueMaintenanceMail(tx, principal.account.id, window, row, update!);
          return update!;
        });
        return { status: 201, body: toUpdate(window.id, update) };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates/{updateId}', operationId: 'updateMaintenanceUpdate', summary: 'Correct a status update', tag, access: 'write', errors: [404],
      schema: { params: UpdateParams, body: Type.Object({ status: Type.Optional(StringEnum(STATUSES)), description: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false }), responses: { 200: Update } },
      handler: async ({ principal, params, body }) => {
        const { window, row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const [update] = await sql<UpdateRow[]>`update maintenance_updates set description = ${body.description}, status = coalesce(${body.status ?? null}, status)
          where id = ${params.updateId} and maintenance_id = ${row.id} returning *`;
        if (!update) throw notFound();
        return { status: 200, body: toUpdate(window.id, update) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates/{updateId}', operationId: 'deleteMaintenanceUpdate', summary: 'Delete a status update', tag, access: 'write', errors: [404],
      schema: { params: UpdateParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const rows = await sql`delete from maintenance_updates where id = ${params.updateId} and maintenance_id = ${row.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
