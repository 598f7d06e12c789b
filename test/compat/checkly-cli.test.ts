import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, checkly as runCli } from '../support/checkly-cli.js';
import { startHttpReceiver } from '../support/receivers.js';
import { startTestService, type TestService, waitFor } from '../support/service.js';
import { startHttpTarget } from '../support/targets.js';

/**
 * The anchor API's own command-line client (npm `checkly`, pinned in test/compat/checkly-cli, installed by
 * `npm test`) run against the real service: each command exits 0 and shows what the service holds.
 */
describe('the anchor CLI (checkly 9.5.0) against this service', () => {
  let svc: TestService;
  let env: NodeJS.ProcessEnv;
  let home: string;
  let checkId: string;
  let resultId: string;
  let sessionId: string;
  let channelId: number;

  const checkly = (...args: string[]) => runCli(env, home, args, 60_000);

  const expectOk = async (...args: string[]) => {
    const res = await checkly(...args);
    expect(res.code, `checkly ${args.join(' ')}\n${res.out}`).toBe(0);
    return res.out;
  };

  beforeAll(async () => {
    // Deliveries give up quickly, so a channel that keeps failing shows as failed within the test.
    // Runners on (no scheduler): `checks run` starts runs on demand.
    svc = await startTestService({ ALERT_DELIVERY_ATTEMPTS: '2', ALERT_RETRY_BASE_MS: '100', RUNNER: 'on' });
    home = mkdtempSync(path.join(os.tmpdir(), 'checkly-cli-'));
    env = cliEnv(svc.url, svc.adminKey, svc.defaultAccountId, home);
    checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'Shop API', tags: ['shop'], request: { url: 'https://shop.example.test/health' } } }))
      .body.id;
    await svc.call('POST', '/v1/checks/icmp', { body: { name: 'Edge ping', tags: ['edge'], request: { hostname: 'edge.example.test' } } });
    const now = Date.now();
    const results = [0, 1, 2].map((i) => ({
      checkId,
      checkType: 'API',
      runLocation: i === 2 ? 'us-east-1' : 'eu-west-1',
      startedAt: new Date(now - (3 - i) * 60_000).toISOString(),
      stoppedAt: new Date(now - (3 - i) * 60_000 + 250).toISOString(),
      hasFailures: i === 2,
      responseTime: 200 + i * 100,
      statusCode: i === 2 ? 503 : 200,
      timings: { wait: 1, dns: 5, tcp: 10, firstByte: 150, download: 4 },
    }));
    await svc.call('POST', '/v1/check-results', { body: { results } });
    const landed = await waitFor(
      () => svc.call('GET', `/v1/check-results/${checkId}`),
      (r) => r.body.length === 3,
    );
    resultId = landed.body[0].id;
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${checkId}`),
      (r) => r.status === 200,
    );
    sessionId = (
      await svc.call('POST', '/v1/test-sessions', {
        body: {
          name: 'Release 1.4',
          metadata: { branchName: 'release-1.4', commitOwner: 'ada' },
          results: [{ checkId, name: 'Shop API', runLocation: 'eu-west-1', hasFailures: true }],
        },
      })
    ).body.testSessionId;
    channelId = (
      await svc.call('POST', '/v1/alert-channels', {
        body: { type: 'WEBHOOK', config: { name: 'ops hook', url: 'https://hooks.example.test/x', method: 'POST' } },
      })
    ).body.id;
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('whoami names the account and the calling key', async () => {
    const out = await expectOk('whoami');
    expect(out).toContain(`"default" (${svc.defaultAccountId})`);
    expect(out).toContain('bootstrap key');
    expect(out).toContain('Self-hosted');
  });

  it('runtimes lists the runtime catalog', async () => {
    const runtimes = JSON.parse(await expectOk('runtimes')) as { name: string; nodeVersion: string }[];
    expect(runtimes.map((r) => r.name)).toEqual((await svc.call('GET', '/v1/runtimes')).body.map((r: { name: string }) => r.name));
    expect(runtimes[0].nodeVersion).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('env add, ls, update, pull and rm manage the variables, secrets hidden', async () => {
    await expectOk('env', 'add', 'API_HOST', 'api.example.test');
    await expectOk('env', 'add', 'TOKEN', 'cli-s3cret', '--secret');
    const listed = await expectOk('env', 'ls');
    expect(listed).toContain('API_HOST=api.example.test');
    expect(listed).not.toContain('cli-s3cret');
    await expectOk('env', 'update', 'API_HOST', 'api2.example.test');
    expect((await svc.call('GET', '/v1/variables/API_HOST')).body.value).toBe('api2.example.test');
    await expectOk('env', 'pull', 'pulled.env', '--force');
    const pulled = readFileSync(path.join(home, 'pulled.env'), 'utf8');
    expect(pulled).toContain('API_HOST=api2.example.test');
    expect(pulled).not.toContain('cli-s3cret');
    await expectOk('env', 'rm', 'API_HOST', '--force');
    expect((await svc.call('GET', '/v1/variables/API_HOST')).status).toBe(404);
  });

  it('checks list shows every check with its status, filtered by tag, type, search and status', async () => {
    const all = await expectOk('checks', 'list');
    expect(all).toMatch(/Shop API\s+API\s+failing/);
    expect(all).toContain('Edge ping');
    const json = JSON.parse(await expectOk('checks', 'list', '--output', 'json', '--tag', 'shop', '--type', 'API', '--search', 'shop', '--status', 'failing'));
    expect(json.data.map((c: { id: string }) => c.id)).toEqual([checkId]);
    expect(json.pagination.total).toBe(1);
    expect(json.data[0].status).toMatchObject({ hasFailures: true, lastRunLocation: 'us-east-1' });
    expect(await expectOk('checks', 'list', '--status', 'passing')).toContain('No checks matching');
  });

  it('checks get shows the check, its stats, recent results and one result in detail', async () => {
    const out = await expectOk('checks', 'get', checkId);
    expect(out).toContain('Shop API');
    expect(out).toContain('https://shop.example.test/health');
    expect(out).toMatch(/Availability:\s+66\.67%/);
    expect(out).toContain(resultId);
    const json = JSON.parse(await expectOk('checks', 'get', checkId, '--output', 'json'));
    expect(json.results).toHaveLength(3);
    expect(json.analytics.series[0].data[0].availability).toBe(66.6667);
    const detail = await expectOk('checks', 'get', checkId, '--result', resultId);
    expect(detail).toContain('https://shop.example.test/health');
    expect(detail).toMatch(/Status:\s+503/);
  });

  it('checks stats gives availability and response times per check', async () => {
    const json = JSON.parse(await expectOk('checks', 'stats', '--output', 'json'));
    const shop = json.data.find((r: { checkId: string }) => r.checkId === checkId);
    expect(shop).toMatchObject({ name: 'Shop API', status: 'failing', responseTime_avg: 300 });
    expect(shop.availability).toBe(66.6667);
    expect(await expectOk('checks', 'stats')).toContain('Edge ping');
  });

  it('test-sessions list and get show the sessions and their results', async () => {
    const list = await expectOk('test-sessions', 'list');
    expect(list).toContain('Release 1.4');
    expect(list).toContain('release-1.4');
    const get = await expectOk('test-sessions', 'get', sessionId);
    expect(get).toContain('Release 1.4');
    expect(get).toMatch(/Shop API\s+API\s+failed/);
  });

  it('alert-channels list and get show the channels', async () => {
    expect(await expectOk('alert-channels', 'list')).toContain('ops hook');
    const get = await expectOk('alert-channels', 'get', String(channelId));
    expect(get).toContain('ops hook');
    expect(get).toMatch(/Type:\s+webhook/);
  });

  it('checks delete removes a check', async () => {
    const victim = (await svc.call('POST', '/v1/checks/api', { body: { name: 'Short lived', request: { url: 'https://gone.example.test' } } })).body.id;
    expect(await expectOk('checks', 'delete', victim, '--force')).toContain('"Short lived" deleted');
    expect((await svc.call('GET', `/v1/checks/${victim}`)).status).toBe(404);
  });

  it('account plan shows the plan, every location and the rate limit', async () => {
    const plan = JSON.parse(await expectOk('account', 'plan', '--output', 'json'));
    expect(plan).toMatchObject({ plan: 'self-hosted', planDisplayName: 'Self-hosted' });
    expect(plan.locations.all.map((l: { id: string }) => l.id)).toEqual((await svc.call('GET', '/v1/locations')).body.map((l: { region: string }) => l.region));
    expect(await expectOk('account', 'plan')).toMatch(/API requests\s+600/);
  });

  it("alert-channels logs shows each channel's deliveries, when they were sent, and only the failed ones with --status failed", async () => {
    const receiver = await startHttpReceiver();
    try {
      receiver.alwaysFail('/down');
      const channel = async (name: string, hook: string) =>
        (await svc.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', config: { name, url: `${receiver.url}${hook}` } } })).body.id as number;
      const up = await channel('up hook', '/up');
      const down = await channel('down hook', '/down');
      const check = (
        await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'Logged', request: { url: 'https://logged.example.test' } } })
      ).body.id;
      for (const id of [up, down]) await svc.call('PUT', `/v1/alert-channels/${id}/subscriptions`, { body: { checkId: check, activated: true } });
      const at = new Date().toISOString();
      await svc.call('POST', '/v1/check-results', {
        body: { results: [{ checkId: check, checkType: 'API', runLocation: 'eu-west-1', startedAt: at, stoppedAt: at, hasFailures: true, responseTime: 9 }] },
      });
      await waitFor(
        () => svc.call('GET', '/v1/alert-notifications?limit=100'),
        (r) => ['SUCCESS', 'FAILURE'].every((s) => r.body.some((n: { status: string; checkId: string }) => n.status === s && n.checkId === check)),
      );

      const table = await expectOk('alert-channels', 'logs', String(up));
      expect(table).toMatch(/success\s+webhook/);
      expect(table).toContain('Showing 1 of 1 logs');
      const upLogs = JSON.parse(await expectOk('alert-channels', 'logs', String(up), '--output', 'json')).data;
      expect(upLogs).toHaveLength(1);
      expect(upLogs[0]).toMatchObject({ status: 'SUCCESS', checkId: check, alertChannelId: up });
      expect(Date.parse(upLogs[0].timestamp)).toBeGreaterThanOrEqual(Date.parse(at));
      expect(JSON.parse(await expectOk('alert-channels', 'logs', String(up), '--status', 'failed', '--output', 'json')).data).toEqual([]);
      const failed = JSON.parse(await expectOk('alert-channels', 'logs', String(down), '--status', 'failed', '--output', 'json')).data;
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ status: 'FAILURE', checkId: check, notificationResult: 'HTTP 500 receiver says no' });
      expect(failed[0].timestamp).not.toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it("checks run runs checks on the service's runners and exits 1 when one fails", async () => {
    const target = await startHttpTarget();
    try {
      const create = async (name: string, tags: string[], url: string) =>
        (
          await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
            body: { name, tags, locations: ['eu-west-1'], doubleCheck: false, request: { url } },
          })
        ).body.id as string;
      const good = await create('Live passing', ['live'], `${target.url}/ok`);
      await create('Live failing', ['live', 'broken'], `${target.url}/fail`);
      const passing = await checkly('checks', 'run', '--check-id', good, '--output', 'json');
      expect(passing.code, passing.out).toBe(0);
      const ran = JSON.parse(passing.out.slice(passing.out.indexOf('{'))).sessions;
      expect(ran).toEqual([expect.objectContaining({ checkId: good, status: 'PASSED', runLocations: ['eu-west-1'] })]);
      expect(target.hits('/ok')).toHaveLength(1);
      const both = await checkly('checks', 'run', '--tags', 'live');
      expect(both.code, both.out).toBe(1);
      expect(both.out).toMatch(/2 check sessions? completed: 1 passed, 1 failed/);
      expect(both.out).toContain('Live failing');
      const none = await checkly('checks', 'run', '--tags', 'no-such-tag');
      expect(none.code).toBe(1);
      expect(none.out).toContain('No matching checks were found.');
    } finally {
      await target.close();
    }
  });

  it("status-pages list and get, and incidents create, list, update and resolve on a page's services", async () => {
    const service = (await svc.call('POST', '/v1/status-pages/services', { body: { name: 'Checkout' } })).body;
    const page = (
      await svc.call('POST', '/v1/status-pages', {
        body: { name: 'Shop status', url: 'shop-status', cards: [{ name: 'Shop', services: [{ id: service.id }] }] },
      })
    ).body;
    expect(await expectOk('status-pages', 'list')).toContain('Shop status');
    const got = await expectOk('status-pages', 'get', page.id, '--output', 'json');
    expect(JSON.parse(got)).toMatchObject({ id: page.id, cards: [{ name: 'Shop', services: [{ id: service.id, name: 'Checkout' }] }] });

    const created = JSON.parse(
      await expectOk(
        'incidents',
        'create',
        '--status-page-id',
        page.id,
        '--title',
        'Checkout errors',
        '--severity',
        'major',
        '--message',
        'Payments fail',
        '--force',
        '--output',
        'json',
      ),
    );
    expect(created).toMatchObject({ name: 'Checkout errors', severity: 'MAJOR', lastUpdateStatus: 'INVESTIGATING', services: [{ id: service.id }] });
    const listed = JSON.parse(await expectOk('incidents', 'list', '--status-page-id', page.id, '--output', 'json'));
    expect(listed.data.map((i: { id: string }) => i.id)).toEqual([created.id]);
    await expectOk('incidents', 'update', created.id, '--status', 'identified', '--severity', 'minor', '--message', 'A provider is down', '--force');
    expect((await svc.call('GET', `/v1/status-pages/incidents/${created.id}`)).body).toMatchObject({ severity: 'MINOR', lastUpdateStatus: 'IDENTIFIED' });
    await expectOk('incidents', 'resolve', created.id, '--message', 'Back to normal', '--force');
    const resolved = (await svc.call('GET', `/v1/status-pages/incidents/${created.id}`)).body;
    expect(resolved.lastUpdateStatus).toBe('RESOLVED');
    expect(resolved.incidentUpdates.map((u: { description: string }) => u.description)).toEqual(['Payments fail', 'A provider is down', 'Back to normal']);
    expect(await expectOk('incidents', 'list', '--status-page-id', page.id)).toContain('No incidents found');
  });

  it('members lists, filters and pages people and invitations, updates a role by email and removes a member', async () => {
    const { addMember } = await import('../../src/accounts/members.js');
    const { ensureUser } = await import('../../src/accounts/users.js');
    const people: Record<string, string> = {};
    for (const [email, role] of [
      ['owner@crew.test', 'OWNER'],
      ['dev@crew.test', 'READ_WRITE'],
      ['ops@crew.test', 'READ_RUN'],
    ] as const) {
      const user = await ensureUser(svc.deps.sql, email, email.split('@')[0]);
      await addMember(svc.deps.sql, svc.defaultAccountId, user.id, role);
      people[email] = user.id;
    }
    expect((await svc.call('POST', '/v1/accounts/me/invitations', { body: { email: 'joiner@crew.test', role: 'READ_ONLY' } })).status).toBe(201);

    const table = await expectOk('members');
    for (const text of ['owner@crew.test', 'dev@crew.test', 'ops@crew.test', 'joiner@crew.test', 'READ_RUN', 'PENDING']) expect(table).toContain(text);
    const json = JSON.parse(await expectOk('members', '--type', 'member', '--role', 'read_write', '--output', 'json'));
    expect(json).toMatchObject({
      length: 1,
      nextId: null,
      members: [{ type: 'member', email: 'dev@crew.test', role: 'READ_WRITE', userId: people['dev@crew.test'] }],
    });
    const page = await expectOk('members', '--limit', '2');
    expect(page).toMatch(/more available/);

    await expectOk('members', 'update', 'dev@crew.test', '--role', 'read_only', '--force');
    expect((await svc.call('GET', '/v1/accounts/me/members?search=dev@crew')).body.members[0].role).toBe('READ_ONLY');
    await expectOk('members', 'delete', people['ops@crew.test']!, '--id', '--force');
    expect((await svc.call('GET', '/v1/accounts/me/members?search=ops@crew')).body.members).toEqual([]);
    // The last Owner stays one, and the CLI says why it failed.
    const refused = await checkly('members', 'delete', 'owner@crew.test', '--force');
    expect(refused.code).not.toBe(0);
    expect((await svc.call('GET', '/v1/accounts/me/members?role=OWNER')).body.members).toHaveLength(1);
  });

  it("a key of no account is refused with the CLI's own message", async () => {
    const saved = env.CHECKLY_API_KEY;
    env.CHECKLY_API_KEY = 'mk_not_a_key';
    const res = await checkly('whoami');
    env.CHECKLY_API_KEY = saved;
    expect(res.code).not.toBe(0);
    expect(res.out).toMatch(/Authentication failed|401|Unauthorized/i);
  });
});
