import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkly, cliEnv } from '../../test/support/checkly-cli.js';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';

/**
 * Error groups: failed runs grouped per check by their message with the variable parts masked, as runs land
 * (a materialized view), with first and last seen, counts and locations; archiving until the next failure; the
 * anchor CLI's `checks get` shows them.
 */
describe('error groups', () => {
  let svc: TestService;
  let other: { accountId: string; key: string };
  beforeAll(async () => {
    svc = await startTestService();
    other = await createOtherTenant(svc);
  }, 60_000);
  afterAll(() => svc?.stop());

  const post = async (p: string, body: unknown, key?: string) => {
    const res = await svc.call('POST', p, { body, key });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${res.text}`);
    return res.body;
  };
  let clock = Date.now() - 3_600_000;
  const fail = (checkId: string, checkType: 'BROWSER' | 'API', detail: Record<string, unknown>, location = 'eu-west-1', failed = true) => {
    clock += 60_000;
    return {
      id: randomUUID(),
      checkId,
      checkType,
      runLocation: location,
      startedAt: new Date(clock).toISOString(),
      stoppedAt: new Date(clock + 900).toISOString(),
      hasFailures: failed,
      responseTime: 900,
      ...detail,
    };
  };
  const browserError = (message: string) => ({ browserCheckResult: { errors: [{ message }] } });
  type Group = {
    id: string;
    checkId: string;
    cleanedErrorMessage: string;
    rawErrorMessage: string;
    occurrences: number;
    locations: string[];
    firstSeen: string;
    lastSeen: string;
    archivedUntilNextEvent: boolean;
  };
  const groupsOf = async (checkId: string, key?: string) => (await svc.call('GET', `/v1/error-groups/checks/${checkId}?limit=100`, { key })).body as Group[];

  it('groups failures by their masked message, per check, with when, how often and where', async () => {
    const browser = await post('/v1/checks/browser?autoAssignAlerts=false', { name: 'Cart flow', script: 'test("x", async () => {})' });
    const api = await post('/v1/checks/api?autoAssignAlerts=false', { name: 'Cart API', request: { url: 'http://127.0.0.1:9/cart' } });
    const timeoutA = 'Timeout 30000ms exceeded while waiting for https://shop.example.test/cart?session=8c1f2e9d-1111-4222-8333-444455556666';
    const timeoutB = 'Timeout 5000ms exceeded while waiting for https://shop.example.test/cart/42?session=aaaaaaaa-1111-4222-8333-444455556666';
    const results = [
      fail(browser.id, 'BROWSER', browserError(timeoutA), 'eu-west-1'),
      fail(
        browser.id,
        'BROWSER',
        browserError('expect(locator).toHaveText(expected) failed at 2026-11-20T10:00:00.123Z: got "3" for order 9f86d081884c7d65'),
        'eu-west-1',
      ),
      fail(browser.id, 'BROWSER', browserError(timeoutB), 'us-east-1'),
      // A run that passed says nothing, whatever it carries.
      fail(browser.id, 'BROWSER', browserError(timeoutA), 'eu-west-1', false),
      fail(api.id, 'API', { apiCheckResult: { requestError: 'connect ECONNREFUSED 127.0.0.1:9' } }),
    ];
    await post('/v1/check-results', { results });
    const groups = await waitFor(
      () => groupsOf(browser.id),
      (g) => g.length === 2,
    );
    const timeout = groups.find((g) => g.cleanedErrorMessage.startsWith('Timeout'))!;
    expect(timeout).toMatchObject({
      checkId: browser.id,
      cleanedErrorMessage: 'Timeout <n>ms exceeded while waiting for https://shop.example.test/…',
      rawErrorMessage: timeoutB,
      occurrences: 2,
      locations: ['eu-west-1', 'us-east-1'],
      firstSeen: results[0]!.startedAt,
      lastSeen: results[2]!.startedAt,
      archivedUntilNextEvent: false,
    });
    const expectation = groups.find((g) => g !== timeout)!;
    expect(expectation.cleanedErrorMessage).toBe('expect(locator).toHaveText(expected) failed at <time>: got "<n>" for order <id>');
    // Newest failure first.
    expect(groups.map((g) => g.id)).toEqual([timeout.id, expectation.id]);
    const [apiGroup] = await waitFor(
      () => groupsOf(api.id),
      (g) => g.length === 1,
    );
    expect(apiGroup!.cleanedErrorMessage).toBe('connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>');
    expect((await svc.call('GET', `/v1/error-groups/${timeout.id}`)).body).toEqual(timeout);
    const all = (await svc.call('GET', '/v1/error-groups?limit=100')).body as Group[];
    expect(all.map((g) => g.id)).toEqual(expect.arrayContaining([timeout.id, expectation.id, apiGroup!.id]));

    // Another account sees none of them.
    expect((await svc.call('GET', `/v1/error-groups/${timeout.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', `/v1/error-groups/checks/${browser.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', '/v1/error-groups', { key: other.key })).body).toEqual([]);

    // Archived until it happens again: archived now, active again after the next such failure.
    const archived = await svc.call('PATCH', `/v1/error-groups/${timeout.id}`, { body: { archivedUntilNextEvent: true } });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body.archivedUntilNextEvent).toBe(true);
    clock = Date.now();
    await post('/v1/check-results', { results: [fail(browser.id, 'BROWSER', browserError(timeoutA))] });
    const back = await waitFor(
      () => svc.call('GET', `/v1/error-groups/${timeout.id}`),
      (r) => r.body.occurrences === 3,
    );
    expect(back.body.archivedUntilNextEvent).toBe(false);
    // Archived for good stays archived.
    await svc.call('PATCH', `/v1/error-groups/${expectation.id}`, { body: { archiveForEver: true } });
    await post('/v1/check-results', {
      results: [
        fail(browser.id, 'BROWSER', browserError('expect(locator).toHaveText(expected) failed at 2026-11-21T11:00:00Z: got "4" for order 1234567890abcdef')),
      ],
    });
    const forever = await waitFor(
      () => svc.call('GET', `/v1/error-groups/${expectation.id}`),
      (r) => r.body.occurrences === 2,
    );
    expect(forever.body.archivedUntilNextEvent).toBe(true);
    expect((await svc.call('PATCH', `/v1/error-groups/${randomUUID()}`, { body: { archiveForEver: true } })).status).toBe(404);
    // A body it cannot read is a 400 naming the field, and the group stays as it was.
    for (const body of [{ archiveForEver: 'yes' }, { archiveForEver: false, archived: true }]) {
      const refused = await svc.call('PATCH', `/v1/error-groups/${expectation.id}`, { body });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.attributes.errors.length, refused.text).toBeGreaterThan(0);
    }
    expect((await svc.call('GET', `/v1/error-groups/${expectation.id}`)).body.archivedUntilNextEvent).toBe(true);

    // The anchor CLI's `checks get` lists the active ones.
    const home = mkdtempSync(path.join(os.tmpdir(), 'error-groups-'));
    try {
      const env = cliEnv(svc.url, svc.adminKey, svc.defaultAccountId, home);
      const shown = await checkly(env, home, ['checks', 'get', browser.id]);
      expect(shown.code, shown.out).toBe(0);
      expect(shown.out).toContain('ERROR GROUPS');
      expect(shown.out).toContain('Timeout <n>ms exceeded');
      const detail = await checkly(env, home, ['checks', 'get', browser.id, '--error-group', timeout.id]);
      expect(detail.code, detail.out).toBe(0);
      expect(detail.out).toContain('FULL ERROR');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("test sessions' failures are grouped the same way, per account, with environments", async () => {
    const run = async (environment: string, messages: string[]) => {
      const created = await post('/next/test-sessions/create', { name: 'e2e', environment, testResults: messages.map((_, i) => ({ name: `t${i}` })) });
      for (const [i, message] of messages.entries()) {
        const res = await svc.call('POST', `/next/test-sessions/${created.testSessionId}/results/${created.testResults[i].testResultId}`, {
          body: { status: 'FAILED', metadata: { errors: [{ error: { message } }] } },
        });
        expect(res.status, res.text).toBe(204);
      }
    };
    await run('staging', ['Error: expect(received).toBe(expected) // 41 is not 42 at https://shop.example.test/api/items/77']);
    await run('production', [
      'Error: expect(received).toBe(expected) // 40 is not 42 at https://shop.example.test/api/items/78',
      'net::ERR_CONNECTION_REFUSED at http://127.0.0.1:9/',
    ]);
    const groups = (await svc.call('GET', '/v1/test-session-error-groups?limit=100')).body as (Group & { environments: string[]; occurrences: number })[];
    const expectation = groups.find((g) => g.cleanedErrorMessage.startsWith('Error: expect'))!;
    expect(expectation).toMatchObject({
      cleanedErrorMessage: 'Error: expect(received).toBe(expected) // <n> is not <n> at https://shop.example.test/…',
      occurrences: 2,
      environments: ['production', 'staging'],
      archivedUntilNextEvent: false,
    });
    expect(groups).toHaveLength(2);
    expect((await svc.call('GET', `/v1/test-session-error-groups/${expectation.id}`)).body).toEqual(expectation);
    const archived = await svc.call('PATCH', `/v1/test-session-error-groups/${expectation.id}`, { body: { archiveForEver: true } });
    expect(archived.body.archivedUntilNextEvent).toBe(true);
    expect((await svc.call('GET', '/v1/test-session-error-groups', { key: other.key })).body).toEqual([]);
    expect((await svc.call('GET', `/v1/test-session-error-groups/${expectation.id}`, { key: other.key })).status).toBe(404);
  });

  it('cleans messages outside ClickHouse exactly as the view does', async () => {
    const { cleanErrorMessage } = await import('./error-groups.js');
    // The same messages and answers as the view's in the first test.
    expect(cleanErrorMessage('Timeout 30000ms exceeded while waiting for https://shop.example.test/cart?session=8c1f2e9d-1111-4222-8333-444455556666')).toBe(
      'Timeout <n>ms exceeded while waiting for https://shop.example.test/…',
    );
    expect(cleanErrorMessage('expect(locator).toHaveText(expected) failed at 2026-11-20T10:00:00.123Z: got "3" for order 9f86d081884c7d65')).toBe(
      'expect(locator).toHaveText(expected) failed at <time>: got "<n>" for order <id>',
    );
    expect(cleanErrorMessage('connect ECONNREFUSED 127.0.0.1:9')).toBe('connect ECONNREFUSED <n>.<n>.<n>.<n>:<n>');
    expect(cleanErrorMessage('\u001b[31mred\u001b[39m  id a1b2c3d4-e5f6-4711-8899-aabbccddeeff  ')).toBe('red id <uuid>');
  });
});
