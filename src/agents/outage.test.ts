import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentProcess, freePort, startAgentProcess } from '../../test/support/agents.js';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startHttpTarget } from '../../test/support/targets.js';

/** How long the service is down in this suite. */
const OUTAGE_MS = 45_000;
const PERIOD_MS = 10_000;

/**
 * The service goes away while an agent runs its location's checks: the agent goes on from memory, keeps the
 * results on disk, and delivers them when the service is back, with their original times; every slot of the
 * whole span has exactly one result.
 */
describe('an agent cut off from the service', () => {
  let first: TestService;
  let svc: TestService;
  let http: HttpTarget;
  let agent: AgentProcess;
  let overrides: Record<string, string>;

  beforeAll(async () => {
    http = await startHttpTarget();
    overrides = { PORT: String(await freePort()), SCHEDULER: 'on', SCHEDULER_TICK_MS: '100', SCHEDULER_RECONCILE_MS: '200', AGENT_LEASE_SECONDS: '5' };
    first = await startTestService(overrides);
    svc = first;
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    agent?.remove();
    await svc?.stop();
    await http?.close();
  });

  it('keeps monitoring while the service is down and delivers every slot once when it is back', async () => {
    const location = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Plant', slugName: 'plant' } })).body;
    agent = await startAgentProcess({ apiUrl: svc.url, apiKey: location.keys[0].rawKey, env: { AGENT_OFFLINE_AFTER_SECONDS: '2' } });
    const check = (
      await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
        body: {
          name: 'plant gate',
          locations: [],
          privateLocations: ['plant'],
          frequency: 0,
          frequencyOffset: 10,
          retryStrategy: null,
          doubleCheck: false,
          request: { url: `${http.url}/ok` },
        },
      })
    ).body;
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.id}?limit=100`),
      (r) => r.body.length >= 2,
      40_000,
    );

    // The service stops (its database and Redis stay): the agent notices, runs from memory, keeps results on disk.
    const down = Date.now();
    await first.close();
    const metric = async (name: string) =>
      Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(`${agent.healthUrl}/metrics`)).text())?.[1] ?? NaN);
    await waitFor(
      () => metric('agent_buffer_results'),
      (n) => n >= 2,
      OUTAGE_MS,
    );
    expect(await metric('agent_offline')).toBe(1);
    expect((await fetch(`${agent.healthUrl}/-/readiness`)).status).toBe(503);
    const hitsBefore = http.hits('/ok').length;
    await new Promise((r) => setTimeout(r, Math.max(0, OUTAGE_MS - (Date.now() - down))));
    const up = Date.now();
    // The target was watched all along.
    expect(http.hits('/ok').length).toBeGreaterThan(hitsBefore);

    svc = await startTestService({
      ...overrides,
      DATABASE_URL: first.env.DATABASE_URL,
      REDIS_PREFIX: first.env.REDIS_PREFIX,
      BOOTSTRAP_API_KEY: first.env.BOOTSTRAP_API_KEY,
    });
    await waitFor(
      () => metric('agent_buffer_results'),
      (n) => n === 0,
      30_000,
    );
    const results = await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.id}?limit=100&from=${Math.floor(down / 1000) - 60}`),
      (r) => r.body.some((x: { startedAt: string }) => Date.parse(x.startedAt) > up + 2 * PERIOD_MS),
      60_000,
    );
    const starts = (results.body as { startedAt: string; runLocation: string }[]).map((r) => Date.parse(r.startedAt)).sort((a, b) => a - b);
    // One result per 10-second slot across the whole span, the outage included: none missed, none twice.
    const slots = starts.map((t) => Math.round((t - starts[0]!) / PERIOD_MS));
    expect(new Set(slots).size, JSON.stringify(starts.map((t) => new Date(t).toISOString()))).toBe(starts.length);
    expect(slots.at(-1)! + 1).toBe(starts.length);
    // The outage's runs kept their own times.
    const during = starts.filter((t) => t > down + 3000 && t < up);
    expect(during.length).toBeGreaterThanOrEqual(Math.floor((OUTAGE_MS - 5000) / PERIOD_MS) - 1);
    expect(results.body.every((r: { runLocation: string }) => r.runLocation === 'plant')).toBe(true);
  }, 240_000);
});
