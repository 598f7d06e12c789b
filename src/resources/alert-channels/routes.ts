import { Type, type TSchema } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { NumericIdParams } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Nullable, StringEnum, TaggedUnion } from '../../http/schemas.js';
import type { Sql } from '../../storage/postgres.js';
import { KeyValue } from '../checks/schemas.js';
import { iso, listAccountRows } from '../common.js';
import { Rules } from '../../http/rules.js';

export const CHANNEL_TYPES = ['EMAIL', 'WEBHOOK', 'SLACK', 'SMS'] as const;
type ChannelType = (typeof CHANNEL_TYPES)[number];

const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

const CONFIG_SCHEMAS = {
  EMAIL: Type.Object({ address: Type.String({ format: 'email', maxLength: 320 }) }, { additionalProperties: false }),
  WEBHOOK: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      url: HttpUrl,
      method: StringEnum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const, { default: 'POST' }),
      headers: Type.Array(KeyValue, { maxItems: 50, default: [] }),
      queryParameters: Type.Array(KeyValue, { maxItems: 50, default: [] }),
      template: Type.Optional(Type.String({ maxLength: 65536 })),
    },
    { additionalProperties: false },
  ),
  SLACK: Type.Object({ url: HttpUrl, channel: Type.Optional(Type.String({ maxLength: 255 })) }, { additionalProperties: false }),
  SMS: Type.Object(
    { number: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', title: 'an E.164 number (+ and 7 to 15 digits)' }), name: Type.String({ minLength: 1, maxLength: 255 }) },
    { additionalProperties: false },
  ),
} satisfies Record<ChannelType, TSchema>;

/** One body shape per channel type: `type` picks which `config` applies. */
const ChannelBody = TaggedUnion(
  'type',
  CHANNEL_TYPES.map((type) =>
    Type.Object(
      {
        type: Type.Literal(type),
        config: CONFIG_SCHEMAS[type],
        sendRecovery: Type.Boolean({ default: true }),
        sendFailure: Type.Boolean({ default: true }),
        sendDegraded: Type.Boolean({ default: false }),
      },
      { additionalProperties: false },
    ),
  ),
);

const SubscriptionBody = Type.Object(
  {
    checkId: Type.Optional(Type.String({ format: 'uuid' })),
    groupId: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    activated: Type.Boolean({ default: true }),
  },
  { additionalProperties: false, oneOf: [{ required: ['checkId'] }, { required: ['groupId'] }] },
);

const SubscriptionResult = Type.Object({
  alertChannelId: Type.Integer(),
  checkId: Nullable(Type.String()),
  groupId: Nullable(Type.Integer()),
  activated: Type.Boolean(),
});

