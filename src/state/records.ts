import { type AlertType, alertKind } from '../model/alerts.js';
import type { Run } from '../model/runs.js';
import { insertSlices, type Sql } from '../storage/postgres.js';

/** A check's triggerIncident, as the alert transaction hands it on. */
export interface TriggerIncident {
  serviceId: string;
  name: string;
  description?: string;
  severity?: string;
  notifySubscribers?: boolean;
}

/**
 * What a check's own incident does beyond its record here: status pages show it (status-pages/ implements this,
 * and the process that applies runs hands it in). Both run in the alert transaction.
 */
export interface CheckIncidentHooks {
  /** A failure opened the check's incident `checkIncidentId`. */
  opened(tx: Sql, accountId: string, checkIncidentId: string, trigger: TriggerIncident, at: Date): Promise<void>;
  /** A recovery resolved it. */
  resolved(tx: Sql, accountId: string, checkIncidentId: string, notifySubscribers: boolean, at: Date): Promise<void>;
}

/** What raised an alert: the check (as it runs: group settings applied), and the run or time that did it. */
export interface RaisedAlert {
  check: {
    id: string;
    name: string;
    groupId: number | null;
    muted: boolean;
    triggerIncident: { serviceId: string; name: string; description?: string; severity?: string; notifySubscribers?: boolean } | null;
  };
  type: AlertType;
  /** The run that moved the state; a reminder has none. */
  run?: Pick<Run, 'resultId' | 'location' | 'durationMs' | 'statusCode'>;
  /** Without a run: the locations it is about (a check not running in some of its locations). */
  locations?: string[];
  at: number;
  /** A maintenance window silences it: recorded, not sent. */
  silenced: boolean;
}

const SEND_COLUMN = { failure: 'send_failure', recovery: 'send_recovery', degraded: 'send_degraded' } as const;

/** What an alert raised did, for the operator's log once its transaction committed. */
export interface StateEvent {
  accountId: string;
  checkId: string;
  checkName: string;
  alertType: AlertType;
  alertId: string;
  at: string;
  silenced: boolean;
  muted: boolean;
  /** Notifications made for it (one per channel). */
  notifications: number;
  incident?: { id: string; change: 'opened' | 'resolved' };
}

export interface Raised {
  /** The notifications to deliver. */
  notifications: string[];
  events: StateEvent[];
}

/**
 * Records alerts, opens or resolves the incidents of checks with triggerIncident, and makes one notification
 * per channel each alert goes to: the channels the check or its group subscribe to (active subscriptions),
 * that send this kind of alert. Muted checks and silenced alerts get none. Returns the notifications to deliver
 * and what each alert did.
 */
export async function raiseAlerts(tx: Sql, accountId: string, alerts: readonly RaisedAlert[], hooks: CheckIncidentHooks): Promise<Raised> {
  if (!alerts.length) return { notifications: [], events: [] };
  const checkIds = [...new Set(alerts.map((a) => a.check.id))];
  const groupIds = [...new Set(alerts.flatMap((a) => (a.check.groupId === null ? [] : [a.check.groupId])))];
  const subscriptions = await tx<
    { id: number; type: string; send_failure: boolean; send_recovery: boolean; send_degraded: boolean; check_id: string | null; group_id: number | null }[]
  >`
    select c.id, c.type, c.send_failure, c.send_recovery, c.send_degraded, s.check_id, s.group_id
    from alert_subscriptions s join alert_channels c on c.id = s.alert_channel_id
    where s.activated and c.account_id = ${accountId}
      and (s.check_id = any(${checkIds}::uuid[]) or s.group_id = any(${groupIds}::bigint[]))`;
  const incidents: ({ id: string; change?: 'opened' | 'resolved' } | null)[] = [];
  for (const alert of alerts) incidents.push(alert.check.triggerIncident ? await trackIncident(tx, accountId, alert, hooks) : null);
  const alertRows = alerts.map((alert, i) => ({
    account_id: accountId,
    check_id: alert.check.id,
    alert_type: alert.type,
    check_result_id: alert.run?.resultId ?? null,
    run_location: alert.run?.location ?? (alert.locations?.length ? alert.locations.join(', ') : null),
    response_time: alert.run?.durationMs ?? null,
    status_code: alert.run?.statusCode ?? null,
    started_at: new Date(alert.at),
    silenced: alert.silenced,
    muted: alert.check.muted,
    incident_id: incidents[i]?.id ?? null,
  }));
  // In slices (a statement's bind parameters are bounded), each returning its ids in the order of its rows.
  const rows: { id: string }[] = [];
  for (const slice of insertSlices(alertRows)) rows.push(...(await tx<{ id: string }[]>`insert into check_alerts ${tx(slice)} returning id`));
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
  const events: StateEvent[] = alerts.map((alert, i) => {
    const incident = incidents[i];
    return {
      accountId,
      checkId: alert.check.id,
      checkName: alert.check.name,
      alertType: alert.type,
      alertId: rows[i]!.id,
      at: new Date(alert.at).toISOString(),
      silenced: alert.silenced,
      muted: alert.check.muted,
      notifications: notify.filter((n) => n.alert_id === rows[i]!.id).length,
      ...(incident?.change ? { incident: { id: incident.id, change: incident.change } } : {}),
    };
  });
  if (!notify.length) return { notifications: [], events };
  const sent: { id: string }[] = [];
  for (const slice of insertSlices(notify)) sent.push(...(await tx<{ id: string }[]>`insert into alert_notifications ${tx(slice)} returning id`));
  return { notifications: sent.map((r) => r.id), events };
}

/** triggerIncident: a failure opens the check's incident (one at a time), a recovery resolves it. */
async function trackIncident(
  tx: Sql,
  accountId: string,
  alert: RaisedAlert,
  hooks: CheckIncidentHooks,
): Promise<{ id: string; change?: 'opened' | 'resolved' } | null> {
  const incident = alert.check.triggerIncident;
  // A check that stopped running, or runs again, says nothing of the service it watches.
  if (!incident || alert.type === 'ALERT_NO_DATA' || alert.type === 'ALERT_NO_DATA_RECOVERY') return null;
  const kind = alertKind(alert.type);
  if (kind === 'recovery') {
    const [row] = await tx<{ id: string }[]>`update incidents set resolved_at = ${new Date(alert.at)}
      where check_id = ${alert.check.id} and resolved_at is null returning id`;
    // The status-page incident it opened is resolved with an update (docs/status-pages.md).
    if (row) await hooks.resolved(tx, accountId, row.id, incident.notifySubscribers ?? false, new Date(alert.at));
    return row ? { id: row.id, change: 'resolved' } : null;
  }
  if (alert.type !== 'ALERT_FAILURE' && alert.type !== 'ALERT_DEGRADED_FAILURE') return null;
  const [row] = await tx<{ id: string }[]>`insert into incidents (account_id, check_id, service_id, name, description, severity, notify_subscribers, opened_at)
    values (${accountId}, ${alert.check.id}, ${incident.serviceId}, ${incident.name}, ${incident.description ?? null},
      ${incident.severity ?? null}, ${incident.notifySubscribers ?? false}, ${new Date(alert.at)})
    on conflict (check_id) where resolved_at is null do nothing returning id`;
  if (row) {
    // When serviceId names one of the account's status-page services, the incident shows there too.
    await hooks.opened(tx, accountId, row.id, incident, new Date(alert.at));
    return { id: row.id, change: 'opened' };
  }
  const [open] = await tx<{ id: string }[]>`select id from incidents where check_id = ${alert.check.id} and resolved_at is null`;
  return open ? { id: open.id } : null;
}
