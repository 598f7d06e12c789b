import { randomBytes } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { Principal } from '../accounts/index.js';
import { notFound } from '../http/errors.js';
import { NumericIdParams } from '../http/ids.js';
import { listReply, PageQuery } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { IgnoredField, Nullable, StringEnum, TaggedUnion } from '../http/schemas.js';
import { may } from '../model/accounts.js';
import { CHANNEL_TYPES } from '../model/alerts.js';
import { iso } from '../model/time.js';
import { listAccountRows } from '../storage/account-rows.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  accountCheckIds,
  accountGroupIds,
  type ChannelRow,
  channelExists,
  deleteChannel,
  findChannel,
  insertChannel,
  lockChannelType,
  replaceSubscriptionRows,
  rotateChannelSecrets,
  type SubscriptionRow,
  subscriptionsOf,
  subscriptionTargetExists,
  updateChannel,
  upsertSubscription,
} from './channel-repository.js';
import { CHANNEL_KINDS, checkChannelConfig, keepStoredChannelConfig, maskChannelConfig, opensIncidents, sendThrough } from './channels/index.js';
import { ChannelHealth, channelHealth } from './health.js';
import type { AlertMessage } from './message.js';

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
        config: CHANNEL_KINDS[type].config,
        sendRecovery: Type.Boolean({ default: true }),
        sendFailure: Type.Boolean({ default: true }),
        sendDegraded: Type.Boolean({ default: false }),
        sslExpiry: Type.Boolean({ default: false, description: 'Alert on expiring SSL certificates of subscribed checks' }),
        sslExpiryThreshold: Type.Integer({ minimum: 1, maximum: 30, default: 30, description: 'Days before expiry to start alerting' }),
        autoSubscribe: Type.Boolean({ default: false, description: 'Subscribe every check created from now on to this channel' }),
        subscriptions: Type.Optional(Type.Array(ChannelSubscription, { maxItems: 1000, description: "Replaces the channel's subscriptions" })),
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
    Type.String({ description: 'Webhook channels: the HMAC key of their X-Monitoring-Signature header; in the response that creates the channel only' }),
  ),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

function toSubscription(r: SubscriptionRow) {
  return { alertChannelId: r.alert_channel_id, checkId: r.check_id, groupId: r.group_id, activated: r.activated };
}

type Health = Static<typeof ChannelHealth>;