const Channel = Type.Object({
  id: Type.Integer(),
  type: StringEnum(CHANNEL_TYPES),
  config: Type.Object({}, { additionalProperties: true }),
  sendRecovery: Type.Boolean(),
  sendFailure: Type.Boolean(),
  sendDegraded: Type.Boolean(),
  subscriptions: Type.Array(SubscriptionResult),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

interface ChannelRow {
  id: number;
  type: ChannelType;
  config: Record<string, unknown>;
  send_recovery: boolean;
  send_failure: boolean;
  send_degraded: boolean;
  created_at: Date;
  updated_at: Date | null;
}

interface SubscriptionRow {
  alert_channel_id: number;
  check_id: string | null;
  group_id: number | null;
  activated: boolean;
}

function toSubscription(r: SubscriptionRow) {
  return { alertChannelId: r.alert_channel_id, checkId: r.check_id, groupId: r.group_id, activated: r.activated };
}

function toChannel(row: ChannelRow, subscriptions: SubscriptionRow[]) {
  return {
    id: row.id,
    type: row.type,
    config: row.config,
    sendRecovery: row.send_recovery,
    sendFailure: row.send_failure,
    sendDegraded: row.send_degraded,
    subscriptions: subscriptions.map(toSubscription),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

async function subscriptionsOf(sql: Sql, channelIds: number[]) {
  const map = new Map<number, SubscriptionRow[]>(channelIds.map((id) => [id, []]));
  if (!channelIds.length) return map;
  const rows = await sql<SubscriptionRow[]>`select * from alert_subscriptions where alert_channel_id = any(${channelIds}::bigint[]) order by id`;
  for (const r of rows) map.get(r.alert_channel_id)!.push(r);
  return map;
}

export function alertChannelRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Alert channels';

  async function read(db: Sql, accountId: string, id: number) {
    const [row] = await db<ChannelRow[]>`select * from alert_channels where id = ${id} and account_id = ${accountId}`;
    if (!row) throw notFound();
    return toChannel(row, (await subscriptionsOf(db, [id])).get(id)!);
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/alert-channels',
      operationId: 'listAlertChannels',
      summary: 'List alert channels',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(Channel) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<ChannelRow>(sql, 'alert_channels', principal.account.id, query);
        const subs = await subscriptionsOf(sql, rows.map((r) => r.id));
        return listReply(rows.map((r) => toChannel(r, subs.get(r.id)!)), total);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/alert-channels',
      operationId: 'createAlertChannel',
      summary: 'Create an email, webhook, Slack or SMS alert channel',
      tag,
      access: 'write',
      schema: { body: ChannelBody, responses: { 201: Channel } },
      handler: async ({ principal, body }) => {
        const [row] = await sql<ChannelRow[]>`insert into alert_channels (account_id, type, config, send_recovery, send_failure, send_degraded)
          values (${principal.account.id}, ${body.type}, ${sql.json(body.config as never)}, ${body.sendRecovery},
            ${body.sendFailure}, ${body.sendDegraded}) returning *`;
        return { status: 201, body: toChannel(row, []) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/alert-channels/{id}',
      operationId: 'getAlertChannel',
      summary: 'Retrieve an alert channel with its subscriptions',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 200: Channel } },
      handler: async ({ principal, params }) => ({ status: 200, body: await read(sql, principal.account.id, params.id) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/alert-channels/{id}',
      operationId: 'updateAlertChannel',
      summary: 'Update an alert channel (its type cannot change)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, body: ChannelBody, responses: { 200: Channel } },
      handler: async ({ principal, params, body }) => {
        const [current] = await sql<Pick<ChannelRow, 'type'>[]>`select type from alert_channels where id = ${params.id} and account_id = ${principal.account.id}`;
        if (!current) throw notFound();
        new Rules().check(current.type === body.type, 'body.type', 'immutable', `cannot change from ${current.type}`).throwIfAny();
        await sql`update alert_channels set config = ${sql.json(body.config as never)}, send_recovery = ${body.sendRecovery},
            send_failure = ${body.sendFailure}, send_degraded = ${body.sendDegraded}, updated_at = now()
          where id = ${params.id} and account_id = ${principal.account.id}`;
        return { status: 200, body: await read(sql, principal.account.id, params.id) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/alert-channels/{id}',
      operationId: 'deleteAlertChannel',
      summary: 'Delete an alert channel and its subscriptions',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const rows = await sql`delete from alert_channels where id = ${params.id} and account_id = ${principal.account.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/alert-channels/{id}/subscriptions',
      operationId: 'updateAlertChannelSubscription',
      summary: 'Subscribe a check or a check group to the channel, or change that subscription',
      description: 'Give exactly one of checkId and groupId; `activated: false` keeps the subscription but pauses it.',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, body: SubscriptionBody, responses: { 200: SubscriptionResult } },
      handler: async ({ principal, params, body }) => {
        const accountId = principal.account.id;
        const [channel] = await sql`select id from alert_channels where id = ${params.id} and account_id = ${accountId}`;
        if (!channel) throw notFound();
        const target = body.checkId
          ? await sql`select id from checks where id = ${body.checkId} and account_id = ${accountId}`
          : await sql`select id from check_groups where id = ${body.groupId!} and account_id = ${accountId}`;
        new Rules()
          .check(target.length > 0, body.checkId ? 'body.checkId' : 'body.groupId', 'exists', 'names no check or group of this account')
          .throwIfAny();
        const [row] = body.checkId
          ? await sql<SubscriptionRow[]>`insert into alert_subscriptions (alert_channel_id, check_id, activated)
              values (${params.id}, ${body.checkId}, ${body.activated})
              on conflict (alert_channel_id, check_id) where check_id is not null
              do update set activated = excluded.activated returning *`
          : await sql<SubscriptionRow[]>`insert into alert_subscriptions (alert_channel_id, group_id, activated)
              values (${params.id}, ${body.groupId!}, ${body.activated})
              on conflict (alert_channel_id, group_id) where group_id is not null
              do update set activated = excluded.activated returning *`;
        return { status: 200, body: toSubscription(row) };
      },
    }),
  ];
}
