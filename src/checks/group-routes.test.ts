import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';
import { openSecret } from '../storage/secret-box.js';

describe('check groups', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());
  const count = async () => (await svc.deps.sql`select count(*)::int as n from check_groups`)[0].n as number;

  it('creates with defaults, retrieves, updates, lists and deletes', async () => {
    const res = await svc.call('POST', '/v1/check-groups', { body: { name: 'Core' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Core',
      activated: true,
      muted: false,
      tags: [],
      locations: [],
      concurrency: 3,
      useGlobalAlertSettings: true,
      doubleCheck: true,
      updated_at: null,
    });
    const id = res.body.id;
    expect((await svc.call('GET', `/v1/check-groups/${id}`)).body).toEqual(res.body);
    const upd = await svc.call('PUT', `/v1/check-groups/${id}`, { body: { name: 'Core 2', concurrency: 10, locations: ['eu-west-1'] } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ id, name: 'Core 2', concurrency: 10, locations: ['eu-west-1'] });
    const list = await svc.call('GET', '/v1/check-groups');
    expect(list.body.map((g: { id: number }) => g.id)).toContain(id);
    expect((await svc.call('DELETE', `/v1/check-groups/${id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/check-groups/${id}`)).status).toBe(404);
  });

  it('masks secret group variables', async () => {
    const res = await svc.call('POST', '/v1/check-groups', {
      body: { name: 'S', environmentVariables: [{ key: 'TOKEN', value: 'group-secret-value', secret: true }] },
    });
    expect(res.body.environmentVariables[0]).toMatchObject({ key: 'TOKEN', value: '', secret: true });
    expect((await svc.call('GET', `/v1/check-groups/${res.body.id}`)).text).not.toContain('group-secret-value');
    const put = await svc.call('PUT', `/v1/check-groups/${res.body.id}`, { body: { name: 'S', environmentVariables: res.body.environmentVariables } });
    expect(put.status).toBe(200);
    const [row] = await svc.deps.sql`select data from check_groups where id = ${res.body.id}`;
    // Kept (sealed at rest) across the round trip.
    expect(row.data.environmentVariables[0].value).not.toContain('group-secret-value');
    expect(openSecret(row.data.environmentVariables[0].value)).toBe('group-secret-value');
  });

  it.each([
    [{}, 'body.name', 'required'],
    [{ name: 'x', concurrency: 0 }, 'body.concurrency', 'minimum'],
    [{ name: 'x', locations: ['moon'] }, 'body.locations[0]', 'enum'],
    [{ name: 'x', frequency: 7 }, 'body.frequency', 'enum'],
    [{ name: 'x', runtimeId: 'latest' }, 'body.runtimeId', 'enum'],
    [{ name: 'x', apiCheckDefaults: { url: 5 } }, 'body.apiCheckDefaults.url', 'type'],
    [{ name: 'x', retryStrategy: { onlyOn: ['TIMEOUT'] } }, 'body.retryStrategy.onlyOn[0]', 'enum'],
    [{ name: 'x', owner: 'me' }, 'body.owner', 'additionalProperties'],
  ])('rejects %j naming %s, storing nothing', async (body, field, rule) => {
    const before = await count();
    expectFieldError(await svc.call('POST', '/v1/check-groups', { body }), field, rule);
    expect(await count()).toBe(before);
  });

  it("keeps accounts apart: another account gets 404 for this account's groups", async () => {
    const { body: g } = await svc.call('POST', '/v1/check-groups', { body: { name: 'private' } });
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/check-groups/${g.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('PUT', `/v1/check-groups/${g.id}`, { key: other.key, body: { name: 'x' } })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/check-groups/${g.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', '/v1/check-groups', { key: other.key })).body).toEqual([]);
  });
});

describe('check groups in the anchor v2 form, and the checks of a group', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('v2: null and FALLBACK leave each check its own setting; explicit values override as in v1', async () => {
    const loose = await svc.call('POST', '/v2/check-groups', { body: { name: 'loose', retryStrategy: 'FALLBACK', locations: ['eu-west-1'] } });
    expect(loose.status, loose.text).toBe(201);
    expect(loose.body).toMatchObject({ useGlobalAlertSettings: null, runParallel: null, doubleCheck: false, locations: ['eu-west-1'] });
    expect(loose.body).not.toHaveProperty('retryStrategy');
    const check = await svc.call('POST', '/v1/checks/api', {
      body: {
        name: 'own',
        groupId: loose.body.id,
        useGlobalAlertSettings: false,
        runParallel: true,
        retryStrategy: { type: 'FIXED', maxRetries: 2 },
        request: { url: 'https://x.test' },
      },
    });
    const applied = await svc.call('GET', `/v1/check-groups/${loose.body.id}/checks/${check.body.id}`);
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({
      useGlobalAlertSettings: false,
      runParallel: true,
      retryStrategy: { type: 'FIXED', maxRetries: 2 },
      locations: ['eu-west-1'],
    });

    const strict = await svc.call('PUT', `/v2/check-groups/${loose.body.id}`, {
      body: { name: 'strict', useGlobalAlertSettings: true, runParallel: false, retryStrategy: { type: 'LINEAR', maxRetries: 1 } },
    });
    expect(strict.status, strict.text).toBe(200);
    const now = await svc.call('GET', `/v2/check-groups/${loose.body.id}/checks/${check.body.id}`);
    expect(now.body).toMatchObject({ useGlobalAlertSettings: true, runParallel: false, retryStrategy: { type: 'LINEAR', maxRetries: 1 } });
    expectFieldError(await svc.call('POST', '/v2/check-groups', { body: { name: 'x', retryStrategy: 'SOMETIMES' } }), 'body.retryStrategy');
    expectFieldError(await svc.call('PUT', `/v2/check-groups/${loose.body.id}`, { body: { name: 'x', runParallel: 'yes' } }), 'body.runParallel', 'type');
    expect((await svc.call('PUT', '/v2/check-groups/999999', { body: { name: 'x' } })).status).toBe(404);
  });

  it('lists the checks of a group with its settings applied, paged, in its own account only', async () => {
    const group = (await svc.call('POST', '/v1/check-groups', { body: { name: 'g', tags: ['team-a'], locations: ['ap-south-1'] } })).body;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        (await svc.call('POST', '/v1/checks/api', { body: { name: `c${i}`, groupId: group.id, tags: ['own'], request: { url: 'https://x.test' } } })).body.id,
      );
    }
    const outside = (await svc.call('POST', '/v1/checks/api', { body: { name: 'outside', request: { url: 'https://x.test' } } })).body.id;
    for (const version of ['v1', 'v2']) {
      const page = await svc.call('GET', `/${version}/check-groups/${group.id}/checks?limit=2`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-range')).toBe('0-1/3');
      expect(page.body.map((c: { id: string }) => c.id)).toEqual(ids.slice(0, 2));
      expect(page.body[0]).toMatchObject({ tags: ['own', 'team-a'], locations: ['ap-south-1'] });
      expect((await svc.call('GET', `/${version}/check-groups/${group.id}/checks/${outside}`)).status).toBe(404);
    }
    expect((await svc.call('GET', '/v1/check-groups/999999/checks')).status).toBe(404);
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/check-groups/${group.id}/checks`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', `/v1/check-groups/${group.id}/checks/${ids[0]}`, { key: other.key })).status).toBe(404);
  });
});
