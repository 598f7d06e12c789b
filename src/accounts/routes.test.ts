import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { createAccount, createApiKey } from './repository.js';

describe('API keys over HTTP', () => {
  let svc: TestService;
  let otherAccountId: string;

  beforeAll(async () => {
    svc = await startTestService();
    otherAccountId = (await createAccount(svc.deps.sql, 'other')).id;
  });
  afterAll(() => svc?.stop());

  function expectBadToken(res: { status: number; body: unknown }) {
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ statusCode: 401, error: 'Unauthorized', message: 'Bad Token', attributes: { error: 'Bad Token', reason: 'invalid-key' } });
  }

  it('creates a key that is shown once, stored hashed, and works until revoked', async () => {
    const created = await svc.call('POST', '/v1/api-keys', { body: { name: 'ci', role: 'read-only' } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(created.body.maskedKey.endsWith(created.body.key.slice(-4))).toBe(true);
    const stored = await svc.deps.sql`select * from api_keys where id = ${created.body.id}`;
    expect(JSON.stringify(stored[0])).not.toContain(created.body.key);

    const list = await svc.call('GET', '/v1/api-keys?limit=100');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(created.body.key);
    expect(Number(list.headers.get('x-total-count'))).toBe(list.body.length);
    expect(list.body.map((k: { id: string }) => k.id)).toContain(created.body.id);

    expect((await svc.call('GET', '/v1/account', { key: created.body.key })).status).toBe(200);
    expect((await svc.call('DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(204);
    expectBadToken(await svc.call('GET', '/v1/account', { key: created.body.key }));
  });

  it('answers 404 when revoking a key of another account', async () => {
    const foreign = await createApiKey(svc.deps.sql, { accountId: otherAccountId, role: 'admin' });
    const res = await svc.call('DELETE', `/v1/api-keys/${foreign.id}`);
    expect(res.status).toBe(404);
    expect((await svc.call('GET', '/v1/account', { key: foreign.key })).status).toBe(200);
  });
});

describe("accounts in the anchor API's shape", () => {
  let svc: TestService;
  let second: { id: string };
  let foreign: { id: string };

  beforeAll(async () => {
    svc = await startTestService();
    second = await createAccount(svc.deps.sql, 'second');
    foreign = await createAccount(svc.deps.sql, 'foreign');
    const [{ id: keyId }] = await svc.deps.sql<{ id: string }[]>`select id from api_keys where name = 'bootstrap key'`;
    const { grantMembership } = await import('./repository.js');
    await grantMembership(svc.deps.sql, keyId, second.id, 'read-only');
  });
  afterAll(() => svc?.stop());

  it('shows the account a request acts for, with its runtime and alert settings', async () => {
    const res = await svc.call('GET', '/v1/accounts/me');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: svc.defaultAccountId,
      name: 'default',
      runtimeId: '2025.04',
      plan: 'self-hosted',
      planDisplayName: 'Self-hosted',
      addons: {},
      settings: { badgesEnabled: false },
      alertSettings: {
        escalationType: 'RUN_BASED',
        runBasedEscalation: { failedRunThreshold: 1 },
        reminders: { amount: 0, interval: 5 },
        parallelRunFailureThreshold: { enabled: false, percentage: 10 },
      },
      features: [],
    });
    const picked = await svc.call('GET', '/v1/accounts/me', { headers: { 'x-checkly-account': second.id } });
    expect(picked.body.id).toBe(second.id);
  });

  it('lists and fetches only the accounts the key is a member of (the CLI calls /next/accounts/{id} first)', async () => {
    for (const path of ['/v1/accounts', '/next/accounts']) {
      const res = await svc.call('GET', path);
      expect(res.status).toBe(200);
      expect(res.body.map((a: { id: string }) => a.id).sort()).toEqual([svc.defaultAccountId, second.id].sort());
    }
    for (const path of ['/v1/accounts', '/next/accounts']) {
      expect((await svc.call('GET', `${path}/${second.id}`)).body.name).toBe('second');
      expect((await svc.call('GET', `${path}/${second.id.toUpperCase()}`)).body.id).toBe(second.id);
      expect((await svc.call('GET', `${path}/${foreign.id}`)).status).toBe(404);
      expect((await svc.call('GET', `${path}/not-an-account`)).status).toBe(404);
    }
    // The CLI sends its account in x-checkly-account too: a key that is not a member is refused.
    expect((await svc.call('GET', `/next/accounts/${foreign.id}`, { headers: { 'x-checkly-account': foreign.id } })).status).toBe(403);
  });

  it('derives entitlements from the limits the service enforces', async () => {
    const { setBrowserCheckLimit } = await import('./repository.js');
    await setBrowserCheckLimit(svc.deps.sql, svc.defaultAccountId, 3);
    svc.forgetKeys(); // changed behind the API's back: the next request must not wait for Postgres's announcement
    const res = await svc.call('GET', '/v1/accounts/me/entitlements');
    expect(res.status).toBe(200);
    expect(res.body.plan).toBe('self-hosted');
    expect(res.body.locations.all).toHaveLength(22);
    expect(res.body.locations.all[0]).toEqual({ id: 'us-east-1', name: 'N. Virginia', available: true });
    const byKey = Object.fromEntries(res.body.entitlements.map((e: { key: string }) => [e.key, e]));
    expect(byKey.BROWSER_CHECKS).toMatchObject({ type: 'metered', enabled: true, quantity: 3 });
    expect(byKey.API_RATE_LIMIT).toMatchObject({ type: 'metered', quantity: 600 });
    expect(byKey.SSL_CHECKS).toMatchObject({ type: 'flag', enabled: true });
    const secondRes = await svc.call('GET', `/v1/accounts/${second.id}/entitlements`);
    expect(secondRes.body.entitlements.find((e: { key: string }) => e.key === 'BROWSER_CHECKS')).toMatchObject({ type: 'flag', enabled: true });
    expect((await svc.call('GET', `/v1/accounts/${foreign.id}/entitlements`)).status).toBe(404);
  });

  it('names the calling key as the user', async () => {
    const res = await svc.call('GET', '/next/users/me');
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('bootstrap key');
    expect(res.text).not.toContain(svc.adminKey);
    expect((await svc.call('GET', '/next/users/me', { key: null })).status).toBe(401);
  });
});
