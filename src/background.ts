import { DeliveryQueue, startDeliveryWorker } from './alerts/deliveries.js';
import type { Config } from './config.js';
import type { IngestQueue } from './ingest/queue.js';
import { startIngestWorker, type IngestWorkerOptions } from './ingest/worker.js';
import type { Logger } from './logger.js';
import type { Metrics } from './ops/metrics.js';
import { startSweeper } from './state/sweeper.js';
import type { Store } from './storage/clickhouse/store.js';
import type { Sql } from './storage/postgres.js';

/**
 * The work that runs beside the API: the ingest worker (results → ClickHouse → check state and alerts),
 * alert deliveries, and the sweeper (heartbeat misses, reminders). In embedded mode the API process runs
 * it; in server mode `npm run worker` does, as many times as needed.
 */
export async function startBackgroundWork(opts: {
  config: Config;
  sql: Sql;
  store: Store;
  logger: Logger;
  ingest: IngestQueue;
  metrics?: Metrics;
  afterInsert?: IngestWorkerOptions['afterInsert'];
}) {
  const { config, logger } = opts;
  const base = { redisUrl: config.redisUrl, redisPrefix: config.redisPrefix, sql: opts.sql, logger };
  const deliveries = new DeliveryQueue(config.redisUrl, config.redisPrefix, config.alerts);
  const ingestWorker = startIngestWorker({
    ...base,
    store: opts.store,
    concurrency: config.ingest.workerConcurrency,
    insertMaxRows: config.ingest.insertMaxRows,
    afterInsert: opts.afterInsert,
    onLanded: opts.metrics && ((rows) => opts.metrics!.ingestLanded.inc(rows)),
    stateEvaluation: config.alerts.stateEvaluation,
    deliveries,
  });
  const deliveryWorker = startDeliveryWorker({ ...base, config: config.alerts });
  const sweeper = config.alerts.stateEvaluation
    ? await startSweeper({ ...base, ingest: opts.ingest, deliveries, intervalMs: config.alerts.sweepIntervalMs })
    : undefined;
  return {
    async close() {
      await sweeper?.close();
      // The ingest worker finishes the batch it holds before the store closes under it.
      await ingestWorker.close();
      await deliveryWorker.close();
      await deliveries.close();
    },
  };
}
