import { describe, type AlertMessage } from '../message.js';

/** A Slack incoming webhook: `text` (the summary) and one attachment with the details, coloured by outcome. */
export async function sendSlack(config: { url: string; channel?: string }, message: AlertMessage, timeoutMs: number): Promise<string> {
  const recovered = message.alertType.endsWith('RECOVERY');
  const body = {
    ...(config.channel ? { channel: config.channel } : {}),
    text: message.title,
    attachments: [{ color: recovered ? 'good' : message.alertType.includes('DEGRADED') ? 'warning' : 'danger', text: describe(message) }],
  };
  const res = await fetch(config.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = (await res.text().catch(() => '')).slice(0, 500);
  const result = `HTTP ${res.status}${text ? ` ${text}` : ''}`;
  if (!res.ok) throw new Error(result);
  return result;
}
