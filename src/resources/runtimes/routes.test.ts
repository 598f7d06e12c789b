import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../test/support/service.js';
import { RUNTIME_IDS } from '../../model/checks.js';

describe('runtimes and locations', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('lists every runtime a check may name, with its Node.js version among the dependencies', async () => {
    const res = await svc.call('GET', '/v1/runtimes');
    expect(res.status).toBe(200);
    expect(res.body.map((r: { name: string }) => r.name)).toEqual([...RUNTIME_IDS]);
    for (const runtime of res.body) expect(`v${runtime.dependencies.node}`).toBe(runtime.nodeJsVersion);
    const one = await svc.call('GET', '/v1/runtimes/2025.04');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body[1]);
    expect((await svc.call('GET', '/v1/runtimes/1999.01')).status).toBe(404);
    expect((await svc.call('GET', '/v1/runtimes/constructor')).status).toBe(404);
    expect((await svc.call('GET', '/v1/runtimes', { key: null })).status).toBe(401);
  });

  it('lists the public locations with their names', async () => {
    const res = await svc.call('GET', '/v1/locations');
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(22);
    expect(res.body).toContainEqual({ region: 'eu-central-1', name: 'Frankfurt', runners: 0 });
    // Our addition beside the anchor's fields: how many of this service's runners serve each location (none here).
    expect(res.body.every((l: { runners: unknown }) => l.runners === 0)).toBe(true);
  });
});
