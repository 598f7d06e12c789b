import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { createAccount, createApiKey, setAccountRateLimit } from '../accounts/repository.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rate limits', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ RATE_LIMIT_POINTS: '3', RATE_LIMIT_WINDOW_SECONDS: '2' });
  });
  afterAll(() => svc?.stop());

  it('counts per account, answers 429 past the limit, and resets with the window', async () => {
    const account = await createAccount(svc.deps.sql, 'limited');
    const { key } = await createApiKey(svc.deps.sql, { accountId: account.id, role: 'read-only' });
    // Align to a fresh window so the three requests below land in one.
    const first = await svc.call('GET', '/v1/account', { key });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect(first.headers.get('ratelimit-remaining')).toBe('2');
    expect(Number(first.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    expect((await svc.call('GET', '/v1/account', { key })).headers.get('ratelimit-remaining')).toBe('1');
    expect((await svc.call('GET', '/v1/account', { key })).headers.get('ratelimit-remaining')).toBe('0');

    const limited = await svc.call('GET', '/v1/account', { key });
    expect(limited.status).toBe(429);
    const reset = Number(limited.headers.get('retry-after'));
    expect(reset).toBeGreaterThanOrEqual(1);
    expect(reset).toBeLessThanOrEqual(2);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'Too Many Requests',
      attributes: { limit: 3, remaining: 0, reset },
    });

    // Another account is unaffected.
    expect((await svc.call('GET', '/v1/account')).status).toBe(200);

    await sleep(reset * 1000 + 100);
    const after = await svc.call('GET', '/v1/account', { key });
    expect(after.status).toBe(200);
    expect(after.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('uses an account its own limit when it has one', async () => {
    const account = await createAccount(svc.deps.sql, 'generous');
    await setAccountRateLimit(svc.deps.sql, account.id, { points: 50, windowSeconds: 60 });
    const { key } = await createApiKey(svc.deps.sql, { accountId: account.id, role: 'read-only' });
    for (let i = 0; i < 5; i++) expect((await svc.call('GET', '/v1/account', { key })).status).toBe(200);
    const res = await svc.call('GET', '/v1/account', { key });
    expect(res.headers.get('ratelimit-limit')).toBe('50');
    expect(res.headers.get('ratelimit-remaining')).toBe('44');
    expect(res.body.rateLimit).toEqual({ points: 50, windowSeconds: 60 });
  });

  it('does not limit the unauthenticated operations endpoints', async () => {
    for (let i = 0; i < 6; i++) expect((await svc.call('GET', '/health', { key: null })).status).toBe(200);
  });
});
