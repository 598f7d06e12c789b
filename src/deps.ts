import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import type { IngestQueue } from './ingest/queue.js';
import type { Logger } from './logger.js';
import type { Metrics } from './ops/metrics.js';
import type { Store } from './storage/clickhouse/store.js';
import type { Sql } from './storage/postgres.js';

/** What the service opens once at start and hands to every feature: the one dependency bag. */
export interface Deps {
  config: Config;
  sql: Sql;
  redis: Redis;
  store: Store;
  logger: Logger;
  ingest: IngestQueue;
  metrics: Metrics;
}
