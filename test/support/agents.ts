import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface AgentProcess {
  proc: ChildProcess;
  dataDir: string;
  healthUrl: string;
  /** Everything it logged, a JSON line each. */
  logs: string[];
  /** Resolves with the exit code once it has exited. */
  exited: Promise<number | null>;
  /** SIGTERM (finish the runs in flight) and wait. */
  stop(): Promise<void>;
  /** kill -9: no goodbye, no report. */
  kill(): Promise<void>;
  /** Removes its data folder (after it stopped). */
  remove(): void;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * An agent as its own process (`node --import tsx agent/main.ts`, or the built package's `node agent.mjs`), as a team would run it on another machine:
 * it gets the service's URL and a location key, nothing of the service's stores. Its checks may reach loopback
 * only, like every suite's.
 */
export async function startAgentProcess(opts: {
  apiUrl: string;
  apiKey: string;
  dataDir?: string;
  concurrency?: number;
  env?: Record<string, string>;
  /** A folder with the built package (`npm run agent:build`): runs `node agent.mjs` there instead of the sources. */
  packageDir?: string;
}): Promise<AgentProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'agent-'));
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.tmpdir(),
    ...(process.env.CHROMIUM_BINARY ? { CHROMIUM_BINARY: process.env.CHROMIUM_BINARY } : {}),
    API_KEY: opts.apiKey,
    API_URL: opts.apiUrl,
    JOB_CONCURRENCY: String(opts.concurrency ?? 4),
    AGENT_DATA_DIR: dataDir,
    AGENT_HEALTH_PORT: String(port),
    LOG_LEVEL: 'info',
    OUTBOUND_PUBLIC: 'false',
    OUTBOUND_ALLOW: '127.0.0.0/8',
    ...opts.env,
  };
  const proc = spawn(process.execPath, opts.packageDir ? ['agent.mjs'] : ['--import', 'tsx', 'agent/main.ts'], {
    cwd: opts.packageDir ?? path.resolve(import.meta.dirname, '../..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const take = (chunk: Buffer) => logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  proc.stdout!.on('data', take);
  proc.stderr!.on('data', take);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const healthUrl = `http://127.0.0.1:${port}`;
  // Up once its health port answers.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the agent exited at start: ${logs.join('\n')}`);
    try {
      if ((await fetch(`${healthUrl}/-/liveness`)).ok) break;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`the agent did not start: ${logs.join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    proc,
    dataDir,
    healthUrl,
    logs,
    exited,
    async stop() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
    remove() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
