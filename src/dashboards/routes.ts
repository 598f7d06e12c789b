import { randomBytes, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../http/errors.js';
import { listReply, PageQuery } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable } from '../http/schemas.js';
import { compileValidator } from '../http/validation.js';
import { hashSecret } from '../model/secrets.js';
import { iso } from '../model/time.js';
import { useDomain } from '../resources/index.js';
import { listAccountRows, uniqueViolation } from '../storage/account-rows.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  type DashboardRow,
  deleteDashboard,
  deleteDashboardKeys,
  findDashboard,
  hasDashboardKey,
  insertDashboard,
  insertDashboardKey,
  type DashboardKeyRow as KeyRow,
  keysOf,
  updateDashboard,
} from './repository.js';
import { DashboardBody, DashboardFields, DashboardUpdate, KeyResult } from './schemas.js';

const validateDashboard = compileValidator('body', DashboardBody);

const Dashboard = Type.Object({
  id: Type.Integer(),
  dashboardId: Type.String(),
  ...DashboardFields,
  header: Nullable(Type.String()),
  keys: Type.Array(KeyResult),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

const DashboardParams = Type.Object(
  { dashboardId: Type.String({ minLength: 1, maxLength: 64, description: 'The dashboardId, or the numeric id' }) },
  { additionalProperties: false },
);

function maskKey(suffix: string): string {
  return `dk_****${suffix}`;
}

function toDashboard(row: DashboardRow, keys: KeyRow[], rawKeys = new Map<string, string>()) {
  const { keys: _ignored, ...data } = row.data;
  return {
    id: row.id,
    dashboardId: row.dashboard_id,
    ...data,
    keys: keys.map((k) => ({
      id: k.id,
      ...(rawKeys.has(k.id) ? { rawKey: rawKeys.get(k.id) } : {}),
      maskedKey: maskKey(k.key_suffix),
      created_at: iso(k.created_at),
      updated_at: iso(k.updated_at),
    })),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function taken(err: unknown): never {
  const constraint = uniqueViolation(err);
  if (constraint === 'dashboards_custom_url') throw conflict('customUrl is already taken', { field: 'customUrl' });
  if (constraint === 'dashboards_custom_domain')
    throw conflict("customDomain is already used by another of this account's dashboards", { field: 'customDomain' });
  throw err;
}

/** Lower-cases the names that are unique regardless of case. */
function normalise(body: DashboardBody): DashboardBody {
  const { keys: _ignored, ...rest } = body;
  return {
    ...rest,
    ...(body.customUrl !== undefined && body.customUrl !== null ? { customUrl: body.customUrl.toLowerCase() } : {}),
    ...(body.customDomain ? { customDomain: body.customDomain.toLowerCase() } : {}),
  };
}

export function dashboardRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Dashboards';

  /** Makes a private dashboard's key when it has none (the raw key shown once), or removes a public one's keys. */
  async function save(db: Sql, dashboardId: number, isPrivate: boolean): Promise<Map<string, string>> {
    if (!isPrivate) {
      await deleteDashboardKeys(db, dashboardId);
      return new Map();
    }
    if (await hasDashboardKey(db, dashboardId)) return new Map();
    const raw = `dk_${randomBytes(24).toString('base64url')}`;
    const id = await insertDashboardKey(db, dashboardId, hashSecret(raw), raw.slice(-4));
    return new Map([[id, raw]]);
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/dashboards',
      operationId: 'listDashboards',
      summary: 'List dashboards',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(Dashboard) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<DashboardRow>(sql, 'dashboards', principal.account.id, query);
        const keys = await keysOf(
          sql,
          rows.map((r) => r.id),
        );
        return listReply(
          rows.map((r) => toDashboard(r, keys.get(r.id)!)),
          total,
          query,
        );
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/dashboards',
      operationId: 'createDashboard',
      summary: 'Create a dashboard',
      description: 'A private dashboard gets a key; its rawKey is in this response only.',
      tag,
      access: 'write',
      errors: [409],
      schema: { body: DashboardBody, responses: { 201: Dashboard } },
      handler: async ({ principal, body }) => {
        const data = normalise(body);
        const result = await transaction(sql, async (db) => {
          const row = await insertDashboard(db, principal.account.id, randomUUID(), data);
          await useDomain(db, principal.account.id, data.customDomain, { type: 'dashboard', id: row.id });
          const raw = await save(db, row.id, data.isPrivate);
          return toDashboard(row, (await keysOf(db, [row.id])).get(row.id)!, raw);
        }).catch(taken);
        return { status: 201, body: result };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/dashboards/{dashboardId}',
      operationId: 'getDashboard',
      summary: 'Retrieve a dashboard',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: DashboardParams, responses: { 200: Dashboard } },
      handler: async ({ principal, params }) => {
        const row = await findDashboard(sql, principal.account.id, params.dashboardId);
        if (!row) throw notFound();
        return { status: 200, body: toDashboard(row, (await keysOf(sql, [row.id])).get(row.id)!) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/dashboards/{dashboardId}',
      operationId: 'updateDashboard',
      summary: 'Update a dashboard: the body merges onto it, fields left out keep their values',
      description: 'Making a dashboard private creates its key (rawKey shown in this response only); making it public removes its keys.',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: DashboardParams, body: DashboardUpdate, responses: { 200: Dashboard } },
      handler: async ({ principal, params, body }) => {
        const result = await transaction(sql, async (db) => {
          const current = await findDashboard(db, principal.account.id, params.dashboardId, true);
          if (!current) throw notFound();
          const data = normalise(validateDashboard({ ...current.data, ...body }) as DashboardBody);
          const row = await updateDashboard(db, current.id, data);
          await useDomain(db, principal.account.id, data.customDomain, { type: 'dashboard', id: row.id });
          const raw = await save(db, row.id, data.isPrivate);
          return toDashboard(row, (await keysOf(db, [row.id])).get(row.id)!, raw);
        }).catch(taken);
        return { status: 200, body: result };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/dashboards/{dashboardId}',
      operationId: 'deleteDashboard',
      summary: 'Delete a dashboard',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: DashboardParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await deleteDashboard(sql, principal.account.id, params.dashboardId))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
