import { Type } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { notFound } from '../../http/errors.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Rules } from '../../http/rules.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { transaction, type Sql } from '../../storage/postgres.js';
import { iso } from '../../model/time.js';

/**
 * The anchor's dashboard incidents (`/v1/incidents`): an announcement with an impact and updates, shown on one
 * dashboard (its "Incidents" section, with enableIncidents). Status-page incidents are another resource
 * (`/v1/status-pages/incidents`, resources/status-pages).
 */

const STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE'] as const;
const IMPACTS = ['MAINTENANCE', 'MAJOR', 'MINOR'] as const;
const Uuid = Type.String({ format: 'uuid' });

const UpdateBody = Type.Object({ status: StringEnum(STATUSES), description: Type.String({ minLength: 1, maxLength: 5000 }) }, { additionalProperties: false });
const Fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  impact: StringEnum(IMPACTS, { default: 'MINOR' }),
  startedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  stoppedAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
};
const CreateBody = Type.Object(
  { ...Fields, dashboardId: Type.Integer({ minimum: 1, description: "The dashboard's numeric id" }), incidentUpdates: Type.Array(UpdateBody, { minItems: 1, maxItems: 1 }) },
  { additionalProperties: false },
);
const ReplaceBody = Type.Object(Fields, { additionalProperties: false });

const Update = Type.Object({ id: Uuid, status: StringEnum(STATUSES), description: Type.String(), created_at: Type.String({ format: 'date-time' }), updated_at: Nullable(Type.String({ format: 'date-time' })) });
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

interface IncidentRow {
  id: string;
  dashboard_id: number;
  name: string;
  impact: (typeof IMPACTS)[number];
  started_at: Date | null;
  stopped_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}
interface UpdateRow {
  id: string;
  incident_id: string;
  status: (typeof STATUSES)[number];
  description: string;
  created_at: Date;
  updated_at: Date | null;
}

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
  if (body.startedAt && body.stoppedAt) rules.check(Date.parse(body.stoppedAt) >= Date.parse(body.startedAt), 'body.stoppedAt', 'after', 'must not be before startedAt');
  rules.throwIfAny();
}

async function findIncident(sql: Sql, accountId: string, id: string): Promise<IncidentRow> {
  const [row] = await sql<IncidentRow[]>`select * from dashboard_incidents where id = ${id} and account_id = ${accountId}`;
  if (!row) throw notFound();
  return row;
}

/** Newest first; all of them, or only the latest. */
async function updatesOf(sql: Sql, incidentId: string, all: boolean): Promise<UpdateRow[]> {
  return sql<UpdateRow[]>`select * from dashboard_incident_updates where incident_id = ${incidentId} order by created_at desc, id desc ${all ? sql`` : sql`limit 1`}`;
}

