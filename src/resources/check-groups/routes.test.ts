import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../../test/support/service.js';

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
      name: 'Core', activated: true, muted: false, tags: [], locations: [], concurrency: 3,
      useGlobalAlertSettings: true, doubleCheck: true, updated_at: null,
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
    expect(row.data.environmentVariables[0].value).toBe('group-secret-value');
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
