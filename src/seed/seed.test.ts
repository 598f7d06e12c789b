import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { LOCATIONS } from '../model/checks.js';
import { generateRuns, runCount, type SeedCheck } from './generator.js';
import { createChecksOverHttp, HttpClient, seedOverHttp } from './http.js';
import { createSeedChecks, seedBulk, totalRuns } from './seeder.js';

const window = { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 10, 2), seed: 42 };
const check = (checkType: SeedCheck['checkType'], frequency = 10): SeedCheck => ({
  id: '00000000-0000-4000-8000-000000000001',
  checkType,
  frequency,
  locations: LOCATIONS.slice(0, 3) as unknown as string[],
});

describe('synthetic results', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const a = [...generateRuns(check('API'), window, 0)];
    const b = [...generateRuns(check('API'), window, 0)];
    const c = [...generateRuns(check('API'), { ...window, seed: 43 }, 0)];
    expect(a).toEqual(b);
    expect(a.map((r) => r.responseTime)).not.toEqual(c.map((r) => r.responseTime));
  });

  it('runs at the frequency in every location inside the window', () => {
    const runs = [...generateRuns(check('ICMP', 5), window, 1)];
    expect(runs).toHaveLength(runCount(check('ICMP', 5), window));
    expect(runs).toHaveLength(3 * 288);
    for (const r of runs) {
      const t = Date.parse(r.startedAt);
      expect(t).toBeGreaterThanOrEqual(window.from);
      expect(t).toBeLessThan(window.to);
      expect(Date.parse(r.stoppedAt)).toBeGreaterThanOrEqual(t);
    }
    expect(new Set(runs.map((r) => r.runLocation))).toEqual(new Set(LOCATIONS.slice(0, 3)));
  });

  it('produces the metrics of each type, failure bursts and degraded runs', () => {
    const api = [...generateRuns(check('API', 1), { ...window, to: window.from + 5 * 86_400_000 }, 2)];
    expect(api.every((r) => r.responseTime! > 0 && r.statusCode && r.timings?.firstByte !== undefined)).toBe(true);
    const failures = api.filter((r) => r.hasFailures).length / api.length;
    expect(failures).toBeGreaterThan(0.005);
    expect(failures).toBeLessThan(0.2);
    expect(api.some((r) => r.isDegraded)).toBe(true);
    expect(api.some((r) => r.attempts === 2)).toBe(true);
    // Failures come in runs (bursts), not one at a time.
    const byLocation = api.filter((r) => r.runLocation === LOCATIONS[0]);
    const consecutive = byLocation.filter((r, i) => r.hasFailures && byLocation[i - 1]?.hasFailures).length;
    expect(consecutive).toBeGreaterThan(0);
    const icmp = [...generateRuns(check('ICMP'), window, 3)];
    expect(icmp.every((r) => r.packetLoss !== undefined)).toBe(true);
    expect(icmp.filter((r) => r.packetLoss! < 100).every((r) => r.latencyMin! <= r.latencyAvg! && r.latencyAvg! <= r.latencyMax!)).toBe(true);
    const web = [...generateRuns(check('BROWSER'), window, 4)];
    expect(web.every((r) => r.webVitals?.LCP !== undefined)).toBe(true);
  });
});

describe('seeding a running service', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    await svc.deps.sql`update accounts set rate_limit_points = 100000, rate_limit_window_seconds = 60 where id = ${svc.defaultAccountId}`;
  });
  afterAll(() => svc?.stop());

  const stored = async (ids: string[]) =>
    Number(
      (
        await svc.deps.store.query<{ n: number }>("SELECT count() AS n FROM check_results WHERE has(CAST({ids:Array(String)}, 'Array(UUID)'), check_id)", {
          ids,
        })
      )[0].n,
    );

  it('through the HTTP ingest path lands every generated run', async () => {
    const client = new HttpClient(svc.url, svc.adminKey);
    const plan = { count: 3, types: ['api', 'icmp', 'browser'] as const, frequency: 10, locations: 4 };
    const checks = await createChecksOverHttp(client, { ...plan, types: [...plan.types] });
    const sent = await seedOverHttp(client, checks, window, { batchSize: 200, concurrency: 3 });
    expect(sent).toBe(totalRuns(checks, window));
    await waitFor(
      () => stored(checks.map((c) => c.id)),
      (n) => n === sent,
    );
  });

  it('in bulk, and a second run of the same seed adds nothing', async () => {
    const plan = { count: 2, types: ['multistep' as const, 'tcp' as const], frequency: 5, locations: 2 };
    const checks = await createSeedChecks(svc.deps.sql, svc.defaultAccountId, plan);
    const rows = await seedBulk(svc.deps.store, svc.defaultAccountId, checks, window, undefined, 500);
    expect(rows).toBe(totalRuns(checks, window));
    expect(await stored(checks.map((c) => c.id))).toBe(rows);
    await seedBulk(svc.deps.store, svc.defaultAccountId, checks, window, undefined, 500);
    expect(await stored(checks.map((c) => c.id))).toBe(rows);
    const listed = await svc.call('GET', '/v1/checks?tag=seed&limit=100');
    expect(listed.body.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining(checks.map((c) => c.id)));
  });
});
