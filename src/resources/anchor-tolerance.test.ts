import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';

/**
 * Bodies and query strings the anchor API's own clients send: fields the anchor documents are accepted
 * (stored when they mean something here, ignored otherwise), read-only fields sent back are ignored, and
 * fields neither side knows stay a 400.
 */
describe('what the anchor API accepts, accepted here', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  const storedData = async (id: string) => (await svc.deps.sql`select data from checks where id = ${id}`)[0].data as Record<string, unknown>;

  describe('check bodies', () => {
    it('takes checkType naming the route, aiAutoRepairEnabled, intent, SINGLE_RETRY, incident severity and a null variable value', async () => {
      const res = await svc.call('POST', '/v1/checks/browser', {
        body: {
          checkType: 'BROWSER',
          name: 'anchor browser',
          script: 'x',
          aiAutoRepairEnabled: true,
          intent: { goal: 'checkout works', requiredOutcomes: ['order placed'] },
          retryStrategy: { type: 'SINGLE_RETRY', baseBackoffSeconds: 60 },
          triggerIncident: { serviceId: randomUUID(), severity: 'MAJOR', name: 'down', description: 'd', notifySubscribers: false },
          environmentVariables: [{ key: 'EMPTY', value: null }],
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({
        checkType: 'BROWSER',
        aiAutoRepairEnabled: true,
        intent: { goal: 'checkout works', requiredOutcomes: ['order placed'] },
        retryStrategy: { type: 'SINGLE_RETRY' },
        triggerIncident: { severity: 'MAJOR' },
        environmentVariables: [{ key: 'EMPTY', value: null, locked: false, secret: false }],
      });
      const got = await svc.call('GET', `/v1/checks/${res.body.id}`);
      expect(got.body.intent).toEqual(res.body.intent);
    });

    it('refuses a checkType that is not the route type, and fields nobody knows, storing nothing', async () => {
      const before = (await svc.deps.sql`select count(*)::int as n from checks`)[0].n;
      expectFieldError(await svc.call('POST', '/v1/checks/browser', { body: { checkType: 'API', name: 'x', script: 'x' } }), 'body.checkType', 'enum');
      expectFieldError(
        await svc.call('POST', '/v1/checks/browser', { body: { name: 'x', script: 'x', colour: 'red' } }),
        'body.colour',
        'additionalProperties',
      );
      expectFieldError(
        await svc.call('POST', '/v1/checks/browser', { body: { name: 'x', script: 'x', retryStrategy: { type: 'SOMETIMES' } } }),
        'body.retryStrategy.type',
        'enum',
      );
      expect((await svc.call('GET', '/v1/checks?limit=100')).status).toBe(200);
      expect((await svc.deps.sql`select count(*)::int as n from checks`)[0].n).toBe(before);
    });

    it('takes a check read back whole on a write: id, checkType, created_at, updated_at and alertChannels are ignored', async () => {
      const created = (await svc.call('POST', '/v1/checks/api', { body: { name: 'round trip', request: { url: 'https://x.test' } } })).body;
      const { alertChannelSubscriptions: _subs, ...read } = (await svc.call('GET', `/v1/checks/${created.id}`)).body;
      const res = await svc.call('PUT', `/v1/checks/api/${created.id}`, {
        body: { ...read, name: 'round trip 2', id: randomUUID(), created_at: '2001-01-01T00:00:00.000Z' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id: created.id, name: 'round trip 2', created_at: created.created_at, checkType: 'API' });
      const data = await storedData(created.id);
      for (const key of ['id', 'checkType', 'created_at', 'updated_at', 'alertChannels']) expect(data, key).not.toHaveProperty(key);
    });

    it('stores the ICMP packet-loss thresholds (defaults 10 and 20) and ignores the fields ICMP has no use for', async () => {
      const res = await svc.call('POST', '/v1/checks/icmp', {
        body: {
          name: 'ping',
          request: { hostname: 'x.test' },
          script: 'ignored',
          heartbeat: { period: 1 },
          setupSnippetId: 3,
          frequency: 0,
          frequencyOffset: 10,
          maxPacketLossThreshold: 50,
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ degradedPacketLossThreshold: 10, maxPacketLossThreshold: 50, frequency: 0 });
      expect(res.body).not.toHaveProperty('script');
      const data = await storedData(res.body.id);
      for (const key of ['script', 'heartbeat', 'setupSnippetId']) expect(data, key).not.toHaveProperty(key);
      expectFieldError(
        await svc.call('POST', '/v1/checks/icmp', { body: { name: 'ping', request: { hostname: 'x.test' }, maxPacketLossThreshold: 0 } }),
        'body.maxPacketLossThreshold',
      );
    });

    it("takes the anchor's host fields: a DNS query without hostname, a TCP url without hostname; neither is a 400", async () => {
      const dns = await svc.call('POST', '/v1/checks/dns', { body: { name: 'dns', request: { query: 'shop.test', recordType: 'A' } } });
      expect(dns.status, dns.text).toBe(201);
      expect(dns.body.request).toMatchObject({ query: 'shop.test', recordType: 'A', port: 53, protocol: 'UDP' });
      const tcp = await svc.call('POST', '/v1/checks/tcp', { body: { name: 'tcp', request: { url: 'db.shop.test', port: 5432 } } });
      expect(tcp.status, tcp.text).toBe(201);
      expect(tcp.body.request).toMatchObject({ url: 'db.shop.test', port: 5432 });
      expectFieldError(await svc.call('POST', '/v1/checks/dns', { body: { name: 'x', request: { recordType: 'A' } } }), 'body.request.query', 'required');
      expectFieldError(await svc.call('POST', '/v1/checks/tcp', { body: { name: 'x', request: { port: 1 } } }), 'body.request.hostname', 'required');
    });

    it('takes the DNS query, HTTPS records and the DNS assertion sources; a URL monitor takes method GET only', async () => {
      const dns = await svc.call('POST', '/v1/checks/dns', {
        body: {
          name: 'dns',
          request: {
            hostname: 'x.test',
            query: 'x.test',
            recordType: 'HTTPS',
            assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
          },
        },
      });
      expect(dns.status, dns.text).toBe(201);
      expect(dns.body.request).toMatchObject({ query: 'x.test', recordType: 'HTTPS' });
      const url = await svc.call('POST', '/v1/checks/url', { body: { name: 'url', request: { url: 'https://x.test', method: 'GET' } } });
      expect(url.status, url.text).toBe(201);
      expectFieldError(
        await svc.call('POST', '/v1/checks/url', { body: { name: 'url', request: { url: 'https://x.test', method: 'POST' } } }),
        'body.request.method',
        'enum',
      );
    });

    it('accepts any heartbeat object (or null) and a null script on the generic update of a non-heartbeat check', async () => {
      const check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'generic', request: { url: 'https://x.test' } } })).body;
      for (const heartbeat of [{}, null, { anything: true }]) {
        const res = await svc.call('PUT', `/v1/checks/${check.id}`, { body: { heartbeat, script: null, name: 'generic 2' } });
        expect(res.status, res.text).toBe(200);
        expect(res.body.name).toBe('generic 2');
      }
      expect(await storedData(check.id)).not.toHaveProperty('heartbeat');
      const hb = (
        await svc.call('POST', '/v1/checks/heartbeat', { body: { name: 'hb', heartbeat: { period: 1, periodUnit: 'hours', grace: 1, graceUnit: 'hours' } } })
      ).body;
      expectFieldError(await svc.call('PUT', `/v1/checks/${hb.id}`, { body: { heartbeat: {}, script: null } }), 'body.heartbeat.period', 'required');
    });
  });

  describe('check lists', () => {
    it('filter by any of several tags, by part of the name and by part of an API check URL', async () => {
      const make = (path: string, body: object) => svc.call('POST', path, { body }).then((r) => r.body.id as string);
      const a = await make('/v1/checks/api', { name: 'Shop CHECKOUT flow', tags: ['t-red'], request: { url: 'https://shop.example.test/cart' } });
      const b = await make('/v1/checks/api', { name: 'other 100%', tags: ['t-blue'], request: { url: 'https://api.example.test' } });
      const c = await make('/v1/checks/browser', { name: 'browser shop', tags: ['t-green'], script: 'x' });
      const ids = async (q: string) => ((await svc.call('GET', `/v1/checks?limit=100&${q}`)).body as { id: string }[]).map((x) => x.id).sort();
      expect(await ids('tag=t-red&tag=t-blue')).toEqual([a, b].sort());
      // axios, the anchor CLI's HTTP client, sends lists as tag[]=a&tag[]=b.
      expect(await ids('tag[]=t-red&tag[]=t-blue')).toEqual([a, b].sort());
      expect(await ids('tag%5B%5D=t-green&tag=t-red')).toEqual([a, c].sort());
      expect(await ids('tag=t-green')).toEqual([c]);
      expect(await ids('search=checkout')).toEqual([a]);
      expect(await ids('search=100%25')).toEqual([b]);
      expect(await ids('search=_')).toEqual([]);
      expect(await ids('apiCheckUrlFilterPattern=shop.example')).toEqual([a]);
      const page = await svc.call('GET', '/v1/checks?tag=t-red&tag=t-blue&limit=1');
      expect(page.headers.get('content-range')).toBe('0-0/2');
    });
  });

  describe('check types the anchor adds', () => {
    it('create and read SSL, traceroute, gRPC and agentic checks with their requests and the defaults filled', async () => {
      const bodies: Record<string, object> = {
        ssl: {
          name: 'cert',
          request: {
            sslConfig: { hostname: 'shop.test', securityBaseline: { enabled: true } },
            assertions: [{ source: 'CERTIFICATE', comparison: 'GREATER_THAN', property: 'daysUntilExpiry', target: '14' }],
          },
        },
        traceroute: { name: 'route', request: { url: 'shop.test', protocol: 'TCP', port: 443, maxHops: 30 } },
        grpc: { name: 'rpc', request: { url: 'grpc.shop.test', port: '443', grpcConfig: { mode: 'HEALTH', service: 'shop.Cart' } } },
        agentic: { name: 'agent', intent: { goal: 'a shopper can check out' } },
      };
      const types: Record<string, string> = { ssl: 'SSL', traceroute: 'TRACEROUTE', grpc: 'GRPC', agentic: 'AGENTIC' };
      for (const [segment, body] of Object.entries(bodies)) {
        const res = await svc.call('POST', `/v1/checks/${segment}`, { body });
        expect(res.status, `${segment}: ${res.text}`).toBe(201);
        expect(res.body.checkType).toBe(types[segment]);
        const got = (await svc.call('GET', `/v1/checks/${res.body.id}`)).body;
        expect(got).toMatchObject({ locations: [], groupId: null, groupOrder: null, runtimeId: null, description: null, privateLocations: [] });
        expect(got.alertSettings).toEqual({
          escalationType: 'RUN_BASED',
          runBasedEscalation: { failedRunThreshold: 1 },
          reminders: { amount: 0, interval: 5 },
          parallelRunFailureThreshold: { enabled: false, percentage: 10 },
        });
        expect(got).not.toHaveProperty('script');
      }
      const ssl = (await svc.call('GET', '/v1/checks?checkType=SSL')).body[0];
      expect(ssl.request.sslConfig).toMatchObject({ hostname: 'shop.test', port: 443, handshakeTimeoutMs: 10000, alertDaysBeforeExpiry: 20 });
      expectFieldError(
        await svc.call('POST', '/v1/checks/ssl', { body: { name: 'x', request: { sslConfig: { hostname: 'a.test', port: 0 } } } }),
        'body.request.sslConfig.port',
        'minimum',
      );
      expectFieldError(
        await svc.call('POST', '/v1/checks/traceroute', { body: { name: 'x', request: { url: 'a.test', maxHops: 65 } } }),
        'body.request.maxHops',
        'maximum',
      );
      expectFieldError(
        await svc.call('POST', '/v1/checks/grpc', { body: { name: 'x', request: { url: 'a.test', grpcConfig: { mode: 'STREAM' } } } }),
        'body.request.grpcConfig.mode',
        'enum',
      );
      expect((await svc.call('POST', '/v1/checks/agentic', { body: { name: 'intent later' } })).body.intent).toBeNull();
    });

    it('read every field of the shape with defaults where unset, and give a heartbeat check its ping URL', async () => {
      const api = (await svc.call('POST', '/v1/checks/api', { body: { name: 'plain', request: { url: 'https://x.test' } } })).body;
      expect(api).toMatchObject({
        shouldFail: false,
        doubleCheck: true,
        runParallel: false,
        retryStrategy: null,
        triggerIncident: null,
        setupSnippetId: null,
        localSetupScript: null,
        intent: null,
        aiAutoRepairEnabled: null,
        degradedResponseTime: null,
        maxResponseTime: null,
        environmentVariables: [],
      });
      const hb = await svc.call('POST', '/v1/checks/heartbeat', {
        body: { name: 'cron', heartbeat: { period: 1, periodUnit: 'hours', grace: 10, graceUnit: 'minutes', pingToken: 'mine' } },
      });
      expect(hb.status, hb.text).toBe(201);
      const { pingToken, pingUrl } = hb.body.heartbeat;
      expect(pingToken).toMatch(/^[0-9a-f-]{36}$/);
      expect(pingToken).not.toBe(hb.body.id);
      expect(pingUrl).toBe(`${svc.url}/ping/${pingToken}`);
      // A client sending the read heartbeat back keeps the token the service made.
      const put = await svc.call('PUT', `/v1/checks/heartbeat/${hb.body.id}`, { body: { ...hb.body, alertChannelSubscriptions: undefined, name: 'cron 2' } });
      expect(put.status, put.text).toBe(200);
      expect(put.body.heartbeat.pingToken).toBe(pingToken);
      expect(put.body).not.toHaveProperty('request');
    });
  });

  describe('check groups', () => {
    it('store runParallel and alert channel subscriptions, ignore browserCheckDefaults, and filter by tag and name', async () => {
      const channel = (await svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'g@x.test' } } })).body;
      const res = await svc.call('POST', '/v1/check-groups?autoAssignAlerts=false', {
        body: {
          name: 'grp-anchor',
          tags: ['g-tag'],
          runParallel: true,
          browserCheckDefaults: 'x',
          alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: false }],
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ runParallel: true, alertChannelSubscriptions: [{ alertChannelId: channel.id, activated: false }] });
      expect(res.body).not.toHaveProperty('browserCheckDefaults');
      const subs = await svc.deps.sql`select activated from alert_subscriptions where group_id = ${res.body.id}`;
      expect(subs).toEqual([{ activated: false }]);
      const byTag = await svc.call('GET', '/v1/check-groups?tag=g-tag&tag=none');
      expect(byTag.body.map((g: { id: number }) => g.id)).toEqual([res.body.id]);
      const byName = await svc.call('GET', '/v1/check-groups?name=grp-anchor');
      expect(byName.body.map((g: { id: number }) => g.id)).toEqual([res.body.id]);
      expect((await svc.call('GET', '/v1/check-groups?name=grp')).body).toEqual([]);
    });

    it("refuses another account's channel in a group's subscriptions, creating nothing", async () => {
      const other = await createOtherTenant(svc);
      const foreign = (await svc.call('POST', '/v1/alert-channels', { key: other.key, body: { type: 'EMAIL', config: { address: 'o@x.test' } } })).body;
      const before = (await svc.deps.sql`select count(*)::int as n from check_groups`)[0].n;
      expectFieldError(
        await svc.call('POST', '/v1/check-groups', { body: { name: 'g', alertChannelSubscriptions: [{ alertChannelId: foreign.id }] } }),
        'body.alertChannelSubscriptions[0].alertChannelId',
        'exists',
      );
      expect((await svc.deps.sql`select count(*)::int as n from check_groups`)[0].n).toBe(before);
    });
  });

  describe('alert channels', () => {
    it('store sslExpiry, sslExpiryThreshold and autoSubscribe, and take subscriptions in the body', async () => {
      const check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'sub me', request: { url: 'https://x.test' } } })).body;
      const res = await svc.call('POST', '/v1/alert-channels', {
        body: {
          type: 'SLACK',
          config: { url: 'https://hooks.x.test/1' },
          sslExpiry: true,
          sslExpiryThreshold: 14,
          autoSubscribe: true,
          subscriptions: [{ checkId: check.id, activated: true }],
        },
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({
        sslExpiry: true,
        sslExpiryThreshold: 14,
        autoSubscribe: true,
        subscriptions: [{ checkId: check.id, groupId: null, activated: true }],
      });
      const later = (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'auto', request: { url: 'https://x.test' } } })).body;
      expect(later.alertChannelSubscriptions).toContainEqual({ alertChannelId: res.body.id, activated: true });
      const cleared = await svc.call('PUT', `/v1/alert-channels/${res.body.id}`, {
        body: { type: 'SLACK', config: { url: 'https://hooks.x.test/1' }, subscriptions: [] },
      });
      expect(cleared.body).toMatchObject({ subscriptions: [], autoSubscribe: false, sslExpiryThreshold: 30 });
    });

    it('refuses a body subscription naming both or neither of checkId and groupId, or a foreign check, changing nothing', async () => {
      const before = (await svc.deps.sql`select count(*)::int as n from alert_channels`)[0].n;
      const post = (subscriptions: object[]) =>
        svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'a@x.test' }, subscriptions } });
      expectFieldError(await post([{ activated: true }]), 'body.subscriptions[0]', 'oneOf');
      expectFieldError(await post([{ checkId: randomUUID(), groupId: 1, activated: true }]), 'body.subscriptions[0]', 'oneOf');
      expectFieldError(await post([{ checkId: randomUUID(), activated: true }]), 'body.subscriptions[0].checkId', 'exists');
      expect((await svc.deps.sql`select count(*)::int as n from alert_channels`)[0].n).toBe(before);
    });
  });

  describe('maintenance windows and dashboards', () => {
    it('store a named time zone (UTC when left out, kept when an update leaves it out) and refuse offsets and unknown zones', async () => {
      const body = { name: 'w', startsAt: '2026-01-01T00:00:00Z', endsAt: '2026-01-02T00:00:00Z' };
      expect((await svc.call('POST', '/v1/maintenance-windows', { body })).body.timezone).toBe('UTC');
      const w = (await svc.call('POST', '/v1/maintenance-windows', { body: { ...body, timezone: 'Europe/Berlin' } })).body;
      expect(w.timezone).toBe('Europe/Berlin');
      expect((await svc.call('PUT', `/v1/maintenance-windows/${w.id}`, { body: { ...body, name: 'w2' } })).body).toMatchObject({
        name: 'w2',
        timezone: 'Europe/Berlin',
      });
      expect((await svc.call('PUT', `/v1/maintenance-windows/${w.id}`, { body: { ...body, timezone: null } })).body.timezone).toBe('UTC');
      expectFieldError(await svc.call('POST', '/v1/maintenance-windows', { body: { ...body, timezone: '+05:00' } }), 'body.timezone', 'pattern');
      expectFieldError(await svc.call('POST', '/v1/maintenance-windows', { body: { ...body, timezone: 'Mars/Olympus' } }), 'body.timezone', 'timezone');
    });

    it('take an empty or null dashboard link and sortByStatus', async () => {
      for (const link of ['', null]) {
        const res = await svc.call('POST', '/v1/dashboards', { body: { header: 'd', link, sortByStatus: true, customUrl: null } });
        expect(res.status, res.text).toBe(201);
        expect(res.body).toMatchObject({ link, sortByStatus: true });
      }
      expectFieldError(await svc.call('POST', '/v1/dashboards', { body: { header: 'd', link: 'not a url' } }), 'body.link');
    });
  });

  describe('check results', () => {
    it("take checkType and resultType: another type or ATTEMPT lists nothing, the check's own type and ALL list as before", async () => {
      const check = (await svc.call('POST', '/v1/checks/api', { body: { name: 'results', request: { url: 'https://x.test' } } })).body;
      const at = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
      const result = { checkId: check.id, checkType: 'API', runLocation: 'eu-west-1', startedAt: at(2), stoppedAt: at(1), hasFailures: false };
      expect((await svc.call('POST', '/v1/check-results', { body: { results: [result] } })).status).toBe(202);
      const path = `/v1/check-results/${check.id}`;
      await waitFor(
        () => svc.call('GET', path),
        (r) => r.body.length === 1,
      );
      for (const [q, n] of [
        ['checkType=API', 1],
        ['resultType=ALL', 1],
        ['resultType=FINAL', 1],
        ['checkType=BROWSER', 0],
        ['resultType=ATTEMPT', 0],
      ] as const) {
        const res = await svc.call('GET', `${path}?${q}`);
        expect(res.status, q).toBe(200);
        expect(res.body, q).toHaveLength(n);
        expect(res.headers.get('x-total-count'), q).toBe(String(n));
      }
      expectFieldError(await svc.call('GET', `${path}?resultType=SOME`), 'query.resultType', 'enum');
    });
  });
});

