import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { AGENT_VERSION } from '../src/model/agent.js';
import { CHECK_TYPE_FACTS, CHECK_TYPES, type CheckType } from '../src/model/checks.js';
import type { AgentConfig } from '../src/platform/config.js';
import type { Logger } from '../src/platform/logger.js';
import { OutboundPolicy } from '../src/platform/outbound.js';
import { browserSupport, SANDBOX_NODE, scriptSupport, startRunner } from '../src/run-kernel/index.js';
import { DiskBuffer } from './buffer.js';
import { type AgentEvent, HttpPort } from './http-port.js';
import { ScheduleMemory } from './memory.js';

/** The agent's id: made once and kept in its data folder, so a restarted agent is the same agent. */
function agentIdOf(dataDir: string): string {
  const file = path.join(dataDir, 'agent-id');
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f-]{36}$/.test(id)) return id;
  } catch {
    // first start
  }
  const id = randomUUID();
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}

/**
 * The check types this agent can make: every type, but browser types (BROWSER, MULTI_STEP, PLAYWRIGHT, AGENTIC) only
 * where Playwright, Chromium and bubblewrap are installed, so the service leases them to an agent that can.
 */
export function agentCapabilities(browser: { ok: boolean } = browserSupport(SANDBOX_NODE)): CheckType[] {
  return CHECK_TYPES.filter((type) => CHECK_TYPE_FACTS[type].runsOn !== 'browser' || browser.ok);
}

export interface RunningAgent {
  agentId: string;
  port: HttpPort;
  /** Where /-/readiness, /-/liveness and /metrics answer (when a health port is set). */
  healthUrl?: string;
  close(): Promise<void>;
}

/**
 * An agent (docs/agent.md): a runner of a private location that reaches the service only over HTTPS with the
 * location's key. It runs every check type the service's own runners run, browser checks in the same sandbox,
 * under its own outbound policy; it serves its health and metrics on AGENT_HEALTH_PORT.
 */
export async function startAgent(config: AgentConfig, logger: Logger): Promise<RunningAgent> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const agentId = agentIdOf(config.dataDir);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const events = new Counter({
    name: 'agent_events_total',
    help: 'What the agent did: leased, reported, lost, made-offline, buffered, delivered, api-error, expired-unreported',
    labelNames: ['event'] as const,
    registers: [registry],
  });
  const browser = browserSupport(SANDBOX_NODE);
  const scripts = await scriptSupport();
  const capabilities = agentCapabilities(browser);
  const buffer = new DiskBuffer(config.dataDir, config.bufferMaxBytes);
  const memory = new ScheduleMemory();
  const port = new HttpPort({
    apiUrl: config.apiUrl,
    apiKey: config.apiKey,
    agentId,
    capabilities,
    concurrency: config.jobConcurrency,
    egressIps: config.egressIps,
    offlineAfterMs: config.offlineAfterMs,
    buffer,
    memory,
    logger,
    count: (event: AgentEvent, n = 1) => events.inc({ event }, n),
  });
  new Gauge({
    name: 'agent_runs_in_flight',
    help: 'Runs executing now',
    registers: [registry],
    collect() {
      this.set(config.jobConcurrency - port.free);
    },
  });
  new Gauge({
    name: 'agent_offline',
    help: '1 while the service is unreachable and the agent runs from memory',
    registers: [registry],
    collect() {
      this.set(port.offline ? 1 : 0);
    },
  });
  new Gauge({
    name: 'agent_buffer_results',
    help: 'Results in the on-disk buffer, waiting for the service',
    registers: [registry],
    collect() {
      this.set(buffer.stats.results);
    },
  });
  new Gauge({
    name: 'agent_buffer_bytes',
    help: 'Bytes of the on-disk buffer',
    registers: [registry],
    collect() {
      this.set(buffer.stats.bytes);
    },
  });
  new Gauge({
    name: 'agent_buffer_dropped_results',
    help: 'Results dropped from the buffer for space since start',
    registers: [registry],
    collect() {
      this.set(buffer.stats.dropped);
    },
  });
  new Gauge({
    name: 'agent_buffer_refused_results',
    help: 'Results the service refused, set aside in refused/ since start',
    registers: [registry],
    collect() {
      this.set(buffer.stats.setAside);
    },
  });
  new Gauge({
    name: 'agent_remembered_checks',
    help: 'Scheduled checks the agent would run from memory if cut off',
    registers: [registry],
    collect() {
      this.set(memory.size);
    },
  });

  const ownEndpoints = config.healthPort ? [{ host: config.healthHost, port: config.healthPort }] : [];
  const policy = new OutboundPolicy(config.outbound, ownEndpoints);
  await policy.watchOwnNames().ready;
  const runner = startRunner(port, { policy, logger, browser: { concurrency: config.browserConcurrency, memoryBytes: config.browserMemoryBytes } });

  let server: http.Server | undefined;
  let healthUrl: string | undefined;
  if (config.healthPort) {
    server = http.createServer((req, res) => {
      const url = (req.url ?? '/').split('?')[0];
      if (url === '/-/liveness') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      if (url === '/-/readiness') {
        const stuck = port.drainFailing && buffer.stats.results > 0;
        const ready = port.registered && !port.offline && !stuck;
        const why = port.offline
          ? 'offline: running from memory'
          : !port.registered
            ? 'not registered yet'
            : `the buffer (${buffer.stats.results} results) cannot be delivered`;
        return void res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : `${why}\n`);
      }
      if (url === '/metrics') {
        void registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
          () => res.writeHead(500).end(),
        );
        return;
      }
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.healthPort, config.healthHost, () => resolve());
    });
    healthUrl = `http://${config.healthHost}:${config.healthPort}`;
  }
  logger.info(
    {
      agentId,
      version: AGENT_VERSION,
      apiUrl: config.apiUrl,
      concurrency: config.jobConcurrency,
      dataDir: config.dataDir,
      healthUrl,
      bufferedResults: buffer.stats.results,
      checkTypes: capabilities,
      browserChecks: browser.ok ? true : browser.why,
      scripts: scripts.ok ? true : scripts.why,
    },
    'agent started',
  );
  if (!browser.ok) logger.warn({ why: browser.why }, 'browser checks are not taken by this agent (docs/agent.md, "Browser checks")');
  if (!scripts.ok) logger.warn({ why: scripts.why }, "API checks' setup and teardown scripts fail on this agent");
  return {
    agentId,
    port,
    healthUrl,
    async close() {
      await runner.close();
      await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    },
  };
}
