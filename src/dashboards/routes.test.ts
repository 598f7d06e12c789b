import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';

const label = () => `status-${randomBytes(4).toString('hex')}`;

describe('dashboards', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());
  const count = async () => (await svc.deps.sql`select count(*)::int as n from dashboards`)[0].n as number;

  it('creates with every default applied', async () => {
    const res = await svc.call('POST', '/v1/dashboards', { body: { header: 'Status' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      header: 'Status',
      width: 'FULL',
      refreshRate: 60,
      paginate: true,
      paginationRate: 60,
      checksPerPage: 15,
      useTagsAndOperator: false,
      hideTags: false,
      enableIncidents: false,
      expandChecks: false,
      showHeader: true,
      showCheckRunLinks: false,
      showGroupNames: true,
      customCSS: '',
      isPrivate: false,
      showP95: true,
      showP99: true,
      keys: [],
      updated_at: null,
    });
    expect(typeof res.body.id).toBe('number');
    expect(typeof res.body.dashboardId).toBe('string');
    expect(Date.parse(res.body.created_at)).not.toBeNaN();
    const byString = await svc.call('GET', `/v1/dashboards/${res.body.dashboardId}`);
    const byNumber = await svc.call('GET', `/v1/dashboards/${res.body.id}`);
    expect(byString.body).toEqual(res.body);
    expect(byNumber.body).toEqual(res.body);
  });

  it('gives a private dashboard a key shown once, stored hashed, masked afterwards', async () => {
    const res = await svc.call('POST', '/v1/dashboards', { body: { header: 'Private', isPrivate: true } });
    expect(res.status).toBe(201);
    expect(res.body.keys).toHaveLength(1);
    const [key] = res.body.keys;
    expect(key.rawKey).toMatch(/^dk_[A-Za-z0-9_-]{32}$/);
    expect(key.maskedKey.endsWith(key.rawKey.slice(-4))).toBe(true);
    expect(key.maskedKey).not.toContain(key.rawKey.slice(0, 10));
    const [row] = await svc.deps.sql`select * from dashboard_keys where id = ${key.id}`;
    expect(JSON.stringify(row)).not.toContain(key.rawKey);
    const got = await svc.call('GET', `/v1/dashboards/${res.body.id}`);
    expect(got.body.keys).toEqual([{ id: key.id, maskedKey: key.maskedKey, created_at: key.created_at, updated_at: key.updated_at }]);
    const list = await svc.call('GET', '/v1/dashboards?limit=100');
    expect(list.text).not.toContain(key.rawKey);
    // An update keeps the key and does not show it again.
    const upd = await svc.call('PUT', `/v1/dashboards/${res.body.dashboardId}`, { body: { header: 'Private 2', isPrivate: true } });
    expect(upd.body.keys).toEqual(got.body.keys);
    expect(svc.logs.join('\n')).not.toContain(key.rawKey);
  });

  it('creates a key when an update makes the dashboard private, and drops it when public again', async () => {
    const { body: d } = await svc.call('POST', '/v1/dashboards', { body: { header: 'Later private' } });
    const priv = await svc.call('PUT', `/v1/dashboards/${d.id}`, { body: { header: 'Later private', isPrivate: true } });
    expect(priv.body.keys).toHaveLength(1);
    expect(priv.body.keys[0].rawKey).toMatch(/^dk_/);
    const pub = await svc.call('PUT', `/v1/dashboards/${d.id}`, { body: { header: 'Later private', isPrivate: false } });
    expect(pub.body.keys).toEqual([]);
  });

  it('answers 409 when customUrl is taken by any account, or customDomain by another dashboard of the account, on create and update', async () => {
    const url = label();
    const domain = `${label()}.example.com`;
    const first = await svc.call('POST', '/v1/dashboards', { body: { header: 'A', customUrl: url, customDomain: domain } });
    expect(first.status).toBe(201);
    const other = await createOtherTenant(svc);
    const before = await count();
    for (const [key, body] of [
      [other.key, { header: 'B', customUrl: url }],
      [other.key, { header: 'B', customUrl: url.toUpperCase() }],
      [undefined, { header: 'B', customDomain: domain }],
      [undefined, { header: 'B', customDomain: domain.toUpperCase() }],
    ] as const) {
      const res = await svc.call('POST', '/v1/dashboards', { key, body });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    }
    expect(await count()).toBe(before);
    // Another account may name the domain: an unverified claim of its own, served nowhere until proved.
    expect((await svc.call('POST', '/v1/dashboards', { key: other.key, body: { header: 'B', customDomain: domain } })).status).toBe(201);
    const { body: mine } = await svc.call('POST', '/v1/dashboards', { key: other.key, body: { header: 'C', customUrl: label() } });
    const upd = await svc.call('PUT', `/v1/dashboards/${mine.id}`, { key: other.key, body: { header: 'C', customUrl: url } });
    expect(upd.status).toBe(409);
    expect((await svc.call('GET', `/v1/dashboards/${mine.id}`, { key: other.key })).body.customUrl).toBe(mine.customUrl);
    // A dashboard may keep its own name on update.
    const same = await svc.call('PUT', `/v1/dashboards/${first.body.id}`, { body: { header: 'A2', customUrl: url, customDomain: domain } });
    expect(same.status).toBe(200);
  });

  it.each([
    [{}, 'body.header', 'required'],
    [{ header: 5 }, 'body.header', 'type'],
    [{ header: 'x', width: '800PX' }, 'body.width', 'enum'],
    [{ header: 'x', refreshRate: 120 }, 'body.refreshRate', 'enum'],
    [{ header: 'x', paginationRate: 10 }, 'body.paginationRate', 'enum'],
    [{ header: 'x', checksPerPage: 0 }, 'body.checksPerPage', 'minimum'],
    [{ header: 'x', checksPerPage: 21 }, 'body.checksPerPage', 'maximum'],
    [{ header: 'x', customUrl: 'not a label' }, 'body.customUrl', 'pattern'],
    [{ header: 'x', customUrl: '-leading' }, 'body.customUrl', 'pattern'],
    [{ header: 'x', customUrl: 'a'.repeat(64) }, 'body.customUrl', undefined],
    [{ header: 'x', customDomain: 'localhost' }, 'body.customDomain', undefined],
    [{ header: 'x', customDomain: 'bad_domain!.com' }, 'body.customDomain', undefined],
    [{ header: 'x', logo: 'not a url' }, 'body.logo', undefined],
    [{ header: 'x', link: 'nope' }, 'body.link', 'format'],
    [{ header: 'x', isPrivate: 'yes' }, 'body.isPrivate', 'type'],
    [{ header: 'x', theme: 'dark' }, 'body.theme', 'additionalProperties'],
  ])('rejects %j naming %s, storing nothing', async (body, field, rule) => {
    const before = await count();
    expectFieldError(await svc.call('POST', '/v1/dashboards', { body }), field, rule);
    expect(await count()).toBe(before);
  });

  it('validates updates and answers 404 for unknown dashboards', async () => {
    const { body: d } = await svc.call('POST', '/v1/dashboards', { body: { header: 'Keep' } });
    expectFieldError(await svc.call('PUT', `/v1/dashboards/${d.id}`, { body: { header: 'x', checksPerPage: 50 } }), 'body.checksPerPage');
    expect((await svc.call('GET', `/v1/dashboards/${d.id}`)).body.header).toBe('Keep');
    expect((await svc.call('PUT', '/v1/dashboards/999999', { body: { header: 'x' } })).status).toBe(404);
    expect((await svc.call('GET', '/v1/dashboards/no-such-dashboard')).status).toBe(404);
  });

  it('lists and deletes', async () => {
    const { body: d } = await svc.call('POST', '/v1/dashboards', { body: { header: 'Temp' } });
    const list = await svc.call('GET', '/v1/dashboards?limit=100');
    expect(list.body.map((x: { id: number }) => x.id)).toContain(d.id);
    const [{ n }] = await svc.deps.sql`select count(*)::int as n from dashboards where account_id = ${svc.defaultAccountId}`;
    expect(Number(list.headers.get('x-total-count'))).toBe(n);
    expect((await svc.call('DELETE', `/v1/dashboards/${d.dashboardId}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/dashboards/${d.id}`)).status).toBe(404);
  });

  it("keeps accounts apart: another account gets 404 for this account's dashboards", async () => {
    const { body: d } = await svc.call('POST', '/v1/dashboards', { body: { header: 'Mine' } });
    const other = await createOtherTenant(svc);
    for (const id of [d.id, d.dashboardId]) {
      expect((await svc.call('GET', `/v1/dashboards/${id}`, { key: other.key })).status).toBe(404);
      expect((await svc.call('PUT', `/v1/dashboards/${id}`, { key: other.key, body: { header: 'x' } })).status).toBe(404);
      expect((await svc.call('DELETE', `/v1/dashboards/${id}`, { key: other.key })).status).toBe(404);
    }
    expect((await svc.call('GET', '/v1/dashboards', { key: other.key })).body).toEqual([]);
    expect((await svc.call('GET', `/v1/dashboards/${d.id}`)).body.header).toBe('Mine');
  });
});
