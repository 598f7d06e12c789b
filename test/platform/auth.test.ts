import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, grantMembership, revokeApiKey } from '../../src/accounts/repository.js';
import { startTestService, type TestService } from '../support/service.js';

const BAD_TOKEN = {
  statusCode: 401,
  error: 'Unauthorized',
  message: 'Bad Token',
  attributes: { error: 'Bad Token' },
};
const FORBIDDEN = { statusCode: 403, error: 'Forbidden', message: 'Forbidden' };

describe('authentication and authorization', () => {
  let svc: TestService;
  let otherAccountId: string;
  let readOnlyKey: string;
  let readWriteKey: string;
  let revokedKey: string;

  beforeAll(async () => {
    svc = await startTestService();
    const sql = svc.deps.sql;
    otherAccountId = (await createAccount(sql, 'other')).id;
    readOnlyKey = (await createApiKey(sql, { accountId: svc.defaultAccountId, role: 'read-only' })).key;
    readWriteKey = (await createApiKey(sql, { accountId: svc.defaultAccountId, role: 'read-write' })).key;
    const revoked = await createApiKey(sql, { accountId: svc.defaultAccountId, role: 'admin' });
    await revokeApiKey(sql, revoked.id);
    revokedKey = revoked.key;
  });
  afterAll(() => svc?.stop());

  function expectBadToken(res: { status: number; body: unknown; headers: Headers }) {
    expect(res.status).toBe(401);
    expect(res.body).toEqual(BAD_TOKEN);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="Bad Token"');
  }

  it('rejects a request without Authorization', async () => {
    expectBadToken(await svc.call('GET', '/v1/account', { key: null }));
  });

  it('rejects a scheme other than Bearer', async () => {
    expectBadToken(
      await svc.call('GET', '/v1/account', { key: null, headers: { authorization: `Basic ${svc.adminKey}` } }),
    );
    expectBadToken(await svc.call('GET', '/v1/account', { key: null, headers: { authorization: svc.adminKey } }));
    expectBadToken(await svc.call('GET', '/v1/account', { key: null, headers: { authorization: 'Bearer ' } }));
  });

  it('rejects an unknown key', async () => {
    expectBadToken(await svc.call('GET', '/v1/account', { key: 'mk_thisKeyDoesNotExistAnywhere000000000000000' }));
  });

  it('rejects a revoked key', async () => {
    expectBadToken(await svc.call('GET', '/v1/account', { key: revokedKey }));
  });

  it('accepts a valid key and resolves its default account', async () => {
    const res = await svc.call('GET', '/v1/account');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: svc.defaultAccountId, role: 'admin' });
  });

  it('accepts x-service-account naming an account the key belongs to', async () => {
    const res = await svc.call('GET', '/v1/account', { headers: { 'x-service-account': svc.defaultAccountId } });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(svc.defaultAccountId);
  });

  it('answers 403 when x-service-account names an account the key does not belong to', async () => {
    const res = await svc.call('GET', '/v1/account', { headers: { 'x-service-account': otherAccountId } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

  it('answers 403 for a malformed x-service-account, and 401 still wins for a bad key', async () => {
    const res = await svc.call('GET', '/v1/account', { headers: { 'x-service-account': 'not-a-uuid' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
    expectBadToken(
      await svc.call('GET', '/v1/account', { key: 'mk_unknown_key_0000000000000000000000000', headers: { 'x-service-account': 'x' } }),
    );
  });

  it('lets a key act for a second account once it is a member', async () => {
    const sql = svc.deps.sql;
    const third = await createAccount(sql, 'third');
    const created = await createApiKey(sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    await grantMembership(sql, created.id, third.id, 'read-write');
    const res = await svc.call('GET', '/v1/account', { key: created.key, headers: { 'x-service-account': third.id } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: third.id, role: 'read-write' });
  });

  it('answers 403 to a read-only key on a write, and stores nothing', async () => {
    const before = await svc.deps.sql`select count(*)::int as n from api_keys`;
    const res = await svc.call('POST', '/v1/api-keys', { key: readOnlyKey, body: { name: 'nope' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
    const after = await svc.deps.sql`select count(*)::int as n from api_keys`;
    expect(after[0].n).toBe(before[0].n);
  });

  it('answers 403 to a read-write key on an admin operation', async () => {
    const res = await svc.call('GET', '/v1/api-keys', { key: readWriteKey });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

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

  it('never writes keys or the Authorization header to the log', async () => {
    await svc.call('GET', '/v1/account');
    const created = await svc.call('POST', '/v1/api-keys', { body: { name: 'logged?' } });
    const all = svc.logs.join('\n');
    expect(svc.logs.length).toBeGreaterThan(0);
    expect(all).not.toContain(svc.adminKey);
    expect(all).not.toContain(created.body.key);
    expect(all.toLowerCase()).not.toContain('bearer');
  });
});
