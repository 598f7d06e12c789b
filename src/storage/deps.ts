import type { Redis } from 'ioredis';
import type { ResultQueue } from '../model/results.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import type { BlobStore } from './blobs.js';
import type { Store } from './clickhouse/store.js';
import type { Sql } from './postgres.js';
import type { Queues } from './queues.js';

/** What the service opens once at start and hands to every feature: the one dependency bag. */
export interface Deps {
  config: Config;
  sql: Sql;
  /**
   * A small pool of its own (2 connections) for bookkeeping that must never wait behind the main pool: a deploy's
   * deployment row, progress and lock probes while its transaction holds a main connection.
   */
  asideSql: Sql;
  redis: Redis;
  store: Store;
  logger: Logger;
  /** Every BullMQ queue and worker of the process. */
  queues: Queues;
  /** Where results go to be stored (the ingest queue). */
  ingest: ResultQueue;
  metrics: Metrics;
  /** What calls made for an account may reach (deliveries, check runs). */
  outbound: OutboundPolicy;
  /** Key of the dashboard session cookies' MAC (service_secrets). */
  sessionSecret: Buffer;
  /** Code bundles and snapshots the CLI uploads (content-addressed, per account). */
  blobs: BlobStore;
}
