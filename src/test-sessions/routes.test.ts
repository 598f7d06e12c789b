import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';

const result = (over: Record<string, unknown> = {}) => ({
  checkId: randomUUID(),
  checkType: 'BROWSER',
  name: 'login flow',
  runLocation: 'eu-west-1',
  ...over,
});

describe('test sessions', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());
  const start = async (body: Record<string, unknown> = { name: 'CI run' }) => (await svc.call('POST', '/v1/test-sessions', { body })).body;

  it('starts RUNNING with startedAt, metadata and results', async () => {
    const eg = randomUUID();
    const res = await svc.call('POST', '/v1/test-sessions', {
      body: {
        name: 'PR #42',
        testSessionLink: 'https://ci.example.test/42',
        metadata: { environment: 'staging', branchName: 'main', commitId: 'abc123' },
        results: [result({ errorGroupIds: [eg], hasFailures: true }), result()],
      },
    });
    expect(res.status).toBe(201);
    const s = res.body;
    expect(s).toMatchObject({
      name: 'PR #42',
      status: 'RUNNING',
      stoppedAt: null,
      testSessionLink: 'https://ci.example.test/42',
      metadata: { environment: 'staging', branchName: 'main', commitId: 'abc123' },
      errorGroupIds: [eg],
    });
    expect(Date.now() - Date.parse(s.startedAt)).toBeLessThan(60_000);
    expect(s.timeElapsed).toBeGreaterThanOrEqual(0);
    expect(s.results).toHaveLength(2);
    expect(s.results[0]).toMatchObject({ hasFailures: true, hasErrors: false, isDegraded: false, aborted: false, errorGroupIds: [eg] });
    expect(s.results[0].testSessionResultId).toMatch(/^[0-9a-f-]{36}$/);
    const got = await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`);
    expect(got.status).toBe(200);
    expect(got.body.results).toEqual(s.results);
  });

  it('adds results while running and collects their error groups', async () => {
    const s = await start();
    const [a, b] = [randomUUID(), randomUUID()];
    const res = await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/results`, {
      body: { results: [result({ errorGroupIds: [a, b] }), result({ errorGroupIds: [a] })] },
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(2);
    expect(res.body.errorGroupIds.sort()).toEqual([a, b].sort());
  });

  it('finishes as PASSED or FAILED, fixing stoppedAt and timeElapsed', async () => {
    const s = await start();
    await new Promise((r) => setTimeout(r, 30));
    const res = await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/finish`, { body: { status: 'FAILED' } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('FAILED');
    expect(res.body.stoppedAt).not.toBeNull();
    expect(res.body.timeElapsed).toBe(Date.parse(res.body.stoppedAt) - Date.parse(res.body.startedAt));
    expect(res.body.timeElapsed).toBeGreaterThanOrEqual(20);
    const later = await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`);
    expect(later.body.timeElapsed).toBe(res.body.timeElapsed);
  });

  it('treats every end state as final: 409 and nothing changes', async () => {
    for (const [end, action, body] of [
      ['PASSED', 'finish', { status: 'PASSED' }],
      ['FAILED', 'finish', { status: 'FAILED' }],
      ['CANCELLED', 'cancel', undefined],
    ] as const) {
      const s = await start();
      const done = await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/${action}`, { body });
      expect(done.status).toBe(action === 'cancel' ? 204 : 200);
      const ended = await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`);
      expect(ended.body.status).toBe(end);
      for (const [again, againBody] of [
        ['finish', { status: 'PASSED' }],
        ['finish', { status: 'FAILED' }],
        ['cancel', undefined],
        ['results', { results: [result()] }],
      ] as const) {
        const res = await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/${again}`, { body: againBody });
        expect(res.status).toBe(409);
        expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict', attributes: { status: end } });
      }
      const after = await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`);
      expect(after.body).toMatchObject({ status: end, stoppedAt: ended.body.stoppedAt, results: [] });
    }
  });

  it.each([
    [{}, 'body.name', 'required'],
    [{ name: '' }, 'body.name', 'minLength'],
    [{ name: 'x', metadata: { branch: 'main' } }, 'body.metadata.branch', 'additionalProperties'],
    [{ name: 'x', metadata: { commitId: 7 } }, 'body.metadata.commitId', 'type'],
    [{ name: 'x', results: [{ name: 'r', runLocation: 'x' }] }, 'body.results[0].checkId', 'required'],
    [{ name: 'x', results: [result({ checkId: 'not-a-uuid' })] }, 'body.results[0].checkId', 'format'],
    [{ name: 'x', results: [result({ errorGroupIds: ['x'] })] }, 'body.results[0].errorGroupIds[0]', 'format'],
    [{ name: 'x', results: [result({ hasErrors: 'no' })] }, 'body.results[0].hasErrors', 'type'],
    [{ name: 'x', status: 'PASSED' }, 'body.status', 'additionalProperties'],
  ])('rejects %j naming %s, storing nothing', async (body, field, rule) => {
    const [{ n: before }] = await svc.deps.sql`select count(*)::int as n from test_sessions`;
    expectFieldError(await svc.call('POST', '/v1/test-sessions', { body }), field, rule);
    const [{ n: after }] = await svc.deps.sql`select count(*)::int as n from test_sessions`;
    expect(after).toBe(before);
  });

  it('rejects a finish status other than PASSED or FAILED', async () => {
    const s = await start();
    for (const status of ['CANCELLED', 'RUNNING', 'passed']) {
      expectFieldError(await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/finish`, { body: { status } }), 'body.status', 'enum');
    }
    expect((await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`)).body.status).toBe('RUNNING');
  });

  it('answers 400 for a malformed id and 404 for an unknown one', async () => {
    expectFieldError(await svc.call('GET', '/v1/test-sessions/not-a-uuid'), 'path.testSessionId', 'format');
    expect((await svc.call('GET', `/v1/test-sessions/${randomUUID()}`)).status).toBe(404);
    expect((await svc.call('POST', `/v1/test-sessions/${randomUUID()}/cancel`)).status).toBe(404);
  });

  it('answers 409 for a duplicate result id and stores none of the batch', async () => {
    const s = await start();
    const id = randomUUID();
    await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/results`, { body: { results: [result({ testSessionResultId: id })] } });
    const res = await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/results`, {
      body: { results: [result(), result({ testSessionResultId: id })] },
    });
    expect(res.status).toBe(409);
    expect((await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`)).body.results).toHaveLength(1);
  });

  it('answers 409 when a new session names a result id already taken, and creates no session', async () => {
    const s = await start();
    const id = randomUUID();
    await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/results`, { body: { results: [result({ testSessionResultId: id })] } });
    const total = async () => (await svc.call('GET', '/v1/test-sessions?limit=100')).body.length;
    const before = await total();
    const res = await svc.call('POST', '/v1/test-sessions', { body: { name: 'dup', results: [result({ testSessionResultId: id })] } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ statusCode: 409, error: 'Conflict' });
    expect(await total()).toBe(before);
  });

  it('lists newest first and deletes', async () => {
    const s = await start({ name: 'newest' });
    const list = await svc.call('GET', '/v1/test-sessions?limit=1');
    expect(list.body.entries[0].id).toBe(s.testSessionId);
    expect(list.body.length).toBe(1);
    expect(list.body.nextId).toEqual(expect.any(String));
    expect((await svc.call('DELETE', `/v1/test-sessions/${s.testSessionId}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`)).status).toBe(404);
  });

  it("keeps accounts apart: another account gets 404 for this account's sessions", async () => {
    const s = await start();
    const other = await createOtherTenant(svc);
    const as = { key: other.key };
    expect((await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`, as)).status).toBe(404);
    expect((await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/cancel`, as)).status).toBe(404);
    expect((await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/finish`, { ...as, body: { status: 'PASSED' } })).status).toBe(404);
    expect((await svc.call('POST', `/v1/test-sessions/${s.testSessionId}/results`, { ...as, body: { results: [result()] } })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/test-sessions/${s.testSessionId}`, as)).status).toBe(404);
    expect((await svc.call('GET', '/v1/test-sessions', as)).body).toEqual({ length: 0, entries: [], nextId: null });
    expect((await svc.call('GET', `/v1/test-sessions/${s.testSessionId}`)).body.status).toBe('RUNNING');
  });
});

