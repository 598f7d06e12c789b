// An agent of a private location: runs the location's checks and reaches the service only over HTTPS with a
// location key (docs/agent.md). `API_KEY=pl_… API_URL=https://… npm run agent`, or `node agent.mjs` from the
// package `npm run agent:build` makes; `--help` lists every setting, `--version` says which agent this is.
import { AGENT_VERSION } from '../src/model/agent.js';
import { loadAgentConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { startAgent } from './agent.js';
import { agentHelp } from './settings.js';

async function main(args: string[]) {
  if (args.includes('--version') || args.includes('-v')) return void process.stdout.write(`${AGENT_VERSION}\n`);
  if (args.includes('--help') || args.includes('-h')) return void process.stdout.write(agentHelp(AGENT_VERSION));
  const unknown = args.find((a) => a.startsWith('-'));
  if (unknown) throw new Error(`unknown option ${unknown}: the agent takes its settings from the environment (--help lists them)`);
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

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
});
