import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ROW_COLUMNS, type ResultRow } from './rows.js';

export const INGEST_QUEUE = 'check-results';

/** The layout of a queued batch; a worker refuses a version it does not know instead of guessing. */
export const JOB_VERSION = 2;

/**
 * A queued batch, self-describing: `rows` are positional in the order `columns` names, so a worker of
 * another version reads them by name or refuses them, and never pairs values with the wrong columns.
 */
export interface IngestJob {
  v: number;
  batchId: string;
  accountId: string;
  columns: readonly string[];
  rows: ResultRow[];
}

export function ingestJob(batchId: string, accountId: string, rows: ResultRow[]): IngestJob {
  return { v: JOB_VERSION, batchId, accountId, columns: ROW_COLUMNS, rows };
}

/** BullMQ wants its own connection, with no per-command retry limit (it blocks on Redis). */
export function bullConnection(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on('error', () => {
    // Reconnects by itself; failures surface through the queue calls and /ready.
  });
  return redis;
}

export function bullPrefix(redisPrefix: string): string {
  return `${redisPrefix}bull`;
}

/** Producer side of the ingest queue: enqueue batches and report depth and lag. */
export class IngestQueue {
  readonly queue: Queue<IngestJob>;
  private readonly connection: Redis;

  /** Results accepted since the queue's Redis namespace was created: with ClickHouse's count, shows loss. */
  private readonly acceptedKey: string;

  constructor(redisUrl: string, redisPrefix: string, private readonly attempts = 8) {
    this.connection = bullConnection(redisUrl);
    this.queue = new Queue<IngestJob>(INGEST_QUEUE, { connection: this.connection, prefix: bullPrefix(redisPrefix) });
    this.acceptedKey = `${redisPrefix}ingest:accepted-results`;
  }

  async enqueue(job: IngestJob): Promise<void> {
    await this.queue.add('batch', job, {
      // The batch id is the job id: enqueueing the same batch twice is a no-op.
      jobId: job.batchId,
      attempts: this.attempts,
      backoff: { type: 'exponential', delay: 500 },
      // A completed job still holds its rows in Redis: keep only a few, briefly, for inspection.
      removeOnComplete: { age: 600, count: 1000 },
      // Batches that keep failing stay in the failed set for inspection.
      removeOnFail: false,
    });
    await this.connection.incrby(this.acceptedKey, job.rows.length);
  }

  async stats() {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
    const [[oldest], accepted] = await Promise.all([this.queue.getJobs(['wait', 'delayed'], 0, 0, true), this.connection.get(this.acceptedKey)]);
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      oldestWaitingSeconds: oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0,
      acceptedResults: Number(accepted ?? 0),
    };
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}
