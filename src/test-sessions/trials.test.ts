import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startHttpTarget } from '../../test/support/targets.js';
import { createAccount, createApiKey } from '../accounts/repository.js';

/**
 * Trial runs (`/v1/check-runs`): a check's body run once before it is saved, as the console's "Run" does. The
 * target sees the request, the answer carries what the run saw, and nothing becomes the account's: no check, no
 * result in its history, no test session. Refusals name the field as the create route would.
 */
describe('trial runs of a check body', () => {
  let svc: TestService;
  let site: HttpTarget;
  beforeAll(async () => {
    site = await startHttpTarget();
    svc = await startTestService({ RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1' });
  });
  afterAll(async () => {
    await svc?.stop();
    await site?.close();
  });

  const body = (over: Record<string, unknown> = {}) => ({
    name: 'Draft',
    request: {
      url: `${site.url}/ok`,
      assertions: [
        { source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' },
        { source: 'JSON_BODY', property: '$.nested.name', comparison: 'EQUALS', target: 'shop' },
        { source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'broken' },
      ],
    },
    ...over,
  });
  const follow = async (id: string, key?: string) =>
    waitFor(
      () => svc.call('GET', `/v1/check-runs/${id}?waitSeconds=5`, key ? { key } : {}),
      (r) => r.status !== 200 || r.body.status === 'DONE' || r.body.status === 'CANCELLED',
      60_000,
    );
  const counts = async () => ({
    checks: (await svc.call('GET', '/v1/checks')).body.length as number,
    results: Number((await svc.deps.store.query<{ n: number }>('SELECT count() AS n FROM check_results', {}))[0]!.n),
    sessions: (await svc.deps.sql`select count(*)::int as n from test_sessions`)[0]!.n as number,
  });

  it('runs an API check body once: the target sees it, each assertion comes back with its actual value, nothing is stored', async () => {
    const before = await counts();
    const hits = site.hits('/ok').length;
    const started = await svc.call('POST', '/v1/check-runs/api?location=eu-west-1', { body: body() });
    expect(started.status, started.text).toBe(202);
    expect(started.body).toMatchObject({ status: 'QUEUED', checkType: 'API', name: 'Draft', location: 'eu-west-1', result: null });
    const done = await follow(started.body.id);
    expect(done.body.status).toBe('DONE');
    expect(done.body.result).toMatchObject({ hasFailures: true, hasErrors: false, attempts: 1 });
    const api = done.body.result.detail.apiCheckResult;
    expect(api.request).toMatchObject({ method: 'GET', url: `${site.url}/ok` });
    expect(api.response.status).toBe(200);
    expect(api.assertions.map((a: { actual: unknown; error?: string }) => [a.actual, Boolean(a.error)])).toEqual([
      [200, false],
      ['shop', false],
      ['ok', true],
    ]);
    expect(site.hits('/ok').length).toBe(hits + 1);
    expect(await counts()).toEqual(before);
  });

  it('refuses a body the create route would refuse, at the same field, and runs nothing', async () => {
    const hits = site.hits('/ok').length;
    const bad = await svc.call('POST', '/v1/check-runs/api', { body: body({ request: { url: 'not a url', assertions: [] } }) });
    expectFieldError(bad, 'body.request.url');
    expectFieldError(await svc.call('POST', '/v1/check-runs/api', { body: { request: { url: `${site.url}/ok` } } }), 'body.name', 'required');
    expectFieldError(await svc.call('POST', '/v1/check-runs/api?location=mars-1', { body: body() }), 'query.location');
    // A heartbeat is pinged, never run: no such trial.
    expect((await svc.call('POST', '/v1/check-runs/heartbeat', { body: { name: 'x', heartbeat: {} } })).status).toBe(400);
    // Outside the outbound policy: refused before any run.
    expect((await svc.call('POST', '/v1/check-runs/api', { body: body({ request: { url: 'http://10.1.2.3/' } }) })).status).toBe(400);
    expect(site.hits('/ok').length).toBe(hits);
    expect((await svc.deps.sql`select count(*)::int as n from adhoc_runs where name = 'not a url'`)[0]!.n).toBe(0);
  });

  it("runs an edited check's body with its stored secret variables, never shown", async () => {
    const created = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: body({
        locations: ['eu-west-1'],
        environmentVariables: [{ key: 'TOKEN', value: 'sekret-123', secret: true }],
        request: { url: `${site.url}/echo`, headers: [{ key: 'x-token', value: '{{TOKEN}}' }] },
      }),
    });
    expect(created.status, created.text).toBe(201);
    const read = (await svc.call('GET', `/v1/checks/${created.body.id}`)).body;
    expect(read.environmentVariables[0].value).toBe('');
    // The console sends the check back as read: the secret without its value.
    const { id: _id, created_at: _c, updated_at: _u, alertChannels: _a, ...edited } = read;
    const started = await svc.call('POST', `/v1/check-runs/api?checkId=${created.body.id}`, { body: edited });
    expect(started.status, started.text).toBe(202);
    const done = await follow(started.body.id);
    // The target got the stored secret; what the run kept of it is masked.
    expect(site.hits('/echo').at(-1)?.headers['x-token']).toBe('sekret-123');
    expect(JSON.stringify(done.body)).not.toContain('sekret-123');
    // Another type's check id is not this body's.
    expect(
      (await svc.call('POST', `/v1/check-runs/tcp?checkId=${created.body.id}`, { body: { name: 't', request: { hostname: '127.0.0.1', port: 1 } } })).status,
    ).toBe(404);
  });

  it("keeps each account's trial runs to itself, and needs a role that may run", async () => {
    const started = await svc.call('POST', '/v1/check-runs/api', { body: body() });
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/check-runs/${started.body.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', `/v1/check-runs/${started.body.id}/assets/shot.png`, { key: other.key })).status).toBe(404);
    const account = await createAccount(svc.deps.sql, 'readers');
    const { key } = await createApiKey(svc.deps.sql, { accountId: account.id, role: 'read-only' });
    expect((await svc.call('POST', '/v1/check-runs/api', { body: body(), key })).status).toBe(403);
    await follow(started.body.id);
  });

  it('a recorded `checkly test` result reads back with what its run saw, as the CLI printed it and more', async () => {
    const suite = randomUUID();
    const res = await svc.call('POST', '/v1/test-sessions/run', {
      body: {
        name: 'checkly test --record',
        checkRunJobs: [
          {
            logicalId: 'shop',
            name: 'Shop',
            checkType: 'API',
            request: { method: 'GET', url: `${site.url}/slow?ms=300`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
            sourceInfo: { checkRunSuiteId: suite, checkRunId: randomUUID() },
          },
        ],
        runLocation: 'eu-west-1',
        shouldRecord: true,
      },
    });
    expect(res.status, res.text).toBe(202);
    const session = await waitFor(
      () => svc.call('GET', `/v1/test-sessions/${res.body.testSessionId}`),
      (r) => r.body.status !== 'RUNNING',
      60_000,
    );
    expect(session.body.status).toBe('PASSED');
    // The session lasted as long as its run, at least (the console shows it in seconds).
    expect(session.body.timeElapsed).toBeGreaterThanOrEqual(300);
    const resultId = res.body.testResultIds.shop as string;
    const result = await svc.call('GET', `/v1/test-sessions/${res.body.testSessionId}/results/${resultId}`);
    expect(result.status).toBe(200);
    expect(result.body.apiCheckResult.request).toMatchObject({ method: 'GET', url: `${site.url}/slow?ms=300` });
    expect(result.body.apiCheckResult.response.status).toBe(200);
    expect(result.body.apiCheckResult.assertions[0]).toMatchObject({ source: 'STATUS_CODE', actual: 200 });
    expect(result.body).toMatchObject({ errorMessage: null, attempts: 1 });
  });
});
