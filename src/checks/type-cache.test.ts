import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announcementsHeard, createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { CheckTypeCache } from './type-cache.js';

/**
 * Check types kept between ingest's batches (type-cache.ts) against the service's Postgres: a kept type is served
 * without a read, a deleted check is forgotten as soon as Postgres announces it (so a batch naming it is refused
 * again), another account's change forgets nothing of this one, and an id of no check is never kept.
 */
describe('check types kept between ingest batches', () => {
  let svc: TestService;
  let cache: CheckTypeCache;
  let accountId = '';

  beforeAll(async () => {
    svc = await startTestService();
    cache = new CheckTypeCache(svc.deps.sql, svc.deps.logger);
    await waitFor(
      async () => cache.stats().heard,
      (heard) => heard,
    );
  }, 60_000);
  afterAll(async () => {
    cache?.stop();
    await svc?.stop();
  });

  const createCheck = async (key?: string) => {
    const res = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      key,
      body: { name: 'Cart API', locations: ['eu-west-1'], request: { method: 'GET', url: 'http://127.0.0.1:9/cart' } },
    });
    expect(res.status).toBe(201);
    const id = (res.body as { id: string }).id;
    if (!key && !accountId) accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${id}`)[0]!.account_id;
    return id;
  };
  /** Until every announcement committed so far (a check's creation) has arrived: a late one would forget what is read next. */
  const settle = () => announcementsHeard(svc.deps.sql, 'definitions_changed');
  const result = (checkId: string) => ({
    checkId,
    checkType: 'API',
    runLocation: 'eu-west-1',
    startedAt: new Date(Date.now() - 1000).toISOString(),
    stoppedAt: new Date().toISOString(),
    hasFailures: false,
    attempts: 1,
  });

  it('keeps the types it read, and no id that names no check', async () => {
    const id = await createCheck();
    await settle();
    const nothing = randomUUID();
    const before = cache.stats().kept;
    expect(await cache.typesOf(accountId, [id, nothing])).toEqual(new Map([[id, 'API']]));
    expect(cache.stats().kept).toBe(before + 1);
    // Deleted behind the cache's back with no announcement heard yet: still served from memory, not read.
    await svc.deps.sql.begin(async (tx) => {
      await tx`alter table checks disable trigger checks_definition_change`;
      await tx`delete from checks where id = ${id}`;
      await tx`alter table checks enable trigger checks_definition_change`;
    });
    expect((await cache.typesOf(accountId, [id])).get(id)).toBe('API');
    expect((await cache.typesOf(accountId, [nothing])).size).toBe(0);
    cache.forget(accountId);
    expect((await cache.typesOf(accountId, [id])).size).toBe(0);
  });

  it('forgets an account when a change of its checks is announced, and only that account', async () => {
    const mine = await createCheck();
    const other = await createOtherTenant(svc);
    const theirs = await createCheck(other.key);
    const theirAccount = other.accountId;
    await settle();
    await cache.typesOf(accountId, [mine]);
    await cache.typesOf(theirAccount, [theirs]);
    const kept = cache.stats().kept;
    expect((await svc.call('DELETE', `/v1/checks/${mine}`)).status).toBe(204);
    await waitFor(
      async () => cache.stats().kept,
      (n) => n < kept,
    );
    expect((await cache.typesOf(accountId, [mine])).size).toBe(0);
    // The other account's type is still kept: served although its row is gone now (no announcement for it).
    await svc.deps.sql.begin(async (tx) => {
      await tx`alter table checks disable trigger checks_definition_change`;
      await tx`delete from checks where id = ${theirs}`;
      await tx`alter table checks enable trigger checks_definition_change`;
    });
    expect((await cache.typesOf(theirAccount, [theirs])).get(theirs)).toBe('API');
  });

  it('keeps nothing of a read its account was forgotten during', async () => {
    const id = await createCheck();
    await settle();
    const before = cache.stats().kept;
    const reading = cache.typesOf(accountId, [id]);
    cache.forget(accountId);
    expect((await reading).get(id)).toBe('API');
    expect(cache.stats().kept).toBe(before);
    // Read again after: kept.
    await cache.typesOf(accountId, [id]);
    expect(cache.stats().kept).toBe(before + 1);
  });

  it('through the API: a batch naming a check deleted since the last batch is refused', async () => {
    const id = await createCheck();
    expect((await svc.call('POST', '/v1/check-results', { body: { results: [result(id)] } })).status).toBe(202);
    expect((await svc.call('DELETE', `/v1/checks/${id}`)).status).toBe(204);
    // The service's own cache hears of the deletion a few milliseconds after its commit.
    const refused = await waitFor(
      () => svc.call('POST', '/v1/check-results', { body: { results: [result(id)] } }),
      (res) => res.status === 400,
    );
    expect(JSON.stringify(refused.body)).toMatch(/names no check of this account/);
  });
});