export function dashboardIncidentRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Dashboard incidents';
  const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });
  const UpdateParams = Type.Object({ incidentId: Uuid, id: Uuid }, { additionalProperties: false });
  return [
    defineRoute({
      method: 'POST', path: '/v1/incidents', operationId: 'createDashboardIncident', summary: 'Create an incident on a dashboard', tag, access: 'write', errors: [404],
      schema: { body: CreateBody, responses: { 200: Incident } },
      handler: async ({ principal, body }) => {
        checkDates(body);
        const [dashboard] = await sql`select id from dashboards where id = ${body.dashboardId} and account_id = ${principal.account.id}`;
        if (!dashboard) {
          const rules = new Rules();
          rules.fail('body.dashboardId', 'exists', 'names no dashboard of this account');
          rules.throwIfAny();
        }
        const { row, update } = await transaction(sql, async (tx) => {
          const [row] = await tx<IncidentRow[]>`insert into dashboard_incidents (account_id, dashboard_id, name, impact, started_at, stopped_at)
            values (${principal.account.id}, ${body.dashboardId}, ${body.name}, ${body.impact}, ${body.startedAt ?? null}, ${body.stoppedAt ?? null}) returning *`;
          const [update] = await tx<UpdateRow[]>`insert into dashboard_incident_updates (incident_id, status, description)
            values (${row!.id}, ${body.incidentUpdates[0]!.status}, ${body.incidentUpdates[0]!.description}) returning *`;
          return { row: row!, update: update! };
        });
        return { status: 200, body: toIncident(row, [update]) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/incidents/{id}', operationId: 'getDashboardIncident', summary: 'Retrieve an incident (its latest update, or all with includeAllIncidentUpdates)', tag, access: 'read', errors: [404],
      schema: { params: IdParams, query: Type.Object({ includeAllIncidentUpdates: Type.Boolean({ default: false }) }, { additionalProperties: false }), responses: { 200: Incident } },
      handler: async ({ principal, params, query }) => {
        const row = await findIncident(sql, principal.account.id, params.id);
        return { status: 200, body: toIncident(row, await updatesOf(sql, row.id, query.includeAllIncidentUpdates)) };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/v1/incidents/{id}', operationId: 'updateDashboardIncident', summary: "Update an incident's name, impact and dates", tag, access: 'write', errors: [404],
      schema: { params: IdParams, query: Type.Object({ probe: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), body: ReplaceBody, responses: { 200: Incident } },
      handler: async ({ principal, params, body }) => {
        checkDates(body);
        const [row] = await sql<IncidentRow[]>`update dashboard_incidents set name = ${body.name}, impact = ${body.impact},
            started_at = ${body.startedAt ?? null}, stopped_at = ${body.stoppedAt ?? null}, updated_at = now()
          where id = ${params.id} and account_id = ${principal.account.id} returning *`;
        if (!row) throw notFound();
        return { status: 200, body: toIncident(row) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/incidents/{id}', operationId: 'deleteDashboardIncident', summary: 'Delete an incident and its updates', tag, access: 'write', errors: [404],
      schema: { params: IdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const rows = await sql`delete from dashboard_incidents where id = ${params.id} and account_id = ${principal.account.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/incidents/{incidentId}/updates', operationId: 'createDashboardIncidentUpdate', summary: 'Add an update to an incident', tag, access: 'write', errors: [404],
      schema: { params: Type.Object({ incidentId: Uuid }, { additionalProperties: false }), body: UpdateBody, responses: { 201: Type.Object({ ...Update.properties, incidentId: Uuid }) } },
      handler: async ({ principal, params, body }) => {
        const incident = await findIncident(sql, principal.account.id, params.incidentId);
        const [row] = await sql<UpdateRow[]>`insert into dashboard_incident_updates (incident_id, status, description) values (${incident.id}, ${body.status}, ${body.description}) returning *`;
        await sql`update dashboard_incidents set updated_at = now() where id = ${incident.id}`;
        return { status: 201, body: { ...toUpdate(row!), incidentId: incident.id } };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/v1/incidents/{incidentId}/updates/{id}', operationId: 'updateDashboardIncidentUpdate', summary: "Change an update's description", tag, access: 'write', errors: [404],
      schema: { params: UpdateParams, body: Type.Object({ description: Type.String({ minLength: 1, maxLength: 5000 }) }, { additionalProperties: false }), responses: { 200: Type.Object({ ...Update.properties, incidentId: Uuid }) } },
      handler: async ({ principal, params, body }) => {
        const incident = await findIncident(sql, principal.account.id, params.incidentId);
        const [row] = await sql<UpdateRow[]>`update dashboard_incident_updates set description = ${body.description}, updated_at = now()
          where id = ${params.id} and incident_id = ${incident.id} returning *`;
        if (!row) throw notFound();
        return { status: 200, body: { ...toUpdate(row), incidentId: incident.id } };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/incidents/{incidentId}/updates/{id}', operationId: 'deleteDashboardIncidentUpdate', summary: 'Delete an incident update', tag, access: 'write', errors: [404],
      schema: { params: UpdateParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const incident = await findIncident(sql, principal.account.id, params.incidentId);
        const rows = await sql`delete from dashboard_incident_updates where id = ${params.id} and incident_id = ${incident.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
