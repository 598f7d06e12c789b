import { type Static, Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import type { Rules } from '../../http/rules.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import { type AlertMessage, describe } from '../message.js';
import { HttpUrl, postJson, urlProblems } from './http-url.js';

export const SlackConfig = Type.Object({ url: HttpUrl, channel: Type.Optional(Type.String({ maxLength: 255 })) }, { additionalProperties: false });
export type SlackConfig = Static<typeof SlackConfig>;

export function checkSlackConfig(config: SlackConfig, rules: Rules, at: string, outbound: OutboundPolicy): void {
  urlProblems(config.url, rules, `${at}.url`, outbound);
}

/** A Slack incoming webhook: `text` (the summary) and one attachment with the details, coloured by outcome. */
export async function sendSlack(config: SlackConfig, message: AlertMessage, timeoutMs: number, dispatcher?: Dispatcher): Promise<string> {
  const recovered = message.alertType.endsWith('RECOVERY');
  const body = {
    ...(config.channel ? { channel: config.channel } : {}),
    text: message.title,
    attachments: [{ color: recovered ? 'good' : message.alertType.includes('DEGRADED') ? 'warning' : 'danger', text: describe(message) }],
  };
  return postJson(config.url, body, { timeoutMs, dispatcher, redirect: 'follow' });
}
