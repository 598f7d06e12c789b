import { Type } from '@sinclair/typebox';
import { findCheckRow } from '../checks/index.js';
import { notFound } from '../http/errors.js';
import { PositiveId } from '../http/ids.js';
import { listReply, PageQuery, pageOffset } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { parseWindow, TimeParam } from '../http/time.js';
import { may } from '../model/accounts.js';
import { ALERT_TYPES, CHANNEL_TYPES } from '../model/alerts.js';
import { CHECK_TYPES } from '../model/checks.js';
import type { Deps } from '../storage/deps.js';
import type { Sql } from '../storage/postgres.js';
import { maskChannelConfig } from './channels/index.js';
import { type AlertRow, listAlertRows, listNotificationRows } from './repository.js';

const Window = {
  from: Type.Optional({ ...TimeParam, description: 'Created at or after this time (unix seconds or ISO 8601)' }),
  to: Type.Optional({ ...TimeParam, description: 'Created before this time' }),
};

const CheckAlert = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String({ description: "The check's name" }),
    checkId: Type.String({ format: 'uuid' }),
    alertType: StringEnum(ALERT_TYPES, { description: 'The *_REMAIN types are reminders' }),
    checkType: StringEnum(CHECK_TYPES),
    runLocation: Nullable(Type.String()),
    responseTime: Nullable(Type.Number()),
    error: Nullable(Type.String()),
    statusCode: Nullable(Type.String()),
    checkResultId: Nullable(Type.String({ format: 'uuid', description: 'The run that raised it; null for reminders' })),
    silenced: Type.Boolean({ description: 'A maintenance window silenced it: recorded, not sent' }),
    muted: Type.Boolean({ description: 'The check is muted: recorded, not sent' }),
    incidentId: Nullable(Type.String({ format: 'uuid', description: 'The incident triggerIncident opened or resolved with it' })),
    created_at: Type.String({ format: 'date-time' }),
    startedAt: Type.String({ format: 'date-time', description: 'When the run (or, for a reminder, the sweep) that raised it happened' }),
  },
  { additionalProperties: false },
);

const Attempt = Type.Object({ at: Type.String({ format: 'date-time' }), ok: Type.Boolean(), detail: Type.String() }, { additionalProperties: false });

const AlertNotification = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    type: StringEnum(CHANNEL_TYPES),
    status: StringEnum(['IN_PROGRESS', 'SUCCESS', 'FAILURE'] as const, { description: 'FAILURE: every attempt failed' }),
    alertConfig: Type.Object({}, { additionalProperties: true, description: "The channel's configuration" }),
    notificationResult: Nullable(Type.String({ description: 'What the far end said to the latest attempt' })),
    timestamp: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When it was sent: the delivery, or while none has succeeded the latest attempt; null before the first attempt',
      }),
    ),
    attempts: Type.Array(Attempt),
    checkType: StringEnum([...CHECK_TYPES, 'PRIVATE_LOCATION'] as const, {
      description: "PRIVATE_LOCATION: a private location's alert (no agent, or an agent again; docs/agent.md)",
    }),
    checkId: Type.String({ format: 'uuid', description: "The check; for a private location's alert, the location's id" }),
    checkAlertId: Type.String({ format: 'uuid', description: "The check alert; for a private location's alert, the location's id (the message's alertId)" }),
    privateLocationId: Type.Optional(Type.String({ format: 'uuid', description: "A private location's alert: its location (our addition)" })),
    alertChannelId: Type.Integer(),
    checkResultId: Nullable(Type.String({ format: 'uuid' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

const toAlert = (r: AlertRow) => ({
  id: r.id,
  name: r.name,
  checkId: r.check_id,
  alertType: r.alert_type,
  checkType: r.check_type,
  runLocation: r.run_location,
  responseTime: r.response_time,
  error: null,
  statusCode: r.status_code === null ? null : String(r.status_code),
  checkResultId: r.check_result_id,
  silenced: r.silenced,
  muted: r.muted,
  incidentId: r.incident_id,
  created_at: r.created_at.toISOString(),
  startedAt: r.started_at.toISOString(),
});

async function listAlerts(sql: Sql, accountId: string, query: { limit: number; page: number; from?: string; to?: string }, checkId?: string) {
  const { from, to } = parseWindow(query);
  const { rows, total } = await listAlertRows(sql, accountId, { checkId, from, to }, query.limit, pageOffset(query));
  return listReply(rows.map(toAlert), total, query);
}

/** The alerts checks raised and their deliveries, newest first. */
export function alertRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Alerts';
  const AlertQuery = Type.Object({ ...PageQuery.properties, ...Window }, { additionalProperties: false });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/check-alerts',
      operationId: 'listCheckAlerts',
      summary: 'Alerts raised by the checks of the account, newest first',
      tag,
      access: 'read',
      schema: { query: AlertQuery, responses: { 200: Type.Array(CheckAlert) } },
      handler: ({ principal, query }) => listAlerts(sql, principal.account.id, query),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-alerts/{checkId}',
      operationId: 'listCheckAlertsOfCheck',
      summary: 'Alerts raised by one check, newest first',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        query: AlertQuery,
        responses: { 200: Type.Array(CheckAlert) },
      },
      handler: async ({ principal, params, query }) => {
        const check = await findCheckRow(sql, principal.account.id, params.checkId);
        if (!check) throw notFound();
        return listAlerts(sql, principal.account.id, query, check.id);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/alert-notifications',
      operationId: 'listAlertNotifications',
      summary: 'Deliveries of alerts to channels, newest first, with every attempt',
      tag,
      access: 'read',
      schema: {
        query: Type.Object(
          {
            ...PageQuery.properties,
            ...Window,
            alertChannelId: Type.Optional(PositiveId),
            checkId: Type.Optional(Type.String({ format: 'uuid', description: "Deliveries of this check's alerts (our addition)" })),
            hasFailures: Type.Optional(Type.Boolean({ description: 'true: deliveries that failed every attempt; false: the others' })),
          },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Array(AlertNotification) },
      },
      handler: async ({ principal, query }) => {
        const { from, to } = parseWindow(query);
        const filter = { alertChannelId: query.alertChannelId, checkId: query.checkId?.toLowerCase(), hasFailures: query.hasFailures, from, to };
        const { rows, total } = await listNotificationRows(sql, principal.account.id, filter, query.limit, pageOffset(query));
        const body = rows.map((r) => ({
          id: r.id,
          type: r.channel_type,
          status: r.status,
          // The channel's config as a read of the channel shows it (write-only values empty).
          alertConfig: maskChannelConfig(r.channel_type, r.config, may(principal.role, 'write')),
          notificationResult: r.notification_result,
          timestamp: r.sent_at?.toISOString() ?? r.attempts.at(-1)?.at ?? null,
          attempts: r.attempts,
          ...(r.private_location_id
            ? {
                checkType: 'PRIVATE_LOCATION' as const,
                checkId: r.private_location_id,
                checkAlertId: r.private_location_id,
                privateLocationId: r.private_location_id,
              }
            : { checkType: r.check_type!, checkId: r.check_id!, checkAlertId: r.alert_id! }),
          alertChannelId: r.alert_channel_id,
          checkResultId: r.check_result_id,
          created_at: r.created_at.toISOString(),
        }));
        return listReply(body, total, query);
      },
    }),
  ];
}
