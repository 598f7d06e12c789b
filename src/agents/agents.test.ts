import { randomUUID } from 'node:crypto';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentProcess, startAgentProcess } from '../../test/support/agents.js';
import { startHttpReceiver } from '../../test/support/receivers.js';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startDnsTarget, startGrpcTarget, startHttpTarget, startTcpTarget, startTlsTarget } from '../../test/support/targets.js';
import { phaseOf } from '../model/schedule.js';

/**
 * Agents as separate processes on 127.0.0.1, each with its own data folder, reaching the service only over HTTP
 * with a location key: every check type through an agent, scheduled runs, a killed agent's run made by another
 * after its lease, key rotation and revocation, keys of other locations and accounts, the fleet view.
 */
describe('agents of a private location', () => {
  let svc: TestService;
  let http: HttpTarget;
  let tcp: Awaited<ReturnType<typeof startTcpTarget>>;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;
  let tls: Awaited<ReturnType<typeof startTlsTarget>>;
  let grpcTarget: Awaited<ReturnType<typeof startGrpcTarget>>;
  let location: { id: string; slugName: string; keys: { id: string; rawKey: string }[] };
  const agents: AgentProcess[] = [];

  const agent = async (apiKey: string, env: Record<string, string> = {}) => {
    const a = await startAgentProcess({ apiUrl: svc.url, apiKey, env });
    agents.push(a);
    return a;
  };

  beforeAll(async () => {
    [http, tcp, dns, tls, grpcTarget] = await Promise.all([
      startHttpTarget(),
      startTcpTarget(),
      startDnsTarget({ 'svc.test': '10.1.2.3' }),
      startTlsTarget('tls.test', 90),
      startGrpcTarget(),
    ]);
    svc = await startTestService({
      SCHEDULER: 'on',
      SCHEDULER_TICK_MS: '100',
      SCHEDULER_RECONCILE_MS: '200',
      CHECK_SESSION_TIMEOUT_SECONDS: '60',
      AGENT_LEASE_SECONDS: '3',
      AGENT_UNAVAILABLE_SECONDS: '6',
      STATE_SWEEP_INTERVAL_MS: '1000',
      METRICS_TOKEN: 'agents-suite-metrics',
    });
    location = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Office', slugName: 'office' } })).body;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
    for (const a of agents) a.remove();
    await svc?.stop();
    await Promise.all([http?.close(), tcp?.close(), dns?.close(), tls?.close(), grpcTarget?.close()]);
  });

  const create = async (segment: string, body: Record<string, unknown>) => {
    const res = await svc.call('POST', `/v1/checks/${segment}?autoAssignAlerts=false`, {
      body: { locations: [], privateLocations: [location.slugName], frequency: 720, retryStrategy: null, doubleCheck: false, activated: true, ...body },
    });
    if (res.status !== 201) throw new Error(`create ${segment}: ${res.status} ${res.text}`);
    return res.body as { id: string };
  };
  const runNow = async (checkId: string) => {
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [checkId] } } });
    expect(trigger.status, trigger.text).toBe(201);
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

  it('registers, is shown in the fleet view, and answers its health and metrics', async () => {
    const a = await agent(location.keys[0]!.rawKey);
    const read = await waitFor(
      () => svc.call('GET', `/v1/private-locations/${location.id}`),
      (r) => r.body.agentCount === 1 && r.body.lastSeen !== null,
    );
    expect(read.body).toMatchObject({ agentCount: 1, minAgentVersion: '1.0.0', runningAgents: [{ version: '1.0.0', isOutdated: false, count: 1 }] });
    expect(Date.parse(read.body.lastSeen)).toBeGreaterThan(Date.now() - 60_000);
    expect(read.body.runningAgents[0].agents[0].id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await fetch(`${a.healthUrl}/-/liveness`)).status).toBe(200);
    expect((await fetch(`${a.healthUrl}/-/readiness`)).status).toBe(200);
    const metrics = await (await fetch(`${a.healthUrl}/metrics`)).text();
    expect(metrics).toMatch(/^agent_offline 0$/m);
    expect(metrics).toMatch(/^agent_buffer_results 0$/m);
    // What the agent's calls come from is the location's egress.
    expect((await svc.call('GET', '/v1/static-ips-by-region')).body).toMatchObject({ office: ['127.0.0.1'] });
    expect((await svc.call('GET', '/v1/static-ips.txt')).text).toBe('127.0.0.1\n');
    // An agent older than AGENT_MIN_VERSION is outdated (a second agent of the same location, speaking the protocol by hand).
    const old = await fetch(`${svc.url}/v1/agent/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${location.keys[0]!.rawKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ protocol: 1, agentId: randomUUID(), version: '0.9.0', capabilities: ['API'], concurrency: 1 }),
    });
    expect(old.status).toBe(200);
    expect(await old.json()).toMatchObject({ isOutdated: true, minAgentVersion: '1.0.0' });
    const fleet = (await svc.call('GET', `/v1/private-locations/${location.id}`)).body;
    expect(fleet).toMatchObject({ agentCount: 2, minAgentVersion: '0.9.0' });
    expect(fleet.runningAgents.map((r: { version: string; isOutdated: boolean }) => [r.version, r.isOutdated])).toEqual([
      ['1.0.0', false],
      ['0.9.0', true],
    ]);
  }, 60_000);

  it('runs every check type the service runs, each result stored once with the location as its runLocation', async () => {
    const checks = [
      await create('api', {
        name: 'agent API',
        request: { url: `${http.url}/ok`, assertions: [{ source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'ok' }] },
      }),
      await create('url', { name: 'agent URL', request: { url: `${http.url}/redirect` } }),
      await create('tcp', {
        name: 'agent TCP',
        request: { hostname: '127.0.0.1', port: tcp.port, data: 'PING\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PONG' }] },
      }),
      await create('dns', { name: 'agent DNS', request: { query: 'svc.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.udpPort } }),
      await create('ssl', {
        name: 'agent SSL',
        request: { sslConfig: { hostname: '127.0.0.1', port: tls.port, serverName: 'tls.test', skipChainValidation: true } },
      }),
      await create('grpc', { name: 'agent gRPC', request: { url: '127.0.0.1', port: grpcTarget.port, grpcConfig: { mode: 'HEALTH', tls: false } } }),
      await create('traceroute', { name: 'agent traceroute', request: { url: '127.0.0.1', port: tcp.port, protocol: 'TCP', maxHops: 3, timeout: 2 } }),
      await create('icmp', { name: 'agent ICMP', request: { hostname: '127.0.0.1', pingCount: 2 } }),
      await create('browser', {
        name: 'agent browser',
        script: `import { test, expect } from '@playwright/test';\ntest('shop', async ({ page }) => { await page.goto('${http.url}/shop'); await expect(page.locator('h1')).toHaveText('Shop'); });`,
      }),
    ];
    const outcomes: Awaited<ReturnType<typeof runNow>>[] = [];
    for (const check of checks) outcomes.push(await runNow(check.id));
    for (const [i, { session, result }] of outcomes.entries()) {
      expect(session.status, `${i}: ${JSON.stringify(result).slice(0, 600)}`).toBe('PASSED');
      expect(result).toMatchObject({ runLocation: 'office', hasFailures: false, hasErrors: false });
    }
    // The browser run's screenshot or trace went up to the service over the lease and is served from there.
    const browser = outcomes.at(-1)!.result;
    expect(browser.browserCheckResult).toBeTruthy();
    for (const [i, check] of checks.entries()) {
      const ids = ((await svc.call('GET', `/v1/check-results/${check.id}?limit=100`)).body as { id: string }[]).map((r) => r.id);
      expect(ids.filter((id) => id === outcomes[i]!.result.id)).toHaveLength(1);
    }
  }, 180_000);

  it("runs the location's scheduled checks, one result per slot", async () => {
    const check = await create('api', { name: 'agent every 10 s', frequency: 0, frequencyOffset: 10, request: { url: `${http.url}/ok?scheduled` } });
    const runs = await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.id}?limit=50`),
      (r) => r.body.length >= 2,
      40_000,
    );
    expect((await svc.call('DELETE', `/v1/checks/${check.id}`)).status).toBe(204);
    const starts = (runs.body as { startedAt: string; runLocation: string }[]).map((r) => Date.parse(r.startedAt)).sort();
    expect(new Set(starts.map((t) => Math.round(t / 10_000))).size).toBe(starts.length);
    expect(runs.body.every((r: { runLocation: string }) => r.runLocation === 'office')).toBe(true);
  }, 60_000);

  it('a run on an agent killed mid-run is made by another after its lease, and stored once', async () => {
    // Only the agent about to die takes runs now.
    await Promise.all(agents.splice(0).map(async (a) => (await a.stop(), a.remove())));
    const doomed = await agent(location.keys[0]!.rawKey);
    const check = await create('api', {
      name: 'agent slow',
      maxResponseTime: 20_000,
      degradedResponseTime: 15_000,
      request: { url: `${http.url}/slow?ms=4000` },
    });
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.id] } } });
    const sessionId = trigger.body.sessions[0].checkSessionId as string;
    await waitFor(
      async () => http.hits('/slow').length,
      (n) => n >= 1,
      20_000,
    );
    await doomed.kill();
    await agent(location.keys[0]!.rawKey);
    const done = await waitFor(
      () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
      (r) => r.status !== 408,
      60_000,
    );
    expect(done.body.status).toBe('PASSED');
    // The target saw both tries; the service kept one result.
    expect(http.hits('/slow').length).toBe(2);
    const results = await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.id}`),
      (r) => r.body.length >= 1,
    );
    expect(results.body).toHaveLength(1);
  }, 90_000);

  it('takes a second key for rotation; a removed key stops its agents; other locations and accounts get nothing', async () => {
    const second = await svc.call('POST', `/v1/private-locations/${location.id}/keys`);
    expect(second.status).toBe(201);
    // Two live keys at most.
    expect((await svc.call('POST', `/v1/private-locations/${location.id}/keys`)).status).toBe(409);
    await Promise.all(agents.splice(0).map(async (a) => (await a.stop(), a.remove())));
    const onOld = await agent(location.keys[0]!.rawKey);
    const onNew = await agent(second.body.rawKey);
    expect((await svc.call('DELETE', `/v1/private-locations/${location.id}/keys/${location.keys[0]!.id}`)).status).toBe(204);
    // Within a lease period the old key's agent is refused and takes nothing; the new key's agent runs everything.
    await waitFor(
      async () => onOld.logs.join('\n'),
      (text) => text.includes('the service refuses this key'),
      30_000,
    );
    const leasedBefore = await leased(onOld);
    const check = await create('api', { name: 'after rotation', request: { url: `${http.url}/ok?rotation` } });
    const { session, result } = await runNow(check.id);
    expect(session.status).toBe('PASSED');
    expect(result.runLocation).toBe('office');
    expect(await leased(onOld)).toBe(leasedBefore);
    expect(await leased(onNew)).toBeGreaterThan(0);
    location.keys = [second.body];

    // A key of another location of the account, or of another account, reaches none of this location's runs.
    const elsewhere = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Lab', slugName: 'lab' } })).body;
    const other = await createOtherTenant(svc);
    const foreign = (await svc.call('POST', '/v1/private-locations', { key: other.key, body: { name: 'Theirs', slugName: 'office' } })).body;
    await Promise.all(agents.splice(0).map(async (a) => (await a.stop(), a.remove())));
    const probe = async (key: string) => {
      const agentId = randomUUID();
      const call = async (path: string, body: unknown) => {
        const res = await fetch(`${svc.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, json: async (): Promise<any> => res.json() };
      };
      expect((await call('/v1/agent/register', { protocol: 1, agentId, version: '1.0.0', capabilities: ['API'], concurrency: 1 })).status).toBe(200);
      return { agentId, call };
    };
    const waiting = await create('api', { name: 'waits for its own agents', request: { url: `${http.url}/ok?waiting` } });
    await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [waiting.id] } } });
    // What an autoscaler reads: the location's queued runs.
    const scrape = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer agents-suite-metrics' } })).text();
    expect(scrape).toContain(`location_runs{location="private-${location.id}",name="office",state="queued"} 1`);
    for (const key of [elsewhere.keys[0].rawKey, foreign.keys[0].rawKey]) {
      const { agentId, call } = await probe(key);
      const res = await call('/v1/agent/leases', { agentId, max: 10, waitSeconds: 1 });
      expect(res.status).toBe(200);
      expect((await res.json()).leases).toEqual([]);
    }
    // The run is still there for an agent of its own location, and its lease is good with that key only.
    const own = await probe(location.keys[0]!.rawKey);
    const { leases } = await (await own.call('/v1/agent/leases', { agentId: own.agentId, max: 1, waitSeconds: 5 })).json();
    expect(leases).toHaveLength(1);
    expect(leases[0].check).toMatchObject({ id: waiting.id });
    const outcome = {
      startedAt: Date.now() - 5,
      stoppedAt: Date.now(),
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      metrics: { responseTime: 5 },
      detail: {},
    };
    const thief = await probe(elsewhere.keys[0].rawKey);
    const stolen = await thief.call('/v1/agent/outcomes', { agentId: thief.agentId, outcomes: [{ leaseId: leases[0].leaseId, outcome }] });
    expect((await stolen.json()).outcomes).toEqual([{ leaseId: leases[0].leaseId, state: 'gone' }]);
    // Kept files are held to what a run writes: a CR/LF content type or a `../` name is refused, nothing taken.
    const badAsset = { type: 'screenshot', name: '../escape.png', contentType: 'image/png\r\nX-Injected: 1', key: 'screenshots/x.png', size: 1 };
    const forgedFiles = await own.call('/v1/agent/outcomes', {
      agentId: own.agentId,
      outcomes: [{ leaseId: leases[0].leaseId, outcome: { ...outcome, detail: { apiCheckResult: { assets: [badAsset] } } } }],
    });
    expect((await forgedFiles.json()).outcomes[0].state).toBe('refused');
    // A file past 50 MiB sent in chunks (no length declared) is a 413, not a 500.
    let sent = 0;
    const chunk = new Uint8Array(1024 * 1024);
    const stream = new ReadableStream<Uint8Array>({ pull: (c) => (sent++ < 52 ? c.enqueue(chunk) : c.close()) });
    // (On a connection of its own: the service closes it when the body goes on arriving after its answer.)
    const alone = new Agent();
    const upload = await undiciFetch(`${svc.url}/v1/agent/leases/${leases[0].leaseId}/files/screenshots`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${location.keys[0]!.rawKey}`, 'content-type': 'application/octet-stream' },
      body: stream,
      duplex: 'half',
      dispatcher: alone,
    });
    expect(upload.status).toBe(413);
    expect(await upload.text()).toMatch(/maximum allowed: 52428800/);
    await alone.destroy();
    const report = () => own.call('/v1/agent/outcomes', { agentId: own.agentId, outcomes: [{ leaseId: leases[0].leaseId, outcome }] });
    expect((await (await report()).json()).outcomes[0].state).toBe('done');
    // Times no run could have had are refused, item by item, and take nothing.
    const future = { ...outcome, startedAt: Date.now() + 3_600_000, stoppedAt: Date.now() + 3_600_010 };
    expect(
      (await (await own.call('/v1/agent/outcomes', { agentId: own.agentId, outcomes: [{ leaseId: leases[0].leaseId, outcome: future }] })).json()).outcomes[0]
        .state,
    ).toBe('refused');
    // Results made while cut off: only for this location's checks, at slots in the past week.
    const made = await (
      await own.call('/v1/agent/made', {
        agentId: own.agentId,
        results: [
          { checkId: waiting.id, location: 'lab', slot: Date.now() - 60_000, outcome },
          { checkId: randomUUID(), location: 'office', slot: Date.now() - 60_000, outcome },
          { checkId: waiting.id, location: 'office', slot: Date.now() + 600_000, outcome },
          { checkId: waiting.id, location: 'office', slot: Date.now() - 8 * 86_400_000, outcome },
          // What the service cannot take (an error past its length, a metric of a newer agent) is refused alone, never the batch.
          { checkId: waiting.id, location: 'office', slot: Date.now() - 60_000, outcome: { ...outcome, error: 'x'.repeat(20_001) } },
          { checkId: waiting.id, location: 'office', slot: Date.now() - 60_000, outcome: { ...outcome, metrics: { aNewerMetric: 1 } } },
          'not a result at all',
        ],
      })
    ).json();
    expect(made).toMatchObject({ accepted: 0 });
    expect(made.refused.map((r: { index: number }) => r.index)).toEqual([4, 5, 6, 0, 1, 2, 3]);
    expect(made.refused.slice(0, 3).every((r: { reason: string }) => /not a result this service takes/.test(r.reason))).toBe(true);
    // A check run in turn by two locations: only this location's slots, on the check's own grid, are taken.
    const turns = await create('api', { name: 'in turn', privateLocations: ['office', 'lab'], frequency: 1, request: { url: `${http.url}/ok?turns` } });
    const slot = Math.floor((Date.now() - 600_000) / 60_000) * 60_000 + phaseOf(turns.id, 60_000);
    const inTurn = (s: number) => ({
      checkId: turns.id,
      location: 'office',
      slot: s,
      periodMs: 60_000,
      outcome: { ...outcome, startedAt: s + 5, stoppedAt: s + 10 },
    });
    const turnAnswer = await (
      await own.call('/v1/agent/made', { agentId: own.agentId, results: [inTurn(slot), inTurn(slot + 60_000), inTurn(slot + 1000)] })
    ).json();
    expect(turnAnswer.accepted, JSON.stringify(turnAnswer)).toBe(1);
    expect(turnAnswer.refused.map((r: { reason: string }) => r.reason).sort()).toEqual([
      "the slot is not one of the check's slots at that period",
      "the slot is not this location's turn: the check runs its locations in turn",
    ]);
    // Reported again (a retry after a lost answer): taken once.
    expect((await (await report()).json()).outcomes[0].state).toBe('duplicate');
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${waiting.id}`),
      (r) => r.body.length === 1,
    );
    // Bad input is a 4xx and changes nothing.
    expect((await own.call('/v1/agent/outcomes', { agentId: own.agentId, outcomes: [{ leaseId: 'bogus!', outcome }] })).status).toBe(400);
    // A report holds to what a run reports: no field of the stored result (its check, its start) can be smuggled in.
    for (const forged of [
      { ...outcome, metrics: { startedAt: 0 } },
      { ...outcome, metrics: { timings: { checkId: 1 } } },
      { ...outcome, detail: { checkId: {} } },
      { ...outcome, runLocation: 'elsewhere' },
    ]) {
      expect((await own.call('/v1/agent/outcomes', { agentId: own.agentId, outcomes: [{ leaseId: leases[0].leaseId, outcome: forged }] })).status).toBe(400);
    }
    expect((await own.call('/v1/agent/leases', { agentId: randomUUID(), max: 1, waitSeconds: 0 })).status).toBe(409);
    const withApiKey = await fetch(`${svc.url}/v1/agent/leases`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentId: own.agentId, max: 1, waitSeconds: 0 }),
    });
    expect(withApiKey.status).toBe(401);
    expect((await svc.call('GET', `/v1/check-results/${waiting.id}`)).body).toHaveLength(1);
    // A scheduled check leased by two agents in turn: each lease names the agents holding it (who share it while cut off).
    const other2 = await probe(location.keys[0]!.rawKey);
    const every10 = await create('api', { name: 'held by two', frequency: 0, frequencyOffset: 10, request: { url: `${http.url}/ok?held` } });
    const leaseOf = async (who: typeof own) => {
      for (;;) {
        const { leases: got } = await (await who.call('/v1/agent/leases', { agentId: who.agentId, max: 1, waitSeconds: 15 })).json();
        const mine = got.find((l: { check: { id: string } }) => l.check.id === every10.id);
        for (const l of got) await who.call('/v1/agent/outcomes', { agentId: who.agentId, outcomes: [{ leaseId: l.leaseId, outcome }] });
        if (mine) return mine as { holders?: string[] };
      }
    };
    expect((await leaseOf(own)).holders).toEqual([own.agentId]);
    expect((await leaseOf(other2)).holders).toEqual([own.agentId, other2.agentId].sort());
    expect((await svc.call('DELETE', `/v1/checks/${every10.id}`)).status).toBe(204);
    // A run of a type the agent cannot make is passed over before it is started: a browser check tried in the editor
    // stays QUEUED for an agent that can, not RUNNING on one that never will.
    const trial = await svc.call('POST', '/v1/check-runs/browser?location=office', {
      body: { name: 'tried', script: "import { test } from '@playwright/test';\ntest('t', async () => {});" },
    });
    expect(trial.status, trial.text).toBe(202);
    for (let i = 0; i < 3; i++) {
      const { leases: none } = await (await own.call('/v1/agent/leases', { agentId: own.agentId, max: 5, waitSeconds: 1 })).json();
      expect(none.filter((l: { check: { checkType: string } }) => l.check.checkType === 'BROWSER')).toEqual([]);
    }
    expect((await svc.call('GET', `/v1/check-runs/${trial.body.id}`)).body.status).toBe('QUEUED');
    // No agent calls any more: the service closes its lease workers once idle for three leases (3 s here).
    const workers = async () =>
      Number(
        /^agent_lease_workers (\d+)$/m.exec(
          await (await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer agents-suite-metrics' } })).text(),
        )?.[1],
      );
    expect(await workers()).toBeGreaterThan(0);
    await waitFor(workers, (n) => n === 0, 30_000);
  }, 120_000);
});