describe('POST /v1/checks: one route for every type', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.stop());

  it('creates the type checkType names, validated as that type; a missing or unknown type is a 400', async () => {
    const api = await svc.call('POST', '/v1/checks', { body: { checkType: 'API', name: 'generic api', request: { url: 'https://x.test' } } });
    expect(api.status, api.text).toBe(201);
    expect(api.body).toMatchObject({ checkType: 'API', request: { method: 'GET', url: 'https://x.test' } });
    const hb = await svc.call('POST', '/v1/checks', {
      body: { checkType: 'HEARTBEAT', name: 'cron', heartbeat: { period: 5, periodUnit: 'minutes', grace: 1, graceUnit: 'minutes' } },
    });
    expect(hb.body.heartbeat.pingUrl).toMatch(/\/ping\/[0-9a-f-]{36}$/);
    const before = (await svc.call('GET', '/v1/checks?limit=100')).body.length;
    expectFieldError(await svc.call('POST', '/v1/checks', { body: { name: 'x', request: { url: 'https://x.test' } } }), 'body.checkType', 'required');
    expectFieldError(await svc.call('POST', '/v1/checks', { body: { checkType: 'PING', name: 'x' } }), 'body.checkType', 'enum');
    expectFieldError(await svc.call('POST', '/v1/checks', { body: { checkType: 'API', name: 'x' } }), 'body.request', 'required');
    expectFieldError(
      await svc.call('POST', '/v1/checks', { body: { checkType: 'TCP', name: 'x', request: { hostname: 'db.test', port: 70000 } } }),
      'body.request.port',
      'maximum',
    );
    expect((await svc.call('GET', '/v1/checks?limit=100')).body.length).toBe(before);
  });

  it('reads the same checks at /v2 and /v3; /v3 shows intent as typed constraints', async () => {
    const created = await svc.call('POST', '/v1/checks/browser', {
      body: { name: 'with intent', script: 'x', intent: { goal: 'buy', requiredOutcomes: ['order placed'], mustPreserve: ['no double charge'] } },
    });
    const v1 = (await svc.call('GET', `/v1/checks/${created.body.id}`)).body;
    const v2 = (await svc.call('GET', `/v2/checks/${created.body.id}`)).body;
    const v3 = (await svc.call('GET', `/v3/checks/${created.body.id}`)).body;
    expect(v2).toEqual(v1);
    expect(v3.intent).toEqual({
      goal: 'buy',
      constraints: [
        { type: 'REQUIRED_OUTCOME', statement: 'order placed' },
        { type: 'MUST_PRESERVE', statement: 'no double charge' },
      ],
    });
    const list = await svc.call('GET', '/v3/checks?checkType=BROWSER');
    expect(list.body[0].intent.constraints).toHaveLength(2);
    expect(list.headers.get('content-range')).toBe('0-0/1');
    expect((await svc.call('GET', '/v2/checks/not-a-check')).status).toBe(404);
  });
});
