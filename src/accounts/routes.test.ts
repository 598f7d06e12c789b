import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey } from './repository.js';
import { startTestService, type TestService } from '../../test/support/service.js';

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
    expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Bad Token', attributes: { error: 'Bad Token' } });
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
