import { Type, type Static } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { NumericIdParams } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { listAccountRows } from '../common.js';
import { Rules } from '../../http/rules.js';
import { iso } from '../../model/time.js';

/** A calendar date or a full timestamp; windows usually need the time of day. */
const DateOrTime = Type.Union([Type.String({ format: 'date-time' }), Type.String({ format: 'date' })]);

const StatusPageVisibility = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    severity: Type.Optional(Nullable(StringEnum(['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const))),
    affectAllServices: Type.Optional(Type.Boolean()),
    showAffectedServices: Type.Optional(Type.Boolean()),
    suppressAutoIncidents: Type.Optional(Type.Boolean()),
    notifyOnStart: Type.Optional(Type.Boolean()),
    notifyOnEnd: Type.Optional(Type.Boolean()),
    reminderMinutesBefore: Type.Optional(Type.Array(Type.Integer({ minimum: 0, maximum: 525600 }), { maxItems: 20 })),
    autoStart: Type.Optional(Type.Boolean()),
    autoEnd: Type.Optional(Type.Boolean()),
    statusPageIds: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100 })),
    serviceIds: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 1000 })),
  },
  { additionalProperties: false },
);

const Tag = Type.String({ minLength: 1, maxLength: 255 });

const WindowBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    tags: Type.Array(Tag, { maxItems: 100, default: [] }),
    startsAt: DateOrTime,
    endsAt: DateOrTime,
    repeatInterval: Nullable(Type.Integer({ minimum: 1, maximum: 10000 }), { default: null }),
    repeatUnit: Nullable(StringEnum(['DAY', 'WEEK', 'MONTH'] as const), { default: null }),
    repeatEndsAt: Nullable(DateOrTime, { default: null }),
    description: Nullable(Type.String({ maxLength: 2000 }), { default: null }),
    statusPageVisibility: Type.Optional(StatusPageVisibility),
    pauseAllChecks: Type.Boolean({ default: false }),
    silenceAlertsTags: Type.Array(Tag, { maxItems: 100, default: [] }),
    silenceAllAlerts: Type.Boolean({ default: false }),
    timezone: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 64,
          pattern: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
          title: 'a named IANA time zone',
          description:
            'Named IANA time zone of the repeat schedule (not a UTC offset). On create, left out or null means UTC; on update, left out keeps the stored zone and null resets it to UTC.',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
type WindowBody = Static<typeof WindowBody>;

const MaintenanceWindow = Type.Object({
  id: Type.Integer(),
  ...WindowBody.properties,
  timezone: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

/** Calendar dates a window can use: ISO 8601 allows year 0000, but no maintenance happens before 1970. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10000, 0, 1);

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Rules across fields; a repeat unit without an interval gets interval 1 here. */
function checkRules(body: WindowBody): void {
  const rules = new Rules();
  if (body.timezone) rules.check(isTimeZone(body.timezone), 'body.timezone', 'timezone', 'must be a named IANA time zone');
  for (const field of ['startsAt', 'endsAt', 'repeatEndsAt'] as const) {
    const value = body[field];
    if (value === null) continue;
    const ms = Date.parse(value);
    rules.check(ms >= EARLIEST && ms < LATEST, `body.${field}`, 'range', 'must be a date from 1970-01-01 to 9999-12-31');
  }
  const starts = Date.parse(body.startsAt);
  rules.check(starts < Date.parse(body.endsAt), 'body.endsAt', 'after', 'must be after startsAt');
  const repeats = body.repeatUnit !== null;
  // A unit alone repeats every unit (the anchor's form: repeatInterval defaults to null); an interval needs its unit.
  if (repeats && body.repeatInterval === null) body.repeatInterval = 1;
  rules.check(repeats || body.repeatInterval === null, 'body.repeatUnit', 'requires', 'is required with repeatInterval');
  if (body.repeatEndsAt !== null) {
    rules.check(repeats, 'body.repeatEndsAt', 'requires', 'needs repeatUnit');
    rules.check(Date.parse(body.repeatEndsAt) > starts, 'body.repeatEndsAt', 'after', 'must be after startsAt');
  }
  rules.throwIfAny();
}

interface WindowRow {
  id: number;
  data: WindowBody;
  created_at: Date;
  updated_at: Date | null;
}

function toWindow(row: WindowRow) {
  return { id: row.id, ...row.data, timezone: row.data.timezone ?? 'UTC', created_at: iso(row.created_at), updated_at: iso(row.updated_at) };
}

export function maintenanceWindowRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Maintenance windows';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/maintenance-windows',
      operationId: 'listMaintenanceWindows',
      summary: 'List maintenance windows',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(MaintenanceWindow) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<WindowRow>(sql, 'maintenance_windows', principal.account.id, query);
        return listReply(rows.map(toWindow), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/maintenance-windows',
      operationId: 'createMaintenanceWindow',
      summary: 'Create a maintenance window',
      tag,
      access: 'write',
      schema: { body: WindowBody, responses: { 201: MaintenanceWindow } },
      handler: async ({ principal, body }) => {
        checkRules(body);
        const [row] = await sql<WindowRow[]>`insert into maintenance_windows (account_id, data)
          values (${principal.account.id}, ${sql.json(body as never)}) returning *`;
        return { status: 201, body: toWindow(row) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/maintenance-windows/{id}',
      operationId: 'getMaintenanceWindow',
      summary: 'Retrieve a maintenance window',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 200: MaintenanceWindow } },
      handler: async ({ principal, params }) => {
        const [row] = await sql<WindowRow[]>`select * from maintenance_windows where id = ${params.id} and account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        return { status: 200, body: toWindow(row) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/maintenance-windows/{id}',
      operationId: 'updateMaintenanceWindow',
      summary: 'Update a maintenance window',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, body: WindowBody, responses: { 200: MaintenanceWindow } },
      handler: async ({ principal, params, body }) => {
        checkRules(body);
        // A zone left out keeps the stored one (the anchor's rule); null resets it to UTC.
        const [row] = await sql<WindowRow[]>`update maintenance_windows
          set data = ${sql.json(body as never)} || case when ${body.timezone === undefined} then jsonb_build_object('timezone', data->'timezone') else '{}'::jsonb end,
            updated_at = now()
          where id = ${params.id} and account_id = ${principal.account.id} returning *`;
        if (!row) throw notFound();
        return { status: 200, body: toWindow(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/maintenance-windows/{id}',
      operationId: 'deleteMaintenanceWindow',
      summary: 'Delete a maintenance window',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const rows = await sql`delete from maintenance_windows where id = ${params.id} and account_id = ${principal.account.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
