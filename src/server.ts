import { type Config, ConfigError, loadConfig } from './platform/config.js';
import { boundHeapGrowth, giveBackStartMemory } from './platform/heap.js';
import { createLogger } from './platform/logger.js';
import { type RunningService, startService } from './service.js';
import { UnreachableError } from './storage/postgres.js';
import { SecretsKeyError } from './storage/secret-keys.js';

/** Process entry: configuration errors and unreachable dependencies end start-up with one clear line. */
async function main() {
  boundHeapGrowth();
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  let service: RunningService;
  try {
    service = await startService(config, logger);
  } catch (err) {
    if (err instanceof UnreachableError || err instanceof SecretsKeyError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  if (service.generatedKey) {
    // Printed once, on the terminal only: the key is not logged and cannot be shown again.
    process.stdout.write(
      `\nCreated the default account ${service.defaultAccountId} and its admin API key (shown once, store it now):\n\n` + `  ${service.generatedKey}\n\n`,
    );
  }
  logger.info({ url: service.url, clickhouse: service.deps.store.kind }, 'listening');
  giveBackStartMemory();

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`Start-up failed: ${(err as Error).message}\n`);
  process.exit(1);
});
