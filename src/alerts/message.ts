import type { AlertType } from '../state/alerting.js';

/** Everything a channel says about one alert: what the senders and the webhook template draw from. */
export interface AlertMessage {
  alertId: string;
  alertType: AlertType;
  title: string;
  check: { id: string; name: string; checkType: string; tags: string[]; groupName: string | null };
  run: { id: string | null; location: string | null; responseTime: number | null; statusCode: number | null };
  startedAt: string;
  createdAt: string;
}

const VERB: Record<AlertType, string> = {
  ALERT_FAILURE: 'is failing',
  ALERT_FAILURE_REMAIN: 'is still failing',
  ALERT_FAILURE_DEGRADED: 'is degraded (was failing)',
  ALERT_RECOVERY: 'has recovered',
  ALERT_DEGRADED: 'is degraded',
  ALERT_DEGRADED_REMAIN: 'is still degraded',
  ALERT_DEGRADED_FAILURE: 'is failing (was degraded)',
  ALERT_DEGRADED_RECOVERY: 'has recovered (was degraded)',
};

export function titleOf(type: AlertType, checkName: string): string {
  return `${checkName} ${VERB[type]}`;
}

/** One line per fact, for email, SMS and Slack. */
export function describe(m: AlertMessage): string {
  return [
    m.title,
    `Check: ${m.check.name} (${m.check.checkType}, ${m.check.id})`,
    ...(m.check.groupName ? [`Group: ${m.check.groupName}`] : []),
    ...(m.run.location ? [`Location: ${m.run.location}`] : []),
    ...(m.run.responseTime !== null ? [`Response time: ${Math.round(m.run.responseTime)} ms`] : []),
    ...(m.run.statusCode !== null ? [`Status code: ${m.run.statusCode}`] : []),
    `Started: ${m.startedAt}`,
    `Alert: ${m.alertType} ${m.alertId}`,
  ].join('\n');
}

/** The default webhook body. */
export function payload(m: AlertMessage) {
  return {
    alertId: m.alertId,
    alertType: m.alertType,
    title: m.title,
    check: m.check,
    run: m.run,
    startedAt: m.startedAt,
    createdAt: m.createdAt,
  };
}

/** The variables a webhook template may use as `{{NAME}}`; each is written JSON-escaped, so a template of JSON stays JSON. */
export function templateVariables(m: AlertMessage): Record<string, string> {
  return {
    ALERT_ID: m.alertId,
    ALERT_TYPE: m.alertType,
    ALERT_TITLE: m.title,
    CHECK_ID: m.check.id,
    CHECK_NAME: m.check.name,
    CHECK_TYPE: m.check.checkType,
    CHECK_RESULT_ID: m.run.id ?? '',
    GROUP_NAME: m.check.groupName ?? '',
    TAGS: m.check.tags.join(','),
    RUN_LOCATION: m.run.location ?? '',
    RESPONSE_TIME: m.run.responseTime === null ? '' : String(m.run.responseTime),
    STATUS_CODE: m.run.statusCode === null ? '' : String(m.run.statusCode),
    STARTED_AT: m.startedAt,
    CREATED_AT: m.createdAt,
  };
}

/** `{{NAME}}` → the variable (JSON-escaped for a body, as it is for a header or query value); unknown names are left as they are. */
export function renderTemplate(template: string, m: AlertMessage, escape: 'json' | 'none' = 'json'): string {
  const vars = templateVariables(m);
  return template.replace(/\{\{\s*([A-Z_]+)\s*\}\}/g, (whole, name: string) => {
    if (!Object.hasOwn(vars, name)) return whole;
    return escape === 'json' ? JSON.stringify(vars[name]).slice(1, -1) : vars[name];
  });
}
