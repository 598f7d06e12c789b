import { Queue, Worker, type Job } from 'bullmq';
import type { Config } from '../config.js';
import { bullConnection, bullPrefix } from '../ingest/queue.js';
import type { Logger } from '../logger.js';
import type { CheckType } from '../resources/checks/enums.js';
import type { AlertType } from '../state/alerting.js';
import type { Sql } from '../storage/postgres.js';
import { closeEmailTransports, sendEmail } from './channels/email.js';
import { sendSlack } from './channels/slack.js';
import { sendSms } from './channels/sms.js';
import { sendWebhook, type WebhookConfig } from './channels/webhook.js';
import { titleOf, type AlertMessage } from './message.js';

export const DELIVERY_QUEUE = 'alert-deliveries';

interface DeliveryJob {
  notificationId: string;
}

/** Producer side: one job per notification, its id the notification's, so enqueueing twice is one job. */
export class DeliveryQueue {
  private readonly connection;
  readonly queue: Queue<DeliveryJob>;

  constructor(redisUrl: string, redisPrefix: string, private readonly opts: Pick<Config['alerts'], 'deliveryAttempts' | 'retryBaseMs'>) {
    this.connection = bullConnection(redisUrl);
    this.queue = new Queue<DeliveryJob>(DELIVERY_QUEUE, { connection: this.connection, prefix: bullPrefix(redisPrefix) });
  }

  async enqueue(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await this.queue.addBulk(
      ids.map((notificationId) => ({
        name: 'deliver',
        data: { notificationId },
        opts: {
          jobId: notificationId,
          attempts: this.opts.deliveryAttempts,
          backoff: { type: 'exponential', delay: this.opts.retryBaseMs },
          removeOnComplete: { age: 3600, count: 1000 },
          removeOnFail: { age: 7 * 86400 },
        },
      })),
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}

interface NotificationRow {
  id: string;
  status: string;
  channel_type: string;
  config: Record<string, unknown>;
  signing_secret: string | null;
  alert_id: string;
  alert_type: AlertType;
  check_result_id: string | null;
  run_location: string | null;
  response_time: number | null;
  status_code: number | null;
  started_at: Date;
  alert_created_at: Date;
  check_id: string;
  check_name: string;
  check_type: CheckType;
  tags: string[];
  group_name: string | null;
}

async function loadNotification(sql: Sql, id: string): Promise<NotificationRow | undefined> {
  const [row] = await sql<NotificationRow[]>`select n.id, n.status, n.channel_type, ch.config, ch.signing_secret,
      a.id as alert_id, a.alert_type, a.check_result_id, a.run_location, a.response_time, a.status_code, a.started_at,
      a.created_at as alert_created_at, c.id as check_id, c.name as check_name, c.check_type, c.tags, g.name as group_name
    from alert_notifications n
    join check_alerts a on a.id = n.alert_id
    join alert_channels ch on ch.id = n.alert_channel_id
    join checks c on c.id = a.check_id
    left join check_groups g on g.id = c.group_id
    where n.id = ${id}`;
  return row;
}

function messageOf(n: NotificationRow): AlertMessage {
  return {
    alertId: n.alert_id,
    alertType: n.alert_type,
    title: titleOf(n.alert_type, n.check_name),
    check: { id: n.check_id, name: n.check_name, checkType: n.check_type, tags: n.tags, groupName: n.group_name },
    run: { id: n.check_result_id, location: n.run_location, responseTime: n.response_time, statusCode: n.status_code },
    startedAt: n.started_at.toISOString(),
    createdAt: n.alert_created_at.toISOString(),
  };
}

/** Sends through the channel's kind; resolves with what the far end said, rejects with why it failed. */
function send(n: NotificationRow, config: Config['alerts']): Promise<string> {
  const message = messageOf(n);
  switch (n.channel_type) {
    case 'WEBHOOK':
      return sendWebhook(n.config as unknown as WebhookConfig, n.signing_secret, message, config.deliveryTimeoutMs);
    case 'SLACK':
      return sendSlack(n.config as { url: string; channel?: string }, message, config.deliveryTimeoutMs);
    case 'EMAIL':
      return sendEmail(n.config as { address: string }, message, { url: config.smtpUrl, from: config.emailFrom });
    case 'SMS':
      return sendSms(n.config as { number: string; name: string }, message, { url: config.smsUrl, token: config.smsToken }, config.deliveryTimeoutMs);
    default:
      return Promise.reject(new Error(`No sender for ${n.channel_type} channels`));
  }
}

async function recordAttempt(sql: Sql, id: string, attempt: { ok: boolean; detail: string }, status: 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE') {
  const at = new Date();
  await sql`update alert_notifications set
      attempts = attempts || ${sql.json([{ at: at.toISOString(), ...attempt }] as never)},
      status = ${status}, notification_result = ${attempt.detail.slice(0, 2000)},
      sent_at = ${status === 'SUCCESS' ? at : null}
    where id = ${id}`;
}

/**
 * Consumer: delivers each notification, retrying with exponential backoff. Every attempt is recorded on
 * the notification (time, outcome, what the far end said); after the last failed attempt it is FAILURE,
 * which is how a channel that keeps failing shows (GET /v1/alert-notifications?hasFailures=true and the
 * channel's `health`).
 */
export function startDeliveryWorker(opts: { redisUrl: string; redisPrefix: string; sql: Sql; logger: Logger; config: Config['alerts']; concurrency?: number }) {
  const connection = bullConnection(opts.redisUrl);
  async function process(job: Job<DeliveryJob>) {
    const n = await loadNotification(opts.sql, job.data.notificationId);
    if (!n || n.status !== 'IN_PROGRESS') return { skipped: true };
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    try {
      const detail = await send(n, opts.config);
      await recordAttempt(opts.sql, n.id, { ok: true, detail }, 'SUCCESS');
      opts.logger.info({ notificationId: n.id, channel: n.channel_type, alertType: n.alert_type }, 'alert delivered');
      return { delivered: true };
    } catch (err) {
      const detail = (err as Error).message || String(err);
      await recordAttempt(opts.sql, n.id, { ok: false, detail }, last ? 'FAILURE' : 'IN_PROGRESS');
      opts.logger.warn({ notificationId: n.id, channel: n.channel_type, attempt: job.attemptsMade + 1, final: last, err: detail }, 'alert delivery failed');
      throw err;
    }
  }
  const worker = new Worker<DeliveryJob>(DELIVERY_QUEUE, process, { connection, prefix: bullPrefix(opts.redisPrefix), concurrency: opts.concurrency ?? 4 });
  worker.on('error', (err) => opts.logger.error({ err: err.message }, 'delivery worker error'));
  return {
    async close() {
      await worker.close();
      connection.disconnect();
      closeEmailTransports();
    },
  };
}