/** A channel as a caller reads it: write-only config values empty, header values only for keys that may write. */
function toChannel(row: ChannelRow, subscriptions: SubscriptionRow[], health: Health, revealHeaders: boolean) {
  return {
    id: row.id,
    type: row.type,
    config: maskChannelConfig(row.type, row.config, revealHeaders),
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

type ChannelSubscriptionInput = Static<typeof ChannelSubscription>;

/** Replaces a channel's subscriptions with `wanted`, each naming exactly one check or group of the account. */
async function replaceSubscriptions(db: Sql, accountId: string, channelId: number, wanted: ChannelSubscriptionInput[]): Promise<void> {
  const rules = new Rules();
  const checkIds = wanted.flatMap((s) => (s.checkId ? [s.checkId] : []));
  const groupIds = wanted.flatMap((s) => (s.groupId ? [s.groupId] : []));
  const checks = await accountCheckIds(db, accountId, checkIds);
  const groups = await accountGroupIds(db, accountId, groupIds);
  wanted.forEach((s, i) => {
    const at = `body.subscriptions[${i}]`;
    if (!s.checkId === !s.groupId) rules.fail(at, 'oneOf', 'must have exactly one of checkId and groupId');
    else if (s.checkId) rules.check(checks.has(s.checkId), `${at}.checkId`, 'exists', 'names no check of this account');
    else rules.check(groups.has(s.groupId!), `${at}.groupId`, 'exists', 'names no check group of this account');
  });
  rules.throwIfAny();
  await replaceSubscriptionRows(db, channelId, wanted);
}

/** Whether a caller sees webhook header values (often the receiver's token): keys that may write do; read-only keys do not. */
const revealsHeaders = (principal: Principal) => may(principal.role, 'write');

const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

export function alertChannelRoutes({ sql, outbound, config }: Deps): AnyRoute[] {
  const tag = 'Alert channels';

  async function read(db: Sql, principal: Principal, id: number) {
    const row = await findChannel(db, principal.account.id, id);
    if (!row) throw notFound();
    const [subs, health] = await Promise.all([subscriptionsOf(db, [id]), channelHealth(db, [id])]);
    return toChannel(row, subs.get(id)!, health.get(id)!, revealsHeaders(principal));
  }

  /** 400 for a config that could never deliver (outbound policy, malformed headers, broken template). */
  function checkConfig(body: Static<typeof ChannelBody>) {
    const rules = new Rules();
    checkChannelConfig(body.type, body.config, rules, 'body.config', outbound);
    rules.throwIfAny();
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
        return listReply(
          rows.map((r) => toChannel(r, subs.get(r.id)!, health.get(r.id)!, revealsHeaders(principal))),
          total,
          query,
        );
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/alert-channels',
      operationId: 'createAlertChannel',
      summary: 'Create an email, webhook, Slack, SMS, PagerDuty or Opsgenie alert channel',
      tag,
      access: 'write',
      schema: { body: ChannelBody, responses: { 201: Channel } },
      handler: async ({ principal, body }) => {
        checkConfig(body);
        // A webhook channel signs what it sends; its key is shown here, once.
        const signingSecret = body.type === 'WEBHOOK' ? newSigningSecret() : null;
        const channel = await transaction(sql, async (tx) => {
          const row = await insertChannel(tx, principal.account.id, body, signingSecret);
          if (body.subscriptions) await replaceSubscriptions(tx, principal.account.id, row.id, body.subscriptions);
          return read(tx, principal, row.id);
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
      handler: async ({ principal, params }) => ({ status: 200, body: await read(sql, principal, params.id) }),
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
          const currentType = await lockChannelType(tx, principal.account.id, params.id);
          if (!currentType) throw notFound();
          new Rules().check(currentType === body.type, 'body.type', 'immutable', `cannot change from ${currentType}`).throwIfAny();
          const stored = await findChannel(tx, principal.account.id, params.id);
          const next = { ...body, config: keepStoredChannelConfig(body.type, body.config, stored?.config as typeof body.config | undefined) } as typeof body;
          checkConfig(next);
          await updateChannel(tx, principal.account.id, params.id, next);
          if (body.subscriptions) await replaceSubscriptions(tx, principal.account.id, params.id, body.subscriptions);
          return read(tx, principal, params.id);
        });
        return { status: 200, body: channel };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/alert-channels/{id}/rotate-secret',
      operationId: 'rotateAlertChannelSecret',
      summary: 'Give a webhook channel new secrets (its signing secret and webhookSecret), shown in this response only',
      description:
        "Both signatures change at once: X-Monitoring-Signature (signingSecret) and the anchor's x-checkly-signature " +
        '(webhookSecret; send your own value, or one is made). Deliveries from now on use the new keys.',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: NumericIdParams,
        body: Type.Optional(Type.Object({ webhookSecret: Type.Optional(Type.String({ minLength: 16, maxLength: 256 })) }, { additionalProperties: false })),
        responses: { 200: Type.Object({ id: Type.Integer(), signingSecret: Type.String(), webhookSecret: Type.String() }, { additionalProperties: false }) },
      },
      handler: async ({ principal, params, body }) => {
        const signingSecret = newSigningSecret();
        const webhookSecret = body?.webhookSecret ?? randomBytes(32).toString('base64url');
        // Other kinds have no secrets to rotate: as unknown as a missing channel.
        if (!(await rotateChannelSecrets(sql, principal.account.id, params.id, signingSecret, webhookSecret))) throw notFound();
        return { status: 200, body: { id: params.id, signingSecret, webhookSecret } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/alert-channels/{id}/test',
      operationId: 'testAlertChannel',
      summary: 'Send a test message through the channel now (our addition): what the far end answered, or why it failed',
      description:
        "One attempt, through the outbound policy, with the channel's own template and signature; nothing is recorded as an alert or a " +
        'notification. On PagerDuty and Opsgenie the test incident is resolved right after it is opened. At most 10 a minute per account.',
      tag,
      access: 'write',
      errors: [404],
      rateLimit: { points: 10, windowSeconds: 60 },
      schema: {
        params: NumericIdParams,
        responses: {
          200: Type.Object(
            { ok: Type.Boolean(), detail: Type.String({ description: 'What the far end answered, or why the attempt failed' }) },
            { additionalProperties: false },
          ),
        },
      },
      handler: async ({ principal, params }) => {
        const row = await findChannel(sql, principal.account.id, params.id);
        if (!row) throw notFound();
        const now = new Date().toISOString();
        const message: AlertMessage = {
          alertId: '00000000-0000-0000-0000-000000000000',
          alertType: 'ALERT_FAILURE',
          title: 'Test message: this channel works',
          check: { id: '00000000-0000-0000-0000-000000000000', name: 'Test message', checkType: 'API', tags: ['test'], groupName: null },
          run: { id: null, location: null, responseTime: null, statusCode: null },
          startedAt: now,
          createdAt: now,
          resultLink: null,
          sslDaysRemaining: null,
          variables: {},
        };
        try {
          const ctx = { settings: config.alerts, signingSecret: row.signing_secret, dispatcher: outbound.dispatcher() };
          const detail = await sendThrough(row.type, row.config, message, ctx);
          // PagerDuty and Opsgenie keep what a failure opened: the test's incident is resolved at once, not left paging.
          if (opensIncidents(row.type))
            await sendThrough(row.type, row.config, { ...message, alertType: 'ALERT_RECOVERY', title: 'Test message: resolved' }, ctx);
          return { status: 200, body: { ok: true, detail: detail.slice(0, 2000) } };
        } catch (err) {
          return { status: 200, body: { ok: false, detail: ((err as Error).message || String(err)).slice(0, 2000) } };
        }
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
        if (!(await deleteChannel(sql, principal.account.id, params.id))) throw notFound();
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
        if (!(await channelExists(sql, accountId, params.id))) throw notFound();
        const target = body.checkId ? { checkId: body.checkId } : { groupId: body.groupId! };
        const exists = await subscriptionTargetExists(sql, accountId, target);
        new Rules().check(exists, body.checkId ? 'body.checkId' : 'body.groupId', 'exists', 'names no check or group of this account').throwIfAny();
        const row = await upsertSubscription(sql, params.id, target, body.activated);
        return { status: 200, body: toSubscription(row) };
      },
    }),
  ];
}
