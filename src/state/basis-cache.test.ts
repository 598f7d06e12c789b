import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announcementsHeard, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { AccountContextCache, CheckBasisCache } from './basis-cache.js';

/**
 * What check state judges a check by, kept between ingest's batches (basis-cache.ts), against the service's Postgres:
 * a kept basis is served without a read and frozen, an id of no check is never kept, and a change of the account's
 * checks or of one of its groups forgets the account as soon as Postgres announces it.
 */
describe("check state's bases kept between batches", () => {
  let svc: TestService;
  let cache: CheckBasisCache;
  let contexts: AccountContextCache;
  let accountId = '';

  beforeAll(async () => {
    svc = await startTestService();
    cache = new CheckBasisCache(svc.deps.sql, svc.deps.logger);
    contexts = new AccountContextCache(svc.deps.sql, svc.deps.logger);
    await waitFor(
      async () => cache.stats().heard && contexts.stats().heard,
      (heard) => heard,
    );
  }, 60_000);
  afterAll(async () => {
    cache?.stop();
    contexts?.stop();
    await svc?.stop();
  });

  const createCheck = async (extra: Record<string, unknown> = {}) => {
    const res = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'Cart API', locations: ['eu-west-1'], request: { method: 'GET', url: 'http://127.0.0.1:9/cart' }, ...extra },
    });
    expect(res.status, res.text).toBe(201);
    const id = (res.body as { id: string }).id;
    accountId ||= (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${id}`)[0]!.account_id;
    return id;
  };
  /** Until every announcement committed so far (a check's creation) has arrived: a late one would forget what is read next. */
  const settle = () => announcementsHeard(svc.deps.sql, 'definitions_changed');

  it('keeps what it read, frozen, and no id that names no check', async () => {
    const id = await createCheck({
      shouldFail: true,
      tags: ['cart'],
      useGlobalAlertSettings: false,
      alertSettings: { reminders: { amount: 2, interval: 10 } },
    });
    await settle();
    const before = cache.stats().kept;
    const bases = await cache.basesOf(svc.deps.sql, accountId, [id, randomUUID()]);
    expect([...bases.keys()]).toEqual([id]);
    const basis = bases.get(id)!;
    expect(basis.check).toMatchObject({ id, name: 'Cart API', checkType: 'API', shouldFail: true, tags: ['cart'], groupId: null });
    expect(basis.own?.reminders.amount).toBe(2);
    expect(Object.isFrozen(basis.check) && Object.isFrozen(basis.check.tags) && Object.isFrozen(basis.own?.reminders)).toBe(true);
    expect(cache.stats().kept).toBe(before + 1);
    // Changed behind the cache's back with no announcement: still served from memory, not read.
    await svc.deps.sql.begin(async (tx) => {
      await tx`alter table checks disable trigger checks_definition_change`;
      await tx`update checks set name = 'Renamed quietly' where id = ${id}`;
      await tx`alter table checks enable trigger checks_definition_change`;
    });
    expect((await cache.basesOf(svc.deps.sql, accountId, [id])).get(id)!.check.name).toBe('Cart API');
    cache.forget(accountId);
    expect((await cache.basesOf(svc.deps.sql, accountId, [id])).get(id)!.check.name).toBe('Renamed quietly');
  });

  it("forgets the account when one of its groups changes, and reads the group's settings again", async () => {
    const group = await svc.call('POST', '/v1/check-groups', { body: { name: 'storefront', tags: ['front'] } });
    expect(group.status).toBe(201);
    const groupId = (group.body as { id: number }).id;
    const id = await createCheck({ groupId });
    await settle();
    const read = await cache.basesOf(svc.deps.sql, accountId, [id]);
    expect(read.get(id)!.check.groupId).toBe(groupId);
    const kept = cache.stats().kept;
    const changed = await svc.call('PUT', `/v1/check-groups/${groupId}`, { body: { name: 'storefront', muted: true } });
    expect(changed.status, changed.text).toBe(200);
    await waitFor(
      async () => cache.stats().kept,
      (n) => n < kept,
    );
    expect((await cache.basesOf(svc.deps.sql, accountId, [id])).get(id)!.check.muted).toBe(true);
  });

  it("keeps the account's alert settings and maintenance windows, and forgets them when a window or the settings change", async () => {
    await createCheck();
    await settle();
    const first = await contexts.contextOf(svc.deps.sql, accountId);
    expect(first.windows).toEqual([]);
    expect(Object.isFrozen(first) && Object.isFrozen(first.accountSettings)).toBe(true);
    expect(contexts.stats().kept).toBe(1);
    // Changed behind the cache's back with no announcement: still served from memory, not read.
    await svc.deps.sql.begin(async (tx) => {
      await tx`alter table accounts disable trigger accounts_alert_settings_change`;
      await tx`update accounts set alert_settings = alert_settings || '{"escalationType":"TIME_BASED"}' where id = ${accountId}`;
      await tx`alter table accounts enable trigger accounts_alert_settings_change`;
    });
    expect(await contexts.contextOf(svc.deps.sql, accountId)).toBe(first);
    // A window made through the API is announced: the next read has it, and the settings changed quietly above.
    const day = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
    const window = await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'db work', startsAt: day(-1), endsAt: day(1), tags: ['db'], pauseAllChecks: true },
    });
    expect(window.status, window.text).toBe(201);
    await waitFor(
      async () => contexts.stats().kept,
      (n) => n === 0,
    );
    const second = await contexts.contextOf(svc.deps.sql, accountId);
    expect(second.windows).toEqual([expect.objectContaining({ name: 'db work', pauseAllChecks: true })]);
    expect(second.accountSettings).toMatchObject({ escalationType: 'TIME_BASED' });
    // The settings changed in Postgres (an operator's update) are announced too; another column of the account is not.
    await settle();
    await contexts.contextOf(svc.deps.sql, accountId);
    await svc.deps.sql`update accounts set name = name where id = ${accountId}`;
    await settle();
    expect(contexts.stats().kept).toBe(1);
    await svc.deps.sql`update accounts set alert_settings = alert_settings || '{"escalationType":"RUN_BASED"}' where id = ${accountId}`;
    await waitFor(
      async () => contexts.stats().kept,
      (n) => n === 0,
    );
    expect((await contexts.contextOf(svc.deps.sql, accountId)).accountSettings).toMatchObject({ escalationType: 'RUN_BASED' });
  });
});
