import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, startTestService, type TestService } from '../../../test/support/service.js';

describe('trigger URLs', () => {
  let svc: TestService;
  let check: string;
  let group: number;
  beforeAll(async () => {
    svc = await startTestService();
    check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'deploy smoke', request: { url: 'https://x.test' } } })).body.id;
    group = (await svc.call('POST', '/v1/check-groups', { body: { name: 'smoke' } })).body.id;
  });
  afterAll(() => svc?.stop());

  const runRequests = () =>
    svc.deps.sql<{ check_id: string | null; group_id: number | null; source: string }[]>`select check_id, group_id, source from run_requests order by id`;

  it('record a run request when called with the token, without a key', async () => {
    const created = await svc.call('POST', `/v1/triggers/checks/${check}`);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ checkId: check, called_at: null, token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/) });
    expect(created.body.url).toBe(`${svc.url}/checks/${check}/trigger/${created.body.token}`);
    const again = await svc.call('POST', `/v1/triggers/checks/${check}`);
    expect(again.status).toBe(201);
    expect(again.body.token).toBe(created.body.token);
    const called = await svc.call('GET', `/checks/${check}/trigger/${created.body.token}`, { key: null });
    expect(called.status).toBe(202);
    expect(called.body).toMatchObject({ checkId: check, runRequestId: expect.any(Number) });
    expect((await svc.call('POST', `/checks/${check}/trigger/${created.body.token}`, { key: null })).status).toBe(202);
    // A link checker's HEAD and a browser's prefetch start nothing.
    expect((await svc.call('HEAD', `/checks/${check}/trigger/${created.body.token}`, { key: null })).status).toBe(400);
    for (const headers of [{ 'sec-purpose': 'prefetch;prerender' }, { purpose: 'prefetch' }, { 'x-moz': 'prefetch' }] as Record<string, string>[]) {
      const ahead = await svc.call('GET', `/checks/${check}/trigger/${created.body.token}`, { key: null, headers });
      expect(ahead.status).toBe(400);
      expect(ahead.body.message).toBe('A prefetch starts no run: call the trigger URL with GET or POST');
    }
    expect(await runRequests()).toEqual([
      { check_id: check, group_id: null, source: 'TRIGGER' },
      { check_id: check, group_id: null, source: 'TRIGGER' },
    ]);
    expect((await svc.call('GET', `/v1/triggers/checks/${check}`)).body.called_at).not.toBeNull();
  });

  it('answer 404 for a wrong token, another check, or a deleted trigger, recording nothing', async () => {
    const { token } = (await svc.call('GET', `/v1/triggers/checks/${check}`)).body;
    const before = (await runRequests()).length;
    expect((await svc.call('GET', `/checks/${check}/trigger/${token}x`, { key: null })).status).toBe(404);
    const other = (await svc.call('POST', '/v1/checks/api', { body: { name: 'other', request: { url: 'https://x.test' } } })).body.id;
    expect((await svc.call('GET', `/checks/${other}/trigger/${token}`, { key: null })).status).toBe(404);
    expect((await svc.call('GET', `/checks/not-a-check/trigger/${token}`, { key: null })).status).toBe(400);
    expect((await svc.call('GET', `/checks/${check}/trigger/bad%20token`, { key: null })).status).toBe(400);
    expect((await svc.call('DELETE', `/v1/triggers/checks/${check}`)).status).toBe(204);
    expect((await svc.call('GET', `/checks/${check}/trigger/${token}`, { key: null })).status).toBe(404);
    expect((await svc.call('GET', `/v1/triggers/checks/${check}`)).status).toBe(404);
    expect((await runRequests()).length).toBe(before);
  });

  it('work for groups, stay in their account, and are rate limited per token', async () => {
    const created = await svc.call('POST', `/v1/triggers/check-groups/${group}`);
    expect(created.status).toBe(201);
    expect(created.body.url).toBe(`${svc.url}/check-groups/${group}/trigger/${created.body.token}`);
    expect((await svc.call('POST', `/check-groups/${group}/trigger/${created.body.token}`, { key: null })).body.groupId).toBe(group);
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/triggers/check-groups/${group}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('POST', `/v1/triggers/checks/${check}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('POST', '/v1/triggers/check-groups/999999')).status).toBe(404);
    let last = 0;
    for (let i = 0; i < 61; i++) last = (await svc.call('GET', `/check-groups/${group}/trigger/${created.body.token}`, { key: null })).status;
    expect(last).toBe(429);
  });
});
