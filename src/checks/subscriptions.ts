import { Type } from '@sinclair/typebox';
import type { Rules } from '../http/rules.js';
import type { Sql } from '../storage/postgres.js';

/** A check's or a group's subscription to one alert channel. */
export interface ChannelSubscription {
  alertChannelId: number;
  activated: boolean;
}

/** Who subscribes: a check or a group; the column comes from this fixed pair, never from input. */
export type Subscriber = { checkId: string } | { groupId: number };

function columnOf(subscriber: Subscriber): { column: 'check_id' | 'group_id'; id: string | number } {
  return 'checkId' in subscriber ? { column: 'check_id', id: subscriber.checkId } : { column: 'group_id', id: subscriber.groupId };
}

/** Fails `rules` for every subscription that names no alert channel of the account. */
export async function checkChannelsExist(db: Sql, accountId: string, subscriptions: ChannelSubscription[] | undefined, rules: Rules): Promise<void> {
  const wanted = (subscriptions ?? []).map((s) => s.alertChannelId);
  if (!wanted.length) return;
  const found = new Set(
    (await db<{ id: number }[]>`select id from alert_channels where account_id = ${accountId} and id = any(${wanted}::bigint[])`).map((r) => r.id),
  );
  wanted.forEach((id, i) => {
    if (!found.has(id)) rules.fail(`body.alertChannelSubscriptions[${i}].alertChannelId`, 'exists', 'names no alert channel of this account');
  });
}

/**
 * An explicit list replaces the subscriber's own; `autoAssign` subscribes it to every channel of the account
 * it has no subscription row for yet (explicitly paused ones stay paused).
 */
export async function saveSubscriptions(
  db: Sql,
  accountId: string,
  subscriber: Subscriber,
  explicit: ChannelSubscription[] | undefined,
  autoAssign: boolean,
): Promise<void> {
  const { column, id } = columnOf(subscriber);
  if (explicit) {
    await db`delete from alert_subscriptions where ${db(column)} = ${id}`;
    for (const s of explicit) {
      await db`insert into alert_subscriptions (alert_channel_id, ${db(column)}, activated)
        values (${s.alertChannelId}, ${id}, ${s.activated})
        on conflict (alert_channel_id, ${db(column)}) where ${db(column)} is not null do update set activated = excluded.activated`;
    }
  }
  if (autoAssign) await subscribeToChannels(db, accountId, subscriber, false);
}

/** Subscribes to every channel of the account (only those with `autoSubscribe` on, when `onlyAuto`) it has no row for. */
export async function subscribeToChannels(db: Sql, accountId: string, subscriber: Subscriber, onlyAuto: boolean): Promise<void> {
  const { column, id } = columnOf(subscriber);
  await db`insert into alert_subscriptions (alert_channel_id, ${db(column)}, activated)
    select c.id, ${id}, true from alert_channels c
    where c.account_id = ${accountId} ${onlyAuto ? db`and c.auto_subscribe` : db``}
      and not exists (select 1 from alert_subscriptions s where s.alert_channel_id = c.id and s.${db(column)} = ${id})`;
}

/** `?autoAssignAlerts` on check and group writes (default true, as the anchor has it). */
export function autoAssignQuery(subject: 'check' | 'group') {
  return Type.Object(
    {
      autoAssignAlerts: Type.Boolean({
        default: true,
        description: `Subscribe the ${subject} to every alert channel of the account it is not subscribed to yet`,
      }),
    },
    { additionalProperties: false },
  );
}
