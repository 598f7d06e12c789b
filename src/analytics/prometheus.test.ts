import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantile } from '../../test/support/analytics-oracle.js';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';

/** GET /v1/prometheus/metrics: the account's checks as gauges for the user's own Prometheus. */
describe('per-check Prometheus metrics', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const value = (text: string, name: string, checkId: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`check_id="${checkId}"`));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };

  it('exports status, degraded status, 24-hour availability and p95 per check of the account only, names escaped', async () => {
    const make = async (name: string, key?: string) =>
      (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name, tags: ['prod'], request: { url: 'https://p.example.test' } }, key }))
        .body as { id: string };
    const ok = await make('Shop "main"\\ page');
    const down = await make('Down');
    const silent = await make('Never ran');
    const other = await createOtherTenant(svc);
    const theirs = await make('Theirs', other.key);
    const start = Date.now() - 3_600_000;
    const times = Array.from({ length: 40 }, (_, i) => 50 + ((i * 53) % 700));
    const results = (checkId: string, failEvery: number) =>
      times.map((t, i) => ({
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: 'eu-west-1',
        hasFailures: failEvery > 0 && i % failEvery === failEvery - 1,
        responseTime: t,
        startedAt: new Date(start + i * 60_000).toISOString(),
        stoppedAt: new Date(start + i * 60_000 + t).toISOString(),
      }));
    await svc.call('POST', '/v1/check-results', { body: { results: [...results(ok.id, 0), ...results(down.id, 4)] } });
    await svc.call('POST', '/v1/check-results', { body: { results: results(theirs.id, 0) }, key: other.key });
    await waitFor(
      () => svc.deps.sql`select count(*)::int as n from check_statuses where check_id = any(${[ok.id, down.id]}::uuid[])`,
      ([r]) => r.n === 2,
    );

    const res = await fetch(`${svc.url}/v1/prometheus/metrics`, { headers: { authorization: `Bearer ${svc.adminKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(value(text, 'monitoring_check_status', ok.id)).toBe(1);
    expect(value(text, 'monitoring_check_status', down.id)).toBe(0);
    expect(value(text, 'monitoring_check_degraded_status', ok.id)).toBe(1);
    expect(value(text, 'monitoring_check_status', silent.id)).toBeUndefined();
    expect(value(text, 'monitoring_check_availability_ratio', ok.id)).toBe(1);
    expect(value(text, 'monitoring_check_availability_ratio', down.id)).toBeCloseTo(0.75, 9);
    expect(value(text, 'monitoring_check_latency_p95_seconds', ok.id)).toBeCloseTo(
      quantile(
        [...times].sort((a, b) => a - b),
        0.95,
      ) / 1000,
      9,
    );
    expect(text).toContain('check_name="Shop \\"main\\"\\\\ page"');
    expect(text).toContain('tags="prod"');
    expect(text).not.toContain(theirs.id);
  });

  it('needs an API key', async () => {
    expect((await fetch(`${svc.url}/v1/prometheus/metrics`)).status).toBe(401);
  });
});
