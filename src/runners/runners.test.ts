import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startDnsTarget, startGrpcTarget, startHttpTarget, startTcpTarget, startTlsTarget } from '../../test/support/targets.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { Metrics } from '../platform/metrics.js';
import { scheduledResultId } from '../run-kernel/result-ids.js';
import type { RunJob } from '../run-kernel/run.js';
import { startRunner } from '../run-kernel/runner.js';
import { Queues } from '../storage/queues.js';
import { enqueueRuns, isRunBatch, type RunQueueJob, windowStart } from './jobs.js';
import { localPort } from './local-port.js';
import { startScheduler } from './scheduler.js';

/**
 * The runners against servers this suite starts on 127.0.0.1 (the service runs with the loopback-only
 * policy): each check type passing, failing, degraded, timing out; assertions; variables and secrets;
 * scripts; retries; sessions (trigger, completion, cancel, a location without a runner).
 */
describe('checks run by the service', () => {
  let svc: TestService;
  let http: HttpTarget;
  let tcp: Awaited<ReturnType<typeof startTcpTarget>>;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;
  let tls: Awaited<ReturnType<typeof startTlsTarget>>;
  let tlsSoon: Awaited<ReturnType<typeof startTlsTarget>>;
  let grpcTarget: Awaited<ReturnType<typeof startGrpcTarget>>;

  beforeAll(async () => {
    [http, tcp, dns, tls, tlsSoon, grpcTarget] = await Promise.all([
      startHttpTarget(),
      startTcpTarget(),
      startDnsTarget({ 'svc.test': '10.1.2.3' }),
      startTlsTarget('tls.test', 90),
      startTlsTarget('soon.test', 5),
      startGrpcTarget(),
    ]);
    svc = await startTestService({
      RUNNER: 'on',
      // ap-south-1 has no runner here: its runs wait (lag), and its sessions time out.
      RUNNER_LOCATIONS: 'eu-west-1,us-east-1',
      SCHEDULER: 'on',
      SCHEDULER_TICK_MS: '100',
      SCHEDULER_RECONCILE_MS: '200',
      // Long enough for the first browser run of the process (it warms the sandbox's compile cache first) on a busy
      // 2-core machine: 15 s and 25 s each timed one out under load; short enough for the time-out test to wait for.
      CHECK_SESSION_TIMEOUT_SECONDS: '45',
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([http?.close(), tcp?.close(), dns?.close(), tls?.close(), tlsSoon?.close(), grpcTarget?.close()]);
  });

  const create = async (segment: string, body: Record<string, unknown>) => {
    const res = await svc.call('POST', `/v1/checks/${segment}?autoAssignAlerts=false`, {
      body: { locations: ['eu-west-1'], frequency: 60, retryStrategy: null, doubleCheck: false, ...body },
    });
    if (res.status !== 201) throw new Error(`create ${segment}: ${res.status} ${res.text}`);
    return res.body as { id: string };
  };
  /** Runs a check now and answers its session once it ended, with the stored result of its (first) run. */
  const runNow = async (checkId: string) => {
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [checkId] } } });
    expect(trigger.status).toBe(201);
    const sessionId = trigger.body.sessions[0].checkSessionId as string;
    const done = await waitFor(
      () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
      (r) => r.status !== 408,
      60_000,
    );
    expect(done.status).toBe(200);
    const resultId = done.body.results[0].checkResultId as string;
    const result = await waitFor(
      () => svc.call('GET', `/v1/check-results/${checkId}/${resultId}`),
      (r) => r.status === 200,
    );
    return { session: done.body, result: result.body };
  };

  /** A runner of this process's own (another process's, as far as the service knows) for `locations`. */
  const startLocalRunner = (
    queues: Queues,
    opts: { locations: string[]; concurrency: number; resultLingerMs: number; logger?: Logger; metrics?: Metrics; definitionCacheBytes?: number },
  ) => {
    const logger = opts.logger ?? svc.deps.logger;
    const port = localPort({
      sql: svc.deps.sql,
      queues,
      redisUrl: svc.env.REDIS_URL,
      redisPrefix: svc.env.REDIS_PREFIX,
      ingest: svc.deps.ingest,
      ...opts,
      logger,
    });
    return startRunner(port, { policy: svc.deps.outbound, logger });
  };

  describe('API checks', () => {
    it('pass with every assertion source, render variables and helpers, and never echo a secret', async () => {
      await svc.call('POST', '/v1/variables', { body: { key: 'TOKEN', value: 's3cr3t-value', secret: true } });
      await svc.call('POST', '/v1/variables', { body: { key: 'TEAM', value: 'shop team' } });
      const check = await create('api', {
        name: 'API passing',
        request: {
          method: 'POST',
          url: `${http.url}/echo`,
          headers: [
            { key: 'Authorization', value: 'Bearer {{{TOKEN}}}' },
            { key: 'X-Team', value: '{{TEAM}}' },
            { key: 'X-Id', value: '{{$UUID}}' },
          ],
          queryParameters: [{ key: 'q', value: '{{{TEAM}}}' }],
          bodyType: 'JSON',
          // {{X}} writes X URI-encoded (the anchor's rule), {{{X}}} as it is.
          body: '{"check":"{{{CHECK_NAME}}}","encoded":"{{CHECK_NAME}}"}',
          assertions: [
            { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
            { source: 'JSON_BODY', property: '$.headers.authorization', comparison: 'EQUALS', target: 'Bearer s3cr3t-value' },
            { source: 'JSON_BODY', property: '$.query.q', comparison: 'EQUALS', target: 'shop team' },
            { source: 'HEADERS', property: 'x-target', comparison: 'EQUALS', target: 'local' },
            { source: 'TEXT_BODY', property: '"x-team":"([^"]+)"', comparison: 'EQUALS', target: 'shop%20team' },
            { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' },
          ],
        },
      });
      const { session, result } = await runNow(check.id);
      expect(session.status).toBe('PASSED');
      expect(result).toMatchObject({ hasFailures: false, isDegraded: false, statusCode: 200, runLocation: 'eu-west-1' });
      const api = result.apiCheckResult;
      expect(api.assertions.map((a: { error?: string }) => a.error)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
      expect(api.assertions[2].actual).toBe('shop team');
      expect(api.response.timingPhases).toMatchObject({
        dns: expect.any(Number),
        tcp: expect.any(Number),
        firstByte: expect.any(Number),
        total: expect.any(Number),
      });
      expect(JSON.parse(api.response.body).body).toBe('{"check":"API passing","encoded":"API%20passing"}');
      expect(JSON.parse(api.response.body).headers['x-id']).toMatch(/^[0-9a-f-]{36}$/);
      // The secret reached the server, and appears nowhere in what the service keeps or logs.
      expect(JSON.stringify(result)).not.toContain('s3cr3t-value');
      expect(api.request.headers.Authorization).toBe('Bearer ********');
      expect(svc.logs.join('\n')).not.toContain('s3cr3t-value');
    });

    it('fail on an assertion with its actual value, go degraded when slow, and time out at maxResponseTime', async () => {
      const failing = await create('api', {
        name: 'API failing',
        request: { url: `${http.url}/ok`, assertions: [{ source: 'JSON_BODY', property: '$.nested.price', comparison: 'GREATER_THAN', target: '20' }] },
      });
      const failed = await runNow(failing.id);
      expect(failed.session.status).toBe('FAILED');
      expect(failed.result.apiCheckResult.assertions[0]).toMatchObject({ actual: 12.5, error: 'expected 12.5 to be greater than "20"' });
      const slow = await create('api', { name: 'API degraded', degradedResponseTime: 200, maxResponseTime: 5000, request: { url: `${http.url}/slow?ms=400` } });
      const degraded = await runNow(slow.id);
      expect(degraded.session.status).toBe('DEGRADED');
      expect(degraded.result).toMatchObject({ hasFailures: false, isDegraded: true });
      const timeout = await create('api', {
        name: 'API timing out',
        degradedResponseTime: 100,
        maxResponseTime: 300,
        request: { url: `${http.url}/slow?ms=3000` },
      });
      const timedOut = await runNow(timeout.id);
      expect(timedOut.result).toMatchObject({ hasFailures: true });
      expect(timedOut.result.apiCheckResult.requestError).toMatch(/timed out/);
      const fiveHundred = await create('api', { name: 'API 500', request: { url: `${http.url}/fail` } });
      expect((await runNow(fiveHundred.id)).result).toMatchObject({ hasFailures: true, statusCode: 500 });
    });

    it('run a setup script that changes the request, and stop scripts that never end or eat memory', async () => {
      const scripted = await create('api', {
        name: 'API scripted',
        localSetupScript: "request.headers['X-From-Setup'] = 'set by ' + process.env.TEAM; console.log('setup ran');",
        request: {
          url: `${http.url}/echo`,
          assertions: [{ source: 'JSON_BODY', property: "$.headers['x-from-setup']", comparison: 'EQUALS', target: 'set by shop team' }],
        },
      });
      const ok = await runNow(scripted.id);
      expect(ok.session.status).toBe('PASSED');
      expect(ok.result.apiCheckResult.jobLog.setup[0]).toMatchObject({ level: 'INFO', msg: 'setup ran' });
      const looping = await create('api', { name: 'API looping script', localSetupScript: 'while (true) {}', request: { url: `${http.url}/ok` } });
      const stopped = await runNow(looping.id);
      expect(stopped.result.hasFailures).toBe(true);
      expect(stopped.result.apiCheckResult.requestError).toMatch(/Setup script failed: Script execution timed out/);
      const hungry = await create('api', {
        name: 'API hungry script',
        localSetupScript: 'const a = []; while (true) a.push(new Array(1e6).fill(7));',
        request: { url: `${http.url}/ok` },
      });
      expect((await runNow(hungry.id)).result.apiCheckResult.requestError).toMatch(/memory limit/);
      const nosy = await create('api', {
        name: 'API nosy script',
        localSetupScript: "request.headers['X-Env'] = typeof require + ',' + typeof process.exit + ',' + Object.keys(process.env).includes('DATABASE_URL')",
        request: { url: `${http.url}/echo` },
      });
      const seen = JSON.parse((await runNow(nosy.id)).result.apiCheckResult.response.body).headers['x-env'];
      expect(seen).toBe('undefined,undefined,false');
      // The runner is still well: the next run passes.
      expect((await runNow(scripted.id)).session.status).toBe('PASSED');
    });

    it("cut what a script or target puts in a result to the detail's bound: a 20 MB body, 2,000 headers, megabytes of console", async () => {
      const check = await create('api', {
        name: 'API oversized',
        localSetupScript: `
          request.body = 'b'.repeat(20 * 1024 * 1024);
          for (let i = 0; i < 2000; i++) request.headers['x-h' + i] = String(i);
          for (let i = 0; i < 5; i++) console.log('c'.repeat(1024 * 1024));`,
        request: { method: 'POST', url: `${http.url}/echo` },
      });
      const { result } = await runNow(check.id);
      const api = result.apiCheckResult;
      expect(api.detailCut).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(api))).toBeLessThanOrEqual(64 * 1024);
      expect(Object.keys(api.request.headers).length).toBeLessThan(2000);
      expect(api.request.data.length).toBeLessThan(20 * 1024);
      expect(api.request.data).toMatch(/^b+ … \(cut at \d+ characters\)$/);
      // A run within the bound is kept as it was.
      const small = await runNow((await create('api', { name: 'API small', request: { url: `${http.url}/ok` } })).id);
      expect(small.result.apiCheckResult.detailCut).toBeUndefined();
    });

    it('retry per retryStrategy and report the attempts', async () => {
      const check = await create('api', {
        name: 'API flaky',
        retryStrategy: { type: 'FIXED', baseBackoffSeconds: 0, maxRetries: 2, sameRegion: true },
        request: { url: `${http.url}/flaky/retry-once/1` },
      });
      const { session, result } = await runNow(check.id);
      expect(session.status).toBe('PASSED');
      expect(result.attempts).toBe(2);
      expect(http.hits('/flaky/retry-once/1')).toHaveLength(2);
    });

    it('refuse at create a target the outbound policy refuses; a name it does not open fails the run as blocked', async () => {
      for (const url of ['http://169.254.169.254/latest/meta-data', 'http://10.0.0.5/', `http://127.0.0.1:${new URL(svc.url).port}/v1/checks`]) {
        expectFieldError(await svc.call('POST', '/v1/checks/api', { body: { name: 'x', request: { url } } }), 'body.request.url', 'outbound');
      }
      const blocked = await create('api', { name: 'API outside', request: { url: 'https://internal.example.test/health' } });
      const { result } = await runNow(blocked.id);
      expect(result.apiCheckResult.requestError).toMatch(/blocked by outbound policy: internal\.example\.test is not named by OUTBOUND_ALLOW/);
    });
  });

  describe('the other types', () => {
    it('URL monitors follow redirects and assert on the status', async () => {
      const check = await create('url', {
        name: 'URL',
        request: { url: `${http.url}/redirect`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      });
      expect((await runNow(check.id)).result).toMatchObject({ hasFailures: false, statusCode: 200 });
    });

    it('TCP connects, sends, reads the answer; a closed port fails', async () => {
      const check = await create('tcp', {
        name: 'TCP',
        request: { hostname: '127.0.0.1', port: tcp.port, data: 'PING\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }] },
      });
      const { result } = await runNow(check.id);
      expect(result).toMatchObject({ hasFailures: false });
      expect(result.tcpCheckResult.response.data).toBe('PONG\n');
      expect(result.timings).toMatchObject({ dns: expect.any(Number), connection: expect.any(Number), data: expect.any(Number) });
      const closed = await create('tcp', { name: 'TCP closed', request: { hostname: '127.0.0.1', port: 1 } });
      expect((await runNow(closed.id)).result.tcpCheckResult.requestError).toMatch(/ECONNREFUSED/);
      // Named by a URL, as the anchor also takes it: the probe connects to the URL's host.
      const byUrl = await create('tcp', {
        name: 'TCP by URL',
        request: { url: 'tcp://127.0.0.1/', port: tcp.port, data: 'PING\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }] },
      });
      expect((await runNow(byUrl.id)).result).toMatchObject({ hasFailures: false });
    });

    it("DNS asks the check's nameserver over UDP and TCP; NXDOMAIN fails unless asserted", async () => {
      const a = await create('dns', {
        name: 'DNS',
        request: {
          query: 'svc.test',
          recordType: 'A',
          nameServer: '127.0.0.1',
          port: dns.udpPort,
          assertions: [{ source: 'JSON_ANSWER', property: '$.Answer[0].data', comparison: 'EQUALS', target: '10.1.2.3' }],
        },
      });
      const { result } = await runNow(a.id);
      expect(result).toMatchObject({ hasFailures: false });
      expect(result.dnsCheckResult.response).toMatchObject({ returnCode: 'NOERROR' });
      const overTcp = await create('dns', {
        name: 'DNS TCP',
        request: { query: 'svc.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.tcpPort, protocol: 'TCP' },
      });
      expect((await runNow(overTcp.id)).result.dnsCheckResult.response.answer).toContain('10.1.2.3');
      const missing = await create('dns', {
        name: 'DNS missing',
        request: { query: 'nothing.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.udpPort },
      });
      expect((await runNow(missing.id)).result).toMatchObject({ hasFailures: true, dnsCheckResult: { response: { returnCode: 'NXDOMAIN' } } });
      const expected = await create('dns', {
        name: 'DNS expects NXDOMAIN',
        request: {
          query: 'nothing.test',
          recordType: 'A',
          nameServer: '127.0.0.1',
          port: dns.udpPort,
          assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NXDOMAIN' }],
        },
      });
      expect((await runNow(expected.id)).result.hasFailures).toBe(false);
    });

    it('SSL reads the certificate: an untrusted chain fails, skipChainValidation passes, one near expiry is degraded', async () => {
      const untrusted = await create('ssl', {
        name: 'SSL untrusted',
        request: { sslConfig: { hostname: '127.0.0.1', port: tls.port, serverName: 'tls.test' } },
      });
      const u = await runNow(untrusted.id);
      expect(u.result.hasFailures).toBe(true);
      expect(u.result.sslCheckResult).toMatchObject({ chainTrusted: false, hostnameVerified: true });
      const skipped = await create('ssl', {
        name: 'SSL skip chain',
        request: {
          sslConfig: { hostname: '127.0.0.1', port: tls.port, serverName: 'tls.test', skipChainValidation: true },
          assertions: [{ source: 'CERTIFICATE', property: 'subjectCN', comparison: 'EQUALS', target: 'tls.test' }],
        },
      });
      const s = await runNow(skipped.id);
      expect(s.result).toMatchObject({ hasFailures: false, isDegraded: false });
      expect(s.result.daysUntilExpiry).toBeGreaterThanOrEqual(88);
      const soon = await create('ssl', {
        name: 'SSL soon',
        request: { sslConfig: { hostname: '127.0.0.1', port: tlsSoon.port, serverName: 'soon.test', skipChainValidation: true, alertDaysBeforeExpiry: 20 } },
      });
      expect((await runNow(soon.id)).result).toMatchObject({ hasFailures: false, isDegraded: true });
    });

    it("ICMP pings with Debian's ping; traceroute reaches a local port; gRPC health answers", async () => {
      const icmp = await create('icmp', { name: 'ICMP', request: { hostname: '127.0.0.1', pingCount: 3 } });
      const i = await runNow(icmp.id);
      expect(i.result).toMatchObject({ hasFailures: false, packetLoss: 0 });
      expect(i.result.latencyAvg).toEqual(expect.any(Number));
      expect(i.result.icmpCheckResult.response.pingResults).toHaveLength(3);
      const trace = await svc.call('POST', '/v1/checks', {
        body: {
          checkType: 'TRACEROUTE',
          name: 'Traceroute',
          locations: ['eu-west-1'],
          frequency: 60,
          doubleCheck: false,
          request: { url: '127.0.0.1', port: tcp.port, protocol: 'TCP', maxHops: 3, timeout: 2 },
        },
      });
      expect(trace.status).toBe(201);
      const t = await runNow(trace.body.id);
      expect(t.result).toMatchObject({ hasFailures: false, hopCount: 1, tracerouteCheckResult: { destinationReached: true } });
      const health = await svc.call('POST', '/v1/checks', {
        body: {
          checkType: 'GRPC',
          name: 'gRPC',
          locations: ['eu-west-1'],
          frequency: 60,
          doubleCheck: false,
          request: { url: '127.0.0.1', port: grpcTarget.port, grpcConfig: { mode: 'HEALTH', tls: false } },
        },
      });
      expect(health.status).toBe(201);
      const g = await runNow(health.body.id);
      expect(g.result).toMatchObject({ hasFailures: false, grpcStatusCode: 0, grpcCheckResult: { healthStatus: 1 } });
    });

    it('a browser script that is not a Playwright Test spec fails saying so, not in silence', async () => {
      const browser = await create('browser', { name: 'Browser', script: 'await page.goto("http://127.0.0.1/")' });
      const { result, session } = await runNow(browser.id);
      expect(session.status).toBe('FAILED');
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false });
      expect(result.browserCheckResult.errors[0].message).toMatch(/defines no test/);
    }, 70_000);
  });

  describe('scheduling and sessions', () => {
    it('runs a 10-second check once per slot, also with a second scheduler and runner, and stops when it is deactivated', async () => {
      // A second process's scheduler and runner, on the same database and Redis: slots are still claimed once.
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      const scheduler = startScheduler({ sql: svc.deps.sql, queues, logger: svc.deps.logger, tickMs: 100, lookaheadMs: 1000, reconcileMs: 200 });
      const runner = startLocalRunner(queues, { locations: ['eu-west-1'], concurrency: 4, resultLingerMs: 1000 });
      const check = await create('api', { name: 'every 10 s', frequency: 0, frequencyOffset: 10, request: { url: `${http.url}/ok` } });
      const served = () => http.hits('/ok').length;
      const before = served();
      const runs = await waitFor(
        () => svc.call('GET', `/v1/check-results/${check.id}?limit=50`),
        (r) => r.body.length >= 3,
        45_000,
      );
      await scheduler.close();
      await runner.close();
      await queues.close();
      const starts = (runs.body as { startedAt: string }[]).map((r) => Date.parse(r.startedAt)).sort();
      // Each slot made one request of the target and one result, whichever runner took it.
      expect(served() - before).toBeGreaterThanOrEqual(starts.length);
      expect(served() - before).toBeLessThanOrEqual(starts.length + 1);
      // One run a slot, 10 s apart (each within a second of its slot).
      expect(Math.abs(starts[1] - starts[0] - 10_000)).toBeLessThan(1000);
      expect(new Set(starts.map((s) => Math.round(s / 10_000))).size).toBe(starts.length);
      await svc.call('PUT', `/v1/checks/api/${check.id}`, { body: { activated: false } });
      await new Promise((r) => setTimeout(r, 1000));
      const count = (await svc.call('GET', `/v1/check-results/${check.id}?limit=50`)).body.length;
      await new Promise((r) => setTimeout(r, 11_000));
      expect((await svc.call('GET', `/v1/check-results/${check.id}?limit=50`)).body.length).toBe(count);
    }, 90_000);

    it('makes the schedules match the checks when Postgres announces a change, and reads no check while none is', async () => {
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      const scheduler = startScheduler({ sql: svc.deps.sql, queues, logger: svc.deps.logger, tickMs: 100, lookaheadMs: 1000, reconcileMs: 200 });
      try {
        await waitFor(
          async () => scheduler.state(),
          (s) => s.listening && s.reconciles >= 1,
        );
        await new Promise((r) => setTimeout(r, 500));
        const quiet = scheduler.state().reconciles;
        await new Promise((r) => setTimeout(r, 1500));
        // Nothing changed: 15 ticks, and not one read of every check (one every 200 ms before).
        expect(scheduler.state().reconciles).toBe(quiet);
        const period = async () =>
          (await svc.deps.sql<{ period_ms: number }[]>`select period_ms from check_schedules where check_id = ${check.id}`)[0]?.period_ms;
        const check = await create('api', { name: 'announced', frequency: 5, request: { url: `${http.url}/ok` } });
        await waitFor(period, (p) => p === 300_000, 5000);
        expect(scheduler.state().reconciles).toBeGreaterThan(quiet);
        // Changed behind the API's back: announced all the same, by the table's trigger.
        await svc.deps.sql`update checks set frequency = 10 where id = ${check.id}`;
        await waitFor(period, (p) => p === 600_000, 5000);
        await svc.deps.sql`update checks set activated = false where id = ${check.id}`;
        await waitFor(period, (p) => p === undefined, 5000);
        // Announcements faster than ticks (a client changing checks several times a second) do not hold ticks back.
        const streamed = scheduler.state().reconciles;
        for (let i = 0; i < 30; i++) {
          await svc.deps.sql`select pg_notify('schedules_changed', '')`;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(scheduler.state().reconciles - streamed).toBeGreaterThanOrEqual(4);
      } finally {
        await scheduler.close();
        await queues.close();
      }
    }, 30_000);

    it("a slot second's scheduled runs travel as one job, enqueued once; each run is made and stored, a deleted check's skipped", async () => {
      // us-west-1 has no runner in this service: the batch waits for the runner this test starts. The checks' own
      // location, sa-east-1, has no runner either: the service's scheduler's runs of them wait there, out of the way
      // (in us-west-1, the runner this test starts made them when their minute came during the test).
      const location = 'us-west-1';
      const checks = await Promise.all(
        ['one', 'two', 'gone'].map((name) =>
          create('api', { name: `batch ${name}`, locations: ['sa-east-1'], request: { url: `${http.url}/flaky/batch-${name}/0` } }),
        ),
      );
      const accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${checks[0].id}`)[0].account_id;
      const slot = Math.ceil((Date.now() + 1500) / 1000) * 1000;
      const runs = checks.map((c) => ({
        job: { v: 1, accountId, checkId: c.id, location, slot, attempt: 1, source: 'SCHEDULER', periodMs: 60_000 } as RunJob,
        queue: `runs-${location}`,
        startAt: slot,
      }));
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      await enqueueRuns(queues, runs);
      await enqueueRuns(queues, [...runs].reverse()); // a scheduler that crashed before its commit enqueues them again
      const queue = queues.queue<RunQueueJob>(`runs-${location}`);
      const jobs = (await queue.getJobs(['delayed', 'wait'])).filter((j) => isRunBatch(j.data) && j.data.runs[0].slot === slot);
      expect(jobs).toHaveLength(1);
      expect(isRunBatch(jobs[0].data) && jobs[0].data.runs.map((r) => r.checkId).sort()).toEqual(checks.map((c) => c.id).sort());
      expect(JSON.stringify(jobs[0].data)).not.toContain(http.url); // ids only: definitions are read when the batch runs
      expect((await svc.call('DELETE', `/v1/checks/${checks[2].id}`)).status).toBe(204);
      const runner = startLocalRunner(queues, { locations: [location], concurrency: 2, resultLingerMs: 50 });
      try {
        for (const check of checks.slice(0, 2)) {
          const stored = await waitFor(
            () => svc.call('GET', `/v1/check-results/${check.id}/${scheduledResultId(check.id, slot, location)}`),
            (r) => r.status === 200,
            30_000,
          );
          expect(stored.body).toMatchObject({ runLocation: location, hasFailures: false, apiCheckResult: { response: { status: 200 } } });
          expect(Date.parse(stored.body.startedAt)).toBeGreaterThanOrEqual(slot);
        }
        const done = await waitFor(
          () => queue.getJob(jobs[0].id!),
          (j) => Boolean(j?.finishedOn),
          10_000,
        );
        expect(done!.returnvalue).toEqual({ runs: 3, skipped: 1, madeBefore: 0 });
        expect(http.hits('/flaky/batch-gone/0')).toHaveLength(0);
      } finally {
        await runner.close();
        await queues.close();
      }
    }, 60_000);

    it("a window's scheduled runs travel as one job and each starts at its own slot; a runner that stops hands back the runs still waiting", async () => {
      // us-west-1 has no runner in this service but the ones this test starts; the checks' own location, sa-east-1, none.
      const location = 'us-west-1';
      const [early, late, last] = await Promise.all(
        ['early', 'late', 'last'].map((name) =>
          create('api', { name: `window ${name}`, locations: ['sa-east-1'], request: { url: `${http.url}/flaky/window-${name}/0` } }),
        ),
      );
      const accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${early.id}`)[0].account_id;
      // Three slots 2 s and 6 s apart in one 10-second window.
      const windowMs = 10_000;
      let first = Math.ceil((Date.now() + 1500) / 1000) * 1000;
      if (windowStart(first, windowMs) !== windowStart(first + 6000, windowMs)) first = windowStart(first + 6000, windowMs);
      const slots = [first, first + 2000, first + 6000];
      const runs = [early, late, last].map((c, i) => ({
        job: { v: 1, accountId, checkId: c.id, location, slot: slots[i], attempt: 1, source: 'SCHEDULER', periodMs: 60_000 } as RunJob,
        queue: `runs-${location}`,
        startAt: slots[i],
      }));
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      await enqueueRuns(queues, runs, Date.now(), windowMs);
      const queue = queues.queue<RunQueueJob>(`runs-${location}`);
      const jobs = (await queue.getJobs(['delayed', 'wait'])).filter((j) => isRunBatch(j.data) && j.data.runs.some((r) => r.checkId === early.id));
      expect(jobs).toHaveLength(1);
      expect(isRunBatch(jobs[0].data) && jobs[0].data.runs.map((r) => r.slot)).toEqual(slots);
      const stored = (checkId: string, slot: number) =>
        waitFor(
          () => svc.call('GET', `/v1/check-results/${checkId}/${scheduledResultId(checkId, slot, location)}`),
          (r) => r.status === 200,
          30_000,
        );
      const one = startLocalRunner(queues, { locations: [location], concurrency: 2, resultLingerMs: 50 });
      let oneStopped = false;
      let two: ReturnType<typeof startLocalRunner> | undefined;
      try {
        // The first two runs, each at its own slot (not all at the batch's first).
        for (const [check, slot] of [
          [early, slots[0]],
          [late, slots[1]],
        ] as const) {
          const started = Date.parse((await stored(check.id, slot)).body.startedAt);
          expect(started).toBeGreaterThanOrEqual(slot);
          expect(started).toBeLessThan(slot + 1000);
        }
        expect(http.hits('/flaky/window-last/0')).toHaveLength(0);
        // Stopped before the last slot: its run goes back to the queue, to its slot, and the batch completes.
        await one.close();
        oneStopped = true;
        const done = await queue.getJob(jobs[0].id!);
        expect(done?.finishedOn).toBeTruthy();
        expect(done!.returnvalue).toEqual({ runs: 3, skipped: 0, madeBefore: 0, handedBack: 1 });
        const back = await queue.getJob(`${jobs[0].id}-back`);
        expect(back && isRunBatch(back.data) && back.data.runs.map((r) => r.checkId)).toEqual([last.id]);
        expect(back!.timestamp + back!.delay).toBeGreaterThanOrEqual(slots[2] - 50);
        expect(http.hits('/flaky/window-last/0')).toHaveLength(0);
        // Another runner makes it at its slot, once.
        two = startLocalRunner(queues, { locations: [location], concurrency: 2, resultLingerMs: 50 });
        const started = Date.parse((await stored(last.id, slots[2])).body.startedAt);
        expect(started).toBeGreaterThanOrEqual(slots[2]);
        expect(started).toBeLessThan(slots[2] + 1000);
        expect(http.hits('/flaky/window-last/0')).toHaveLength(1);
        expect(http.hits('/flaky/window-early/0')).toHaveLength(1);
      } finally {
        if (!oneStopped) await one.close();
        await two?.close();
        await queues.close();
      }
    }, 60_000);

    it("scheduled runs keep their checks' definitions from one slot to the next, and run a change from the next slot on", async () => {
      // us-west-1 has no runner in this service but the one this test starts; the checks' own location, sa-east-1, none.
      const location = 'us-west-1';
      const [kept, edited] = await Promise.all(
        ['kept', 'edited'].map((name) =>
          create('api', { name: `cached ${name}`, locations: ['sa-east-1'], request: { url: `${http.url}/flaky/cache-${name}/0` } }),
        ),
      );
      const accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${kept.id}`)[0].account_id;
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      const metrics = new Metrics();
      const runner = startLocalRunner(queues, { locations: [location], concurrency: 2, resultLingerMs: 50, metrics, definitionCacheBytes: 1024 * 1024 });
      const definitions = async () =>
        Object.fromEntries(((await metrics.registry.getSingleMetric('runner_definitions_total')?.get())?.values ?? []).map((v) => [v.labels.from, v.value]));
      /** Makes both checks' scheduled runs of `slot` (a batch) and waits for their results. */
      const runSlot = async (slot: number) => {
        await enqueueRuns(
          queues,
          [kept, edited].map((c) => ({
            job: { v: 1, accountId, checkId: c.id, location, slot, attempt: 1, source: 'SCHEDULER', periodMs: 60_000 } as RunJob,
            queue: `runs-${location}`,
            startAt: slot,
          })),
        );
        for (const check of [kept, edited])
          await waitFor(
            () => svc.call('GET', `/v1/check-results/${check.id}/${scheduledResultId(check.id, slot, location)}`),
            (r) => r.status === 200,
            30_000,
          );
      };
      try {
        const first = Math.ceil((Date.now() + 1000) / 1000) * 1000;
        await runSlot(first);
        expect(await definitions()).toEqual({ read: 2 });
        await runSlot(first + 2000);
        expect(await definitions()).toEqual({ read: 2, kept: 2 });
        expect(http.hits('/flaky/cache-edited/0')).toHaveLength(2);
        // Changed through the API: the next slot runs the change (Postgres announced it; the process forgot the account's).
        const put = await svc.call('PUT', `/v1/checks/api/${edited.id}`, { body: { request: { method: 'GET', url: `${http.url}/flaky/cache-edited/9` } } });
        expect(put.status).toBe(200);
        await runSlot(first + 4000);
        expect(http.hits('/flaky/cache-edited/9')).toHaveLength(1);
        expect(http.hits('/flaky/cache-edited/0')).toHaveLength(2);
        expect(http.hits('/flaky/cache-kept/0')).toHaveLength(3);
        expect(await definitions()).toEqual({ read: 4, kept: 2 });
      } finally {
        await runner.close();
        await queues.close();
      }
    }, 60_000);

    it('a batch taken again makes only the runs not marked made; a runner marks its runs as it makes them', async () => {
      // The checks live in sa-east-1 (no runner): the scheduler's own runs of them wait there, not in the runner's queue.
      const location = 'us-west-1';
      const checks = await Promise.all([
        create('api', { name: 'again made', locations: ['sa-east-1'], request: { url: `${http.url}/flaky/again-made/0` } }),
        create('api', { name: 'again fast', locations: ['sa-east-1'], request: { url: `${http.url}/flaky/again-fast/0` } }),
        create('api', { name: 'again slow', locations: ['sa-east-1'], request: { url: `${http.url}/slow?ms=2500` } }),
      ]);
      const accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${checks[0].id}`)[0].account_id;
      const slot = Math.ceil((Date.now() + 1500) / 1000) * 1000;
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      await enqueueRuns(
        queues,
        checks.map((c) => ({
          job: { v: 1, accountId, checkId: c.id, location, slot, attempt: 1, source: 'SCHEDULER', periodMs: 60_000 } as RunJob,
          queue: `runs-${location}`,
          startAt: slot,
        })),
      );
      const queue = queues.queue<RunQueueJob>(`runs-${location}`);
      const [job] = (await queue.getJobs(['delayed', 'wait'])).filter((j) => isRunBatch(j.data) && j.data.runs[0].slot === slot);
      const indexOf = (id: string) => (job.data as { runs: RunJob[] }).runs.findIndex((r) => r.checkId === id);
      // What a runner that died after making the first run left in the job.
      await job.updateProgress({ made: [indexOf(checks[0].id)] });
      const slowHits = http.hits('/slow').length;
      const runner = startLocalRunner(queues, { locations: [location], concurrency: 3, resultLingerMs: 50 });
      try {
        // While the slow run still runs, the fast one is marked made in the job.
        const marked = await waitFor(
          () => queue.getJob(job.id!),
          (j) => ((j?.progress as { made?: number[] })?.made ?? []).includes(indexOf(checks[1].id)),
          20_000,
        );
        expect(marked!.finishedOn).toBeUndefined();
        const done = await waitFor(
          () => queue.getJob(job.id!),
          (j) => Boolean(j?.finishedOn),
          20_000,
        );
        expect(done!.returnvalue).toEqual({ runs: 3, skipped: 0, madeBefore: 1 });
        expect(http.hits('/flaky/again-made/0')).toHaveLength(0);
        expect(http.hits('/flaky/again-fast/0')).toHaveLength(1);
        expect(http.hits('/slow').length - slowHits).toBe(1);
        for (const check of checks.slice(1)) {
          const stored = await waitFor(
            () => svc.call('GET', `/v1/check-results/${check.id}/${scheduledResultId(check.id, slot, location)}`),
            (r) => r.status === 200,
            30_000,
          );
          expect(stored.body.runLocation).toBe(location);
        }
      } finally {
        await runner.close();
        await queues.close();
      }
    }, 60_000);

    it("a check session's result does not wait for the linger of scheduled runs' results", async () => {
      // us-east-2 has no runner in this service: the session's run waits for the runner this test starts, whose
      // results linger a minute for others. Someone waits for a session's result: it goes to ingest at once.
      const location = 'us-east-2';
      const check = await create('api', { name: 'session no linger', locations: [location], request: { url: `${http.url}/ok` } });
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      const runner = startLocalRunner(queues, { locations: [location], concurrency: 2, resultLingerMs: 60_000 });
      try {
        const started = Date.now();
        const { result } = await runNow(check.id);
        expect(result).toMatchObject({ runLocation: location, hasFailures: false });
        expect(Date.now() - started).toBeLessThan(30_000);
      } finally {
        await runner.close();
        await queues.close();
      }
    }, 60_000);

    it('a scheduled run more than a period past its slot is skipped, counted, and logged as a count per location', async () => {
      // None of these locations has a runner in this service: the runs wait for the runner this test starts.
      const [batched, alone] = ['us-west-1', 'us-west-2'];
      // The checks' own location, sa-east-1, has no runner either: the scheduler's runs of them wait there, out of the way.
      const paths = ['late a', 'late b', 'late alone', 'on time'].map((name) => `/flaky/skip-${name.replace(' ', '-')}/0`);
      const checks = await Promise.all(paths.map((p) => create('api', { name: `skip ${p}`, locations: ['sa-east-1'], request: { url: `${http.url}${p}` } })));
      const accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${checks[0].id}`)[0].account_id;
      const run = (i: number, location: string, slot: number) => ({
        job: { v: 1, accountId, checkId: checks[i].id, location, slot, attempt: 1, source: 'SCHEDULER', periodMs: 60_000 } as RunJob,
        queue: `runs-${location}`,
        startAt: slot,
      });
      // A batch of two runs of a slot a minute and a bit past, a lone run as late, and a run on time.
      const lateSlot = Math.floor((Date.now() - 62_000) / 1000) * 1000;
      const slot = lateSlot + 62_000;
      const queues = new Queues(svc.env.REDIS_URL, svc.env.REDIS_PREFIX);
      await enqueueRuns(queues, [run(0, batched, lateSlot), run(1, batched, lateSlot), run(2, alone, lateSlot), run(3, batched, slot)]);
      const jobAt = async (location: string, at: number) =>
        (await queues.queue<RunQueueJob>(`runs-${location}`).getJobs(['delayed', 'wait'])).find(
          (j) => (isRunBatch(j.data) ? j.data.runs[0] : j.data).slot === at,
        )!;
      const [lateBatch, lateAlone] = [await jobAt(batched, lateSlot), await jobAt(alone, lateSlot)];
      expect([isRunBatch(lateBatch.data), isRunBatch(lateAlone.data)]).toEqual([true, false]);
      const lines: Record<string, unknown>[] = [];
      const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line)) });
      const metrics = new Metrics();
      const runner = startLocalRunner(queues, { locations: [batched, alone], concurrency: 2, resultLingerMs: 50, logger, metrics });
      try {
        const finished = (location: string, id: string) =>
          waitFor(
            () => queues.queue<RunQueueJob>(`runs-${location}`).getJob(id),
            (j) => Boolean(j?.finishedOn),
            20_000,
          );
        expect((await finished(batched, lateBatch.id!))!.returnvalue).toEqual({ runs: 2, skipped: 2, madeBefore: 0 });
        expect((await finished(alone, lateAlone.id!))!.returnvalue).toEqual({ skipped: 'expired' });
        const stored = await waitFor(
          () => svc.call('GET', `/v1/check-results/${checks[3].id}/${scheduledResultId(checks[3].id, slot, batched)}`),
          (r) => r.status === 200,
          30_000,
        );
        expect(stored.body).toMatchObject({ runLocation: batched, hasFailures: false });
        for (const [i, location] of [
          [0, batched],
          [1, batched],
          [2, alone],
        ] as const) {
          expect(http.hits(paths[i])).toHaveLength(0);
          expect((await svc.call('GET', `/v1/check-results/${checks[i].id}/${scheduledResultId(checks[i].id, lateSlot, location)}`)).status).toBe(404);
        }
        const expired = (await metrics.registry.getMetricsAsJSON())
          .find((m) => m.name === 'runner_runs_total')!
          .values.filter((v) => v.labels.outcome === 'expired');
        expect(Object.fromEntries(expired.map((v) => [v.labels.location, v.value]))).toEqual({ [batched]: 2, [alone]: 1 });
        // The first skip of a quiet spell is logged at once, with its check; the next ones go into a count per
        // location, logged every 10 s: fewer lines than runs.
        const skipped = lines.filter((l) => l.msg === 'runs too late to make; skipped');
        expect(skipped[0]).toMatchObject({ level: 40, runs: 1 });
        expect(checks.slice(0, 3).map((c) => c.id)).toContain(skipped[0].checkId);
        expect(skipped[0].lateSeconds).toBeGreaterThanOrEqual(61);
        expect(skipped.length).toBeLessThan(3);
      } finally {
        await runner.close();
        await queues.close();
      }
    }, 60_000);

    it('a location without a runner shows as lag, and its session times out; a session can be cancelled', async () => {
      const check = await create('api', { name: 'nobody runs here', locations: ['ap-south-1'], request: { url: `${http.url}/ok` } });
      const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.id] } } });
      const sessionId = trigger.body.sessions[0].checkSessionId;
      const health = await waitFor(
        () => svc.call('GET', '/health'),
        (r) => r.body.runners?.locations?.find((l: { location: string }) => l.location === 'ap-south-1')?.waiting >= 1,
      );
      expect(health.body.runners.locations.find((l: { location: string }) => l.location === 'ap-south-1')).toMatchObject({
        runners: 0,
        waiting: expect.any(Number),
      });
      const ended = await waitFor(
        () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
        (r) => r.status === 200,
        60_000,
      );
      expect(ended.body).toMatchObject({ status: 'TIMED_OUT', results: [] });
      const again = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.id] } } });
      const other = again.body.sessions[0].checkSessionId;
      expect((await svc.call('POST', `/v1/check-sessions/${other}/cancel`)).status).toBe(204);
      expect((await svc.call('GET', `/v1/check-sessions/${other}`)).body.status).toBe('CANCELLED');
      const wait = await svc.call('GET', `/v2/check-sessions/${other}/completion?maxWaitSeconds=1`);
      expect(wait.body.status).toBe('CANCELLED');
    }, 80_000);

    it('a test session run is queued only once its records have committed: a slow commit still gets its result', async () => {
      const check = await create('api', { name: 'slow commit', request: { url: `${http.url}/ok` } });
      // A commit that takes a second (a deferred trigger sleeps at commit time): a runner handed the run before the
      // commit would find no run to make, and the session would never end.
      await svc.deps.sql.unsafe(`
        create or replace function slow_commit() returns trigger language plpgsql as $$ begin perform pg_sleep(1); return null; end $$;
        create constraint trigger slow_commit after insert on adhoc_schedulings deferrable initially deferred for each row execute function slow_commit();`);
      try {
        const trigger = await svc.call('POST', '/v1/test-sessions/trigger', {
          body: { name: 'slow', runLocation: 'eu-west-1', target: { checkId: [check.id] } },
        });
        expect(trigger.status, trigger.text).toBe(201);
        const done = await svc.call('GET', `/v1/test-sessions/${trigger.body.testSessionId}/completion?maxWaitSeconds=20`);
        expect(done.status, done.text).toBe(200);
        expect(done.body).toMatchObject({ status: 'PASSED', results: [expect.objectContaining({ status: 'PASSED' })] });
      } finally {
        await svc.deps.sql.unsafe('drop trigger slow_commit on adhoc_schedulings; drop function slow_commit();');
      }
    }, 45_000);

    it('matches tags to trigger, answers 404 when nothing matches, and keeps accounts apart', async () => {
      await create('api', { name: 'tagged', tags: ['shop', 'critical'], request: { url: `${http.url}/ok` } });
      const byTags = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { matchTags: [['shop', 'critical'], ['nonexistent']] } } });
      expect(byTags.status).toBe(201);
      expect(byTags.body.sessions.map((s: { name: string }) => s.name)).toEqual(['tagged']);
      const none = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { matchTags: [['shop', '!critical']] } } });
      expect(none.status).toBe(404);
      expect(none.body.message).toBe('No matching checks were found.');
      const { createOtherTenant } = await import('../../test/support/service.js');
      const other = await createOtherTenant(svc);
      const session = byTags.body.sessions[0].checkSessionId;
      expect((await svc.call('GET', `/v2/check-sessions/${session}`, { key: other.key })).status).toBe(404);
      expect((await svc.call('POST', `/v1/check-sessions/${session}/cancel`, { key: other.key })).status).toBe(404);
      expect(
        (await svc.call('POST', '/v2/check-sessions/trigger', { key: other.key, body: { target: { checkId: [byTags.body.sessions[0].checkId] } } })).status,
      ).toBe(404);
    });
  });
});
