/** The vocabulary of alerting every feature shares: alert types and kinds, channel types. */

/** The anchor's alert types (ALERT_*_REMAIN are the reminders), and the two of no data. */
export const ALERT_TYPES = [
  'ALERT_FAILURE',
  'ALERT_FAILURE_REMAIN',
  'ALERT_FAILURE_DEGRADED',
  'ALERT_RECOVERY',
  'ALERT_DEGRADED',
  'ALERT_DEGRADED_REMAIN',
  'ALERT_DEGRADED_FAILURE',
  'ALERT_DEGRADED_RECOVERY',
  // Ours (docs/analytics.md, "No data"): the check stopped running, and runs resumed.
  'ALERT_NO_DATA',
  'ALERT_NO_DATA_RECOVERY',
] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** Which channel setting lets an alert through: failures, recoveries or degradations. */
export function alertKind(type: AlertType): 'failure' | 'recovery' | 'degraded' {
  if (type === 'ALERT_RECOVERY' || type === 'ALERT_DEGRADED_RECOVERY' || type === 'ALERT_NO_DATA_RECOVERY') return 'recovery';
  if (type === 'ALERT_DEGRADED' || type === 'ALERT_DEGRADED_REMAIN' || type === 'ALERT_FAILURE_DEGRADED') return 'degraded';
  return 'failure';
}

/** The kinds of alert channel this service delivers to; each has its entry in the channel registry (alerts/channels). */
export const CHANNEL_TYPES = ['EMAIL', 'WEBHOOK', 'SLACK', 'SMS', 'PAGERDUTY', 'OPSGENIE'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
