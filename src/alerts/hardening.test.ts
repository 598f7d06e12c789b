import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver } from '../../test/support/receivers.js';
import { expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { createApiKey } from '../accounts/repository.js';

/** Deliveries that cannot be turned against the service or its network, and channels as the anchor's receivers expect them. */
describe('alert channels, hardened', () => {
  let svc: TestService;
  let http: Awaited<ReturnType<typeof startHttpReceiver>>;
  let readOnlyKey: string;

  beforeAll(async () => {
    http = await startHttpReceiver();
    svc = await startTestService({
      STATE_SWEEP_INTERVAL_MS: '100',
      ALERT_RETRY_BASE_MS: '50',
      ALERT_DELIVERY_ATTEMPTS: '2',
      ALERT_DELIVERY_TIMEOUT_MS: '3000',
    });
    readOnlyKey = (await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' })).key;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await http?.close();
  });

  const post = async (path: string, body: unknown) => {
    const res = await svc.call('POST', path, { body });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const webhookBody = (config: Record<string, unknown>) => ({ type: 'WEBHOOK', config: { name: 'hook', url: `${http.url}/hook`, ...config } });
  let clock = Date.now() - 30 * 60_000;
  /** A check subscribed to `channelId` only, and one failing run of it. */
  const failOnce = async (channelId: number, name = 'Shop API', extra: Record<string, unknown> = {}) => {
    const check = await post('/v1/checks/api?autoAssignAlerts=false', {
      name,
      tags: ['team:shop', 'env:prod'],
      request: { url: 'https://shop.example.test' },
      ...extra,
    });
    await svc.call('PUT', `/v1/alert-channels/${channelId}/subscriptions`, { body: { checkId: check.id, activated: true } });
    clock += 60_000;
    const result = {
      id: randomUUID(),
      checkId: check.id,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(clock).toISOString(),
      stoppedAt: new Date(clock + 300).toISOString(),
      hasFailures: true,
      responseTime: 300,
      statusCode: 503,
    };
    await post('/v1/check-results', { results: [result] });
    return { check, result };
  };
  const notificationsOf = async (channelId: number, key?: string) =>
    (await svc.call('GET', `/v1/alert-notifications?limit=100&alertChannelId=${channelId}`, { key })).body as {
      status: string;
      notificationResult: string;
      alertConfig: Record<string, unknown>;
      attempts: { ok: boolean; detail: string }[];
    }[];

  describe('outbound policy', () => {
    it("refuses at create and update an address the policy refuses, in every spelling, and the service's own endpoints", async () => {
      const strict = await startTestService({ OUTBOUND_ALLOW: '' });
      try {
        for (const url of [
          'http://127.0.0.1/',
          'http://localhost:8080/',
          'http://0.0.0.0/',
          'http://[::1]/',
          'http://[::ffff:127.0.0.1]/',
          'http://2130706433/',
          'http://0x7f000001/',
          'http://127.1/',
          'http://169.254.169.254/latest/meta-data/',
          'http://10.0.0.1/',
          'http://[fd00::1]/',
        ]) {
          const res = await strict.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', config: { name: 'x', url } } });
          expect(res.status, url).toBe(400);
          expectFieldError(res, 'body.config.url', 'outbound');
          expect(res.text).toContain('blocked by outbound policy');
          const slack = await strict.call('POST', '/v1/alert-channels', { body: { type: 'SLACK', config: { url } } });
          expect(slack.status, url).toBe(400);
        }
        expect((await strict.call('GET', '/v1/alert-channels')).body).toEqual([]);
      } finally {
        await strict.stop();
      }
      // Loopback is open here (OUTBOUND_ALLOW=127.0.0.0/8), the service's own port, Postgres and Redis never.
      const own = new URL(svc.url).port;
      for (const port of [own, '5432', '6379']) {
        const res = await svc.call('POST', '/v1/alert-channels', { body: webhookBody({ url: `http://127.0.0.1:${port}/` }) });
        expect(res.status, port).toBe(400);
        expect(res.text).toContain("one of the service's own endpoints");
      }
      const channel = await post('/v1/alert-channels', webhookBody({}));
      const update = await svc.call('PUT', `/v1/alert-channels/${channel.id}`, { body: webhookBody({ url: 'http://169.254.169.254/' }) });
      expect(update.status).toBe(400);
      expect((await svc.call('GET', `/v1/alert-channels/${channel.id}`)).body.config.url).toBe(`${http.url}/hook`);
    });

    it('a name the policy does not open fails each attempt as blocked, before any lookup, and nothing is sent', async () => {
      const port = new URL(http.url).port;
      const channel = await post('/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'internal', url: `http://internal.example.test:${port}/internal` } });
      await failOnce(channel.id);
      const [n] = await waitFor(
        () => notificationsOf(channel.id),
        (list) => list.length === 1 && list[0].status === 'FAILURE',
      );
      expect(n.attempts).toHaveLength(2);
      for (const a of n.attempts) expect(a.detail).toMatch(/^blocked by outbound policy: internal\.example\.test is not named by OUTBOUND_ALLOW/);
      expect(http.to('/internal')).toEqual([]);
    });

    it('reads a bounded part of a reply that never ends, and the attempt ends', async () => {
      http.endless('/endless');
      const channel = await post('/v1/alert-channels', webhookBody({ url: `${http.url}/endless` }));
      await failOnce(channel.id);
      const [n] = await waitFor(
        () => notificationsOf(channel.id),
        (list) => list.length === 1 && list[0].status !== 'IN_PROGRESS',
      );
      expect(n.status).toBe('SUCCESS');
      expect(n.notificationResult).toMatch(/^HTTP 200 x{500} …$/);
      // The receiver wrote what its socket took before the delivery hung up: far less than it would have in the attempt's 3 s.
      expect(http.endlessBytes()).toBeLessThan(32 * 1024 * 1024);
    });
  });

  describe('secrets in channels', () => {
    it('secret header values and webhookSecret are write-only; read-only keys see no header values; an update keeps what it sent back masked', async () => {
      const created = await post(
        '/v1/alert-channels',
        webhookBody({
          url: `${http.url}/secret-hook`,
          headers: [
            { key: 'Authorization', value: 'Bearer receiver-token', secret: true },
            { key: 'X-Team', value: 'payments' },
          ],
          webhookSecret: 'whk-0123456789abcdef',
        }),
      );
      expect(created.config.headers).toEqual([
        { key: 'Authorization', value: '', locked: false, secret: true },
        { key: 'X-Team', value: 'payments', locked: false, secret: false },
      ]);
      expect(created.config.webhookSecret).toBe('');
      const asReader = (await svc.call('GET', `/v1/alert-channels/${created.id}`, { key: readOnlyKey })).body;
      expect(asReader.config.headers.map((h: { value: string }) => h.value)).toEqual(['', '']);
      const listed = (await svc.call('GET', '/v1/alert-channels?limit=100', { key: readOnlyKey })).body as {
        id: number;
        config: { headers?: { value: string }[] };
      }[];
      expect(listed.find((c) => c.id === created.id)!.config.headers!.map((h) => h.value)).toEqual(['', '']);
      // A client that read the channel sends it back as read: the stored secrets stay.
      const admin = (await svc.call('GET', `/v1/alert-channels/${created.id}`)).body;
      const put = await svc.call('PUT', `/v1/alert-channels/${created.id}`, { body: { type: 'WEBHOOK', config: { ...admin.config, name: 'renamed' } } });
      expect(put.status).toBe(200);
      const { result, check } = await failOnce(created.id);
      // The check's view of its channels shows header values to keys that may write, never a secret one.
      const seen = (key?: string) =>
        svc.call('GET', `/v1/checks/${check.id}`, { key }).then((r) => r.body.alertChannels.webhook[0].headers.map((h: { value: string }) => h.value));
      expect(await seen()).toEqual(['', 'payments']);
      expect(await seen(readOnlyKey)).toEqual(['', '']);
      const [hit] = await waitFor(
        async () => http.to('/secret-hook'),
        (r) => r.length >= 1,
      );
      expect(hit.headers.authorization).toBe('Bearer receiver-token');
      expect(hit.headers['x-team']).toBe('payments');
      expect(hit.headers['x-checkly-signature']).toBe(createHmac('sha256', 'whk-0123456789abcdef').update(hit.body).digest('hex'));
      expect(JSON.parse(hit.body).run.id).toBe(result.id);
      const [n] = await waitFor(
        () => notificationsOf(created.id, readOnlyKey),
        (l) => l.length === 1,
      );
      expect((n.alertConfig.headers as { value: string }[]).map((h) => h.value)).toEqual(['', '']);
      expect(n.alertConfig.webhookSecret).toBe('');
      expect(JSON.stringify(await notificationsOf(created.id))).not.toContain('receiver-token');
    });

    it('trigger URLs are for keys that may write', async () => {
      const check = await post('/v1/checks/api?autoAssignAlerts=false', { name: 'Triggered', request: { url: 'https://shop.example.test' } });
      await post(`/v1/triggers/checks/${check.id}`, {});
      expect((await svc.call('GET', `/v1/triggers/checks/${check.id}`, { key: readOnlyKey })).status).toBe(403);
      expect((await svc.call('GET', `/v1/triggers/checks/${check.id}`)).status).toBe(200);
    });
  });

  describe('configs that could never deliver', () => {
    it('are refused with the field that is wrong', async () => {
      const cases: [Record<string, unknown>, string, string][] = [
        [{ headers: [{ key: 'X-A', value: 'line\r\nX-Injected: 1' }] }, 'body.config.headers[0].value', 'header'],
        [{ headers: [{ key: 'X-A', value: 'naïve ✓' }] }, 'body.config.headers[0].value', 'header'],
        [{ headers: [{ key: 'Host', value: 'evil.test' }] }, 'body.config.headers[0].key', 'reserved'],
        [{ headers: [{ key: 'x-checkly-signature', value: 'forged' }] }, 'body.config.headers[0].key', 'reserved'],
        [{ headers: [{ key: 'Transfer-Encoding', value: 'chunked' }] }, 'body.config.headers[0].key', 'reserved'],
        [{ headers: [{ key: 'Bad Name', value: 'x' }] }, 'body.config.headers[0].key', 'pattern'],
        [{ url: `http://user:pass@${new URL(http.url).host}/hook` }, 'body.config.url', 'userinfo'],
        [{ template: '{{#each TAGS}}unclosed' }, 'body.config.template', 'template'],
      ];
      for (const [config, field, rule] of cases) {
        const res = await svc.call('POST', '/v1/alert-channels', { body: webhookBody(config) });
        expect(res.status, JSON.stringify(config)).toBe(400);
        expectFieldError(res, field, rule);
      }
      const slack = await svc.call('POST', '/v1/alert-channels', { body: { type: 'SLACK', config: { url: `http://u:p@${new URL(http.url).host}/slack` } } });
      expectFieldError(slack, 'body.config.url', 'userinfo');
    });

    it('templated header values are cleaned when rendered: no header injection', async () => {
      await svc.call('POST', '/v1/variables', { body: { key: 'INJECT', value: 'a\r\nX-Injected: yes' } });
      const channel = await post('/v1/alert-channels', webhookBody({ url: `${http.url}/clean`, headers: [{ key: 'X-From-Template', value: '{{INJECT}} ✓' }] }));
      await failOnce(channel.id);
      const [hit] = await waitFor(
        async () => http.to('/clean'),
        (r) => r.length >= 1,
      );
      expect(hit.headers['x-from-template']).toBe('a X-Injected: yes ?');
      expect(hit.headers['x-injected']).toBeUndefined();
    });
  });

  describe('webhooks as the anchor sends them', () => {
    it("renders Handlebars with the anchor's variables and helpers, JSON-safe, and signs with x-checkly-signature", async () => {
      await svc.call('POST', '/v1/variables', { body: { key: 'TEAM_CHANNEL', value: '#shop' } });
      const template = JSON.stringify({
        title: '{{ALERT_TITLE}}',
        type: '{{ALERT_TYPE}}',
        check: '{{CHECK_NAME}} ({{CHECK_TYPE}}, {{CHECK_ID}})',
        result: '{{CHECK_RESULT_ID}}',
        link: '{{RESULT_LINK}}',
        where: '{{RUN_LOCATION}}',
        ms: '{{RESPONSE_TIME}}',
        tags: '{{#each TAGS}}[{{this}}]{{/each}}',
        // In a JSON template, helper arguments are quoted with single quotes.
        team: "{{tagValue TAGS 'team' 'none'}}",
        year: "{{moment STARTED_AT 'YYYY'}}",
        failing: "{{#if (eq ALERT_TYPE 'ALERT_FAILURE')}}yes{{else}}no{{/if}}",
        uuid: '{{$UUID}}',
        channel: '{{TEAM_CHANNEL}}',
      });
      const channel = await post('/v1/alert-channels', webhookBody({ url: `${http.url}/anchor`, template, webhookSecret: 'first-secret-value' }));
      const { check, result } = await failOnce(channel.id, 'Shop "API"');
      const [hit] = await waitFor(
        async () => http.to('/anchor'),
        (r) => r.length >= 1,
      );
      const body = JSON.parse(hit.body);
      expect(body).toMatchObject({
        title: 'Shop "API" is failing',
        type: 'ALERT_FAILURE',
        check: `Shop "API" (API, ${check.id})`,
        result: result.id,
        link: `${svc.deps.config.publicUrl}/v1/check-results/${check.id}/${result.id}`,
        where: 'eu-west-1',
        ms: '300',
        tags: '[team:shop][env:prod]',
        team: 'shop',
        year: result.startedAt.slice(0, 4),
        failing: 'yes',
        channel: '#shop',
      });
      expect(body.uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(hit.headers['x-checkly-signature']).toBe(createHmac('sha256', 'first-secret-value').update(hit.body).digest('hex'));
    });

    it("rotates a webhook's secrets: the next delivery is signed with the new ones, shown once", async () => {
      const channel = await post('/v1/alert-channels', webhookBody({ url: `${http.url}/rotated`, webhookSecret: 'old-secret-0123456789' }));
      const rotated = await svc.call('POST', `/v1/alert-channels/${channel.id}/rotate-secret`, { body: {} });
      expect(rotated.status).toBe(200);
      expect(rotated.body.signingSecret).toMatch(/^whsec_/);
      expect(rotated.body.signingSecret).not.toBe(channel.signingSecret);
      expect((await svc.call('POST', `/v1/alert-channels/${channel.id}/rotate-secret`, { body: {}, key: readOnlyKey })).status).toBe(403);
      expect((await svc.call('GET', `/v1/alert-channels/${channel.id}`)).body.config.webhookSecret).toBe('');
      await failOnce(channel.id);
      const [hit] = await waitFor(
        async () => http.to('/rotated'),
        (r) => r.length >= 1,
      );
      expect(hit.headers['x-checkly-signature']).toBe(createHmac('sha256', rotated.body.webhookSecret).update(hit.body).digest('hex'));
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hit.headers['x-monitoring-signature']))!;
      expect(v1).toBe(createHmac('sha256', rotated.body.signingSecret).update(`${t}.${hit.body}`).digest('hex'));
      const email = await post('/v1/alert-channels', { type: 'EMAIL', config: { address: 'ops@example.test' } });
      expect((await svc.call('POST', `/v1/alert-channels/${email.id}/rotate-secret`, { body: {} })).status).toBe(404);
    });
  });
});
