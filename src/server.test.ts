import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { newTestEnv, removeRedisKeys, startTestService, waitFor } from '../test/support/service.js';
import { ConfigError, loadAgentConfig, loadConfig, machineMemory } from './platform/config.js';
import { connectPostgres, dropDatabase } from './storage/postgres.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

interface Proc {
  code: Promise<number | null>;
  output: () => string;
  kill: (signal: NodeJS.Signals) => void;
}

function runServer(env: Record<string, string>): Proc {
  const child = spawn(TSX, ['src/server.ts'], { cwd: ROOT, env: { PATH: process.env.PATH, ...env } });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return {
    code: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    output: () => out,
    kill: (signal) => child.kill(signal),
  };
}

describe('configuration', () => {
  it('reads defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/monitoring');
    expect(c.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(c.clickhouse.url).toBeUndefined();
    expect(c.rateLimit).toEqual({ points: 600, windowSeconds: 60 });
    expect(c.analytics).toEqual({ maxSeconds: 30, maxMemoryBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ ANALYTICS_MAX_QUERY_MEMORY_MB: '256' }).analytics.maxMemoryBytes).toBe(256 * 1024 * 1024);
  });

  it('runs a browser check per core by default, as many as half the memory holds at their cap, at least one', () => {
    const cores = os.availableParallelism();
    const fits = (mb: number) => Math.floor(machineMemory() / 2 / (mb * 1024 * 1024));
    expect(machineMemory()).toBeLessThanOrEqual(os.totalmem());
    // A small cap: one per core, where half the memory holds that many runs of 256 MB.
    const small = Math.max(1, Math.min(cores, fits(256)));
    expect(loadConfig({ BROWSER_MEMORY_MB: '256' }).runner.browserConcurrency).toBe(small);
    expect(loadAgentConfig({ API_URL: 'http://127.0.0.1:3000', API_KEY: `pl_${'0'.repeat(32)}`, BROWSER_MEMORY_MB: '256' }).browserConcurrency).toBe(small);
    // The largest cap: what half the memory holds, and never none.
    expect(loadConfig({ BROWSER_MEMORY_MB: '65536' }).runner.browserConcurrency).toBe(Math.max(1, Math.min(cores, fits(65_536))));
    expect(loadConfig({ BROWSER_MEMORY_MB: '65536', BROWSER_CONCURRENCY: '3' }).runner.browserConcurrency).toBe(3);
    expect(() => loadConfig({ BROWSER_CONCURRENCY: '0' })).toThrow(/Invalid setting BROWSER_CONCURRENCY/);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'not a url'],
    ['CLICKHOUSE_URL', 'tcp://x:9000'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_POINTS', '0'],
    ['RATE_LIMIT_WINDOW_SECONDS', '1.5'],
    ['BODY_LIMIT_BYTES', '-1'],
    ['BOOTSTRAP_API_KEY', 'short'],
    ['REDIS_PREFIX', 'has space'],
    ['ANALYTICS_MAX_QUERY_SECONDS', '0'],
    ['ANALYTICS_MAX_QUERY_MEMORY_MB', 'lots'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`Invalid setting ${name}`));
  });

  it('stops start-up with a non-zero exit and a message naming the bad setting', async () => {
    const proc = runServer({ PORT: 'abc' });
    expect(await proc.code).toBe(1);
    expect(proc.output()).toContain('Invalid setting PORT');
    expect(proc.output()).not.toMatch(/\n\s+at /);
  });

  it('explains an unreachable Postgres without a stack trace', async () => {
    const proc = runServer({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere', PORT: '0' });
    expect(await proc.code).toBe(1);
    expect(proc.output()).toContain('Cannot connect to Postgres at 127.0.0.1:1/nowhere (DATABASE_URL)');
    expect(proc.output()).toContain('pg_ctlcluster');
    expect(proc.output()).not.toMatch(/\n\s+at /);
  });
});

describe('graceful shutdown', () => {
  it('finishes an in-flight request on SIGTERM, then exits 0', async () => {
    const env = newTestEnv({ PORT: '0', LOG_LEVEL: 'info' });
    env.DATA_DIR = `${env.DATA_DIR}-shutdown`;
    const proc = runServer(env);
    try {
      let port = 0;
      for (let i = 0; i < 200 && !port; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(proc.output());
        if (m) port = Number(m[1]);
      }
      expect(port).toBeGreaterThan(0);
      const body = JSON.stringify({ name: 'in flight' });
      const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          {
            port,
            host: '127.0.0.1',
            method: 'POST',
            path: '/v1/api-keys',
            headers: {
              authorization: `Bearer ${env.BOOTSTRAP_API_KEY}`,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 5));
        setTimeout(() => {
          proc.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(5)), 300);
        }, 200);
      });
      const res = await response;
      expect(res.status).toBe(201);
      expect(JSON.parse(res.body).name).toBe('in flight');
      expect(await proc.code).toBe(0);
      // The port no longer accepts connections.
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      proc.kill('SIGKILL');
      await dropDatabase(env.DATABASE_URL);
      await removeRedisKeys(env.REDIS_PREFIX);
    }
  }, 60_000);
});

describe('shutdown with a handler still running', () => {
  it('keeps the pools open for a handler whose client left, so what it committed is finished (its audit entry)', async () => {
    const svc = await startTestService();
    const admin = connectPostgres(svc.env.DATABASE_URL, 2);
    try {
      // The create will wait for this lock: it is still running when its client leaves and the service closes.
      const holder = await admin.reserve();
      await holder`begin`;
      await holder`lock table variables in exclusive mode`;
      const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1');
      const body = JSON.stringify({ key: 'LEFT_BEHIND', value: 'v' });
      socket.write(
        `POST /v1/variables HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${svc.adminKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await waitFor(
        async () =>
          (await admin`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like 'insert into variables%'`)[0]!.n as number,
        (n) => n === 1,
      );
      socket.destroy();
      const closed = svc.close();
      await new Promise((r) => setTimeout(r, 500));
      await holder`commit`;
      holder.release();
      await closed;
      const [variable] = await admin`select key from variables where key = 'LEFT_BEHIND'`;
      expect(variable).toBeDefined();
      const [entry] = await admin`select operation, status from audit_log where operation = 'createVariable'`;
      expect(entry).toEqual({ operation: 'createVariable', status: 201 });
    } finally {
      await admin.end();
      await dropDatabase(svc.env.DATABASE_URL);
      await removeRedisKeys(svc.env.REDIS_PREFIX);
    }
  }, 60_000);
});
