import { Type } from '@sinclair/typebox';
import { notFound } from '../http/errors.js';
import { PositiveId } from '../http/ids.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { iso } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  addMaintenanceUpdate,
  deleteMaintenance,
  deleteMaintenanceUpdate,
  editMaintenanceUpdate,
  findMaintenance,
  findWindowData,
  listMaintenances,
  type MaintenanceRow,
  maintenanceStatus,
  materialise,
  moveMaintenance,
  queueMaintenanceMail,
  STATUSES,
  type UpdateRow,
  updatesOf,
} from './maintenance-repository.js';

/**
 * Maintenances: the occurrences of a maintenance window, as status pages show them (docs/status-pages.md). An
 * occurrence is made (stored) when it is first listed: those that overlap the last 30 days and the next 90.
 * Its status follows its dates (SCHEDULED, IN_PROGRESS, COMPLETED) until an update sets one; updates may
 * notify the subscribers of the pages the window's statusPageVisibility names.
 */

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
  const updates = await updatesOf(sql, ids);
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

export function maintenanceRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Maintenance windows';
  const WindowParams = Type.Object({ id: PositiveId }, { additionalProperties: false });
  const Params = Type.Object({ id: PositiveId, maintenanceId: Uuid }, { additionalProperties: false });
  const UpdateParams = Type.Object({ id: PositiveId, maintenanceId: Uuid, updateId: Uuid }, { additionalProperties: false });

  const windowOf = async (accountId: string, id: number) => {
    const row = await findWindowData(sql, accountId, id);
    if (!row) throw notFound();
    return row;
  };
  const maintenanceOf = async (accountId: string, windowId: number, id: string) => {
    const window = await windowOf(accountId, windowId);
    const row = await findMaintenance(sql, window.id, id);
    if (!row) throw notFound();
    return { window, row };
  };

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/maintenance-windows/{id}/maintenances',
      operationId: 'listMaintenances',
      summary: "A window's occurrences (the last 30 days and the next 90), oldest first",
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: WindowParams,
        query: Type.Object(
          { page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }), limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }) },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Array(Maintenance) },
      },
      handler: async ({ principal, params, query }) => {
        const window = await windowOf(principal.account.id, params.id);
        await materialise(sql, principal.account.id, window.id, window.data);
        const rows = await listMaintenances(sql, window.id, query.limit, (query.page - 1) * query.limit);
        return { status: 200, body: await views(sql, rows) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}',
      operationId: 'getMaintenance',
      summary: 'Retrieve a maintenance with its updates',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: Params, responses: { 200: Maintenance } },
      handler: async ({ principal, params }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        return { status: 200, body: (await views(sql, [row]))[0]! };
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}',
      operationId: 'rescheduleMaintenance',
      summary: "Move a maintenance's dates",
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: Params,
        body: Type.Object({ startsAt: Type.Optional(DateOrTime), endsAt: Type.Optional(DateOrTime) }, { additionalProperties: false }),
        responses: { 200: Maintenance },
      },
      handler: async ({ principal, params, body }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const startsAt = body.startsAt ? new Date(body.startsAt) : row.starts_at;
        const endsAt = body.endsAt ? new Date(body.endsAt) : row.ends_at;
        const rules = new Rules();
        rules.check(endsAt > startsAt, body.endsAt ? 'body.endsAt' : 'body.startsAt', 'after', 'endsAt must be after startsAt');
        rules.throwIfAny();
        const moved = await moveMaintenance(sql, row.id, startsAt, endsAt);
        return { status: 200, body: (await views(sql, [moved]))[0]! };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}',
      operationId: 'deleteMaintenance',
      summary: 'Delete a maintenance (it is not made again)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: Params, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        await deleteMaintenance(sql, row.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates',
      operationId: 'createMaintenanceUpdate',
      summary: "Post a status update (it sets the maintenance's status)",
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: Params,
        body: Type.Object(
          { status: StringEnum(STATUSES), description: Type.String({ minLength: 1, maxLength: 2000 }), notifySubscribers: Type.Boolean({ default: false }) },
          { additionalProperties: false },
        ),
        responses: { 201: Update },
      },
      handler: async ({ principal, params, body }) => {
        const { window, row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const update = await transaction(sql, async (tx) => {
          const added = await addMaintenanceUpdate(tx, row, body);
          if (body.notifySubscribers) await queueMaintenanceMail(tx, principal.account.id, window, row, added);
          return added;
        });
        return { status: 201, body: toUpdate(window.id, update) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates/{updateId}',
      operationId: 'updateMaintenanceUpdate',
      summary: 'Correct a status update',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: UpdateParams,
        body: Type.Object(
          { status: Type.Optional(StringEnum(STATUSES)), description: Type.String({ minLength: 1, maxLength: 2000 }) },
          { additionalProperties: false },
        ),
        responses: { 200: Update },
      },
      handler: async ({ principal, params, body }) => {
        const { window, row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        const update = await editMaintenanceUpdate(sql, row.id, params.updateId, body);
        if (!update) throw notFound();
        return { status: 200, body: toUpdate(window.id, update) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates/{updateId}',
      operationId: 'deleteMaintenanceUpdate',
      summary: 'Delete a status update',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: UpdateParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const { row } = await maintenanceOf(principal.account.id, params.id, params.maintenanceId);
        if (!(await deleteMaintenanceUpdate(sql, row.id, params.updateId))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
