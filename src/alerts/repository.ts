import type { ALERT_TYPES, ChannelType } from '../model/alerts.js';
import type { CHECK_TYPES } from '../model/checks.js';
import type { Sql } from '../storage/postgres.js';

/** An alert with its check's name and type. */
export interface AlertRow {
  id: string;
  name: string;
  check_id: string;
  alert_type: (typeof ALERT_TYPES)[number];
  check_type: (typeof CHECK_TYPES)[number];
  run_location: string | null;
  response_time: number | null;
  status_code: number | null;
  check_result_id: string | null;
  silenced: boolean;
  muted: boolean;
  incident_id: string | null;
  created_at: Date;
  started_at: Date;
}

/** A delivery of an alert to a channel, with the channel's config and the alert's check. */
export interface NotificationRow {
  id: string;
  channel_type: ChannelType;
  status: 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';
  config: Record<string, unknown>;
  notification_result: string | null;
  sent_at: Date | null;
  attempts: { at: string; ok: boolean; detail: string }[];
  /** Null for a private location's alert (then private_location_id names it). */
  check_type: (typeof CHECK_TYPES)[number] | null;
  check_id: string | null;
  alert_id: string | null;
  alert_channel_id: number;
  check_result_id: string | null;
  created_at: Date;
  private_location_id: string | null;
}

/**
 * The deliveries of a private location's change (docs/agent.md, "A location without agents alerts"), one per channel,
 * recorded before they are queued; a change found again (a crash before the location was marked) finds its own rows.
 * Answers each channel's delivery id.
 */
export async function recordLocationDeliveries(
  db: Sql,
  change: { id: string; accountId: string; key: string },
  channels: { id: number; type: ChannelType }[],
): Promise<Map<number, string>> {
  const rows = channels.map((c) => ({
    account_id: change.accountId,
    private_location_id: change.id,
    location_change: change.key,
    alert_channel_id: c.id,
    channel_type: c.type,
  }));
  await db`insert into alert_notifications ${db(rows)} on conflict (location_change, alert_channel_id) where location_change is not null do nothing`;
  const ids = await db<{ id: string; alert_channel_id: string }[]>`select id, alert_channel_id from alert_notifications
    where location_change = ${change.key} and alert_channel_id = any(${channels.map((c) => c.id)}::bigint[])`;
  return new Map(ids.map((r) => [Number(r.alert_channel_id), r.id]));
}

/** Which alerts to list: of one check when `checkId`, created in [from, to) (epoch ms) when given. */
export interface AlertFilter {
  checkId?: string;
  from?: number;
  to?: number;
}

/** Which deliveries to list: to one channel, failed or not, created in [from, to) (epoch ms) when given. */
export interface NotificationFilter {
  alertChannelId?: number;
  /** Deliveries of this check's alerts. */
  checkId?: string;
  /** true: deliveries that failed every attempt; false: the others. */
  hasFailures?: boolean;
  from?: number;
  to?: number;
}

/** One page of an account's alerts (newest first) matching the filter, and how many match. */
export async function listAlertRows(db: Sql, accountId: string, filter: AlertFilter, limit: number, offset: number) {
  const where = db`a.account_id = ${accountId}
    ${filter.checkId ? db`and a.check_id = ${filter.checkId}` : db``}
    ${filter.from !== undefined ? db`and a.created_at >= ${new Date(filter.from)}` : db``}
    ${filter.to !== undefined ? db`and a.created_at < ${new Date(filter.to)}` : db``}`;
  const [rows, [{ n }]] = await Promise.all([
    db<AlertRow[]>`select a.*, c.name, c.check_type from check_alerts a join checks c on c.id = a.check_id
      where ${where} order by a.created_at desc, a.id limit ${limit} offset ${offset}`,
    db<{ n: number }[]>`select count(*)::int as n from check_alerts a where ${where}`,
  ]);
  return { rows, total: n };
}

/** One page of an account's alert deliveries (newest first) matching the filter, and how many match. */
export async function listNotificationRows(db: Sql, accountId: string, filter: NotificationFilter, limit: number, offset: number) {
  const where = db`n.account_id = ${accountId}
    ${filter.alertChannelId !== undefined ? db`and n.alert_channel_id = ${filter.alertChannelId}` : db``}
    ${filter.checkId !== undefined ? db`and n.alert_id in (select id from check_alerts where account_id = ${accountId} and check_id = ${filter.checkId})` : db``}
    ${filter.hasFailures === true ? db`and n.status = 'FAILURE'` : filter.hasFailures === false ? db`and n.status <> 'FAILURE'` : db``}
    ${filter.from !== undefined ? db`and n.created_at >= ${new Date(filter.from)}` : db``}
    ${filter.to !== undefined ? db`and n.created_at < ${new Date(filter.to)}` : db``}`;
  const [rows, [{ n }]] = await Promise.all([
    db<NotificationRow[]>`select n.id, n.channel_type, n.status, ch.config, n.notification_result, n.sent_at, n.attempts, c.check_type,
        a.check_id, n.alert_id, n.alert_channel_id, a.check_result_id, n.created_at, n.private_location_id
      from alert_notifications n left join check_alerts a on a.id = n.alert_id left join checks c on c.id = a.check_id
      join alert_channels ch on ch.id = n.alert_channel_id
      where ${where} order by n.created_at desc, n.id limit ${limit} offset ${offset}`,
    db<{ n: number }[]>`select count(*)::int as n from alert_notifications n where ${where}`,
  ]);
  return { rows, total: n };
}
