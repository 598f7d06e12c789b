import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/platform/config.js';
import { createLogger } from '../../src/platform/logger.js';
import { type RunningService, type ServiceOptions, startService } from '../../src/service.js';
import { dropDatabase, type Sql } from '../../src/storage/postgres.js';
import { deleteKeysWithPrefix } from '../../src/storage/redis.js';

/** One embedded-engine directory per test process (libchdb binds one per process), under the run's root. */
export const PROCESS_DATA_DIR = path.join(process.env.MONITORING_TEST_ROOT ?? os.tmpdir(), `engine-${process.pid}`);

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface TestService extends RunningService {
  /** Admin key of the default account. */
  adminKey: string;
  env: Record<string, string>;
  /** Everything the service logged, one JSON line each. */
  logs: string[];
  call<T = any>(method: string, urlPath: string, opts?: CallOptions): Promise<ApiResponse<T>>;
  stop(): Promise<void>;
}

export function newTestEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const id = randomBytes(5).toString('hex');
  return {
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/monitoring_test_${id}`,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `test:${id}:`,
    DATA_DIR: PROCESS_DATA_DIR,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    BOOTSTRAP_API_KEY: `test_admin_${randomBytes(24).toString('hex')}`,
    // Nothing a suite creates may reach past this machine: loopback only, and no DNS lookups of other names.
    OUTBOUND_PUBLIC: 'false',
    OUTBOUND_ALLOW: '127.0.0.0/8',
    // Checks run on their own only in the suites about running them (a run's result would move other suites' state).
    RUNNER: 'off',
    SCHEDULER: 'off',
    // Nothing runs here, so every check would stop "running": the suites about no data turn its alerts on.
    NO_DATA_ALERTS: 'false',
    // Scheduled runs' results go to ingest within a second, not the default 5 s: the suites wait for them.
    RESULT_LINGER_MS: '1000',
    ...overrides,
  };
}

export function removeRedisKeys(prefix: string): Promise<void> {
  return deleteKeysWithPrefix('redis://127.0.0.1:6379', prefix);
}

/** Starts the real service on its own database, Redis prefix and port; `stop` removes all of it. */
export async function startTestService(overrides: Record<string, string> = {}, options: ServiceOptions = {}): Promise<TestService> {
  const env = newTestEnv(overrides);
  mkdirSync(env.DATA_DIR, { recursive: true });
  const config = loadConfig(env);
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const service = await startService(config, createLogger(config.logLevel, sink), { validateResponses: true, ...options });
  const call = async (method: string, urlPath: string, opts: CallOptions = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? env.BOOTSTRAP_API_KEY : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(service.url + urlPath, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };
  return {
    ...service,
    adminKey: env.BOOTSTRAP_API_KEY,
    env,
    logs,
    call,
    async stop() {
      await service.close();
      await dropDatabase(env.DATABASE_URL);
      await removeRedisKeys(env.REDIS_PREFIX);
    },
  };
}

/** A second account with its own admin key: for proving that accounts never see each other's data. */
export async function createOtherTenant(svc: TestService): Promise<{ accountId: string; key: string }> {
  const { createAccount, createApiKey } = await import('../../src/accounts/repository.js');
  const account = await createAccount(svc.deps.sql, `tenant-${randomBytes(3).toString('hex')}`);
  const { key } = await createApiKey(svc.deps.sql, { accountId: account.id, role: 'admin' });
  return { accountId: account.id, key };
}

/** Asserts a 400 whose errors name `field` (and `rule` when given). */
export function expectFieldError(res: ApiResponse, field: string, rule?: string): void {
  if (res.status !== 400) throw new Error(`expected 400 naming ${field}, got ${res.status}: ${res.text}`);
  const errors = (res.body?.attributes?.errors ?? []) as { field: string; rule: string }[];
  const hit = errors.find((e) => e.field === field && (rule === undefined || e.rule === rule));
  if (!hit) throw new Error(`expected an error on ${field}${rule ? ` (${rule})` : ''}, got ${JSON.stringify(errors)}`);
}

/** Polls `fn` until `done` holds (ingest lands asynchronously); fails with the last value seen. */
export async function waitFor<T>(fn: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Waits until every announcement committed so far on `channel` has reached the process's listeners: postgres.js
 * delivers a pool's notifications on one listening connection, in commit order, to a channel's listeners in turn, so
 * once a marker sent now reaches this one, the caches listening on the same pool have heard all before it. The
 * marker starts `probe:`, which a cache's listener ignores when it is not its own probe (storage/announcements.ts).
 */
export async function announcementsHeard(sql: Sql, channel: string): Promise<void> {
  const marker = `probe:test:${randomUUID()}`;
  let heard!: () => void;
  const reached = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const { unlisten } = await sql.listen(channel, (payload) => payload === marker && heard());
  try {
    await sql`select pg_notify(${channel}, ${marker})`;
    await reached;
  } finally {
    await unlisten();
  }
}

/** Runs a check now (`POST /v2/check-sessions/trigger`): its session once ended, and its stored result. */
export async function runNow(svc: TestService, checkId: string, timeoutMs = 60_000): Promise<{ session: any; result: any }> {
  const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [checkId] } } });
  if (trigger.status !== 201) throw new Error(`trigger: ${trigger.status} ${trigger.text}`);
  const sessionId = trigger.body.sessions[0].checkSessionId as string;
  const done = await waitFor(
    () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
    (r) => r.status !== 408,
    timeoutMs,
  );
  if (done.status !== 200) throw new Error(`completion: ${done.status} ${done.text}`);
  const resultId = done.body.results[0].checkResultId as string;
  const result = await waitFor(
    () => svc.call('GET', `/v1/check-results/${checkId}/${resultId}`),
    (r) => r.status === 200,
  );
  return { session: done.body, result: result.body };
}

/**
 * Proves `domain` for the key's account as an owner would: the claim's token published as the TXT record on `dns`
 * (a local DNS server the service asks: DOMAIN_DNS_SERVERS), then the verify call. Answers the verify response.
 */
export async function verifyDomain(svc: TestService, dns: { txt: Map<string, string[]> }, domain: string, key?: string): Promise<ApiResponse> {
  const claims = (await svc.call('GET', '/v1/custom-domains', { key })).body as { domain: string; challenge: { name: string; value: string } }[];
  const claim = claims.find((c) => c.domain === domain.toLowerCase());
  if (!claim) throw new Error(`no claim on ${domain}: ${JSON.stringify(claims)}`);
  dns.txt.set(claim.challenge.name, [claim.challenge.value]);
  return svc.call('POST', `/v1/custom-domains/${domain}/verify`, { key });
}
