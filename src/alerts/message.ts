import checklyHandlebars from '@checkly/handlebars';
import type { AlertType } from '../model/alerts.js';

/** Everything a channel says about one alert: what the senders and the webhook template draw from. */
export interface AlertMessage {
  alertId: string;
  alertType: AlertType;
  title: string;
  check: { id: string; name: string; checkType: string; tags: string[]; groupName: string | null };
  run: { id: string | null; location: string | null; responseTime: number | null; statusCode: number | null };
  startedAt: string;
  createdAt: string;
  /** Where the run can be read (the API's result route); null without a run. */
  resultLink: string | null;
  /** The check's certificate's days left, when its last run reported them. */
  sslDaysRemaining: number | null;
  /** Environment variables for templates: the account's, the check group's, then the check's own (later wins). */
  variables: Record<string, string>;
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
  ALERT_NO_DATA: 'is not running',
  ALERT_NO_DATA_RECOVERY: 'is running again',
};

/** The alert's title; a check that stopped running says since when, and where when only some locations stopped. */
export function titleOf(type: AlertType, checkName: string, at?: Date, locations?: string | null): string {
  if (type === 'ALERT_NO_DATA' && at) return `${checkName} is not running${locations ? ` in ${locations}` : ''}: no results since ${at.toISOString()}`;
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

/**
 * What a webhook template sees: the anchor's documented variables (ALERT_TITLE, CHECK_NAME, RESULT_LINK, TAGS as
 * a list, …) over the environment variables (an event variable wins over a variable of the same name).
 */
export function templateContext(m: AlertMessage): Record<string, unknown> {
  return {
    ...m.variables,
    ALERT_ID: m.alertId,
    ALERT_TYPE: m.alertType,
    ALERT_TITLE: m.title,
    CHECK_ID: m.check.id,
    CHECK_NAME: m.check.name,
    CHECK_TYPE: m.check.checkType,
    CHECK_RESULT_ID: m.run.id ?? '',
    CHECK_ERROR_MESSAGE: '',
    GROUP_NAME: m.check.groupName ?? '',
    TAGS: m.check.tags,
    RUN_LOCATION: m.run.location ?? '',
    REGION: m.run.location ?? '',
    RESPONSE_TIME: m.run.responseTime ?? '',
    STATUS_CODE: m.run.statusCode ?? '',
    API_CHECK_RESPONSE_STATUS_CODE: m.run.statusCode ?? '',
    API_CHECK_RESPONSE_STATUS_TEXT: '',
    RESULT_LINK: m.resultLink ?? '',
    SSL_DAYS_REMAINING: m.sslDaysRemaining ?? '',
    STARTED_AT: m.startedAt,
    CREATED_AT: m.createdAt,
  };
}

/** The anchor's Handlebars, with its helpers ($UUID, $RANDOM_NUMBER, moment, tagValue, comparisons, …). */
const handlebars = checklyHandlebars.create();
const compiled = new Map<string, HandlebarsTemplateDelegate>();

function compile(template: string): HandlebarsTemplateDelegate {
  let fn = compiled.get(template);
  if (!fn) {
    // Values are escaped by the caller for where they go (JSON text, a header), never as HTML.
    fn = handlebars.compile(template, { noEscape: true, strict: false });
    if (compiled.size >= 500) compiled.delete(compiled.keys().next().value!);
    compiled.set(template, fn);
  }
  return fn;
}

/** Why a template cannot render (a Handlebars syntax error), or undefined. */
export function templateProblem(template: string): string | undefined {
  try {
    handlebars.precompile(template, { noEscape: true });
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}

const jsonText = (v: unknown): unknown => (typeof v === 'string' ? JSON.stringify(v).slice(1, -1) : Array.isArray(v) ? v.map(jsonText) : v);

/**
 * A body template rendered: every variable is written JSON-escaped (a template of JSON stays JSON whatever
 * a check's name holds). A template that fails to render (a helper's error) is a failed delivery saying why.
 */
export function renderBody(template: string, m: AlertMessage): string {
  const context = Object.fromEntries(Object.entries(templateContext(m)).map(([k, v]) => [k, jsonText(v)]));
  return compile(template)(context);
}

/**
 * A header or query value rendered, then cleaned: no CR or LF (no header injection), and characters outside
 * Latin-1 (which no header can carry) replaced by `?`.
 */
export function renderValue(template: string, m: AlertMessage): string {
  const text = template.includes('{{') ? compile(template)(templateContext(m)) : template;
  return text.replace(/[\r\n]+/g, ' ').replace(/[^\x00-\xff]/g, '?');
}
