import { describe, type AlertMessage } from '../message.js';

/** SMS through the provider endpoint in the settings: POST {to, name, text}, with its token as a bearer. */
export async function sendSms(config: { number: string; name: string }, message: AlertMessage, provider: { url: string | undefined; token: string | undefined }, timeoutMs: number): Promise<string> {
  if (!provider.url) throw new Error('SMS_PROVIDER_URL is not set: SMS channels cannot deliver');
  const res = await fetch(provider.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(provider.token ? { authorization: `Bearer ${provider.token}` } : {}) },
    body: JSON.stringify({ to: config.number, name: config.name, text: describe(message).slice(0, 1600) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = (await res.text().catch(() => '')).slice(0, 500);
  const result = `HTTP ${res.status}${text ? ` ${text}` : ''}`;
  if (!res.ok) throw new Error(result);
  return result;
}
