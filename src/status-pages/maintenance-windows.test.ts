import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';

const base = { name: 'Deploy', startsAt: '2026-12-01T02:00:00.000Z', endsAt: '2026-12-01T04:00:00.000Z' };

describe('maintenance windows', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());
  const count = async () => (await svc.deps.sql`select count(*)::int as n from maintenance_windows`)[0].n as number;

  it('creates with defaults and retrieves it', async () => {
    const res = await svc.call('POST', '/v1/maintenance-windows', {
      body: { ...base, tags: ['api'], statusPageVisibility: { enabled: true, severity: 'MINOR', reminderMinutesBefore: [10, 60] } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ...base,
      tags: ['api'],
      repeatInterval: null,
      repeatUnit: null,
      repeatEndsAt: null,
      description: null,
      pauseAllChecks: false,
      silenceAlertsTags: [],
      silenceAllAlerts: false,
      statusPageVisibility: { enabled: true, severity: 'MINOR', reminderMinutesBefore: [10, 60] },
      updated_at: null,
    });
    expect(typeof res.body.id).toBe('number');
    const got = await svc.call('GET', `/v1/maintenance-windows/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('accepts calendar dates and a repeat with an end', async () => {
    const res = await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'Weekly', startsAt: '2026-12-01', endsAt: '2026-12-02', repeatUnit: 'WEEK', repeatInterval: 1, repeatEndsAt: '2027-06-01' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ repeatUnit: 'WEEK', repeatInterval: 1, repeatEndsAt: '2027-06-01' });
    const daily = await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'Daily', startsAt: '2026-12-01', endsAt: '2026-12-02', repeatUnit: 'DAY', repeatInterval: null },
    });
    expect(daily.status, daily.text).toBe(201);
    expect(daily.body).toMatchObject({ repeatUnit: 'DAY', repeatInterval: 1 });
  });

  it.each([
    [{ ...base, name: undefined }, 'body.name', 'required'],
    [{ ...base, endsAt: base.startsAt }, 'body.endsAt', 'after'],
    [{ ...base, endsAt: '2026-11-30T00:00:00Z' }, 'body.endsAt', 'after'],
    [{ ...base, startsAt: 'tomorrow' }, 'body.startsAt', undefined],
    [{ ...base, repeatInterval: 2 }, 'body.repeatUnit', 'requires'],
    [{ ...base, repeatUnit: 'YEAR', repeatInterval: 1 }, 'body.repeatUnit', 'enum'],
    [{ ...base, repeatUnit: 'DAY', repeatInterval: 0 }, 'body.repeatInterval', 'minimum'],
    [{ ...base, repeatUnit: 'DAY', repeatInterval: 1.5 }, 'body.repeatInterval', 'type'],
    [{ ...base, repeatUnit: 'DAY', repeatInterval: 1, repeatEndsAt: '2026-11-01' }, 'body.repeatEndsAt', 'after'],
    [{ ...base, repeatEndsAt: '2027-01-01' }, 'body.repeatEndsAt', 'requires'],
    [{ ...base, statusPageVisibility: { severity: 'HUGE' } }, 'body.statusPageVisibility.severity', 'enum'],
    [{ ...base, statusPageVisibility: { statusPageIds: ['nope'] } }, 'body.statusPageVisibility.statusPageIds[0]', 'format'],
    [{ ...base, statusPageVisibility: { serviceIds: [42] } }, 'body.statusPageVisibility.serviceIds[0]', 'type'],
    [{ ...base, statusPageVisibility: { reminderMinutesBefore: [1.5] } }, 'body.statusPageVisibility.reminderMinutesBefore[0]', 'type'],
    [{ ...base, statusPageVisibility: { enabled: 'yes' } }, 'body.statusPageVisibility.enabled', 'type'],
    [{ ...base, statusPageVisibility: { colour: 'red' } }, 'body.statusPageVisibility.colour', 'additionalProperties'],
    [{ ...base, tags: 'api' }, 'body.tags', 'type'],
  ])('rejects %j naming %s, storing nothing', async (body, field, rule) => {
    const before = await count();
    expectFieldError(await svc.call('POST', '/v1/maintenance-windows', { body }), field, rule);
    expect(await count()).toBe(before);
  });

  it('answers 400 for a path id that is not a positive integer, 404 for an unknown one', async () => {
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
      expectFieldError(await svc.call('GET', `/v1/maintenance-windows/${bad}`), 'path.id');
    }
    const res = await svc.call('GET', '/v1/maintenance-windows/987654');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Not Found' });
  });

  it('takes an id only in its canonical spelling: a leading zero or a plus is a 400, never the window', async () => {
    const created = await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'Spelling', startsAt: '2026-12-01T00:00:00.000Z', endsAt: '2026-12-01T01:00:00.000Z', tags: ['x'] },
    });
    expect(created.status).toBe(201);
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.body.id}`)).status).toBe(200);
    for (const spelling of [`0${created.body.id}`, `00${created.body.id}`, `+${created.body.id}`]) {
      expectFieldError(await svc.call('GET', `/v1/maintenance-windows/${spelling}`), 'path.id', 'type');
      expectFieldError(await svc.call('DELETE', `/v1/maintenance-windows/${spelling}`), 'path.id', 'type');
    }
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.body.id}`)).status).toBe(200);
  });

  it('updates, validates the update, lists and deletes', async () => {
    const { body: created } = await svc.call('POST', '/v1/maintenance-windows', { body: base });
    const updated = await svc.call('PUT', `/v1/maintenance-windows/${created.id}`, { body: { ...base, name: 'Renamed', pauseAllChecks: true } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.id, name: 'Renamed', pauseAllChecks: true });
    expect(updated.body.updated_at).not.toBeNull();
    expectFieldError(await svc.call('PUT', `/v1/maintenance-windows/${created.id}`, { body: { ...base, endsAt: base.startsAt } }), 'body.endsAt');
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.id}`)).body.name).toBe('Renamed');
    const list = await svc.call('GET', '/v1/maintenance-windows?limit=100');
    expect(list.body.map((w: { id: number }) => w.id)).toContain(created.id);
    expect(Number(list.headers.get('x-total-count'))).toBe(await count());
    expect((await svc.call('DELETE', `/v1/maintenance-windows/${created.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.id}`)).status).toBe(404);
  });

  it("keeps accounts apart: another account gets 404 for this account's windows", async () => {
    const { body: created } = await svc.call('POST', '/v1/maintenance-windows', { body: base });
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('PUT', `/v1/maintenance-windows/${created.id}`, { key: other.key, body: base })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/maintenance-windows/${created.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', '/v1/maintenance-windows', { key: other.key })).body).toEqual([]);
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.id}`)).body.name).toBe('Deploy');
  });

  it("shows only on the account's own status pages and services: another account's ids are a 400", async () => {
    const other = await createOtherTenant(svc);
    const theirService = (await svc.call('POST', '/v1/status-pages/services', { key: other.key, body: { name: 'theirs' } })).body.id as string;
    const theirPage = (await svc.call('POST', '/v1/status-pages', { key: other.key, body: { name: 'Theirs', url: 'theirs-mw', cards: [] } })).body.id as string;
    const myService = (await svc.call('POST', '/v1/status-pages/services', { body: { name: 'mine' } })).body.id as string;
    const myPage = (
      await svc.call('POST', '/v1/status-pages', { body: { name: 'Mine', url: 'mine-mw', cards: [{ name: 'c', services: [{ id: myService }] }] } })
    ).body.id as string;
    const visible = (statusPageIds: string[], serviceIds: string[]) => ({ ...base, statusPageVisibility: { enabled: true, statusPageIds, serviceIds } });
    const refused = await svc.call('POST', '/v1/maintenance-windows', { body: visible([myPage, theirPage], [theirService]) });
    expect(refused.status).toBe(400);
    expect(refused.body.attributes.errors.map((e: { field: string }) => e.field)).toEqual([
      'body.statusPageVisibility.statusPageIds',
      'body.statusPageVisibility.serviceIds',
    ]);
    expect(refused.body.attributes.errors[0].message).toContain(theirPage);
    const created = await svc.call('POST', '/v1/maintenance-windows', { body: visible([myPage], [myService]) });
    expect(created.status, created.text).toBe(201);
    expectFieldError(
      await svc.call('PUT', `/v1/maintenance-windows/${created.body.id}`, { body: visible([theirPage], []) }),
      'body.statusPageVisibility.statusPageIds',
      'exists',
    );
    expect((await svc.call('GET', `/v1/maintenance-windows/${created.body.id}`)).body.statusPageVisibility.statusPageIds).toEqual([myPage]);
  });
});
