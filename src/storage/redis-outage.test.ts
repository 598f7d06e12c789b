import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the test's own, on its own port, that the test stops and starts. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const c = connect(port, '127.0.0.1');
      c.once('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
  await waitFor(accepts, (up) => up, 10_000);
  return child;
}

const stopRedis = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

/** What the service does while its Redis is away: it answers at once, 503 for what needs Redis, and recovers. */
describe('without Redis', () => {
  let svc: TestService;
  let redis: ChildProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    svc = await startTestService({ REDIS_URL: `redis://127.0.0.1:${port}` });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop().catch(() => {});
    if (redis && redis.exitCode === null) await stopRedis(redis);
  });

  const result = (checkId: string) => ({
    id: randomUUID(),
    checkId,
    checkType: 'API',
    runLocation: 'eu-west-1',
    startedAt: new Date().toISOString(),
    stoppedAt: new Date().toISOString(),
    hasFailures: false,
  });
  /** A request that must be answered, not hang: it is cut off after 5 s (Redis waits are bounded at 1.5 s). */
  const answered = (method: string, path: string, body?: unknown) =>
    Promise.race([
      svc.call(method, path, body === undefined ? {} : { body }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${method} ${path} still unanswered after 5 s`)), 5000)),
    ]);

  it('answers reads, refuses ingest with 503 and Retry-After, says which dependency is down, then recovers', async () => {
    const check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'During the outage', request: { url: 'https://shop.example.test' } } })).body;
    expect((await answered('POST', '/v1/check-results', { results: [result(check.id)] })).status).toBe(202);

    await stopRedis(redis);
    const list = await answered('GET', '/v1/checks');
    expect(list.status).toBe(200);
    expect(list.body.map((c: { id: string }) => c.id)).toContain(check.id);
    const ingest = await answered('POST', '/v1/check-results', { results: [result(check.id)] });
    expect(ingest.status).toBe(503);
    expect(ingest.headers.get('retry-after')).toBe('5');
    expect(ingest.body).toMatchObject({ statusCode: 503, message: 'Redis is unavailable; retry later' });
    const ready = await answered('GET', '/ready');
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body)).toMatch(/redis/i);

    redis = await startRedis(port);
    const after = await waitFor(
      () => answered('POST', '/v1/check-results', { results: [result(check.id)] }),
      (r) => r.status === 202,
      20_000,
    );
    expect(after.status).toBe(202);
  }, 60_000);
});

/**
 * A Redis that stops answering for a few seconds (a fork, a failover, a machine too busy to read its socket) while
 * a run ends: the runner keeps the result and hands it to ingest once Redis answers, instead of failing the run.
 */
describe('a Redis stall as a run ends', () => {
  let svc: TestService;
  let redis: ChildProcess;
  let target: Server;
  let targetUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    redis = await startRedis(port);
    // The target stops Redis (SIGSTOP) as it is called and answers at once: the run ends into the stall. The test
    // lets Redis go on once the runner has said it will try again.
    target = createHttpServer((_req, res) => {
      redis.kill('SIGSTOP');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}/stall`;
    svc = await startTestService({ REDIS_URL: `redis://127.0.0.1:${port}`, RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1' });
  }, 60_000);
  afterAll(async () => {
    if (redis && redis.exitCode === null) redis.kill('SIGCONT');
    await svc?.stop().catch(() => {});
    await new Promise((resolve) => target?.close(resolve));
    if (redis && redis.exitCode === null) await stopRedis(redis);
  });

  it('keeps the made run and stores its result once Redis answers', async () => {
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'Ends into a stall', locations: ['eu-west-1'], frequency: 720, retryStrategy: null, request: { url: targetUrl } },
    });
    expect(check.status, check.text).toBe(201);
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.body.id] } } });
    expect(trigger.status, trigger.text).toBe(201);
    const said = () => svc.logs.map((l) => JSON.parse(l) as { level: number; msg: string; tries?: number });
    // The hand-off timed out in the stall (its command waited past 1.5 s); Redis goes on, and the next try goes through.
    await waitFor(
      async () => said().some((l) => l.msg === 'results could not be handed to ingest yet; trying again while Redis is away, up to 30 s'),
      (seen) => seen,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    redis.kill('SIGCONT');
    const handed = await waitFor(
      async () => said().find((l) => l.msg === 'results handed to ingest after a retry'),
      (l) => l !== undefined,
      30_000,
    );
    expect(handed!.tries).toBeGreaterThan(1);
    // Stored once (the command that timed out may have been carried out as well: the batch's id makes a second a
    // no-op), and the run's job did not fail.
    const stored = await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.body.id}`),
      (r) => r.status === 200 && r.body.length > 0,
      20_000,
    );
    await new Promise((r) => setTimeout(r, 2000));
    expect((await svc.call('GET', `/v1/check-results/${check.body.id}`)).body).toHaveLength(1);
    expect(stored.body[0]).toMatchObject({ checkId: check.body.id, hasFailures: false, runLocation: 'eu-west-1' });
    expect(said().filter((l) => l.msg.includes('job failed'))).toEqual([]);
  }, 90_000);
});
