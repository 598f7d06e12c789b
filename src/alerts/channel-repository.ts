import type { ChannelType } from '../model/alerts.js';
import type { Sql } from '../storage/postgres.js';
import { sealSecret } from '../storage/secret-box.js';
import { mapChannelSecrets, sealChannelConfig } from './channels/index.js';

export interface ChannelRow {
  id: number;
  type: ChannelType;
  config: Record<string, unknown>;
  send_recovery: boolean;
  send_failure: boolean;
  send_degraded: boolean;
  ssl_expiry: boolean;
  ssl_expiry_threshold: number;
  auto_subscribe: boolean;
  /** Webhook channels' HMAC key (never returned after creation). */
  signing_secret: string | null;
  created_at: Date;
  updated_at: Date | null;
}

export interface SubscriptionRow {
  alert_channel_id: number;
  check_id: string | null;
  group_id: number | null;
  activated: boolean;
}

/** A channel's settings as a create or update body gives them. */
export interface ChannelSettings {
  type: ChannelType;
  config: unknown;
  sendRecovery: boolean;
  sendFailure: boolean;
  sendDegraded: boolean;
  sslExpiry: boolean;
  sslExpiryThreshold: number;
  autoSubscribe: boolean;
}

/** What one subscription points at: a check or a check group. */
export type SubscriptionTarget = { checkId: string } | { groupId: number };

/** A subscription to store: exactly one of checkId and groupId is set (the caller has checked). */
export interface SubscriptionInput {
  checkId?: string | null;
  groupId?: number | null;
  activated: boolean;
}

/** Each channel's subscriptions in the order they were made, by channel id. */
export async function subscriptionsOf(db: Sql, channelIds: number[]): Promise<Map<number, SubscriptionRow[]>> {
  const map = new Map<number, SubscriptionRow[]>(channelIds.map((id) => [id, []]));
  if (!channelIds.length) return map;
  const rows = await db<SubscriptionRow[]>`select * from alert_subscriptions where alert_channel_id = any(${channelIds}::bigint[]) order by id`;
  for (const r of rows) map.get(r.alert_channel_id)!.push(r);
  return map;
}

