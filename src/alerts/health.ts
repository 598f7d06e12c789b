import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { Sql } from '../storage/postgres.js';

export const ChannelHealth = Type.Object(
  {
    status: StringEnum(['UNUSED', 'OK', 'FAILING'] as const, { description: 'FAILING: its latest finished delivery failed every attempt' }),
    consecutiveFailures: Type.Integer({ description: 'Finished deliveries that failed since the last one that succeeded' }),
    lastDeliveryAt: Nullable(Type.String({ format: 'date-time' })),
    lastError: Nullable(Type.String()),
  },
  { additionalProperties: false, description: "How the channel's deliveries are going (GET /v1/alert-notifications has each one)" },
);

type Health = { status: 'UNUSED' | 'OK' | 'FAILING'; consecutiveFailures: number; lastDeliveryAt: string | null; lastError: string | null };

/** The health of each channel from its latest finished deliveries (at most 50 looked at per channel). */
export async function channelHealth(db: Sql, channelIds: number[]): Promise<Map<number, Health>> {
  const out = new Map<number, Health>(channelIds.map((id) => [id, { status: 'UNUSED', consecutiveFailures: 0, lastDeliveryAt: null, lastError: null }]));
  if (!channelIds.length) return out;
  const rows = await db<{ alert_channel_id: number; status: 'SUCCESS' | 'FAILURE'; notification_result: string | null; at: Date }[]>`
    select alert_channel_id, status, notification_result, at from (
      select alert_channel_id, status, notification_result, coalesce(sent_at, created_at) as at,
        row_number() over (partition by alert_channel_id order by created_at desc, id desc) as n
      from alert_notifications where alert_channel_id = any(${channelIds}::bigint[]) and status <> 'IN_PROGRESS'
    ) recent where n <= 50 order by alert_channel_id, at desc`;
  const counting = new Set(channelIds);
  for (const r of rows) {
    const h = out.get(r.alert_channel_id)!;
    if (h.lastDeliveryAt === null) {
      h.lastDeliveryAt = r.at.toISOString();
      h.status = r.status === 'SUCCESS' ? 'OK' : 'FAILING';
      h.lastError = r.status === 'FAILURE' ? r.notification_result : null;
    }
    // Newest first: failures count until the first success.
    if (!counting.has(r.alert_channel_id)) continue;
    if (r.status === 'FAILURE') h.consecutiveFailures++;
    else counting.delete(r.alert_channel_id);
  }
  return out;
}
