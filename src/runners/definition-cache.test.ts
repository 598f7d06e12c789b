import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announcementsHeard, createOtherTenant, startTestService, type TestService } from '../../test/support/service.js';
import type { RunnableCheck } from '../run-kernel/index.js';
import { DefinitionCache } from './definition-cache.js';

/**
 * Definitions kept between scheduled runs (definition-cache.ts) against the service's Postgres: a kept definition is
 * served without a read, and every change of what it is made of (the check, through the API or behind it; its group;
 * the account's variables; snippets) is forgotten as soon as Postgres announces it; another account's change is not.
 */
describe('check definitions kept between scheduled runs', () => {
  let svc: TestService;
  let cache: DefinitionCache;
  /** The default account's id (known once its first check is made). */
  let accountId = '';

  beforeAll(async () => {
    svc = await startTestService();
    cache = new DefinitionCache({ sql: svc.deps.sql, logger: svc.deps.logger, maxBytes: 10 * 1024 * 1024 });
    // Kept only once announcements are heard (the listening connection is up).
    for (const until = Date.now() + 5000; !cache.stats().heard && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  }, 60_000);
  afterAll(async () => {
    cache?.stop();
    await svc?.stop();
  });

  const announced = () => announcementsHeard(svc.deps.sql, 'definitions_changed');
  /** Makes a check, and waits until its announcement was heard (a late one would forget what a test just kept). */
  const createCheck = async (body: Record<string, unknown> = {}, key?: string) => {
    const res = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      key,
      body: {
        name: 'Cart API',
        locations: ['eu-west-1'],
        frequency: 1,
        request: { method: 'GET', url: 'http://127.0.0.1:9/cart?token={{TOKEN}}' },
        ...body,
      },
    });
    expect(res.status).toBe(201);
    const check = res.body as { id: string };
    if (!key && !accountId) accountId = (await svc.deps.sql<{ account_id: string }[]>`select account_id from checks where id = ${check.id}`)[0].account_id;
    await announced();
    return check;
  };
  const urlOf = (check: RunnableCheck | undefined) => (check?.data.request as { url: string } | undefined)?.url;
  /** The definition as a scheduled run would get it, and how many checks had to be read for it. */
  const get = async (account: string, id: string) => {
    const before = cache.stats().reads;
    const check = (await cache.runnable(account, [id])).get(id);
    return { check, read: cache.stats().reads - before };
  };

  it('serves a kept definition without reading it again, frozen', async () => {
    const { id } = await createCheck();
    const first = await get(accountId, id);
    expect(first.read).toBe(1);
    expect(urlOf(first.check)).toBe('http://127.0.0.1:9/cart?token={{TOKEN}}');
    const again = await get(accountId, id);
    expect(again.read).toBe(0);
    expect(again.check).toBe(first.check);
    // Runs share it: none can change it for the next.
    expect(() => {
      (again.check!.data as Record<string, unknown>).request = {};
    }).toThrow(TypeError);
    expect(() => {
      again.check!.variables.TOKEN = 'changed';
    }).toThrow(TypeError);
    // A check that does not exist is absent, and not kept as absent.
    expect((await cache.runnable(accountId, ['00000000-0000-4000-8000-000000000000'])).size).toBe(0);
  });

  it('forgets a check changed through the API, or behind it, as soon as Postgres announces it', async () => {
    const { id } = await createCheck();
    await get(accountId, id);
    expect((await get(accountId, id)).read).toBe(0);

    const put = await svc.call('PUT', `/v1/checks/api/${id}`, { body: { request: { method: 'GET', url: 'http://127.0.0.1:9/v2/cart' } } });
    expect(put.status).toBe(200);
    await expect.poll(async () => urlOf((await get(accountId, id)).check), { timeout: 2000 }).toBe('http://127.0.0.1:9/v2/cart');
    expect((await get(accountId, id)).read).toBe(0);

    await svc.deps.sql`update checks set data = jsonb_set(data, '{request,url}', '"http://127.0.0.1:9/v3/cart"') where id = ${id}`;
    await expect.poll(async () => urlOf((await get(accountId, id)).check), { timeout: 2000 }).toBe('http://127.0.0.1:9/v3/cart');

    // Deactivated: a scheduled run reads it as deactivated (and is skipped).
    await svc.deps.sql`update checks set activated = false where id = ${id}`;
    await expect.poll(async () => (await get(accountId, id)).check?.activated, { timeout: 2000 }).toBe(false);

    // Deleted: gone at once for the next run.
    expect((await svc.call('DELETE', `/v1/checks/${id}`)).status).toBe(204);
    await expect.poll(async () => (await get(accountId, id)).check, { timeout: 2000 }).toBeUndefined();
  });

  it("forgets on a change of the account's variables, the check's group or a snippet", async () => {
    const group = await svc.call('POST', '/v1/check-groups', { body: { name: 'Core', locations: ['eu-west-1'] } });
    expect(group.status).toBe(201);
    const { id } = await createCheck({ groupId: group.body.id });
    const variable = await svc.call('POST', '/v1/variables', { body: { key: 'TOKEN', value: 'first', secret: true } });
    expect(variable.status).toBe(201);
    await announced();
    expect((await get(accountId, id)).check?.variables.TOKEN).toBe('first');
    expect((await get(accountId, id)).read).toBe(0);

    expect((await svc.call('PUT', '/v1/variables/TOKEN', { body: { key: 'TOKEN', value: 'second', secret: true } })).status).toBe(200);
    await expect.poll(async () => (await get(accountId, id)).check?.variables.TOKEN, { timeout: 2000 }).toBe('second');
    // The secret stays a secret of the run (never echoed in its result).
    expect((await get(accountId, id)).check?.secrets).toContain('second');

    expect((await svc.call('PUT', `/v1/check-groups/${group.body.id}`, { body: { name: 'Core', tags: ['from-group'] } })).status).toBe(200);
    await expect.poll(async () => (await get(accountId, id)).check?.tags, { timeout: 2000 }).toContain('from-group');

    const snippet = await svc.call('POST', '/v1/snippets', { body: { name: 'setup', script: 'request.headers.a = "1"' } });
    expect(snippet.status).toBe(201);
    expect((await svc.call('PUT', `/v1/checks/api/${id}`, { body: { setupSnippetId: snippet.body.id } })).status).toBe(200);
    await expect.poll(async () => (await get(accountId, id)).check?.setupScript, { timeout: 2000 }).toBe('request.headers.a = "1"');
    expect((await svc.call('PUT', `/v1/snippets/${snippet.body.id}`, { body: { name: 'setup', script: 'request.headers.a = "2"' } })).status).toBe(200);
    await expect.poll(async () => (await get(accountId, id)).check?.setupScript, { timeout: 2000 }).toBe('request.headers.a = "2"');
  });

  it("keeps one account's definitions when another account changes its own", async () => {
    const { id } = await createCheck();
    await get(accountId, id);
    const other = await createOtherTenant(svc);
    const theirs = await createCheck({}, other.key);
    await get(other.accountId, theirs.id);
    expect((await svc.call('PUT', `/v1/checks/api/${theirs.id}`, { key: other.key, body: { name: 'Theirs' } })).status).toBe(200);
    await expect.poll(async () => (await get(other.accountId, theirs.id)).check?.name, { timeout: 2000 }).toBe('Theirs');
    expect((await get(accountId, id)).read).toBe(0);
    // Nor does an account read another's check through it.
    expect((await cache.runnable(accountId, [theirs.id])).size).toBe(0);
  });

  it('once full keeps what it holds and reads the other checks at each run', async () => {
    // Room for one of these checks and not two.
    const one = await createCheck();
    const sized = new DefinitionCache({ sql: svc.deps.sql, logger: svc.deps.logger, maxBytes: 1024 * 1024 });
    for (const until = Date.now() + 5000; !sized.stats().heard && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    await sized.runnable(accountId, [one.id]);
    const bytes = sized.stats().keptBytes;
    sized.stop();
    expect(bytes).toBeGreaterThan(500);
    const small = new DefinitionCache({ sql: svc.deps.sql, logger: svc.deps.logger, maxBytes: Math.ceil(bytes * 1.5) });
    try {
      for (const until = Date.now() + 5000; !small.stats().heard && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      const two = await createCheck();
      await small.runnable(accountId, [one.id]);
      await small.runnable(accountId, [two.id]);
      const reads = small.stats().reads;
      expect((await small.runnable(accountId, [one.id, two.id])).size).toBe(2);
      expect(small.stats()).toMatchObject({ reads: reads + 1, kept: 1, keptBytes: bytes });
    } finally {
      small.stop();
    }
  });

  it('does not keep a read during which its account changed', async () => {
    const { id } = await createCheck();
    const reading = cache.runnable(accountId, [id]);
    // The announcement of a change committed while the read was under way.
    cache.forget(accountId);
    expect((await reading).get(id)?.id).toBe(id);
    expect((await get(accountId, id)).read).toBe(1);
    expect((await get(accountId, id)).read).toBe(0);
  });
});
