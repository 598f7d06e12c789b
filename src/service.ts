import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions } from './app.js';
import type { Deps } from './deps.js';
import { answerClientError } from './http/errors.js';
import { bootstrap } from './accounts/repository.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import { IngestQueue } from './ingest/queue.js';
import { instrumentStore, Metrics } from './ops/metrics.js';
import type { IngestWorkerOptions } from './ingest/worker.js';
import { startBackgroundWork } from './background.js';
import { createStore, type Store } from './storage/clickhouse/index.js';
import { applyClickhouseDdl } from './storage/clickhouse/ddl.js';
import { migrate } from './storage/migrator.js';
import { checkPostgres, connectPostgres, ensureDatabase, UnreachableError, type Sql } from './storage/postgres.js';
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

/**
 * Opens Postgres, Redis and the analytics store. Every one is reached first, and only then is anything
 * changed (the database created, migrations and DDL applied): a bad setting for one leaves the others as
 * they were.
 */
export async function openDependencies(config: Config, logger: Logger): Promise<Deps> {
  await checkPostgres(config.databaseUrl);
  const redis = await connectRedis(config.redisUrl);
  const clickhouseName = config.clickhouse.url
    ? `ClickHouse at ${new URL(config.clickhouse.url).host} (CLICKHOUSE_URL)`
    : `the embedded ClickHouse engine in ${config.dataDir} (DATA_DIR)`;
  let store: Store;
  const ingest = new IngestQueue(config.redisUrl, config.redisPrefix);
  const metrics = new Metrics(() => ingest.stats());
  try {
    store = instrumentStore(createStore(config), metrics);
    await store.ping();
  } catch (err) {
    redis.disconnect();
    await ingest.close();
    throw new UnreachableError(`Cannot open ${clickhouseName}: ${(err as Error).message}`);
  }
  let sql: Sql | undefined;
  try {
    await ensureDatabase(config.databaseUrl);
    sql = connectPostgres(config.databaseUrl);
    const applied = await migrate(sql);
    if (applied.length) logger.info({ versions: applied }, 'applied Postgres migrations');
    await applyClickhouseDdl(store, config.clickhouse).catch((err: Error) => {
      throw new UnreachableError(`Cannot prepare ${clickhouseName}: ${err.message}`);
    });
  } catch (err) {
    await sql?.end({ timeout: 1 });
    redis.disconnect();
    await ingest.close();
    await store.close();
    throw err;
  }
  return { config, sql, redis, store, logger, ingest, metrics };
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
    ? await startBackgroundWork({ config, sql: deps.sql, store: deps.store, logger, ingest: deps.ingest, metrics: deps.metrics, afterInsert: options.afterInsert })
    : undefined;
  const { account, generatedKey } = await bootstrap(deps.sql, config.bootstrapApiKey);
  const { app } = createApp(deps, options);
  const server = app.listen(config.port, config.host);
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  config.publicUrl ??= `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
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
