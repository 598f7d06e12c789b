import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { createAccount, createApiKey, grantMembership, revokeApiKey } from '../accounts/repository.js';

/** The anchor's 401, with the mistake named: which one, and what to do about it. */
const badToken = (reason: string, hint: RegExp) => ({
  statusCode: 401,
  error: 'Unauthorized',
  message: 'Bad Token',
  attributes: { error: 'Bad Token', reason, hint: expect.stringMatching(hint) },
});
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

  function expectBadToken(res: { status: number; body: unknown; headers: Headers }, reason = 'invalid-key') {
    const hints: Record<string, RegExp> = {
      'missing-credentials': /Authorization: Bearer <key>/,
      'not-bearer': /the word Bearer, a space, then the key/,
      'invalid-key': /mistyped, revoked or expired/,
      'session-ended': /sign in again/,
    };
    expect(res.status).toBe(401);
    expect(res.body).toEqual(badToken(reason, hints[reason]!));
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="Bad Token"');
  }

  it('rejects a request without Authorization', async () => {
    expectBadToken(await svc.call('GET', '/v1/account', { key: null }), 'missing-credentials');
  });

  it('says a session cookie has ended, whatever the cookie', async () => {
    expectBadToken(
      await svc.call('GET', '/v1/account', { key: null, headers: { cookie: 'monitoring_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' } }),
      'session-ended',
    );
    expectBadToken(await svc.call('GET', '/v1/account', { key: null, headers: { cookie: 'monitoring_session=x' } }), 'session-ended');
  });

  it('rejects a scheme other than Bearer', async () => {
    expectBadToken(await svc.call('GET', '/v1/account', { key: null, headers: { authorization: `Basic ${svc.adminKey}` } }), 'not-bearer');
    // The key alone, without `Bearer `: the commonest slip.
    expectBadToken(await svc.call('GET', '/v1/account', { key: null, headers: { authorization: svc.adminKey } }), 'not-bearer');
    expectBadToken(await svc.call('GET', '/v1/account', { key: null, headers: { authorization: 'Bearer ' } }), 'not-bearer');
  });

  it('rejects an unknown key', async () => {
    expectBadToken(await svc.call('GET', '/v1/account', { key: 'mk_thisKeyDoesNotExistAnywhere000000000000000' }));
  });

  it('rejects a revoked key exactly as an unknown one: nothing tells that it exists', async () => {
    const revoked = await svc.call('GET', '/v1/account', { key: revokedKey });
    expectBadToken(revoked);
    expect(revoked.body).toEqual((await svc.call('GET', '/v1/account', { key: 'mk_thisKeyDoesNotExistAnywhere000000000000000' })).body);
  });

  it('accepts a valid key and resolves its default account', async () => {
    const res = await svc.call('GET', '/v1/account');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: svc.defaultAccountId, role: 'ADMIN' });
  });

  describe.each(['x-service-account', 'x-checkly-account'])('the account header %s', (header) => {
    it(`accepts ${header} naming an account the key belongs to`, async () => {
      const res = await svc.call('GET', '/v1/account', { headers: { [header]: svc.defaultAccountId } });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(svc.defaultAccountId);
    });

    it(`answers 403 when ${header} names an account the key does not belong to`, async () => {
      const res = await svc.call('GET', '/v1/account', { headers: { [header]: otherAccountId } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    });

    it(`answers 403 for a malformed ${header}, and 401 still wins for a bad key`, async () => {
      const res = await svc.call('GET', '/v1/account', { headers: { [header]: 'not-a-uuid' } });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
      expectBadToken(await svc.call('GET', '/v1/account', { key: 'mk_unknown_key_0000000000000000000000000', headers: { [header]: 'x' } }));
    });
  });

  it('answers 400 when x-service-account and x-checkly-account name different accounts, and accepts them agreeing', async () => {
    const both = (other: string) => ({ headers: { 'x-service-account': svc.defaultAccountId, 'x-checkly-account': other } });
    const res = await svc.call('GET', '/v1/account', both(otherAccountId));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      message: 'x-service-account and x-checkly-account name different accounts; send one',
    });
    expect((await svc.call('GET', '/v1/account', both(svc.defaultAccountId))).status).toBe(200);
  });

  it('lets a key act for a second account once it is a member', async () => {
    const sql = svc.deps.sql;
    const third = await createAccount(sql, 'third');
    const created = await createApiKey(sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    await grantMembership(sql, created.id, third.id, 'read-write');
    const res = await svc.call('GET', '/v1/account', { key: created.key, headers: { 'x-service-account': third.id } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: third.id, role: 'READ_WRITE' });
  });

  it('answers 403 to a read-only key on a write, and stores nothing', async () => {
    const before = await svc.deps.sql`select count(*)::int as n from api_keys`;
    const res = await svc.call('POST', '/v1/api-keys', { key: readOnlyKey, body: { name: 'nope' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      ...FORBIDDEN,
      message: 'Your role here (READ_ONLY) may not do this: it takes OWNER, ADMIN',
      attributes: { reason: 'role', roles: ['OWNER', 'ADMIN'] },
    });
    const after = await svc.deps.sql`select count(*)::int as n from api_keys`;
    expect(after[0].n).toBe(before[0].n);
  });

  it('answers 403 to a read-write key on an admin operation', async () => {
    const res = await svc.call('GET', '/v1/api-keys', { key: readWriteKey });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ ...FORBIDDEN, message: expect.stringMatching(/^Your role here \(READ_WRITE\)/), attributes: { reason: 'role' } });
  });
});
