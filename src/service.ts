import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bootstrap, resolvePrincipal } from './accounts/index.js';
import { forgetRollupHorizon, storeWithRollupTicks } from './analytics/index.js';
import { type AppOptions, createApp } from './app.js';
import { startBackgroundWork } from './background.js';
import { countGaps } from './coverage/index.js';
import { answerClientError } from './http/errors.js';
import { IngestQueue, type IngestWorkerOptions } from './ingest/index.js';
import { attachLiveBroker } from './live/index.js';
import { LOCATIONS } from './model/checks.js';
import type { Config } from './platform/config.js';
import type { Logger } from './platform/logger.js';
import { Metrics } from './platform/metrics.js';
import { OutboundPolicy } from './platform/outbound.js';
import { deploysSettled } from './projects/index.js';
import { locationRunCounts, privateLocationQueues } from './runners/index.js';
import { openServiceSecrets } from './secrets.js';
import { openBlobStore } from './storage/blobs.js';
import { applyClickhouseDdl } from './storage/clickhouse/ddl.js';
import { createStore, type Store } from './storage/clickhouse/index.js';
import { instrumentStore } from './storage/clickhouse/instrumented.js';
import type { Deps } from './storage/deps.js';
import { migrate } from './storage/migrator.js';
import { ambientSql, checkPostgres, connectPostgres, ensureDatabase, type Sql, UnreachableError } from './storage/postgres.js';
import { Queues } from './storage/queues.js';
import { connectRedis } from './storage/redis.js';
import { serviceSecret } from './storage/service-secrets.js';

export interface RunningService {
  deps: Deps;
  server: Server;
  url: string;
  /** Key generated on first start (shown once); undefined otherwise. */
  generatedKey?: string;
  defaultAccountId: string;
  /**
   * Forgets what API keys resolved to in this process (PrincipalCache): for a change made behind the API's back
   * when its next request must see it at once (Postgres announces such changes too, a moment later).
   */
  forgetKeys(): void;
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
  const queues = new Queues(config.redisUrl, config.redisPrefix, logger);
  const ingest = new IngestQueue(queues, config.redisPrefix);
  const metrics = new Metrics(() => ingest.stats());
  queues.instrument(metrics);
  try {
    store = instrumentStore(createStore(config), metrics);
    await store.ping();
  } catch (err) {
    redis.disconnect();
    await queues.close();
    throw new UnreachableError(`Cannot open ${clickhouseName}: ${(err as Error).message}`);
  }
  let sql: Sql | undefined;
  let asideSql: Sql | undefined;
  try {
    await ensureDatabase(config.databaseUrl);
    sql = ambientSql(connectPostgres(config.databaseUrl, config.postgres.poolSize), config.postgres.acquireTimeoutMs);
    asideSql = connectPostgres(config.databaseUrl, 2);
    const applied = await migrate(sql);
    if (applied.length) logger.info({ versions: applied }, 'applied Postgres migrations');
    await openServiceSecrets(sql, config.secrets, logger);
    await applyClickhouseDdl(store, config.clickhouse).catch((err: Error) => {
      throw new UnreachableError(`Cannot prepare ${clickhouseName}: ${err.message}`);
    });
    if (config.clickhouse.rollups === 'ticks') {
      // Every run this process stores goes through the ticks (analytics/rollup-ticks.ts), which fill the rollups.
      store = await storeWithRollupTicks(store, { logger });
    } else if (!config.clickhouse.url) {
      // Views from now on: a horizon left by ticks (an earlier ROLLUPS=ticks) is forgotten, so that ticks later start
      // from a new one and never roll again what the views rolled.
      await forgetRollupHorizon(store);
    }
  } catch (err) {
    await sql?.end({ timeout: 1 });
    await asideSql?.end({ timeout: 1 });
    redis.disconnect();
    await queues.close();
    await store.close();
    throw err;
  }
  const outbound = new OutboundPolicy(config.outbound, OutboundPolicy.ownEndpointsOf(config));
  // Own endpoints named by host name (a compose network's `redis`): refused on what the names resolve to.
  await outbound.watchOwnNames().ready;
  const runSql = sql;
  metrics.countLocationRuns(async () =>
    locationRunCounts(queues, [...LOCATIONS.map((l) => ({ location: l, slug: l })), ...(await privateLocationQueues(runSql))]),
  );
  metrics.countChecksNotRunning(() => countGaps(runSql));
  const sessionSecret = await serviceSecret(sql, 'dashboard-sessions');
  const blobs = openBlobStore(config.projects);
  return { config, sql, asideSql: asideSql!, redis, store, logger, queues, ingest, metrics, outbound, sessionSecret, blobs };
}

export async function closeDependencies(deps: Deps): Promise<void> {
  // A project deploy still running finishes (or fails) in its transaction before the pools close.
  await deploysSettled();
  deps.blobs.close?.();
  await deps.queues.close().catch(() => {});
  await Promise.allSettled([deps.sql.end({ timeout: 5 }), deps.asideSql.end({ timeout: 5 }), deps.redis.quit(), deps.store.close()]);
}

export interface ServiceOptions extends AppOptions {
  /** Passed to the in-process ingest worker (tests inject faults here). */
  afterInsert?: IngestWorkerOptions['afterInsert'];
  /** The ingest journal's lease and sweep (tests of a worker that died shorten them). */
  journal?: Pick<IngestWorkerOptions, 'leaseMs' | 'sweepEveryMs'>;
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  const deps = await openDependencies(config, logger);
  const worker = config.ingest.inProcessWorker ? await startBackgroundWork({ ...deps, afterInsert: options.afterInsert, journal: options.journal }) : undefined;
  const { account, generatedKey } = await bootstrap(deps.sql, config.bootstrapApiKey);
  const { app, principals, checkTypes, inFlight, spans } = createApp(deps, options);
  const server = app.listen(config.port, config.host);
  server.on('clientError', answerClientError);
  // An idle keep-alive connection stays open longer than the idle timeout of the proxies put in front (60 s is
  // common), so a proxy never sends a request down a socket the service is closing at that moment (a reset the
  // client sees as a failed request). Node's 5 s default makes that race easy to hit under load.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  deps.outbound.addOwnEndpoint({ host: '127.0.0.1', port });
  // Live results over MQTT on WebSocket at /mqtt, on this same port.
  const live = await attachLiveBroker(server, {
    resolvePrincipal: (key, account) => resolvePrincipal(deps.sql, key, account),
    redis: deps.redis,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    logger,
    trustProxy: config.trustProxy,
    trustProxyHops: config.trustProxyHops,
  });
  config.publicUrl ??= `http://${config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host}:${port}`;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const deadline = Date.now() + config.shutdownTimeoutMs;
      await live.close();
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
      // Connections are gone, but a handler whose client left may still run: the pools stay open for it, within
      // SHUTDOWN_TIMEOUT_MS, so what it committed is finished (its audit entry, its queue job).
      if (!(await inFlight.idle(Math.max(0, deadline - Date.now())))) {
        logger.warn({ requests: inFlight.size }, 'requests still running at the shutdown deadline; closing under them');
      }
      // The worker finishes the batch it holds before the store closes under it.
      await worker?.close();
      principals.stop();
      checkTypes.stop();
      await spans?.close();
      await closeDependencies(deps);
    })());
  return {
    deps,
    server,
    url: `http://127.0.0.1:${port}`,
    generatedKey,
    defaultAccountId: account.id,
    forgetKeys: () => principals.forget(),
    close,
  };
}
