import type { Job } from 'bullmq';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import type { AvailabilityChange } from '../private-locations/index.js';
import type { Sql } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { channelsOfLocation, findChannel } from './channel-repository.js';
import { sendThrough } from './channels/index.js';
import { recordAttempt } from './deliveries.js';
import type { AlertMessage } from './message.js';
import { recordLocationDeliveries } from './repository.js';

/** Where alerts about private locations' agents wait to be sent, one job per change and channel. */
export const LOCATION_ALERT_QUEUE = 'location-alerts';

interface LocationAlertJob {
  accountId: string;
  channelId: number;
  message: AlertMessage;
  /** Its row in alert_notifications, where each attempt is recorded (absent on jobs queued before it was kept). */
  notificationId?: string;
}

/**
 * The message of a location that lost its agents or got one back, in the shape every channel sends: the location
 * stands where a check would (its id keys PagerDuty's and Opsgenie's incident, so the recovery closes it).
 */
export function locationMessage(change: AvailabilityChange, unavailableMs: number, publicUrl: string | undefined): AlertMessage {
  const now = new Date().toISOString();
  const minutes = Math.round(unavailableMs / 60_000);
  return {
    alertId: change.id,
    alertType: change.unavailable ? 'ALERT_FAILURE' : 'ALERT_RECOVERY',
    title: change.unavailable
      ? `Private location ${change.name} (${change.slugName}) has had no agent for ${minutes >= 1 ? `${minutes} minute${minutes === 1 ? '' : 's'}` : `${Math.round(unavailableMs / 1000)} seconds`}: its checks are not running`
      : `Private location ${change.name} (${change.slugName}) has an agent again`,
    check: { id: change.id, name: `Private location ${change.name}`, checkType: 'PRIVATE_LOCATION', tags: [], groupName: null },
    run: { id: null, location: change.slugName, responseTime: null, statusCode: null },
    startedAt: (change.lastAgentAt ?? new Date()).toISOString(),
    createdAt: now,
    resultLink: publicUrl ? `${publicUrl}/v1/private-locations/${change.id}` : null,
    sslDaysRemaining: null,
    variables: {},
  };
}

/** Queues the change's message for each channel subscribed to a check of the location (retried like any delivery). */
export async function alertLocationChange(
  queues: Queues,
  sql: Sql,
  change: AvailabilityChange,
  message: AlertMessage,
  settings: Config['alerts'],
): Promise<number> {
  const channels = await channelsOfLocation(sql, change.accountId, change.slugName, change.unavailable);
  if (!channels.length) return 0;
  const notifications = await recordLocationDeliveries(sql, change, channels);
  await queues.queue<LocationAlertJob>(LOCATION_ALERT_QUEUE).addBulk(
    channels.map(({ id: channelId }) => ({
      name: 'location-alert',
      data: { accountId: change.accountId, channelId, message, notificationId: notifications.get(channelId) },
      opts: {
        // One job per change and channel, however often the change is found before it is marked.
        jobId: `${change.key}-${channelId}`,
        attempts: settings.deliveryAttempts,
        backoff: { type: 'exponential', delay: settings.retryBaseMs },
        removeOnComplete: { age: 86_400 },
        removeOnFail: { age: 7 * 86_400 },
      },
    })),
  );
  return channels.length;
}

/** Sends queued location alerts through their channels (the outbound policy's connections); a failure is retried, then kept in the failed set and logged. */
export function startLocationAlertWorker(queues: Queues, deps: { sql: Sql; logger: Logger; config: Config['alerts']; outbound: OutboundPolicy }) {
  // One set of connections for every send, closed with the worker.
  const dispatcher = deps.outbound.dispatcher({ connectTimeoutMs: deps.config.deliveryTimeoutMs });
  const worker = queues.worker<LocationAlertJob>(
    LOCATION_ALERT_QUEUE,
    async (job: Job<LocationAlertJob>) => {
      const channel = await findChannel(deps.sql, job.data.accountId, job.data.channelId);
      if (!channel) return { skipped: 'channel deleted' };
      const id = job.data.notificationId;
      let detail: string;
      try {
        detail = await sendThrough(channel.type, channel.config, job.data.message, {
          settings: deps.config,
          signingSecret: channel.signing_secret,
          dispatcher,
        });
      } catch (err) {
        const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
        if (id) await recordAttempt(deps.sql, id, { ok: false, detail: (err as Error).message }, last ? 'FAILURE' : 'IN_PROGRESS');
        throw err;
      }
      if (id) await recordAttempt(deps.sql, id, { ok: true, detail }, 'SUCCESS');
      deps.logger.info({ channelId: channel.id, type: channel.type, title: job.data.message.title }, 'location alert delivered');
      return { detail: detail.slice(0, 500) };
    },
    { concurrency: 4, label: 'location alert', describe: (d) => ({ channelId: d.channelId, accountId: d.accountId }) },
  );
  worker.once('closed', () => void dispatcher.close().catch(() => undefined));
  return worker;
}
