import { createHmac } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { KeyValue } from '../../checks/index.js';
import type { Rules } from '../../http/rules.js';
import { Nullable, StringEnum } from '../../http/schemas.js';
import { boundedFetch } from '../../platform/http-client.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { type AlertMessage, payload, renderBody, renderValue, templateProblem } from '../message.js';
import { HttpUrl, REPLY_READ_BYTES, replySummary, urlProblems } from './http-url.js';

/** A header of a webhook; `secret` values are write-only (read back empty), as secret variables are. */
export const WebhookHeader = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", title: 'an HTTP header name' }),
    value: Type.String({ maxLength: 8192 }),
    locked: Type.Boolean({ default: false }),
    secret: Type.Boolean({ default: false, description: 'A write-only value (a token): read back as an empty string' }),
  },
  { additionalProperties: false },
);
export type WebhookHeader = Static<typeof WebhookHeader>;

export const WEBHOOK_TYPES = [
  'WEBHOOK',
  'WEBHOOK_MSTEAMS',
  'WEBHOOK_TELEGRAM',
  'WEBHOOK_INCIDENTIO',
  'WEBHOOK_FIREHYDRANT',
  'WEBHOOK_SPIKESH',
  'WEBHOOK_GITLAB_ALERT',
] as const;

export const WebhookConfig = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    url: HttpUrl,
    method: StringEnum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const, { default: 'POST' }),
    headers: Type.Array(WebhookHeader, { maxItems: 50, default: [] }),
    queryParameters: Type.Array(KeyValue, { maxItems: 50, default: [] }),
    template: Type.Optional(
      Nullable(Type.String({ maxLength: 65536, description: "The body: a Handlebars template with the anchor's variables and helpers" })),
    ),
    webhookSecret: Type.Optional(
      Nullable(Type.String({ maxLength: 256, description: 'Signs each body: x-checkly-signature is its HMAC-SHA256 (hex) with this key. Write-only.' })),
    ),
    webhookType: Type.Optional(StringEnum(WEBHOOK_TYPES, { description: 'The integration the anchor presets this webhook for; delivered as a webhook' })),
  },
  { additionalProperties: false },
);
export type WebhookConfig = Static<typeof WebhookConfig>;

/** The signature header of this service: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the channel's signing secret>`. */
export const SIGNATURE_HEADER = 'X-Monitoring-Signature';
/** The anchor's signature header: hex HMAC-SHA256 of the body with the channel's webhookSecret. */
export const ANCHOR_SIGNATURE_HEADER = 'x-checkly-signature';

/** Headers the service sets itself: a config naming one is refused. */
const RESERVED_HEADERS = new Set([SIGNATURE_HEADER.toLowerCase(), ANCHOR_SIGNATURE_HEADER, 'host', 'content-length', 'transfer-encoding', 'connection']);

