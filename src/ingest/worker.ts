import { Worker, type Job } from 'bullmq';
import type { Logger } from '../logger.js';
import type { Store } from '../storage/clickhouse/index.js';
import { ROW_COLUMNS } from './rows.js';
import { bullConnection, bullPrefix, INGEST_QUEUE, type IngestJob } from './queue.js';

export interface IngestWorkerOptions {
  redisUrl: string;
  redisPrefix: string;
  store: Store;
  logger: Logger;
  concurrency?: number;
  /** Runs after ClickHouse accepted a batch and before the job completes (fault-injection point for tests). */
  afterInsert?: (job: Job<IngestJob>) => Promise<void> | void;
}

/**
 * Consumer of the ingest queue: one ClickHouse insert per batch. The batch id is the insert's
 * deduplication token, so a batch retried after ClickHouse already took it is dropped by the engine
 * instead of doubling rows.
 */
export function startIngestWorker(opts: IngestWorkerOptions) {
  const connection = bullConnection(opts.redisUrl);
  const worker = new Worker<IngestJob>(
    INGEST_QUEUE,
    async (job) => {
      await opts.store.insert('check_results', ROW_COLUMNS, job.data.rows, { insert_deduplication_token: job.data.batchId });
      await opts.afterInsert?.(job);
      return { rows: job.data.rows.length };
    },
    { connection, prefix: bullPrefix(opts.redisPrefix), concurrency: opts.concurrency ?? 2 },
  );
  worker.on('failed', (job, err) => {
    if (!job) return;
    const final = job.attemptsMade >= (job.opts.attempts ?? 1);
    opts.logger[final ? 'error' : 'warn'](
      { batchId: job.data.batchId, rows: job.data.rows.length, attempt: job.attemptsMade, err: err.message },
      final ? 'ingest batch failed for good; kept in the failed set' : 'ingest batch failed; will retry',
    );
  });
  worker.on('error', (err) => opts.logger.error({ err: err.message }, 'ingest worker error'));
  return {
    worker,
    async close() {
      await worker.close();
      connection.disconnect();
    },
  };
}