/** Those of `ids` that name checks of the account. */
export async function accountCheckIds(db: Sql, accountId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db<{ id: string }[]>`select id from checks where account_id = ${accountId} and id = any(${ids}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** Those of `ids` that name check groups of the account. */
export async function accountGroupIds(db: Sql, accountId: string, ids: number[]): Promise<Set<number>> {
  if (!ids.length) return new Set();
  const rows = await db<{ id: number }[]>`select id from check_groups where account_id = ${accountId} and id = any(${ids}::bigint[])`;
  return new Set(rows.map((r) => r.id));
}

/** Replaces a channel's subscriptions with `wanted` (duplicates are skipped). */
export async function replaceSubscriptionRows(db: Sql, channelId: number, wanted: readonly SubscriptionInput[]): Promise<void> {
  await db`delete from alert_subscriptions where alert_channel_id = ${channelId}`;
  for (const s of wanted) {
    await db`insert into alert_subscriptions (alert_channel_id, check_id, group_id, activated)
      values (${channelId}, ${s.checkId ?? null}, ${s.groupId ?? null}, ${s.activated})
      on conflict do nothing`;
  }
}

/** The account's channel, or undefined. */
export async function findChannel(db: Sql, accountId: string, id: number): Promise<ChannelRow | undefined> {
  const [row] = await db<ChannelRow[]>`select * from alert_channels where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** Whether the account has the channel. */
export async function channelExists(db: Sql, accountId: string, id: number): Promise<boolean> {
  const [channel] = await db`select id from alert_channels where id = ${id} and account_id = ${accountId}`;
  return channel !== undefined;
}

/** Inserts a channel of the account; returns its row. */
export async function insertChannel(db: Sql, accountId: string, s: ChannelSettings, signingSecret: string | null): Promise<ChannelRow> {
  const [row] = await db<ChannelRow[]>`insert into alert_channels (account_id, type, config, send_recovery, send_failure, send_degraded,
      ssl_expiry, ssl_expiry_threshold, auto_subscribe, signing_secret)
    values (${accountId}, ${s.type}, ${db.json(sealChannelConfig(s.type, s.config) as never)}, ${s.sendRecovery},
      ${s.sendFailure}, ${s.sendDegraded}, ${s.sslExpiry}, ${s.sslExpiryThreshold}, ${s.autoSubscribe}, ${sealSecret(signingSecret)}) returning *`;
  return row;
}

/** The type of the account's channel, its row locked for update; undefined when the account has no such channel. */
export async function lockChannelType(db: Sql, accountId: string, id: number): Promise<ChannelType | undefined> {
  const [current] = await db<Pick<ChannelRow, 'type'>[]>`select type from alert_channels
    where id = ${id} and account_id = ${accountId} for update`;
  return current?.type;
}

/** Updates the account's channel's settings (not its type). */
export async function updateChannel(db: Sql, accountId: string, id: number, s: ChannelSettings): Promise<void> {
  await db`update alert_channels set config = ${db.json(sealChannelConfig(s.type, s.config) as never)}, send_recovery = ${s.sendRecovery},
      send_failure = ${s.sendFailure}, send_degraded = ${s.sendDegraded}, ssl_expiry = ${s.sslExpiry},
      ssl_expiry_threshold = ${s.sslExpiryThreshold}, auto_subscribe = ${s.autoSubscribe}, updated_at = now()
    where id = ${id} and account_id = ${accountId}`;
}

/** Deletes the account's channel (its subscriptions go with it); false when it names none. */
export async function deleteChannel(db: Sql, accountId: string, id: number): Promise<boolean> {
  const rows = await db`delete from alert_channels where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}

/** Whether the check or group a subscription points at is the account's. */
export async function subscriptionTargetExists(db: Sql, accountId: string, target: SubscriptionTarget): Promise<boolean> {
  const rows =
    'checkId' in target
      ? await db`select id from checks where id = ${target.checkId} and account_id = ${accountId}`
      : await db`select id from check_groups where id = ${target.groupId} and account_id = ${accountId}`;
  return rows.length > 0;
}

/** Subscribes the check or group to the channel, or sets `activated` on the subscription it has; returns the row. */
export async function upsertSubscription(db: Sql, channelId: number, target: SubscriptionTarget, activated: boolean): Promise<SubscriptionRow> {
  const [row] =
    'checkId' in target
      ? await db<SubscriptionRow[]>`insert into alert_subscriptions (alert_channel_id, check_id, activated)
        values (${channelId}, ${target.checkId}, ${activated})
        on conflict (alert_channel_id, check_id) where check_id is not null
        do update set activated = excluded.activated returning *`
      : await db<SubscriptionRow[]>`insert into alert_subscriptions (alert_channel_id, group_id, activated)
        values (${channelId}, ${target.groupId}, ${activated})
        on conflict (alert_channel_id, group_id) where group_id is not null
        do update set activated = excluded.activated returning *`;
  return row;
}

/** Removes the check's or group's subscription to the account's channel; false when there was none. */
export async function deleteSubscription(db: Sql, accountId: string, channelId: number, target: SubscriptionTarget): Promise<boolean> {
  const rows =
    'checkId' in target
      ? await db`delete from alert_subscriptions s using alert_channels c
        where s.alert_channel_id = ${channelId} and s.check_id = ${target.checkId} and c.id = s.alert_channel_id and c.account_id = ${accountId}
        returning s.alert_channel_id`
      : await db`delete from alert_subscriptions s using alert_channels c
        where s.alert_channel_id = ${channelId} and s.group_id = ${target.groupId} and c.id = s.alert_channel_id and c.account_id = ${accountId}
        returning s.alert_channel_id`;
  return rows.length > 0;
}

/** Gives a webhook channel new secrets: its signing secret and, in its config, its webhookSecret. */
export async function rotateChannelSecrets(db: Sql, accountId: string, id: number, signingSecret: string, webhookSecret: string): Promise<boolean> {
  const rows = await db`update alert_channels set signing_secret = ${sealSecret(signingSecret)},
      config = jsonb_set(config, '{webhookSecret}', ${db.json(sealSecret(webhookSecret) as never)}), updated_at = now()
    where id = ${id} and account_id = ${accountId} and type = 'WEBHOOK' returning id`;
  return rows.length > 0;
}

/**
 * The account's channels subscribed (activated) to an activated, unmuted check that runs in the private location,
 * or to its group, that send this kind of alert (`sendFailure` for a location without agents, `sendRecovery` when
 * one is back).
 */
export async function channelsOfLocation(db: Sql, accountId: string, slug: string, failure: boolean): Promise<{ id: number; type: ChannelType }[]> {
  const rows = await db<{ id: number; type: ChannelType }[]>`select distinct ch.id, ch.type from alert_channels ch
    join alert_subscriptions s on s.alert_channel_id = ch.id and s.activated
    left join checks c on c.id = s.check_id
    left join check_groups g on g.id = s.group_id
    where ch.account_id = ${accountId}
      and (case when ${failure} then ch.send_failure else ch.send_recovery end)
      and ((c.id is not null and c.activated and not c.muted and c.data->'privateLocations' ? ${slug})
        or (g.id is not null and (g.data->'privateLocations' ? ${slug}
          or exists (select 1 from checks gc where gc.group_id = g.id and gc.data->'privateLocations' ? ${slug}))))
    order by ch.id`;
  return rows.map((r) => ({ id: Number(r.id), type: r.type }));
}

/** Passes every channel's stored secrets (its config's, its signing secret) through `f` (sealing begins, or a key rotation). */
export async function resealChannelSecrets(db: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  for (const row of await db<
    { id: number; type: ChannelType; config: Record<string, unknown>; signing_secret: string | null }[]
  >`select id, type, config, signing_secret from alert_channels`) {
    const config = mapChannelSecrets(row.type, row.config, f);
    const signing = row.signing_secret && f(row.signing_secret);
    if (JSON.stringify(config) === JSON.stringify(row.config) && signing === row.signing_secret) continue;
    await db`update alert_channels set config = ${db.json(config as never)}, signing_secret = ${signing} where id = ${row.id}`;
    changed++;
  }
  return changed;
}
