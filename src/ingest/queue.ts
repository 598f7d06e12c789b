import type { Queue } from 'bullmq';
import { INGEST_QUEUE, type IngestJob, type ResultQueue, type ResultQueueStats } from '../model/results.js';
import type { Queues } from '../storage/queues.js';

/**
 * Counts a batch's results once per batch id: a hand-off tried again after its answer was lost (the add and the
 * count were carried out, the reply timed out) must not count the same results twice. The marker outlives a
 * hand-off's retries (`RunBook`'s patience is 30 s) by far, and is short enough that markers stay few at any rate.
 */
const COUNT_ONCE_SCRIPT = `if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then return redis.call('INCRBY', KEYS[1], ARGV[1]) end return 0`;
const COUNTED_BATCH_SECONDS = 600;

/** Producer side of the ingest queue: enqueue batches and report depth and lag. */
export class IngestQueue implements ResultQueue {
  readonly queue: Queue<IngestJob>;

  /** Results accepted since the queue's Redis namespace was created: with ClickHouse's count, shows loss. */
  private readonly acceptedKey: string;

  constructor(
    private readonly queues: Queues,
    redisPrefix: string,
    private readonly attempts = 8,
  ) {
    this.queue = queues.queue<IngestJob>(INGEST_QUEUE);
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
    await this.queues.connection.eval(COUNT_ONCE_SCRIPT, 2, this.acceptedKey, `${this.acceptedKey}:${job.batchId}`, job.rows.length, COUNTED_BATCH_SECONDS);
  }

  async stats(): Promise<ResultQueueStats> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
    const [[oldest], accepted] = await Promise.all([this.queue.getJobs(['wait', 'delayed'], 0, 0, true), this.queues.connection.get(this.acceptedKey)]);
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      oldestWaitingSeconds: oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0,
      acceptedResults: Number(accepted ?? 0),
    };
  }
}
