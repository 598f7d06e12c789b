import { DelayedError, type Job, type Queue } from 'bullmq';
import type { AlertType, ChannelType } from '../model/alerts.js';
import type { CheckType } from '../model/checks.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import type { Sql } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { openVariables } from '../storage/secret-box.js';
import { closeSenders, sendThrough } from './channels/index.js';
import { type AlertMessage, titleOf } from './message.js';

export const DELIVERY_QUEUE = 'alert-deliveries';

interface DeliveryJob {
  notificationId: string;
}

/** Producer side: one job per notification, its id the notification's, so enqueueing twice is one job. */
export class DeliveryQueue {
  readonly queue: Queue<DeliveryJob>;

  constructor(
    queues: Queues,
    private readonly opts: Pick<Config['alerts'], 'deliveryAttempts' | 'retryBaseMs'>,
  ) {
    this.queue = queues.queue<DeliveryJob>(DELIVERY_QUEUE);
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
}

/** Notifications committed but never queued or finished (a crash between the two): the sweep queues them again. */
export async function undeliveredNotifications(sql: Sql, now: number): Promise<string[]> {
  const stale = await sql<{ id: string }[]>`select id from alert_notifications
    where status = 'IN_PROGRESS' and alert_id is not null and created_at < ${new Date(now - 60_000)} order by created_at limit 500`;
  return stale.map((r) => r.id);
}

/**
 * A delivery's check and channel as an operator's log names them: the channel's own name where it has one (never its
 * URL or address: a Slack or webhook URL is a secret).
 */
function named(n: NotificationRow) {
  const config = (n.config ?? {}) as { name?: unknown; serviceName?: unknown };
  const name = typeof config.name === 'string' ? config.name : typeof config.serviceName === 'string' ? config.serviceName : undefined;
  return {
    checkId: n.check_id,
    check: n.check_name,
    channelId: n.alert_channel_id,
    channel: n.channel_type,
    ...(name ? { channelName: name } : {}),
  };
}

interface NotificationRow {
  id: string;
  status: string;
  alert_channel_id: string;
  created_at: Date;
  channel_type: ChannelType;
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
  account_id: string;
  check_variables: { key: string; value: string | null; secret?: boolean }[] | null;
  group_variables: { key: string; value: string | null; secret?: boolean }[] | null;
  ssl_days_remaining: number | null;
}

async function loadNotification(sql: Sql, id: string): Promise<NotificationRow | undefined> {
  const [row] = await sql<NotificationRow[]>`select n.id, n.status, n.alert_channel_id, n.created_at, n.channel_type, ch.config, ch.signing_secret,
      a.id as alert_id, a.alert_type, a.check_result_id, a.run_location, a.response_time, a.status_code, a.started_at,
      a.created_at as alert_created_at, c.id as check_id, c.name as check_name, c.check_type, c.tags, g.name as group_name,
      c.account_id, c.data->'environmentVariables' as check_variables, g.data->'environmentVariables' as group_variables,
      s.ssl_days_remaining
    from alert_notifications n
    join check_alerts a on a.id = n.alert_id
    join alert_channels ch on ch.id = n.alert_channel_id
    join checks c on c.id = a.check_id
    left join check_groups g on g.id = c.group_id
    left join check_statuses s on s.check_id = c.id
    where n.id = ${id}`;
  return row;
}

/**
 * Whether an earlier notification of the same check to the same channel is still being delivered: one check's
 * messages reach a channel in the order its alerts happened (a retried trigger never lands after the check's
 * resolve and leaves an incident open). Earlier is by the run's start, then the alert, then the notification.
 */
async function earlierPending(sql: Sql, n: NotificationRow): Promise<boolean> {
  const rows = await sql`select 1 from alert_notifications e join check_alerts ea on ea.id = e.alert_id
    where e.alert_channel_id = ${n.alert_channel_id} and e.status = 'IN_PROGRESS' and ea.check_id = ${n.check_id} and e.id <> ${n.id}
      and (ea.started_at, ea.created_at, e.created_at, e.id) < (${n.started_at}, ${n.alert_created_at}, ${n.created_at}, ${n.id}::uuid)
    limit 1`;
  return rows.length > 0;
}

/** How long a delivery waits before looking again at an earlier one of its check and channel. */
const ORDER_WAIT_MS = 1000;

/** Template variables: the account's, the group's, then the check's own (later wins). */
async function variablesOf(sql: Sql, n: NotificationRow): Promise<Record<string, string>> {
  const account = await sql<{ key: string; value: string; secret: boolean }[]>`select key, value, secret from variables where account_id = ${n.account_id}`;
  const out: Record<string, string> = {};
  for (const list of [account, n.group_variables ?? [], n.check_variables ?? []])
    for (const v of openVariables(list)) if (v.value !== null) out[v.key] = v.value;
  return out;
}

function messageOf(n: NotificationRow, variables: Record<string, string>, publicUrl: string | undefined): AlertMessage {
  return {
    alertId: n.alert_id,
    alertType: n.alert_type,
    title: titleOf(n.alert_type, n.check_name, n.started_at, n.check_result_id ? null : n.run_location),
    check: { id: n.check_id, name: n.check_name, checkType: n.check_type, tags: n.tags, groupName: n.group_name },
    run: { id: n.check_result_id, location: n.run_location, responseTime: n.response_time, statusCode: n.status_code },
    startedAt: n.started_at.toISOString(),
    createdAt: n.alert_created_at.toISOString(),
    resultLink: n.check_result_id ? `${publicUrl ?? ''}/v1/check-results/${n.check_id}/${n.check_result_id}` : null,
    sslDaysRemaining: n.ssl_days_remaining,
    variables,
  };
}

/** Records one attempt of a delivery and where it stands (check alerts' and private locations' alike). */
export async function recordAttempt(sql: Sql, id: string, attempt: { ok: boolean; detail: string }, status: 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE') {
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
export function startDeliveryWorker(
  queues: Queues,
  opts: { sql: Sql; logger: Logger; config: Config['alerts']; outbound: OutboundPolicy; publicUrl: () => string | undefined; concurrency?: number },
) {
  const dispatcher = opts.outbound.dispatcher({ connectTimeoutMs: opts.config.deliveryTimeoutMs });
  async function process(job: Job<DeliveryJob>, token?: string) {
    const n = await loadNotification(opts.sql, job.data.notificationId);
    if (n?.status !== 'IN_PROGRESS') return { skipped: true };
    // An earlier message of this check to this channel goes first: this one waits (no attempt spent) until it has
    // been delivered or has failed for good.
    if (token && (await earlierPending(opts.sql, n))) {
      await job.moveToDelayed(Date.now() + ORDER_WAIT_MS, token);
      throw new DelayedError();
    }
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    try {
      const message = messageOf(n, await variablesOf(opts.sql, n), opts.publicUrl());
      const detail = await sendThrough(n.channel_type, n.config, message, { settings: opts.config, signingSecret: n.signing_secret, dispatcher });
      await recordAttempt(opts.sql, n.id, { ok: true, detail }, 'SUCCESS');
      opts.logger.info({ notificationId: n.id, ...named(n), alertType: n.alert_type }, 'alert delivered');
      return { delivered: true };
    } catch (err) {
      const detail = (err as Error).message || String(err);
      await recordAttempt(opts.sql, n.id, { ok: false, detail }, last ? 'FAILURE' : 'IN_PROGRESS');
      opts.logger[last ? 'error' : 'warn'](
        { notificationId: n.id, ...named(n), alertType: n.alert_type, attempt: job.attemptsMade + 1, final: last, err: detail },
        'alert delivery failed',
      );
      throw err;
    }
  }
  const worker = queues.worker<DeliveryJob>(DELIVERY_QUEUE, process, {
    concurrency: opts.concurrency ?? 4,
    label: 'delivery',
    describe: (data) => ({ notificationId: data.notificationId }),
  });
  return {
    async close() {
      await queues.closeWorker(worker);
      closeSenders();
      await dispatcher.close();
    },
  };
}