describe("test sessions in the anchor API's shape", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it("give results their check's type, a status, times and a link; a result of no known check must say its type", async () => {
    const check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'api', request: { url: 'https://x.test' } } })).body.id;
    const res = await svc.call('POST', '/v1/test-sessions', {
      body: {
        name: 'deploy',
        results: [
          {
            checkId: check,
            name: 'api',
            runLocation: 'eu-west-1',
            hasFailures: true,
            responseTime: 120,
            startedAt: '2026-11-20T10:00:00.000Z',
            stoppedAt: '2026-11-20T10:00:01.000Z',
          },
          { checkId: randomUUID(), checkType: 'PLAYWRIGHT', name: 'suite', runLocation: 'eu-west-1', aborted: true },
          { checkId: randomUUID(), checkType: 'API', name: 'ok', runLocation: 'us-east-1' },
        ],
      },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.testSessionId;
    expect(res.body.testSessionLink).toBe(`${svc.url}/v1/test-sessions/${id}`);
    const [a, b, c] = res.body.results;
    expect(a).toMatchObject({ checkType: 'API', status: 'FAILED', resultType: 'FINAL', responseTime: 120, startedAt: '2026-11-20T10:00:00.000Z' });
    expect(b).toMatchObject({ checkType: 'PLAYWRIGHT', status: 'CANCELLED', responseTime: null, startedAt: null, stoppedAt: null });
    expect(c).toMatchObject({ status: 'PASSED' });
    expect(a.testSessionResultLink).toBe(`${svc.url}/v1/test-sessions/${id}/results/${a.testSessionResultId}`);
    const one = await svc.call('GET', `/v1/test-sessions/${id}/results/${b.testSessionResultId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      ...b,
      id: b.testSessionResultId,
      isCancelled: true,
      overMaxResponseTime: false,
      attempts: 1,
      traceId: null,
      created_at: expect.any(String),
    });
    expect((await svc.call('GET', `/v1/test-sessions/${id}/results/${randomUUID()}`)).status).toBe(404);
    expect((await svc.call('GET', `/v1/test-sessions/${randomUUID()}/results/${b.testSessionResultId}`)).status).toBe(404);
    expectFieldError(
      await svc.call('POST', `/v1/test-sessions/${id}/results`, { body: { results: [{ checkId: randomUUID(), name: 'n', runLocation: 'x' }] } }),
      'body.results[0].checkType',
      'required',
    );
    expect((await svc.call('GET', `/v1/test-sessions/${id}`)).body.results).toHaveLength(3);
  });

  it('list as {length, entries, nextId}, filtered by status, branch, owner, text and error group, paged by cursor', async () => {
    const eg = randomUUID();
    const mk = async (name: string, metadata: object, results: object[] = []) =>
      (await svc.call('POST', '/v1/test-sessions', { body: { name, metadata, results } })).body.testSessionId as string;
    const main = await mk('release 1.2', { branchName: 'main', commitOwner: 'ada', commitMessage: 'Fix checkout' }, [
      { checkId: randomUUID(), checkType: 'API', name: 'x', runLocation: 'eu-west-1', hasFailures: true, errorGroupIds: [eg] },
    ]);
    const feature = await mk('feature run', { branchName: 'feat/x', commitOwner: 'bob' });
    const anonymous = await mk('nightly', {});
    await svc.call('POST', `/v1/test-sessions/${feature}/finish`, { body: { status: 'PASSED' } });
    const ids = async (q: string) => (await svc.call('GET', `/v1/test-sessions?limit=100&${q}`)).body.entries.map((e: { id: string }) => e.id);
    expect(await ids('statuses=PASSED')).toEqual([feature]);
    expect(await ids('statuses[]=RUNNING&statuses[]=PASSED')).toContain(feature);
    expect(await ids('branches=main')).toEqual([main]);
    expect(await ids('users=bob')).toEqual([feature]);
    expect((await ids('users=bob&noUsers=true')).sort()).toEqual(expect.arrayContaining([feature, anonymous]));
    expect(await ids('textSearch=CHECKOUT')).toEqual([main]);
    expect(await ids(`errorGroupId=${eg}`)).toEqual([main]);
    expect(await ids('providers=GITHUB')).toEqual([]);
    const entry = (await svc.call('GET', `/v1/test-sessions?branches=main`)).body.entries[0];
    expect(entry).toMatchObject({
      id: main,
      name: 'release 1.2',
      provider: 'API',
      status: 'RUNNING',
      region: 'eu-west-1',
      branchName: 'main',
      commitOwner: 'ada',
      errorGroupIds: [eg],
    });
    expect(entry.failed).toHaveLength(1);

    const seen: string[] = [];
    let nextId: string | null = null;
    do {
      const page: { body: { entries: { id: string }[]; nextId: string | null } } = await svc.call(
        'GET',
        `/v1/test-sessions?limit=2${nextId ? `&nextId=${nextId}` : ''}`,
      );
      seen.push(...page.body.entries.map((e) => e.id));
      nextId = page.body.nextId;
    } while (nextId);
    expect(seen).toEqual(await ids(''));
    expect(new Set(seen).size).toBe(seen.length);
    expectFieldError(await svc.call('GET', '/v1/test-sessions?nextId=bogus'), 'query.nextId', 'format');
    expectFieldError(await svc.call('GET', '/v1/test-sessions?statuses=DONE'), 'query.statuses[0]', 'enum');
    expectFieldError(await svc.call('GET', '/v1/test-sessions?textSearch=ab'), 'query.textSearch', 'minLength');
  });

  it("the CLI's run call queues its checks, answers their sequenceIds, records a session; cancel ends the runs cancelled", async () => {
    const suite = randomUUID();
    const job = (logicalId: string, url: string) => ({
      logicalId,
      name: `job ${logicalId}`,
      checkType: 'API',
      request: { method: 'GET', url, assertions: [] },
      groupId: null,
      sourceInfo: { checkRunSuiteId: suite, checkRunId: randomUUID(), updateSnapshots: false },
      testRetryStrategy: null,
    });
    const res = await svc.call('POST', '/v1/test-sessions/run', {
      body: {
        name: 'checkly test',
        checkRunJobs: [job('a', 'http://127.0.0.1:9/a'), job('b/c.spec.ts', 'http://127.0.0.1:9/b')],
        runLocation: { type: 'PUBLIC', region: 'eu-west-1' },
        shouldRecord: true,
        repoInfo: { branchName: 'main' },
        streamLogs: true,
      },
    });
    expect(res.status, res.text).toBe(202);
    expect(Object.keys(res.body.sequenceIds).sort()).toEqual(['a', 'b/c.spec.ts']);
    const session = await svc.call('GET', `/v1/test-sessions/${res.body.testSessionId}`);
    expect(session.body).toMatchObject({ name: 'checkly test', status: 'RUNNING', metadata: { branchName: 'main' } });
    const runs = await svc.deps
      .sql`select id, logical_id, status, location, check_run_suite_id from adhoc_runs where scheduling_id = ${res.body.schedulingId} order by logical_id`;
    expect(runs.map((r) => [r.id, r.logical_id, r.status, r.location, r.check_run_suite_id])).toEqual([
      [res.body.sequenceIds.a, 'a', 'QUEUED', 'eu-west-1', suite],
      [res.body.sequenceIds['b/c.spec.ts'], 'b/c.spec.ts', 'QUEUED', 'eu-west-1', suite],
    ]);
    const scheduling = await svc.call('GET', `/v1/test-sessions/scheduling/${res.body.schedulingId}/completion?maxWaitSeconds=1`);
    expect(scheduling.body).toMatchObject({ status: 'SUCCEEDED', checksTotal: 2, testSessionId: res.body.testSessionId, error: null });
    const unrecorded = await svc.call('POST', '/v1/test-sessions/run', {
      body: { name: 'x', checkRunJobs: [job('x', 'http://127.0.0.1:9/x')], runLocation: 'eu-west-1', shouldRecord: false },
    });
    expect(unrecorded.body).not.toHaveProperty('testSessionId');
    expectFieldError(
      await svc.call('POST', '/v1/test-sessions/run', { body: { name: 'x', checkRunJobs: [], runLocation: 'eu-west-1' } }),
      'body.checkRunJobs',
      'minItems',
    );
    const invalid = await svc.call('POST', '/v1/test-sessions/run', {
      body: { name: 'x', checkRunJobs: [{ ...job('bad', 'http://127.0.0.1:9/'), request: { method: 'GET' } }], runLocation: 'eu-west-1' },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.message).toBe('checkRunJobs[0] (logicalId "bad"): request.url is required');
    // The CLI cancels with no body, typed as a form.
    const cancelled = await svc.call('POST', `/v1/test-sessions/${res.body.testSessionId}/cancel`, {
      rawBody: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(cancelled.status).toBe(204);
    const after = (await svc.call('GET', `/v1/test-sessions/${res.body.testSessionId}`)).body;
    expect(after.status).toBe('CANCELLED');
    expect(after.results.map((r: { status: string; aborted: boolean }) => [r.status, r.aborted])).toEqual([
      ['CANCELLED', true],
      ['CANCELLED', true],
    ]);
    expect((await svc.deps.sql`select distinct status from adhoc_runs where scheduling_id = ${res.body.schedulingId}`).map((r) => r.status)).toEqual([
      'CANCELLED',
    ]);
    expectFieldError(
      await svc.call('POST', `/v1/test-sessions/${res.body.testSessionId}/cancel`, { body: { reason: 'x' } }),
      'body.reason',
      'additionalProperties',
    );
  });
});
