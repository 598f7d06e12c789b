import { type Static, Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { StringEnum } from '../../http/schemas.js';
import { type AlertMessage, describe } from '../message.js';
import { postJson } from './http-url.js';
import { writeOnlyKey } from './write-only.js';

/** The anchor's OPSGENIE config (the CLI's OpsgenieAlertChannel). */
export const OpsgenieConfig = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    apiKey: Type.String({ maxLength: 255, pattern: '^[A-Za-z0-9_-]*$', description: 'An Opsgenie API integration key; write-only: read back empty' }),
    region: StringEnum(['US', 'EU'] as const, { default: 'US', description: 'Which Opsgenie the key belongs to: api.opsgenie.com or api.eu.opsgenie.com' }),
    priority: StringEnum(['P1', 'P2', 'P3', 'P4', 'P5'] as const, { default: 'P3' }),
  },
  { additionalProperties: false },
);
export type OpsgenieConfig = Static<typeof OpsgenieConfig>;

/** The API key is write-only. */
export const opsgenieKey = writeOnlyKey<OpsgenieConfig>('apiKey', 'an Opsgenie API integration key');

/** Opsgenie's API by region (https://docs.opsgenie.com/docs/alert-api); OPSGENIE_API_URL replaces both (a proxy). */
export const OPSGENIE_API = { US: 'https://api.opsgenie.com', EU: 'https://api.eu.opsgenie.com' } as const;

/** One open Opsgenie alert per check, by alias: a recovery closes what the failure created. */
export const aliasOf = (checkId: string) => `check-${checkId}`;

/** The request for an alert: create it (failure, degraded, reminders; Opsgenie counts repeats of an open alias), or close it (recovery). */
export function opsgenieRequest(config: OpsgenieConfig, m: AlertMessage, base: string): { url: string; body: Record<string, unknown> } {
  const alias = aliasOf(m.check.id);
  if (m.alertType.endsWith('RECOVERY')) {
    return { url: `${base}/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`, body: { source: 'monitoring', note: m.title.slice(0, 25_000) } };
  }
  const degraded = !(m.alertType === 'ALERT_FAILURE' || m.alertType === 'ALERT_FAILURE_REMAIN' || m.alertType === 'ALERT_DEGRADED_FAILURE');
  return {
    url: `${base}/v2/alerts`,
    body: {
      message: m.title.slice(0, 130),
      alias,
      description: describe(m).slice(0, 15_000),
      // Tags: 20 at most, 50 characters each.
      tags: [...m.check.tags, m.alertType].slice(0, 20).map((t) => t.slice(0, 50)),
      details: {
        alertId: m.alertId,
        alertType: m.alertType,
        checkId: m.check.id,
        checkType: m.check.checkType,
        ...(m.resultLink ? { result: m.resultLink } : {}),
      },
      entity: m.check.name.slice(0, 512),
      source: (m.run.location ?? 'monitoring').slice(0, 100),
      // Degraded is one step below the channel's priority (P5 stays P5).
      priority: degraded ? `P${Math.min(5, Number(config.priority.slice(1)) + 1)}` : config.priority,
    },
  };
}

export async function sendOpsgenie(
  config: OpsgenieConfig,
  m: AlertMessage,
  apiUrl: string | undefined,
  timeoutMs: number,
  dispatcher?: Dispatcher,
): Promise<string> {
  const { url, body } = opsgenieRequest(config, m, (apiUrl ?? OPSGENIE_API[config.region]).replace(/\/+$/, ''));
  return postJson(url, body, { timeoutMs, dispatcher, headers: { authorization: `GenieKey ${config.apiKey}` } });
}
