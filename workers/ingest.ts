// Worker process for server mode (CLICKHOUSE_URL set): consumes the ingest queue the API fills, inserts
// batches into ClickHouse and acts on them (check state, alerts, deliveries, heartbeat misses). In embedded
// mode the API process runs this work itself.

import { startBackgroundWork } from '../src/background.js';
import { IngestQueue } from '../src/ingest/index.js';
import { ConfigError, loadConfig } from '../src/platform/config.js';
import { boundHeapGrowth, giveBackStartMemory } from '../src/platform/heap.js';
import { createLogger } from '../src/platform/logger.js';
import { OutboundPolicy } from '../src/platform/outbound.js';
import { openServiceSecrets } from '../src/secrets.js';
import { openBlobStore } from '../src/storage/blobs.js';
import { applyClickhouseDdl } from '../src/storage/clickhouse/ddl.js';
import { createStore } from '../src/storage/clickhouse/index.js';
import { checkPostgres, connectPostgres } from '../src/storage/postgres.js';
import { Queues } from '../src/storage/queues.js';
import { connectRedis } from '../src/storage/redis.js';

async function main() {
  boundHeapGrowth();
  const config = loadConfig();
  if (!config.clickhouse.url) {
    throw new ConfigError('CLICKHOUSE_URL', 'the worker process needs a ClickHouse server; in embedded mode the API runs the worker');
  }
  const logger = createLogger(config.logLevel);
  (await connectRedis(config.redisUrl)).disconnect();
  // The API applies migrations; the worker only needs to reach the database.
  await checkPostgres(config.databaseUrl);
  const sql = connectPostgres(config.databaseUrl, 4);
  // Deliveries open the channels' stored secrets: the service's key, checked against the database.
  await openServiceSecrets(sql, config.secrets, logger);
  const store = createStore(config);
  await store.ping();
  await applyClickhouseDdl(store, config.clickhouse);
  const queues = new Queues(config.redisUrl, config.redisPrefix, logger);
  const ingest = new IngestQueue(queues, config.redisPrefix);
  const outbound = new OutboundPolicy(config.outbound, OutboundPolicy.ownEndpointsOf(config));
  await outbound.watchOwnNames().ready;
  const blobs = openBlobStore(config.projects);
  const worker = await startBackgroundWork({ config, sql, store, logger, queues, ingest, outbound, blobs });
  logger.info({ concurrency: config.ingest.workerConcurrency }, 'ingest worker, alert deliveries and state sweeper started');
  // What start-up left goes back to the system once the worker is at work (the reducer is off: nodeHeapFlags).
  giveBackStartMemory();
  const stop = async (signal: string) => {
    logger.info({ signal }, 'ingest worker stopping');
    await worker.close();
    await queues.close();
    await Promise.allSettled([store.close(), sql.end({ timeout: 5 })]);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
