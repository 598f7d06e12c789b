import type { Sql } from '../storage/postgres.js';
import type { Run } from '../model/runs.js';
import { alertKind, type AlertType } from '../model/alerts.js';
import { openCheckIncident, resolveCheckIncident } from '../incidents/repository.js';

/** What raised an alert: the check (as it runs: group settings applied), and the run or time that did it. */
export interface RaisedAlert {
  check: {
    id: string;
    groupId: number | null;
    muted: boolean;
    triggerIncident: { serviceId: string; name: string; description?: string; severity?: string; notifySubscribers?: boolean } | null;
  };
  type: AlertType;
  /** The run that moved the state; a reminder has none. */
  run?: Pick<Run, 'resultId' | 'location' | 'durationMs' | 'statusCode'>;
  at: number;
  /** A maintenance window silences it: recorded, not sent. */
  silenced: boolean;
}

const SEND_COLUMN = { failure: 'send_failure', recovery: 'send_recovery', degraded: 'send_degraded' } as const;

/**
 * Records alerts, opens or resolves the incidents of checks with triggerIncident, and makes one notification
 * per channel each alert goes to: the channels the check or its group subscribe to (active subscriptions),
 * that send this kind of alert. Muted checks and silenced alerts get none. Returns the notifications to deliver.
 */
export async function raiseAlerts(tx: Sql, accountId: string, alerts: readonly RaisedAlert[]): Promise<string[]> {
  if (!alerts.length) return [];
  const checkIds = [...new Set(alerts.map((a) => a.check.id))];
  const groupIds = [...new Set(alerts.flatMap((a) => (a.check.groupId === null ? [] : [a.check.groupId])))];
  const subscriptions = await tx<{ id: number; type: string; send_failure: boolean; send_recovery: boolean; send_degraded: boolean; check_id: string | null; group_id: number | null }[]>`
    select c.id, c.type, c.send_failure, c.send_recovery, c.send_degraded, s.check_id, s.group_id
    from alert_subscriptions s join alert_channels c on c.id = s.alert_channel_id
    where s.activated and c.account_id = ${accountId}
      and (s.check_id = any(${checkIds}::uuid[]) or s.group_id = any(${groupIds}::bigint[]))`;
  const incidents: (string | null)[] = [];
  for (const alert of alerts) incidents.push(alert.check.triggerIncident ? await trackIncident(tx, accountId, alert) : null);
  const rows = await tx<{ id: string }[]>`insert into check_alerts ${tx(
    alerts.map((alert, i) => ({
      account_id: accountId,
      check_id: alert.check.id,
      alert_type: alert.type,
      check_result_id: alert.run?.resultId ?? null,
      run_location: alert.run?.location ?? null,
      response_time: alert.run?.durationMs ?? null,
      status_code: alert.run?.statusCode ?? null,
      started_at: new Date(alert.at),
      silenced: alert.silenced,
      muted: alert.check.muted,
      incident_id: incidents[i],
    })),
  )} returning id`;
  const notify: { account_id: string; alert_id: string; alert_channel_id: number; channel_type: string }[] = [];
  alerts.forEach((alert, i) => {
    if (alert.silenced || alert.check.muted) return;
    const send = SEND_COLUMN[alertKind(alert.type)];
    const channels = new Map<number, string>();
    for (const s of subscriptions) {
      if (s.check_id !== alert.check.id && (s.group_id === null || s.group_id !== alert.check.groupId)) continue;
      if (s[send]) channels.set(s.id, s.type);
    }
    for (const [channelId, type] of channels) notify.push({ account_id: accountId, alert_id: rows[i].id, alert_channel_id: channelId, channel_type: type });
  });
  if (!notify.length) return [];
  const sent = await tx<{ id: string }[]>`insert into alert_notifications ${tx(notify)} returning id`;
  return sent.map((r) => r.id);
}

/** triggerIncident: a failure opens the check's incident (one at a time), a recovery resolves it. */
async function trackIncident(tx: Sql, accountId: string, alert: RaisedAlert): Promise<string | null> {
  const incident = alert.check.triggerIncident;
  if (!incident) return null;
  const kind = alertKind(alert.type);
  if (kind === 'recovery') {
    const [row] = await tx<{ id: string }[]>`update incidents set resolved_at = ${new Date(alert.at)}
      where check_id = ${alert.check.id} and resolved_at is null returning id`;
    // The status-page incident it opened is resolved with an update (docs/status-pages.md).
    if (row) await resolveCheckIncident(tx, accountId, row.id, incident.notifySubscribers ?? false, new Date(alert.at));
    return row?.id ?? null;
  }
  if (alert.type !== 'ALERT_FAILURE' && alert.type !== 'ALERT_DEGRADED_FAILURE') return null;
  const [row] = await tx<{ id: string }[]>`insert into incidents (account_id, check_id, service_id, name, description, severity, notify_subscribers, opened_at)
    values (${accountId}, ${alert.check.id}, ${incident.serviceId}, ${incident.name}, ${incident.description ?? null},
      ${incident.severity ?? null}, ${incident.notifySubscribers ?? false}, ${new Date(alert.at)})
    on conflict (check_id) where resolved_at is null do nothing returning id`;
  if (row) {
    // When serviceId names one of the account's status-page services, the incident shows there too.
    await openCheckIncident(tx, accountId, row.id, incident, new Date(alert.at));
    return row.id;
  }
  const [open] = await tx<{ id: string }[]>`select id from incidents where check_id = ${alert.check.id} and resolved_at is null`;
  return open?.id ?? null;
}