describe('a private location without an agent', () => {
  let svc: TestService;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  let agent: AgentProcess | undefined;
  beforeAll(async () => {
    receiver = await startHttpReceiver();
    svc = await startTestService({ SCHEDULER: 'on', AGENT_UNAVAILABLE_SECONDS: '5', STATE_SWEEP_INTERVAL_MS: '500' });
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    agent?.remove();
    await svc?.stop();
    await receiver?.close();
  });

  it("alerts its checks' channels once when it has had no agent for AGENT_UNAVAILABLE_SECONDS, and once when one is back", async () => {
    const location = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Warehouse', slugName: 'warehouse' } })).body;
    const channel = (await svc.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', config: { name: 'ops', url: `${receiver.url}/ops` } } })).body;
    const quiet = (await svc.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', config: { name: 'other', url: `${receiver.url}/other` } } })).body;
    // A channel that sends recoveries only hears the second message.
    const calm = (
      await svc.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', sendFailure: false, config: { name: 'calm', url: `${receiver.url}/calm` } } })
    ).body;
    // A location without checks alerts nobody; one check of another location subscribes the second channel.
    await svc.call('POST', '/v1/private-locations', { body: { name: 'Empty', slugName: 'empty' } });
    const created = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: {
        name: 'dock door',
        locations: [],
        privateLocations: ['warehouse'],
        frequency: 10,
        request: { url: 'http://127.0.0.1:9/' },
        alertChannelSubscriptions: [
          { alertChannelId: channel.id, activated: true },
          { alertChannelId: calm.id, activated: true },
        ],
      },
    });
    expect(created.status, created.text).toBe(201);
    await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: {
        name: 'elsewhere',
        locations: ['eu-west-1'],
        frequency: 10,
        request: { url: 'http://127.0.0.1:9/' },
        alertChannelSubscriptions: [{ alertChannelId: quiet.id, activated: true }],
      },
    });

    const down = await waitFor(
      async () => receiver.to('/ops'),
      (r) => r.length >= 1,
      30_000,
    );
    expect(JSON.parse(down[0]!.body)).toMatchObject({ alertType: 'ALERT_FAILURE', check: { id: location.id } });
    expect(down[0]!.body).toContain('Private location Warehouse (warehouse) has had no agent for 5 seconds');
    await new Promise((r) => setTimeout(r, 2000));
    expect(receiver.to('/ops')).toHaveLength(1);
    expect(receiver.to('/other')).toHaveLength(0);
    expect(receiver.to('/calm')).toHaveLength(0);

    agent = await startAgentProcess({ apiUrl: svc.url, apiKey: location.keys[0].rawKey });
    const up = await waitFor(
      async () => receiver.to('/ops'),
      (r) => r.length >= 2,
      30_000,
    );
    expect(JSON.parse(up[1]!.body)).toMatchObject({ alertType: 'ALERT_RECOVERY', check: { id: location.id } });
    expect(up[1]!.body).toContain('has an agent again');
    await waitFor(
      async () => receiver.to('/calm'),
      (r) => r.length === 1,
      15_000,
    );
    expect(receiver.to('/calm')[0]!.body).toContain('has an agent again');
    expect(svc.logs.some((l) => l.includes('private location has no agent'))).toBe(true);
    // Recorded like any delivery: in /v1/alert-notifications (the location stands where a check would) and in the
    // channel's health.
    const deliveries = await waitFor(
      () => svc.call('GET', `/v1/alert-notifications?alertChannelId=${channel.id}`),
      (r) => r.body.length === 2 && r.body.every((n: { status: string }) => n.status === 'SUCCESS'),
      15_000,
    );
    expect(deliveries.body.map((n: Record<string, unknown>) => [n.checkType, n.checkId, n.privateLocationId, n.attempts])).toEqual([
      ['PRIVATE_LOCATION', location.id, location.id, [expect.objectContaining({ ok: true })]],
      ['PRIVATE_LOCATION', location.id, location.id, [expect.objectContaining({ ok: true })]],
    ]);
    expect((await svc.call('GET', `/v1/alert-notifications?alertChannelId=${calm.id}`)).body).toHaveLength(1);
    expect((await svc.call('GET', `/v1/alert-notifications?alertChannelId=${quiet.id}`)).body).toHaveLength(0);
    expect((await svc.call('GET', `/v1/alert-channels/${channel.id}`)).body.health).toMatchObject({ status: 'OK', lastDeliveryAt: expect.any(String) });
  }, 90_000);
});

