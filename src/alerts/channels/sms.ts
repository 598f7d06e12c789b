import { type Static, Type } from '@sinclair/typebox';
import { boundedFetch } from '../../platform/http-client.js';
import { type AlertMessage, describe } from '../message.js';
import { REPLY_READ_BYTES, replySummary } from './http-url.js';

export const SmsConfig = Type.Object(
  {
    number: Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', title: 'an E.164 number (+ and 7 to 15 digits)' }),
    name: Type.String({ minLength: 1, maxLength: 255 }),
  },
  { additionalProperties: false },
);
export type SmsConfig = Static<typeof SmsConfig>;

/** SMS through the provider endpoint in the settings: POST {to, name, text}, with its token as a bearer. */
export async function sendSms(
  config: SmsConfig,
  message: AlertMessage,
  provider: { url: string | undefined; token: string | undefined },
  timeoutMs: number,
): Promise<string> {
  if (!provider.url) throw new Error('SMS_PROVIDER_URL is not set: SMS channels cannot deliver');
  // The provider is the operator's (SMS_PROVIDER_URL), not an account's: no outbound policy, but a bounded read.
  const res = await boundedFetch(provider.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(provider.token ? { authorization: `Bearer ${provider.token}` } : {}) },
    body: JSON.stringify({ to: config.number, name: config.name, text: describe(message).slice(0, 1600) }),
    timeoutMs,
    maxBytes: REPLY_READ_BYTES,
  });
  const result = replySummary(res);
  if (res.status < 200 || res.status >= 300) throw new Error(result);
  return result;
}