export function sign(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function anchorSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** A config that could never deliver is a 400: the URL (user info, the outbound policy), reserved or malformed headers, a broken template. */
export function checkWebhookConfig(config: WebhookConfig, rules: Rules, at: string, outbound: OutboundPolicy): void {
  urlProblems(config.url, rules, `${at}.url`, outbound);
  config.headers.forEach((h, i) => {
    rules.check(!RESERVED_HEADERS.has(h.key.toLowerCase()), `${at}.headers[${i}].key`, 'reserved', `${h.key} is set by the service itself`);
    if (!h.value.includes('{{')) {
      rules.check(!/[\r\n]/.test(h.value), `${at}.headers[${i}].value`, 'header', 'must not contain CR or LF');
      rules.check(!/[^\t\x20-\x7e\x80-\xff]/.test(h.value), `${at}.headers[${i}].value`, 'header', 'must hold only Latin-1 text (no control characters)');
    }
  });
  for (const [field, template] of [
    ['template', config.template],
    ...config.headers.map((h, i) => [`headers[${i}].value`, h.value]),
    ...config.queryParameters.map((q, i) => [`queryParameters[${i}].value`, q.value]),
  ] as const) {
    const problem = template ? templateProblem(template) : undefined;
    if (problem) rules.fail(`${at}.${field}`, 'template', `is not a template that renders: ${problem}`);
  }
}

/** Write-only values read back empty: webhookSecret always, secret headers always, every header value for a read-only key. */
export function maskWebhookConfig(config: WebhookConfig, revealHeaders: boolean): WebhookConfig {
  return {
    ...config,
    headers: (config.headers ?? []).map((h) => (h.secret || !revealHeaders ? { ...h, value: '' } : h)),
    ...(config.webhookSecret ? { webhookSecret: '' } : {}),
  };
}

/** Its secrets (secret headers' values, webhookSecret) through `f`: sealed to be stored, opened to be sent. */
export function webhookSecrets(config: WebhookConfig, f: (value: string) => string): WebhookConfig {
  return {
    ...config,
    headers: (config.headers ?? []).map((h) => (h.secret && h.value ? { ...h, value: f(h.value) } : h)),
    ...(config.webhookSecret ? { webhookSecret: f(config.webhookSecret) } : {}),
  };
}

/**
 * A client that read a channel and sends it back carries empty values for what was masked: keep the stored
 * webhookSecret (unless sent as null or a new value) and each secret header's value (by key).
 */
export function keepStoredWebhookSecrets(incoming: WebhookConfig, stored: WebhookConfig | undefined): WebhookConfig {
  if (!stored) return incoming;
  const previous = new Map((stored.headers ?? []).map((h) => [h.key.toLowerCase(), h.value]));
  return {
    ...incoming,
    headers: incoming.headers.map((h) => (h.value === '' && previous.has(h.key.toLowerCase()) ? { ...h, value: previous.get(h.key.toLowerCase())! } : h)),
    ...(incoming.webhookSecret === '' || (incoming.webhookSecret === undefined && stored.webhookSecret) ? { webhookSecret: stored.webhookSecret } : {}),
  };
}

/**
 * Calls the webhook: its method, URL with query parameters and headers, the template rendered (or the
 * default JSON payload), signed (X-Monitoring-Signature; x-checkly-signature with a webhookSecret). A non-2xx
 * answer is a failed attempt; the answer's status and start are the result either way.
 */
export async function sendWebhook(
  config: WebhookConfig,
  secret: string | null,
  message: AlertMessage,
  timeoutMs: number,
  dispatcher?: Dispatcher,
): Promise<string> {
  const url = new URL(config.url);
  for (const q of config.queryParameters ?? []) url.searchParams.append(q.key, renderValue(q.value, message));
  const method = config.method.toUpperCase();
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const body = hasBody ? (config.template ? renderBody(config.template, message) : JSON.stringify(payload(message))) : '';
  let isJson = true;
  try {
    JSON.parse(body || 'null');
  } catch {
    isJson = false;
  }
  const headers: Record<string, string> = { 'user-agent': 'monitoring-service-alerts/1' };
  if (hasBody) headers['content-type'] = isJson ? 'application/json' : 'text/plain; charset=utf-8';
  for (const h of config.headers ?? []) if (!RESERVED_HEADERS.has(h.key.toLowerCase())) headers[h.key.toLowerCase()] = renderValue(h.value, message);
  if (secret) headers[SIGNATURE_HEADER.toLowerCase()] = sign(secret, Math.floor(Date.now() / 1000), body);
  if (config.webhookSecret) headers[ANCHOR_SIGNATURE_HEADER] = anchorSignature(config.webhookSecret, body);
  const res = await boundedFetch(url, {
    method,
    headers,
    body: hasBody ? body : undefined,
    timeoutMs,
    maxBytes: REPLY_READ_BYTES,
    dispatcher,
    redirect: 'manual',
  });
  const result = replySummary(res);
  if (res.status < 200 || res.status >= 300) throw new Error(result);
  return result;
}
