import { randomBytes } from 'node:crypto';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { channelHealth, ChannelHealth } from '../../alerts/health.js';
import type { Deps } from '../../deps.js';
import { notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { NumericIdParams } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { IgnoredField, Nullable, StringEnum, TaggedUnion } from '../../http/schemas.js';
import { transaction, type Sql } from '../../storage/postgres.js';
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

/** A subscription as the anchor writes it inside a channel body: a check or a group (`id` is read-only). */
const ChannelSubscription = Type.Object(
  {
    id: Type.Optional(IgnoredField('read-only')),
    checkId: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
    groupId: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
    activated: Type.Boolean(),
  },
  { additionalProperties: false, description: 'Exactly one of checkId and groupId' },
);

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
        sslExpiry: Type.Boolean({ default: false, description: 'Alert on expiring SSL certificates of subscribed checks' }),
        sslExpiryThreshold: Type.Integer({ minimum: 1, maximum: 30, default: 30, description: 'Days before expiry to start alerting' }),
        autoSubscribe: Type.Boolean({ default: false, description: 'Subscribe every check created from now on to this channel' }),
        subscriptions: Type.Optional(
          Type.Array(ChannelSubscription, { maxItems: 1000, description: "Replaces the channel's subscriptions" }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
);

/** Exactly one of checkId and groupId is given (not null); the other may be left out or null, as the anchor sends it. */
const SubscriptionBody = Type.Object(
  {
    checkId: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
    groupId: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
    activated: Type.Boolean({ default: true }),
  },
  {
    additionalProperties: false,
    oneOf: [
      { required: ['checkId'], properties: { checkId: { type: 'string' } } },
      { required: ['groupId'], properties: { groupId: { type: 'integer' } } },
    ],
  },
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
  sslExpiry: Type.Boolean(),
  sslExpiryThreshold: Type.Integer(),
  autoSubscribe: Type.Boolean(),
  subscriptions: Type.Array(SubscriptionResult),
  health: ChannelHealth,
  signingSecret: Type.Optional(
    Type.String({ description: "Webhook channels: the HMAC key of their X-Monitoring-Signature header; in the response that creates the channel only" }),
  ),
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
  ssl_expiry: boolean;
  ssl_expiry_threshold: number;
  auto_subscribe: boolean;
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

type Health = Static<typeof ChannelHealth>;

function toChannel(row: ChannelRow, subscriptions: SubscriptionRow[], health: Health) {
  return {
    id: row.id,
    type: row.type,
    config: row.config,
    sendRecovery: row.send_recovery,
    sendFailure: row.send_failure,
    sendDegraded: row.send_degraded,
    sslExpiry: row.ssl_expiry,
    sslExpiryThreshold: row.ssl_expiry_threshold,
    autoSubscribe: row.auto_subscribe,
    subscriptions: subscriptions.map(toSubscription),
    health,
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

type ChannelSubscriptionInput = Static<typeof ChannelSubscription>;

/** Replaces a channel's subscriptions with `wanted`, each naming exactly one check or group of the account. */
async function replaceSubscriptions(db: Sql, accountId: string, channelId: number, wanted: ChannelSubscriptionInput[]): Promise<void> {
  const rules = new Rules();
  const checkIds = wanted.flatMap((s) => (s.checkId ? [s.checkId] : []));
  const groupIds = wanted.flatMap((s) => (s.groupId ? [s.groupId] : []));
  const checks = new Set(
    checkIds.length ? (await db<{ id: string }[]>`select id from checks where account_id = ${accountId} and id = any(${checkIds}::uuid[])`).map((r) => r.id) : [],
  );
  const groups = new Set(
    groupIds.length ? (await db<{ id: number }[]>`select id from check_groups where account_id = ${accountId} and id = any(${groupIds}::bigint[])`).map((r) => r.id) : [],
  );
  wanted.forEach((s, i) => {
    const at = `body.subscriptions[${i}]`;
    if (!s.checkId === !s.groupId) rules.fail(at, 'oneOf', 'must have exactly one of checkId and groupId');
    else if (s.checkId) rules.check(checks.has(s.checkId), `${at}.checkId`, 'exists', 'names no check of this account');
    else rules.check(groups.has(s.groupId!), `${at}.groupId`, 'exists', 'names no check group of this account');
  });
  rules.throwIfAny();
  await db`delete from alert_subscriptions where alert_channel_id = ${channelId}`;
  for (const s of wanted) {
    await db`insert into alert_subscriptions (alert_channel_id, check_id, group_id, activated)
      values (${channelId}, ${s.checkId ?? null}, ${s.groupId ?? null}, ${s.activated})
      on conflict do nothing`;
  }
}

export function alertChannelRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Alert channels';

  async function read(db: Sql, accountId: string, id: number) {
    const [row] = await db<ChannelRow[]>`select * from alert_channels where id = ${id} and account_id = ${accountId}`;
    if (!row) throw notFound();
    const [subs, health] = await Promise.all([subscriptionsOf(db, [id]), channelHealth(db, [id])]);
    return toChannel(row, subs.get(id)!, health.get(id)!);
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
        const ids = rows.map((r) => r.id);
        const [subs, health] = await Promise.all([subscriptionsOf(sql, ids), channelHealth(sql, ids)]);
        return listReply(rows.map((r) => toChannel(r, subs.get(r.id)!, health.get(r.id)!)), total, query);
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
        // A webhook channel signs what it sends; its key is shown here, once.
        const signingSecret = body.type === 'WEBHOOK' ? `whsec_${randomBytes(32).toString('base64url')}` : null;
        const channel = await transaction(sql, async (tx) => {
          const [row] = await tx<ChannelRow[]>`insert into alert_channels (account_id, type, config, send_recovery, send_failure, send_degraded,
              ssl_expiry, ssl_expiry_threshold, auto_subscribe, signing_secret)
            values (${principal.account.id}, ${body.type}, ${sql.json(body.config as never)}, ${body.sendRecovery},
              ${body.sendFailure}, ${body.sendDegraded}, ${body.sslExpiry}, ${body.sslExpiryThreshold}, ${body.autoSubscribe}, ${signingSecret}) returning *`;
          if (body.subscriptions) await replaceSubscriptions(tx, principal.account.id, row.id, body.subscriptions);
          return read(tx, principal.account.id, row.id);
        });
        return { status: 201, body: signingSecret ? { ...channel, signingSecret } : channel };
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
        const channel = await transaction(sql, async (tx) => {
          const [current] = await tx<Pick<ChannelRow, 'type'>[]>`select type from alert_channels
            where id = ${params.id} and account_id = ${principal.account.id} for update`;
          if (!current) throw notFound();
          new Rules().check(current.type === body.type, 'body.type', 'immutable', `cannot change from ${current.type}`).throwIfAny();
          await tx`update alert_channels set config = ${sql.json(body.config as never)}, send_recovery = ${body.sendRecovery},
              send_failure = ${body.sendFailure}, send_degraded = ${body.sendDegraded}, ssl_expiry = ${body.sslExpiry},
              ssl_expiry_threshold = ${body.sslExpiryThreshold}, auto_subscribe = ${body.autoSubscribe}, updated_at = now()
            where id = ${params.id} and account_id = ${principal.account.id}`;
          if (body.subscriptions) await replaceSubscriptions(tx, principal.account.id, params.id, body.subscriptions);
          return read(tx, principal.account.id, params.id);
        });
        return { status: 200, body: channel };
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