describe('runs that waited too long for an agent', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ AGENT_MAX_WAIT_SECONDS: '10', METRICS_TOKEN: 'max-wait-metrics' });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('are dropped when an agent comes, counted as expired, and logged as a count, not a line each', async () => {
    const location = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Shed', slugName: 'shed' } })).body;
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'shed door', locations: [], privateLocations: ['shed'], frequency: 720, retryStrategy: null, request: { url: 'http://127.0.0.1:9/' } },
    });
    expect(check.status, check.text).toBe(201);
    for (let i = 0; i < 3; i++)
      expect((await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.body.id] } } })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 11_000));

    const agentId = randomUUID();
    const call = (path: string, body: unknown) =>
      fetch(`${svc.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${location.keys[0].rawKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await call('/v1/agent/register', { protocol: 1, agentId, version: '1.0.0', capabilities: ['API'], concurrency: 3 })).status).toBe(200);
    const res = await call('/v1/agent/leases', { agentId, max: 10, waitSeconds: 1 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { leases: unknown[] }).leases).toEqual([]);

    const scrape = await (await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer max-wait-metrics' } })).text();
    expect(scrape.split('\n').filter((l) => l.startsWith('runner_runs_total{'))).toEqual(['runner_runs_total{location="shed",outcome="expired"} 3']);
    // The first of a quiet spell is logged at once, with its check and wait; the other two wait for the next line.
    const dropped = () => svc.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'runs waited too long for an agent; dropped');
    const lines = dropped();
    expect(lines).toEqual([expect.objectContaining({ location: 'shed', privateLocationId: location.id, runs: 1, checkId: check.body.id })]);
    expect(lines[0].waitedSeconds).toBeGreaterThanOrEqual(10);
    const later = await waitFor(
      async () => dropped(),
      (l) => l.length === 2,
      20_000,
    );
    expect(later[1]).toMatchObject({ location: 'shed', privateLocationId: location.id, runs: 2 });
    expect(later[1].waitedSeconds).toHaveLength(2);
  }, 60_000);
});

/** Runs an agent leased so far, from its metrics. */
async function leased(a: AgentProcess): Promise<number> {
  const text = await (await fetch(`${a.healthUrl}/metrics`)).text();
  return Number(/^agent_events_total\{event="leased"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}
