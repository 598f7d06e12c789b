import { Type } from '@sinclair/typebox';
import { notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { iso } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  dashboardExists,
  deleteDashboardIncident,
  deleteIncidentUpdate,
  editIncidentUpdate,
  findDashboardIncident,
  IMPACTS,
  type IncidentRow,
  insertDashboardIncident,
  insertIncidentUpdate,
  replaceDashboardIncident,
  STATUSES,
  type UpdateRow,
  updatesOf,
} from './incident-repository.js';

/**
 * The anchor's dashboard incidents (`/v1/incidents`): an announcement with an impact and updates, shown on one
 * dashboard (its "Incidents" section, with enableIncidents). Status-page incidents are another resource
 * (`/v1/status-pages/incidents`, resources/status-pages).
 */

const Uuid = Type.String({ format: 'uuid' });

const UpdateBody = Type.Object({ status: StringEnum(STATUSES), description: Type.String({ minLength: 1, maxLength: 5000 }) }, { additionalProperties: false });
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  impact: StringEnum(IMPACTS, { default: 'MINOR' }),
  startedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  stoppedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
};
const CreateBody = Type.Object(
  {
    ...Fields,
    dashboardId: Type.Integer({ minimum: 1, description: "The dashboard's numeric id" }),
    incidentUpdates: Type.Array(UpdateBody, { minItems: 1, maxItems: 1 }),
  },
  { additionalProperties: false },
);
const ReplaceBody = Type.Object(Fields, { additionalProperties: false });

const Update = Type.Object({
  id: Uuid,
  status: StringEnum(STATUSES),
  description: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});
const Incident = Type.Object({
  id: Uuid,
  name: Type.String(),
  impact: StringEnum(IMPACTS),
  startedAt: Nullable(Type.String({ format: 'date-time' })),
  stoppedAt: Nullable(Type.String({ format: 'date-time' })),
  dashboardId: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
  incidentUpdates: Type.Optional(Type.Array(Update)),
});

const toUpdate = (u: UpdateRow) => ({ id: u.id, status: u.status, description: u.description, created_at: iso(u.created_at)!, updated_at: iso(u.updated_at) });
const toIncident = (r: IncidentRow, updates?: UpdateRow[]) => ({
  id: r.id,
  name: r.name,
  impact: r.impact,
  startedAt: iso(r.started_at),
  stoppedAt: iso(r.stopped_at),
  dashboardId: Number(r.dashboard_id),
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at),
  ...(updates ? { incidentUpdates: updates.map(toUpdate) } : {}),
});

function checkDates(body: { startedAt?: string | null; stoppedAt?: string | null }): void {
  const rules = new Rules();
  if (body.startedAt && body.stoppedAt)
    rules.check(Date.parse(body.stoppedAt) >= Date.parse(body.startedAt), 'body.stoppedAt', 'after', 'must not be before startedAt');
  rules.throwIfAny();
}

async function findIncident(sql: Sql, accountId: string, id: string): Promise<IncidentRow> {
  const row = await findDashboardIncident(sql, accountId, id);
  if (!row) throw notFound();
  return row;
}

export function dashboardIncidentRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Dashboard incidents';
  const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
  const UpdateParams = Type.Object({ incidentId: Uuid, id: Uuid }, { additionalProperties: false });
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/incidents',
      operationId: 'createDashboardIncident',
      summary: 'Create an incident on a dashboard',
      tag,
      access: 'write',
      errors: [404],
      schema: { body: CreateBody, responses: { 200: Incident } },
      handler: async ({ principal, body }) => {
        checkDates(body);
        if (!(await dashboardExists(sql, principal.account.id, body.dashboardId))) {
          const rules = new Rules();
          rules.fail('body.dashboardId', 'exists', 'names no dashboard of this account');
          rules.throwIfAny();
        }
        const { row, update } = await transaction(sql, async (tx) => {
          const row = await insertDashboardIncident(tx, principal.account.id, body);
          return { row, update: await insertIncidentUpdate(tx, row.id, body.incidentUpdates[0]!, true) };
        });
        return { status: 200, body: toIncident(row, [update]) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/incidents/{id}',
      operationId: 'getDashboardIncident',
      summary: 'Retrieve an incident (its latest update, or all with includeAllIncidentUpdates)',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: IdParams,
        query: Type.Object({ includeAllIncidentUpdates: Type.Boolean({ default: false }) }, { additionalProperties: false }),
        responses: { 200: Incident },
      },
      handler: async ({ principal, params, query }) => {
        const row = await findIncident(sql, principal.account.id, params.id);
        return { status: 200, body: toIncident(row, await updatesOf(sql, row.id, query.includeAllIncidentUpdates)) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/incidents/{id}',
      operationId: 'updateDashboardIncident',
      summary: "Update an incident's name, impact and dates",
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: IdParams,
        query: Type.Object({ probe: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
        body: ReplaceBody,
        responses: { 200: Incident },
      },
      handler: async ({ principal, params, body }) => {
        checkDates(body);
        const row = await replaceDashboardIncident(sql, principal.account.id, params.id, body);
        if (!row) throw notFound();
        return { status: 200, body: toIncident(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/incidents/{id}',
      operationId: 'deleteDashboardIncident',
      summary: 'Delete an incident and its updates',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await deleteDashboardIncident(sql, principal.account.id, params.id))) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/incidents/{incidentId}/updates',
      operationId: 'createDashboardIncidentUpdate',
      summary: 'Add an update to an incident',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: Type.Object({ incidentId: Uuid }, { additionalProperties: false }),
        body: UpdateBody,
        responses: { 201: Type.Object({ ...Update.properties, incidentId: Uuid }) },
      },
      handler: async ({ principal, params, body }) => {
        const incident = await findIncident(sql, principal.account.id, params.incidentId);
        const row = await insertIncidentUpdate(sql, incident.id, body);
        return { status: 201, body: { ...toUpdate(row), incidentId: incident.id } };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/incidents/{incidentId}/updates/{id}',
      operationId: 'updateDashboardIncidentUpdate',
      summary: "Change an update's description",
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: UpdateParams,
        body: Type.Object({ description: Type.String({ minLength: 1, maxLength: 5000 }) }, { additionalProperties: false }),
        responses: { 200: Type.Object({ ...Update.properties, incidentId: Uuid }) },
      },
      handler: async ({ principal, params, body }) => {
        const incident = await findIncident(sql, principal.account.id, params.incidentId);
        const row = await editIncidentUpdate(sql, incident.id, params.id, body.description);
        if (!row) throw notFound();
        return { status: 200, body: { ...toUpdate(row), incidentId: incident.id } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/incidents/{incidentId}/updates/{id}',
      operationId: 'deleteDashboardIncidentUpdate',
      summary: 'Delete an incident update',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: UpdateParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const incident = await findIncident(sql, principal.account.id, params.incidentId);
        if (!(await deleteIncidentUpdate(sql, incident.id, params.id))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
