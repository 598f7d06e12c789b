import { Queue, Worker } from 'bullmq';
import type { DeliveryQueue } from '../alerts/deliveries.js';
import { bullConnection, bullPrefix, type IngestQueue } from '../ingest/queue.js';
import type { Logger } from '../logger.js';
import type { Sql } from '../storage/postgres.js';
import { tickStates } from './apply.js';
import { sweepHeartbeats } from './heartbeats.js';

export const SWEEP_QUEUE = 'state-sweeps';

/**
 * What time alone decides, every `intervalMs`: heartbeat deadlines that passed, reminders and TIME_BASED
 * escalations that fell due, and notifications committed but never queued (a crash between the two). One
 * BullMQ job scheduler makes one sweep per tick however many workers run; each step takes its rows with
 * SKIP LOCKED besides.
 */
export async function startSweeper(opts: { redisUrl: string; redisPrefix: string; sql: Sql; logger: Logger; ingest: IngestQueue; deliveries: DeliveryQueue; intervalMs: number }) {
  const connection = bullConnection(opts.redisUrl);
  const prefix = bullPrefix(opts.redisPrefix);
  const queue = new Queue(SWEEP_QUEUE, { connection, prefix });
  await queue.upsertJobScheduler('sweep', { every: opts.intervalMs }, { name: 'sweep', opts: { removeOnComplete: true, removeOnFail: 100 } });
  const workerConnection = bullConnection(opts.redisUrl);
  const worker = new Worker(
    SWEEP_QUEUE,
    async () => {
      const now = Date.now();
      const missed = await sweepHeartbeats(opts.sql, opts.ingest, now);
      const notifications = await tickStates(opts.sql, now);
      const stale = await opts.sql<{ id: string }[]>`select id from alert_notifications
        where status = 'IN_PROGRESS' and created_at < ${new Date(now - 60_000)} order by created_at limit 500`;
      await opts.deliveries.enqueue([...notifications, ...stale.map((r) => r.id)]);
      return { missed, notifications: notifications.length };
    },
    { connection: workerConnection, prefix, concurrency: 1 },
  );
  worker.on('error', (err) => opts.logger.error({ err: err.message }, 'state sweeper error'));
  worker.on('failed', (_job, err) => opts.logger.warn({ err: err.message }, 'state sweep failed'));
  return {
    async close() {
      await worker.close();
      await queue.close();
      connection.disconnect();
      workerConnection.disconnect();
    },
  };
}
