import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService } from '../../test/support/service.js';
import { createAccount, createApiKey } from '../accounts/repository.js';
import { openSecret } from '../storage/secret-box.js';

const browser = (over: Record<string, unknown> = {}) => ({ name: 'Homepage', script: "await page.goto('https://x.test')", ...over });

const BODIES: Record<string, Record<string, unknown>> = {
  browser: browser(),
  api: { name: 'API', request: { url: 'https://api.x.test/health' } },
  multistep: { name: 'Flow', script: 'await request.get("/")' },
  playwright: { name: 'PW', script: 'test("x", async () => {})' },
  url: { name: 'URL', request: { url: 'https://x.test' } },
  tcp: { name: 'TCP', request: { hostname: 'db.x.test', port: 5432 } },
  dns: { name: 'DNS', request: { hostname: 'x.test', recordType: 'MX' } },
  icmp: { name: 'Ping', request: { hostname: 'x.test' } },
  heartbeat: { name: 'Cron', heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes' } },
};
const TYPES: Record<string, string> = {
  browser: 'BROWSER',
  api: 'API',
  multistep: 'MULTI_STEP',
  playwright: 'PLAYWRIGHT',
  url: 'URL',
  tcp: 'TCP',
  dns: 'DNS',
  icmp: 'ICMP',
  heartbeat: 'HEARTBEAT',
};

describe('checks', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());
  const count = async () => (await svc.deps.sql`select count(*)::int as n from checks where account_id = ${svc.defaultAccountId}`)[0].n as number;

  it('creates a browser check with every shared-shape default applied', async () => {
    const res = await svc.call('POST', '/v1/checks/browser', { body: browser({ environmentVariables: [{ key: 'A', value: '1' }] }) });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      checkType: 'BROWSER',
      name: 'Homepage',
      activated: true,
      muted: false,
      doubleCheck: true,
      shouldFail: false,
      useGlobalAlertSettings: true,
      runParallel: false,
      frequency: 10,
      tags: [],
      environmentVariables: [{ key: 'A', value: '1', locked: false, secret: false }],
      alertChannels: { email: [], webhook: [], slack: [], sms: [] },
      alertChannelSubscriptions: [],
      updated_at: null,
    });
    expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
    const got = await svc.call('GET', `/v1/checks/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('accepts script: null on a browser check', async () => {
    const res = await svc.call('POST', '/v1/checks/browser', { body: browser({ script: null }) });
    expect(res.status).toBe(201);
    expect(res.body.script).toBeNull();
  });

  it.each(Object.keys(BODIES))('creates a %s check with its type and fields', async (segment) => {
    const res = await svc.call('POST', `/v1/checks/${segment}`, { body: BODIES[segment] });
    expect(res.status).toBe(201);
    expect(res.body.checkType).toBe(TYPES[segment]);
    const [row] = await svc.deps.sql`select check_type, name from checks where id = ${res.body.id}`;
    expect(row).toEqual({ check_type: TYPES[segment], name: BODIES[segment].name });
  });

  it('fills request defaults for API checks', async () => {
    const res = await svc.call('POST', '/v1/checks/api', { body: BODIES.api });
    expect(res.body.request).toMatchObject({
      url: 'https://api.x.test/health',
      method: 'GET',
      followRedirects: true,
      skipSSL: false,
      headers: [],
      queryParameters: [],
      assertions: [],
    });
  });

  it.each([
    ['browser', { script: 'x' }, 'body.name', 'required'],
    ['browser', { name: 'x' }, 'body.script', 'required'],
    ['browser', browser({ frequency: 3 }), 'body.frequency', 'enum'],
    ['browser', browser({ frequency: 0, frequencyOffset: 10 }), 'body.frequency', 'enum'],
    ['browser', browser({ locations: ['mars-1'] }), 'body.locations[0]', 'enum'],
    ['browser', browser({ locations: ['eu-west-1', 'eu-west-1'] }), 'body.locations', 'uniqueItems'],
    ['browser', browser({ runtimeId: '2020.01' }), 'body.runtimeId', 'enum'],
    ['browser', browser({ description: 'x'.repeat(501) }), 'body.description', 'maxLength'],
    ['browser', browser({ groupOrder: -1 }), 'body.groupOrder', 'minimum'],
    ['browser', browser({ groupId: 999999 }), 'body.groupId', 'exists'],
    [
      'browser',
      browser({ alertChannelSubscriptions: [{ alertChannelId: 999999, activated: true }] }),
      'body.alertChannelSubscriptions[0].alertChannelId',
      'exists',
    ],
    [
      'browser',
      browser({ environmentVariables: Array.from({ length: 101 }, (_, i) => ({ key: `K${i}`, value: 'v' })) }),
      'body.environmentVariables',
      'maxItems',
    ],
    ['browser', browser({ environmentVariables: [{ key: 'A' }] }), 'body.environmentVariables[0].value', 'required'],
    ['browser', browser({ frequency: 10, frequencyOffset: 101 }), 'body.frequencyOffset', 'frequencyOffset'],
    ['browser', browser({ frequency: 10, frequencyOffset: 0 }), 'body.frequencyOffset', 'minimum'],
    ['browser', browser({ frequency: 120, frequencyOffset: 3 }), 'body.frequencyOffset', 'frequencyOffset'],
    ['browser', browser({ activated: 'yes' }), 'body.activated', 'type'],
    ['browser', browser({ request: { url: 'https://x' } }), 'body.request', 'additionalProperties'],
    ['browser', browser({ alertSettings: { escalationType: 'SOMETIMES' } }), 'body.alertSettings.escalationType', 'enum'],
    ['browser', browser({ retryStrategy: { maxRetries: 99 } }), 'body.retryStrategy.maxRetries', 'maximum'],
    ['api', { name: 'x' }, 'body.request', 'required'],
    ['api', { name: 'x', request: { url: 'https://x.test', method: 'FETCH' } }, 'body.request.method', 'enum'],
    ['api', { name: 'x', request: { url: 'https://x.test' }, frequency: 0 }, 'body.frequencyOffset', 'frequencyOffset'],
    ['api', { name: 'x', request: { url: 'https://x.test' }, frequency: 0, frequencyOffset: 15 }, 'body.frequencyOffset', 'frequencyOffset'],
    ['url', { name: 'x', request: { url: 'ftp://x.test' } }, 'body.request.url', 'pattern'],
    // Every URL a check is given is a URL when it is created, not at its first run.
    ['api', { name: 'x', request: { url: 'not a url' } }, 'body.request.url', 'format'],
    ['api', { name: 'x', request: { url: 'x.test/health' } }, 'body.request.url', 'format'],
    ['api', { name: 'x', request: { url: 'ftp://x.test/' } }, 'body.request.url', 'format'],
    ['api', { name: 'x', request: { url: 'https://' } }, 'body.request.url', 'format'],
    ['url', { name: 'x', request: { url: 'https://not a host/' } }, 'body.request.url', 'format'],
    ['tcp', { name: 'x', request: { url: 'not a host', port: 80 } }, 'body.request.url', 'format'],
    ['traceroute', { name: 'x', request: { url: 'http://' } }, 'body.request.url', 'format'],
    ['grpc', { name: 'x', request: { url: 'grpc server', port: 50051 } }, 'body.request.url', 'format'],
    ['ssl', { name: 'x', request: { sslConfig: { hostname: 'exa mple.test' } } }, 'body.request.sslConfig.hostname', 'format'],
    // TCP, SSL, traceroute and gRPC fill in no placeholders: one would be looked up as it is.
    ['tcp', { name: 'x', request: { url: '{{DB_HOST}}', port: 5432 } }, 'body.request.url', 'format'],
    ['tcp', { name: 'x', request: { hostname: 'x.test', port: 70000 } }, 'body.request.port', 'maximum'],
    ['dns', { name: 'x', request: { hostname: 'x.test', recordType: 'ZZ' } }, 'body.request.recordType', 'enum'],
    ['icmp', { name: 'x', request: { hostname: 'x.test', pingCount: 0 } }, 'body.request.pingCount', 'minimum'],
    ['heartbeat', { name: 'x' }, 'body.heartbeat', 'required'],
    ['heartbeat', { name: 'x', heartbeat: { period: 1, periodUnit: 'weeks', grace: 0, graceUnit: 'hours' } }, 'body.heartbeat.periodUnit', 'enum'],
    ['multistep', { name: 'x' }, 'body.script', 'required'],
  ])('POST /v1/checks/%s rejects %j naming %s, storing nothing', async (segment, body, field, rule) => {
    const before = await count();
    expectFieldError(await svc.call('POST', `/v1/checks/${segment}`, { body }), field, rule);
    expect(await count()).toBe(before);
  });

  it('takes the URLs a check may be given: placeholders filled in at run time, a path its group prefixes, hosts and addresses', async () => {
    const created = async (segment: string, request: Record<string, unknown>) => {
      const res = await svc.call('POST', `/v1/checks/${segment}`, { body: { name: 'ok', activated: false, request } });
      expect(res.status, `${segment} ${JSON.stringify(request)}: ${res.text}`).toBe(201);
    };
    for (const url of [
      '{{BASE_URL}}/health',
      '{{{BASE_URL}}}/health',
      'https://{{HOST}}:{{PORT}}/x?a={{A}}',
      '/health',
      'http://127.0.0.1:8080/x',
      'HTTPS://Shop.Test',
    ])
      await created('api', { url });
    await created('tcp', { url: 'db.internal.test', port: 5432 });
    await created('tcp', { url: '127.0.0.1', port: 9 });
    await created('traceroute', { url: 'https://shop.test/path' });
    await created('grpc', { url: 'grpc.shop.test:50051' });
    await created('ssl', { sslConfig: { hostname: 'https://shop.test/' } });
  });

  it('accepts each frequencyOffset at its bounds', async () => {
    for (const [frequency, frequencyOffset] of [
      [10, 100],
      [60, 600],
      [1, 10],
      [120, 2],
      [1440, 24],
    ]) {
      const res = await svc.call('POST', '/v1/checks/browser', { body: browser({ frequency, frequencyOffset }) });
      expect(res.status, `${frequency}/${frequencyOffset}`).toBe(201);
    }
    for (const frequencyOffset of [10, 20, 30]) {
      const res = await svc.call('POST', '/v1/checks/api', { body: { ...BODIES.api, frequency: 0, frequencyOffset } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ frequency: 0, frequencyOffset });
    }
  });

  it('subscribes a new check to every alert channel unless autoAssignAlerts=false', async () => {
    const email = await svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'ops@x.test' } } });
    const hook = await svc.call('POST', '/v1/alert-channels', {
      body: { type: 'WEBHOOK', config: { name: 'hook', url: 'https://hooks.x.test/a', headers: [{ key: 'X', value: 'y' }] } },
    });
    expect(email.status).toBe(201);
    expect(hook.status).toBe(201);
    const auto = await svc.call('POST', '/v1/checks/browser', { body: browser() });
    expect(auto.body.alertChannels.email).toEqual([{ address: 'ops@x.test' }]);
    expect(auto.body.alertChannels.webhook).toEqual([
      { url: 'https://hooks.x.test/a', name: 'hook', method: 'POST', headers: [{ key: 'X', value: 'y', locked: false }], queryParameters: [] },
    ]);
    expect(auto.body.alertChannelSubscriptions).toEqual(
      expect.arrayContaining([
        { alertChannelId: email.body.id, activated: true },
        { alertChannelId: hook.body.id, activated: true },
      ]),
    );
    const manual = await svc.call('POST', '/v1/checks/browser?autoAssignAlerts=false', { body: browser() });
    expect(manual.body.alertChannelSubscriptions).toEqual([]);
    expect(manual.body.alertChannels).toEqual({ email: [], webhook: [], slack: [], sms: [] });
    const explicit = await svc.call('POST', '/v1/checks/browser?autoAssignAlerts=false', {
      body: browser({ alertChannelSubscriptions: [{ alertChannelId: email.body.id, activated: false }] }),
    });
    expect(explicit.body.alertChannelSubscriptions).toEqual([{ alertChannelId: email.body.id, activated: false }]);
    // Paused subscriptions do not alert.
    expect(explicit.body.alertChannels.email).toEqual([]);
    expectFieldError(await svc.call('POST', '/v1/checks/browser?autoAssignAlerts=maybe', { body: browser() }), 'query.autoAssignAlerts', 'type');
  });

  it('answers 402 once the account reaches its browser check limit, storing nothing', async () => {
    const account = await createAccount(svc.deps.sql, 'small plan');
    const { key } = await createApiKey(svc.deps.sql, { accountId: account.id, role: 'read-write' });
    await svc.deps.sql`update accounts set browser_check_limit = 2 where id = ${account.id}`;
    expect((await svc.call('POST', '/v1/checks/browser', { key, body: browser() })).status).toBe(201);
    expect((await svc.call('POST', '/v1/checks/browser', { key, body: browser() })).status).toBe(201);
    const res = await svc.call('POST', '/v1/checks/browser', { key, body: browser() });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ statusCode: 402, error: 'Payment Required', message: 'Payment Required' });
    // Other types are not limited.
    expect((await svc.call('POST', '/v1/checks/api', { key, body: BODIES.api })).status).toBe(201);
    const [{ n }] = await svc.deps.sql`select count(*)::int as n from checks where account_id = ${account.id} and check_type = 'BROWSER'`;
    expect(n).toBe(2);
  });

  it('updates through PUT /v1/checks/{id}, merging and keeping the type', async () => {
    const { body: c } = await svc.call('POST', '/v1/checks/browser', { body: browser({ tags: ['web'] }) });
    const res = await svc.call('PUT', `/v1/checks/${c.id}`, {
      body: { name: 'Renamed', script: 'new()', heartbeat: { period: 1, periodUnit: 'hours', grace: 1, graceUnit: 'hours' }, muted: true },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.id, checkType: 'BROWSER', name: 'Renamed', script: 'new()', muted: true, tags: ['web'] });
    expect(res.body.heartbeat).toBeUndefined();
    expect(res.body.updated_at).not.toBeNull();
    const [row] = await svc.deps.sql`select name, muted from checks where id = ${c.id}`;
    expect(row).toEqual({ name: 'Renamed', muted: true });
  });

  it('requires heartbeat and script on PUT /v1/checks/{id} and refuses a type change', async () => {
    const { body: c } = await svc.call('POST', '/v1/checks/browser', { body: browser() });
    const hb = { period: 1, periodUnit: 'hours', grace: 1, graceUnit: 'hours' };
    expectFieldError(await svc.call('PUT', `/v1/checks/${c.id}`, { body: { script: 'x' } }), 'body.heartbeat', 'required');
    expectFieldError(await svc.call('PUT', `/v1/checks/${c.id}`, { body: { heartbeat: hb } }), 'body.script', 'required');
    expectFieldError(await svc.call('PUT', `/v1/checks/${c.id}`, { body: { script: 'x', heartbeat: hb, checkType: 'API' } }), 'body.checkType', 'immutable');
    expectFieldError(await svc.call('PUT', `/v1/checks/${c.id}`, { body: { script: 'x', heartbeat: hb, frequency: 7 } }), 'body.frequency', 'enum');
    expectFieldError(
      await svc.call('PUT', `/v1/checks/${c.id}`, { body: { script: 'x', heartbeat: hb, frequency: 0, frequencyOffset: 10 } }),
      'body.frequency',
      'enum',
    );
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).body).toMatchObject({ checkType: 'BROWSER', script: c.script });
    expect((await svc.call('PUT', `/v1/checks/${randomUUID()}`, { body: { script: 'x', heartbeat: hb } })).status).toBe(404);
  });

  it('updates through the typed PUT as the anchor does: the body merges, fields left out keep their values', async () => {
    const { body: c } = await svc.call('POST', '/v1/checks/api', { body: { ...BODIES.api, tags: ['a'], muted: true } });
    const res = await svc.call('PUT', `/v1/checks/api/${c.id}`, { body: { name: 'API 2', request: { url: 'https://x.test/v2', method: 'POST' } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'API 2', request: { url: 'https://x.test/v2', method: 'POST' }, tags: ['a'], muted: true });
    const renamed = await svc.call('PUT', `/v1/checks/api/${c.id}`, { body: { tags: [] } });
    expect(renamed.body).toMatchObject({ name: 'API 2', tags: [], request: { url: 'https://x.test/v2' } });
    expectFieldError(await svc.call('PUT', `/v1/checks/api/${c.id}`, { body: { request: { method: 'POST' } } }), 'body.request.url', 'required');
    expectFieldError(await svc.call('PUT', `/v1/checks/api/${c.id}`, { body: { frequency: 7 } }), 'body.frequency', 'enum');
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).body).toMatchObject({ name: 'API 2', tags: [] });
    // The typed path must match the stored type.
    expectFieldError(await svc.call('PUT', `/v1/checks/browser/${c.id}`, { body: browser() }), 'body.checkType', 'immutable');
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).body.checkType).toBe('API');
  });

  it('never returns secret environment variable values, and keeps them across a read-modify-write', async () => {
    const { body: c } = await svc.call('POST', '/v1/checks/browser', {
      body: browser({
        environmentVariables: [
          { key: 'PASSWORD', value: 'hunter2-secret', secret: true },
          { key: 'USER', value: 'bob' },
        ],
      }),
    });
    expect(c.environmentVariables).toEqual([
      { key: 'PASSWORD', value: '', locked: false, secret: true },
      { key: 'USER', value: 'bob', locked: false, secret: false },
    ]);
    const { body: read } = await svc.call('GET', `/v1/checks/${c.id}`);
    expect(JSON.stringify(read)).not.toContain('hunter2');
    const { id: _i, checkType: _t, alertChannels: _a, alertChannelSubscriptions: _s, created_at: _c, updated_at: _u, ...editable } = read;
    const put = await svc.call('PUT', `/v1/checks/browser/${c.id}`, { body: { ...editable, name: 'Edited' } });
    expect(put.status).toBe(200);
    const [row] = await svc.deps.sql`select data from checks where id = ${c.id}`;
    // Kept (sealed at rest) across the round trip.
    expect(row.data.environmentVariables[0].key).toBe('PASSWORD');
    expect(JSON.stringify(row.data)).not.toContain('hunter2');
    expect(openSecret(row.data.environmentVariables[0].value)).toBe('hunter2-secret');
    const list = await svc.call('GET', '/v1/checks?limit=100');
    expect(list.text).not.toContain('hunter2');
  });

  it('adds dependencies only when asked', async () => {
    const { body: c } = await svc.call('POST', '/v1/checks/browser', { body: browser({ dependencies: [{ path: 'lib/a.js', content: 'x' }] }) });
    expect(c.dependencies).toBeUndefined();
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).body.dependencies).toBeUndefined();
    const withDeps = await svc.call('GET', `/v1/checks/${c.id}?includeDependencies=true`);
    expect(withDeps.body.dependencies).toEqual([{ path: 'lib/a.js', content: 'x' }]);
  });

  it("applies the group's settings when asked", async () => {
    const group = await svc.call('POST', '/v1/check-groups', {
      body: {
        name: 'Payments',
        tags: ['payments'],
        locations: ['eu-central-1', 'us-east-1'],
        runtimeId: '2025.04',
        retryStrategy: { type: 'FIXED', maxRetries: 2 },
        alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
        useGlobalAlertSettings: false,
        environmentVariables: [
          { key: 'BASE', value: 'group' },
          { key: 'SHARED', value: 'group' },
        ],
        apiCheckDefaults: { url: 'https://pay.x.test', headers: [{ key: 'X-Team', value: 'pay' }] },
      },
    });
    expect(group.status).toBe(201);
    const { body: c } = await svc.call('POST', '/v1/checks/api', {
      body: {
        name: 'Charge',
        groupId: group.body.id,
        groupOrder: 0,
        tags: ['critical'],
        locations: ['ap-south-1'],
        environmentVariables: [{ key: 'SHARED', value: 'check' }],
        request: { url: '/charge' },
      },
    });
    const plain = await svc.call('GET', `/v1/checks/${c.id}`);
    expect(plain.body).toMatchObject({ locations: ['ap-south-1'], tags: ['critical'], request: { url: '/charge' } });
    const applied = await svc.call('GET', `/v1/checks/${c.id}?applyGroupSettings=true`);
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({
      locations: ['eu-central-1', 'us-east-1'],
      runtimeId: '2025.04',
      retryStrategy: { type: 'FIXED', maxRetries: 2 },
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 2 } },
      request: { url: 'https://pay.x.test/charge', headers: [{ key: 'X-Team', value: 'pay', locked: false }] },
    });
    expect(applied.body.tags.sort()).toEqual(['critical', 'payments']);
    expect(applied.body.environmentVariables).toEqual([
      { key: 'BASE', value: 'group', locked: false, secret: false },
      { key: 'SHARED', value: 'check', locked: false, secret: false },
    ]);
    // Deleting a group that still has checks is a conflict.
    const del = await svc.call('DELETE', `/v1/check-groups/${group.body.id}`);
    expect(del.status).toBe(409);
    expect((await svc.call('GET', `/v1/check-groups/${group.body.id}`)).status).toBe(200);
    expect((await svc.call('DELETE', `/v1/checks/${c.id}`)).status).toBe(204);
    expect((await svc.call('DELETE', `/v1/check-groups/${group.body.id}`)).status).toBe(204);
  });

  it('lists with checkType and tag filters and a total', async () => {
    await svc.call('POST', '/v1/checks/tcp', { body: { ...BODIES.tcp, tags: ['db', 'filter-me'] } });
    const tcp = await svc.call('GET', '/v1/checks?checkType=TCP&limit=100');
    expect(tcp.status).toBe(200);
    expect(tcp.body.length).toBeGreaterThan(0);
    expect(tcp.body.every((c: { checkType: string }) => c.checkType === 'TCP')).toBe(true);
    expect(Number(tcp.headers.get('x-total-count'))).toBe(tcp.body.length);
    const tagged = await svc.call('GET', '/v1/checks?tag=filter-me');
    expect(tagged.body).toHaveLength(1);
    expect(tagged.body[0].tags).toContain('filter-me');
    expectFieldError(await svc.call('GET', '/v1/checks?checkType=FOO'), 'query.checkType', 'enum');
  });

  it('answers 404 for unknown and malformed ids, and deletes', async () => {
    expect((await svc.call('GET', `/v1/checks/${randomUUID()}`)).status).toBe(404);
    expect((await svc.call('GET', '/v1/checks/not-a-check')).status).toBe(404);
    const { body: c } = await svc.call('POST', '/v1/checks/icmp', { body: BODIES.icmp });
    expect((await svc.call('DELETE', `/v1/checks/${c.id}`)).status).toBe(204);
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/checks/${c.id}`)).status).toBe(404);
  });

  it("keeps accounts apart: another account gets 404 for this account's checks and cannot reference its groups or channels", async () => {
    const { body: c } = await svc.call('POST', '/v1/checks/browser', { body: browser() });
    const { body: g } = await svc.call('POST', '/v1/check-groups', { body: { name: 'mine' } });
    const { body: ch } = await svc.call('POST', '/v1/alert-channels', { body: { type: 'SLACK', config: { url: 'https://hooks.slack.test/x' } } });
    const other = await createOtherTenant(svc);
    const as = { key: other.key };
    const hb = { period: 1, periodUnit: 'hours', grace: 1, graceUnit: 'hours' };
    expect((await svc.call('GET', `/v1/checks/${c.id}`, as)).status).toBe(404);
    expect((await svc.call('PUT', `/v1/checks/${c.id}`, { ...as, body: { script: 'x', heartbeat: hb } })).status).toBe(404);
    expect((await svc.call('PUT', `/v1/checks/browser/${c.id}`, { ...as, body: browser() })).status).toBe(404);
    expect((await svc.call('DELETE', `/v1/checks/${c.id}`, as)).status).toBe(404);
    expect((await svc.call('GET', '/v1/checks', as)).body).toEqual([]);
    expectFieldError(await svc.call('POST', '/v1/checks/browser', { ...as, body: browser({ groupId: g.id }) }), 'body.groupId', 'exists');
    expectFieldError(
      await svc.call('POST', '/v1/checks/browser', { ...as, body: browser({ alertChannelSubscriptions: [{ alertChannelId: ch.id, activated: true }] }) }),
      'body.alertChannelSubscriptions[0].alertChannelId',
      'exists',
    );
    // Their new check is not auto-subscribed to this account's channels.
    const theirs = await svc.call('POST', '/v1/checks/browser', { ...as, body: browser() });
    expect(theirs.body.alertChannelSubscriptions).toEqual([]);
    expect((await svc.call('GET', `/v1/checks/${c.id}`)).status).toBe(200);
  });
});
