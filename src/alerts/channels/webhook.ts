import { createHmac } from 'node:crypto';
import { payload, renderTemplate, type AlertMessage } from '../message.js';

export interface WebhookConfig {
  url: string;
  method: string;
  headers?: { key: string; value: string }[];
  queryParameters?: { key: string; value: string }[];
  template?: string;
}

/** The signature header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the channel's secret>`. */
export const SIGNATURE_HEADER = 'X-Monitoring-Signature';

export function sign(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * Calls the webhook: its method, URL with query parameters and headers, the template rendered (or the
 * default JSON payload), signed. A non-2xx answer is a failed attempt; the answer's status and start are
 * the result either way.
 */
export async function sendWebhook(config: WebhookConfig, secret: string | null, message: AlertMessage, timeoutMs: number): Promise<string> {
  const url = new URL(config.url);
  for (const q of config.queryParameters ?? []) url.searchParams.append(q.key, renderTemplate(q.value, message, 'none'));
  const method = config.method.toUpperCase();
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const body = hasBody ? (config.template ? renderTemplate(config.template, message) : JSON.stringify(payload(message))) : '';
  let isJson = true;
  try {
    JSON.parse(body || 'null');
  } catch {
    isJson = false;
  }
  const headers: Record<string, string> = { 'user-agent': 'monitoring-service-alerts/1' };
  if (hasBody) headers['content-type'] = isJson ? 'application/json' : 'text/plain; charset=utf-8';
  if (secret) headers[SIGNATURE_HEADER.toLowerCase()] = sign(secret, Math.floor(Date.now() / 1000), body);
  for (const h of config.headers ?? []) headers[h.key.toLowerCase()] = renderTemplate(h.value, message, 'none');
  const res = await fetch(url, { method, headers, body: hasBody ? body : undefined, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
  const text = (await res.text().catch(() => '')).slice(0, 500);
  const result = `HTTP ${res.status}${text ? ` ${text}` : ''}`;
  if (res.status < 200 || res.status >= 300) throw new Error(result);
  return result;
}
