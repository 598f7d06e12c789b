import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';

describe('health and readiness', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('answers /health without a key', async () => {
    const res = await svc.call('GET', '/health', { key: null });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    // Each public location's runners, waiting runs and lag (none run in this suite: RUNNER=off).
    expect(res.body.runners.locations).toHaveLength(22);
    expect(res.body.runners.locations[0]).toEqual({ location: 'us-east-1', runners: 0, waiting: 0, delayed: 0, lagSeconds: 0 });
  });

  it('answers /ready with each dependency', async () => {
    const res = await svc.call('GET', '/ready', { key: null });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ready');
    expect(res.body.dependencies).toMatchObject({
      postgres: { status: 'ok' },
      redis: { status: 'ok' },
      clickhouse: { status: 'ok' },
    });
  });

  it('answers /ready with 503 naming the dependency that is down', async () => {
    svc.deps.redis.disconnect();
    const res = await svc.call('GET', '/ready', { key: null });
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('unavailable');
    expect(res.body.dependencies.redis.status).toBe('unavailable');
    expect(res.body.dependencies.postgres.status).toBe('ok');
  });
});
