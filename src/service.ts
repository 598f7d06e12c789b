import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions } from './app.js';
import type { Deps } from './deps.js';
import { bootstrap } from './accounts/repository.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { IngestQueue } from './ingest/queue.js';
import { startIngestWorker, type IngestWorkerOptions } from './ingest/worker.js';
import { createStore } from './storage/clickhouse/index.js';
import { applyClickhouseDdl } from './storage/clickhouse/ddl.js';
import { migrate } from './storage/migrator.js';
import { connectPostgres, ensureDatabase, UnreachableError, type Sql } from './storage/postgres.js';
import { connectRedis } from './storage/redis.js';

export interface RunningService {
  deps: Deps;
  server: Server;
  url: string;
  /** Key generated on first start (shown once); undefined otherwise. */
  generatedKey?: string;
  defaultAccountId: string;
  /** Stops accepting, lets in-flight requests finish, then closes every pool. */
  close(): Promise<void>;
}

/** Opens Postgres (creating the database and applying migrations), Redis and the analytics store. */
export async function openDependencies(config: Config, logger: Logger): Promise<Deps> {
  await ensureDatabase(config.databaseUrl);
  const sql: Sql = connectPostgres(config.databaseUrl);
  const applied = await migrate(sql).catch(async (err) => {
    await sql.end({ timeout: 1 });
    throw err;
  });
  if (applied.length) logger.info({ versions: applied }, 'applied Postgres migrations');
  let redis;
  try {
    redis = await connectRedis(config.redisUrl);
  } catch (err) {
    await sql.end({ timeout: 1 });
    throw err;
  }
  let store;
  try {
    store = createStore(config);
    await store.ping();
    await applyClickhouseDdl(store, config.clickhouse.retentionDays);
  } catch (err) {
    await sql.end({ timeout: 1 });
    redis.disconnect();
    const where = config.clickhouse.url ? `ClickHouse at ${new URL(config.clickhouse.url).host} (CLICKHOUSE_URL)` : `the embedded ClickHouse engine in ${config.dataDir} (DATA_DIR)`;
    throw new UnreachableError(`Cannot open ${where}: ${(err as Error).message}`);
  }
  const ingest = new IngestQueue(config.redisUrl, config.redisPrefix);
  return { config, sql, redis, store, logger, ingest };
}

export async function closeDependencies(deps: Deps): Promise<void> {
  await deps.ingest.close().catch(() => {});
  await Promise.allSettled([deps.sql.end({ timeout: 5 }), deps.redis.quit(), deps.store.close()]);
}

export interface ServiceOptions extends AppOptions {
  /** Passed to the in-process ingest worker (tests inject faults here). */
  afterInsert?: IngestWorkerOptions['afterInsert'];
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  const deps = await openDependencies(config, logger);
  const worker = config.ingest.inProcessWorker
    ? startIngestWorker({
        redisUrl: config.redisUrl,
        redisPrefix: config.redisPrefix,
        store: deps.store,
        logger,
        concurrency: config.ingest.workerConcurrency,
        afterInsert: options.afterInsert,
      })
    : undefined;
  const { account, generatedKey } = await bootstrap(deps.sql, config.bootstrapApiKey);
  const { app } = createApp(deps, options);
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.closeAllConnections();
          resolve();
        }, config.shutdownTimeoutMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      // The worker finishes the batch it holds before the store closes under it.
      await worker?.close();
      await closeDependencies(deps);
    })());
  return {
    deps,
    server,
    url: `http://127.0.0.1:${port}`,
    generatedKey,
    defaultAccountId: account.id,
    close,
  };
}
