// A runner process: takes check runs from the queues of its locations and hands their results to ingest.
// `npm run runner -- --locations eu-west-1,us-east-1`, or `--private-location-key <key>` to serve a private
// location. It needs Redis (the run and result queues) and Postgres (check definitions, sessions); run as many as
// needed, on any machine that reaches both.
import { parseArgs } from 'node:util';
import { IngestQueue } from '../src/ingest/index.js';
import { ConfigError, loadConfig } from '../src/platform/config.js';
import { boundHeapGrowth, giveBackStartMemory } from '../src/platform/heap.js';
import { createLogger } from '../src/platform/logger.js';
import { Metrics } from '../src/platform/metrics.js';
import { OutboundPolicy } from '../src/platform/outbound.js';
import { startRunner } from '../src/run-kernel/index.js';
import { localPort, privateLocationOfKey } from '../src/runners/index.js';
import { openServiceSecrets } from '../src/secrets.js';
import { openBlobStore } from '../src/storage/blobs.js';
import { checkPostgres, connectPostgres } from '../src/storage/postgres.js';
import { Queues } from '../src/storage/queues.js';
import { connectRedis } from '../src/storage/redis.js';
import { adhocRecorder } from '../src/test-sessions/index.js';

async function main() {
  boundHeapGrowth();
  const { values } = parseArgs({ options: { locations: { type: 'string' }, 'private-location-key': { type: 'string' } }, strict: true });
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  (await connectRedis(config.redisUrl)).disconnect();
  await checkPostgres(config.databaseUrl);
  const sql = connectPostgres(config.databaseUrl, 4);
  // Runs open the checks' secret variables: the service's key, checked against the database.
  await openServiceSecrets(sql, config.secrets, logger);
  let locations = values.locations
    ? values.locations
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean)
    : config.runner.locations;
  const key = values['private-location-key'] ?? process.env.PRIVATE_LOCATION_KEY;
  if (key) {
    const location = await privateLocationOfKey(sql, key);
    if (!location) throw new ConfigError('--private-location-key', 'is no key of any private location');
    locations = [`private-${location.id}`];
    logger.info({ privateLocation: location.slugName }, 'serving a private location');
  }
  const queues = new Queues(config.redisUrl, config.redisPrefix, logger);
  const ingest = new IngestQueue(queues, config.redisPrefix);
  const policy = new OutboundPolicy(config.outbound, OutboundPolicy.ownEndpointsOf(config));
  await policy.watchOwnNames().ready;
  const runner = startRunner(
    localPort({
      sql,
      queues,
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      ingest,
      logger,
      metrics: new Metrics(),
      locations,
      concurrency: config.runner.concurrency,
      resultLingerMs: config.runner.resultLingerMs,
      definitionCacheBytes: config.runner.definitionCacheBytes,
      recordAdhoc: adhocRecorder(sql),
      blobs: openBlobStore(config.projects),
    }),
    { policy, logger, browser: { concurrency: config.runner.browserConcurrency, memoryBytes: config.runner.browserMemoryBytes } },
  );
  // What start-up left goes back to the system once the runner is at work (the reducer is off: nodeHeapFlags).
  giveBackStartMemory();
  const stop = async (signal: string) => {
    logger.info({ signal }, 'runner stopping');
    await runner.close();
    await queues.close();
    await sql.end({ timeout: 5 });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
