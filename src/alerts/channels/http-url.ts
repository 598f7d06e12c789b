import { Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import type { Rules } from '../../http/rules.js';
import { type BoundedResponse, boundedFetch } from '../../platform/http-client.js';
import type { OutboundPolicy } from '../../platform/outbound.js';

/** An http(s) URL a channel delivers to. */
export const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

/** The most of a receiver's reply a delivery reads (the rest is never read); the first 500 characters are kept. */
export const REPLY_READ_BYTES = 16 * 1024;

/** `HTTP <status> <start of the body>`: what a delivery attempt records of the reply. */
export function replySummary(res: BoundedResponse): string {
  const text = res.body.toString('utf8').slice(0, 500);
  return `HTTP ${res.status}${text ? ` ${text}` : ''}${res.truncated ? ' …' : ''}`;
}

/** A delivery URL that can never work for this account is a 400: user info in it, or a literal address the outbound policy refuses. */
export function urlProblems(raw: string, rules: Rules, at: string, outbound: OutboundPolicy): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return; // the schema's format check names it
  }
  rules.check(!url.username && !url.password, at, 'userinfo', 'must not carry a user name or password (use a header)');
  const refusal = outbound.urlRefusal(raw);
  if (refusal) rules.fail(at, 'outbound', `blocked by outbound policy: ${refusal}`);
}

/**
 * POSTs a JSON body to a provider (Slack, PagerDuty, Opsgenie): what it answered (`HTTP <status> …`), or an error
 * saying so when that is not a 2xx, which fails the attempt and lets the delivery queue retry it.
 */
export async function postJson(
  url: string,
  body: unknown,
  opts: { timeoutMs: number; dispatcher?: Dispatcher; headers?: Record<string, string>; redirect?: 'follow' | 'manual' },
): Promise<string> {
  const res = await boundedFetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: JSON.stringify(body),
    timeoutMs: opts.timeoutMs,
    maxBytes: REPLY_READ_BYTES,
    redirect: opts.redirect,
    dispatcher: opts.dispatcher,
  });
  const result = replySummary(res);
  if (res.status < 200 || res.status >= 300) throw new Error(result);
  return result;
}
