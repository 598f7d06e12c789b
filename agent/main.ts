// An agent of a private location: runs the location's checks and reaches the service only over HTTPS with a
// location key (docs/agent.md). `API_KEY=pl_… API_URL=https://… npm run agent`; JOB_CONCURRENCY (1–10),
// HTTPS_PROXY, LOG_LEVEL, AGENT_HEALTH_PORT, AGENT_DATA_DIR, OUTBOUND_ALLOW as in the docs.
import { loadAgentConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startAgent } from './agent.js';

async function main() {
  const config = loadAgentConfig();
  const logger = createLogger(config.logLevel);
  const agent = await startAgent(config, logger);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'agent stopping: finishing the runs in flight');
    await agent.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
