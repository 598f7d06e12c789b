import { type Static, Type } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { type AlertMessage, describe } from '../message.js';
import { postJson } from './http-url.js';
import { writeOnlyKey } from './write-only.js';

/** The anchor's PAGERDUTY config (the CLI's PagerdutyAlertChannel): the service's Events API v2 integration key. */
export const PagerdutyConfig = Type.Object(
  {
    serviceKey: Type.String({
      maxLength: 255,
      pattern: '^[A-Za-z0-9_-]*$',
      description: "The PagerDuty service's Events API v2 integration (routing) key; write-only: read back empty",
    }),
    serviceName: Type.Optional(Type.String({ maxLength: 255 })),
    account: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);
export type PagerdutyConfig = Static<typeof PagerdutyConfig>;

/** The integration key is write-only: it lets anyone open incidents on the service. */
export const pagerdutyKey = writeOnlyKey<PagerdutyConfig>('serviceKey', 'the integration key of the PagerDuty service (Events API v2)');

/** One open PagerDuty alert per check: every event of a check carries its key, so a recovery resolves what its failure opened. */
export const dedupKeyOf = (checkId: string) => `check-${checkId}`;

/**
 * An Events API v2 event (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/): a failure or a
 * reminder triggers (critical), degraded triggers (warning; a later failure on the same key raises it), a recovery
 * resolves. Acknowledging is left to people in PagerDuty.
 */
export function pagerdutyEvent(config: PagerdutyConfig, m: AlertMessage) {
  const dedup_key = dedupKeyOf(m.check.id);
  if (m.alertType.endsWith('RECOVERY')) return { routing_key: config.serviceKey, event_action: 'resolve' as const, dedup_key };
  const failing = m.alertType === 'ALERT_FAILURE' || m.alertType === 'ALERT_FAILURE_REMAIN' || m.alertType === 'ALERT_DEGRADED_FAILURE';
  return {
    routing_key: config.serviceKey,
    event_action: 'trigger' as const,
    dedup_key,
    payload: {
      summary: m.title.slice(0, 1024),
      source: m.run.location ?? 'monitoring',
      severity: failing ? ('critical' as const) : ('warning' as const),
      timestamp: m.startedAt,
      component: m.check.name.slice(0, 255),
      ...(m.check.groupName ? { group: m.check.groupName.slice(0, 255) } : {}),
      class: m.check.checkType,
      custom_details: {
        alertType: m.alertType,
        alertId: m.alertId,
        checkId: m.check.id,
        tags: m.check.tags,
        responseTime: m.run.responseTime,
        statusCode: m.run.statusCode,
        details: describe(m),
      },
    },
    ...(m.resultLink ? { links: [{ href: m.resultLink, text: 'The run' }] } : {}),
  };
}

export async function sendPagerduty(config: PagerdutyConfig, m: AlertMessage, eventsUrl: string, timeoutMs: number, dispatcher?: Dispatcher): Promise<string> {
  // 202 is taken; anything else fails the attempt with what PagerDuty said, and the delivery queue retries it.
  return postJson(eventsUrl, pagerdutyEvent(config, m), { timeoutMs, dispatcher });
}
