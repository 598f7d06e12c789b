import type { Logger } from 'pino';
import type { AlertType } from '../model/alerts.js';
import type { StateEvent } from './records.js';

/** Each alert type as an operator reads it in the log. */
const WHAT: Record<AlertType, string> = {
  ALERT_FAILURE: 'check failing',
  ALERT_FAILURE_REMAIN: 'check still failing',
  ALERT_FAILURE_DEGRADED: 'check degraded after failing',
  ALERT_RECOVERY: 'check recovered',
  ALERT_DEGRADED: 'check degraded',
  ALERT_DEGRADED_REMAIN: 'check still degraded',
  ALERT_DEGRADED_FAILURE: 'check failing after degraded',
  ALERT_DEGRADED_RECOVERY: 'check recovered from degraded',
  ALERT_NO_DATA: 'check not running',
  ALERT_NO_DATA_RECOVERY: 'check running again',
};

/** Changes an operator acts on: written at `warn`, so `LOG_LEVEL=warn` is the list of what went wrong. */
const FAILING = new Set<AlertType>(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_DEGRADED_FAILURE', 'ALERT_NO_DATA']);

/**
 * One line per state change (`warn` when a check fails, `info` otherwise), once its transaction committed: what changed (`msg`), the check, the alert,
 * how many notifications it made (none while muted or in maintenance), and the incident it opened or resolved.
 */
export function logStateEvents(logger: Logger, events: readonly StateEvent[]): void {
  for (const e of events) {
    logger[FAILING.has(e.alertType) ? 'warn' : 'info'](
      {
        event: 'check.state',
        accountId: e.accountId,
        checkId: e.checkId,
        check: e.checkName,
        alertType: e.alertType,
        alertId: e.alertId,
        at: e.at,
        notifications: e.notifications,
        ...(e.silenced ? { silenced: 'maintenance' } : {}),
        ...(e.muted ? { muted: true } : {}),
      },
      WHAT[e.alertType] ?? e.alertType,
    );
    if (e.incident) {
      logger[e.incident.change === 'opened' ? 'warn' : 'info'](
        { event: `incident.${e.incident.change}`, accountId: e.accountId, incidentId: e.incident.id, checkId: e.checkId, check: e.checkName },
        `incident ${e.incident.change}`,
      );
    }
  }
}
