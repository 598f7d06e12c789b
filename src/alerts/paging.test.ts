import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFieldError, startTestService, type TestService, waitFor } from '../../test/support/service.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));

/**
 * PagerDuty's Events API v2 event, as its documentation states it
 * (developer.pagerduty.com/docs/events-api-v2/trigger-events, …/resolve-events).
 */
const PAGERDUTY_EVENT = ajv.compile({
  oneOf: [
    {
      type: 'object',
      required: ['routing_key', 'event_action', 'payload'],
      properties: {
        routing_key: { type: 'string', minLength: 1 },
        event_action: { const: 'trigger' },
        dedup_key: { type: 'string', maxLength: 255 },
        payload: {
          type: 'object',
          required: ['summary', 'source', 'severity'],
          properties: {
            summary: { type: 'string', minLength: 1, maxLength: 1024 },
            source: { type: 'string', minLength: 1 },
            severity: { enum: ['critical', 'warning', 'error', 'info'] },
            timestamp: { type: 'string', format: 'date-time' },
            component: { type: 'string' },
            group: { type: 'string' },
            class: { type: 'string' },
            custom_details: { type: 'object' },
          },
          additionalProperties: false,
        },
        links: {
          type: 'array',
          items: { type: 'object', required: ['href'], properties: { href: { type: 'string', format: 'uri' }, text: { type: 'string' } } },
        },
        images: { type: 'array' },
        client: { type: 'string' },
        client_url: { type: 'string' },
      },
      additionalProperties: false,
    },
    {
      type: 'object',
      required: ['routing_key', 'event_action', 'dedup_key'],
      properties: {
        routing_key: { type: 'string', minLength: 1 },
        event_action: { enum: ['acknowledge', 'resolve'] },
        dedup_key: { type: 'string', minLength: 1, maxLength: 255 },
      },
      additionalProperties: false,
    },
  ],
});

/** Opsgenie's Alert API (docs.opsgenie.com/docs/alert-api): create an alert, and close one. */
const OPSGENIE_CREATE = ajv.compile({
  type: 'object',
  required: ['message'],
  properties: {
    message: { type: 'string', minLength: 1, maxLength: 130 },
    alias: { type: 'string', maxLength: 512 },
    description: { type: 'string', maxLength: 15000 },
    responders: { type: 'array' },
    visibleTo: { type: 'array' },
    actions: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 50 } },
    tags: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 50 } },
    details: { type: 'object', additionalProperties: { type: 'string' } },
    entity: { type: 'string', maxLength: 512 },
    source: { type: 'string', maxLength: 100 },
    priority: { enum: ['P1', 'P2', 'P3', 'P4', 'P5'] },
    user: { type: 'string', maxLength: 100 },
    note: { type: 'string', maxLength: 25000 },
  },
  additionalProperties: false,
});
const OPSGENIE_CLOSE = ajv.compile({
  type: 'object',
  properties: { user: { type: 'string', maxLength: 100 }, source: { type: 'string', maxLength: 100 }, note: { type: 'string', maxLength: 25000 } },
  additionalProperties: false,
});

interface Hit {
  provider: 'pagerduty' | 'opsgenie';
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  body: Record<string, unknown>;
  invalid: unknown;
}

/** Both providers on 127.0.0.1: each request checked against its documented schema and answered the way the provider does. */
async function startProviders() {
  const hits: Hit[] = [];
  let refuse = 0;
  let holdMs = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        /* left empty: the schema says what is wrong */
      }
      const reply = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
      if (url.pathname === '/pagerduty/v2/enqueue') {
        const valid = PAGERDUTY_EVENT(body);
        hits.push({
          provider: 'pagerduty',
          path: url.pathname,
          query: url.searchParams,
          authorization: req.headers.authorization,
          body,
          invalid: valid ? null : PAGERDUTY_EVENT.errors,
        });
        if (refuse > 0) {
          refuse--;
          const wait = holdMs;
          holdMs = 0;
          const refused = () =>
            reply(400, {
              status: 'invalid event',
              message: 'Event object is invalid',
              errors: ["Length of 'routing_key' is incorrect (should be 32 characters)"],
            });
          return void (wait ? setTimeout(refused, wait) : refused());
        }
        return valid
          ? reply(202, { status: 'success', message: 'Event processed', dedup_key: body.dedup_key })
          : reply(400, { status: 'invalid event', message: 'Event object is invalid' });
      }
      if (url.pathname.startsWith('/opsgenie/v2/alerts')) {
        const close = url.pathname.endsWith('/close');
        const check = close ? OPSGENIE_CLOSE : OPSGENIE_CREATE;
        const valid = check(body);
        hits.push({
          provider: 'opsgenie',
          path: url.pathname,
          query: url.searchParams,
          authorization: req.headers.authorization,
          body,
          invalid: valid ? null : check.errors,
        });
        if (!/^GenieKey \S+$/.test(req.headers.authorization ?? '')) return reply(401, { message: 'Could not authenticate', took: 0, requestId: randomUUID() });
        return valid
          ? reply(202, { result: 'Request will be processed', took: 0.01, requestId: randomUUID() })
          : reply(422, { message: 'Request body is not processable', took: 0, requestId: randomUUID() });
      }
      reply(404, { message: 'no such endpoint' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    refuseNext: (n: number, afterMs = 0) => ((refuse = n), (holdMs = afterMs)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('PagerDuty and Opsgenie channels', () => {
  let svc: TestService;
  let providers: Awaited<ReturnType<typeof startProviders>>;
  let clock = Date.now() - 20 * 60_000;

  beforeAll(async () => {
    providers = await startProviders();
    svc = await startTestService({
      STATE_SWEEP_INTERVAL_MS: '100',
      ALERT_RETRY_BASE_MS: '50',
      ALERT_DELIVERY_ATTEMPTS: '2',
      PAGERDUTY_EVENTS_URL: `${providers.url}/pagerduty/v2/enqueue`,
      OPSGENIE_API_URL: `${providers.url}/opsgenie`,
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await providers?.close();
  });

  const create = async (body: unknown) => {
    const res = await svc.call('POST', '/v1/alert-channels', { body });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: number; config: Record<string, unknown> };
  };
  const report = async (checkId: string, outcome: 'pass' | 'fail' | 'degraded') => {
    clock += 60_000;
    const result = {
      checkId,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(clock).toISOString(),
      stoppedAt: new Date(clock + 200).toISOString(),
      hasFailures: outcome === 'fail',
      isDegraded: outcome === 'degraded',
      responseTime: 200,
      statusCode: outcome === 'fail' ? 503 : 200,
    };
    expect((await svc.call('POST', '/v1/check-results', { body: { results: [result] } })).status).toBe(202);
  };
  const check = async (name: string, channels: number[]) => {
    const c = (
      await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name, tags: ['shop'], request: { url: 'https://shop.example.test' } } })
    ).body as { id: string };
    for (const id of channels)
      expect((await svc.call('PUT', `/v1/alert-channels/${id}/subscriptions`, { body: { checkId: c.id, activated: true } })).status).toBe(200);
    return c.id;
  };

  it('trigger on failure and resolve on recovery with one key per check, in the shapes the providers document; keys never read back', async () => {
    const pd = await create({
      type: 'PAGERDUTY',
      config: { serviceKey: 'R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY12', serviceName: 'Shop', account: 'acme' },
      sendDegraded: true,
    });
    const og = await create({ type: 'OPSGENIE', config: { name: 'Ops', apiKey: 'og-key-123', region: 'EU', priority: 'P2' }, sendDegraded: true });
    // The keys are write-only: never answered, not even to the key that made them.
    expect(pd.config).toMatchObject({ serviceKey: '', serviceName: 'Shop' });
    expect(og.config).toMatchObject({ apiKey: '', region: 'EU', priority: 'P2' });
    expect(JSON.stringify((await svc.call('GET', `/v1/alert-channels/${pd.id}`)).body)).not.toContain('R0UT1NGKEY');

    const checkId = await check('Checkout', [pd.id, og.id]);
    await report(checkId, 'fail');
    await waitFor(
      async () => providers.hits.length,
      (n) => n >= 2,
    );
    await report(checkId, 'degraded');
    await waitFor(
      async () => providers.hits.length,
      (n) => n >= 4,
    );
    await report(checkId, 'pass');
    await waitFor(
      async () => providers.hits.length,
      (n) => n >= 6,
    );
    expect(providers.hits.map((h) => h.invalid)).toEqual(providers.hits.map(() => null));

    const pdHits = providers.hits.filter((h) => h.provider === 'pagerduty').map((h) => h.body);
    expect(pdHits.map((b) => [b.event_action, (b.payload as { severity?: string } | undefined)?.severity])).toEqual([
      ['trigger', 'critical'],
      ['trigger', 'warning'],
      ['resolve', undefined],
    ]);
    for (const b of pdHits) expect(b).toMatchObject({ routing_key: 'R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY12', dedup_key: `check-${checkId}` });
    expect(pdHits[0]!.payload).toMatchObject({
      summary: 'Checkout is failing',
      source: 'eu-west-1',
      component: 'Checkout',
      class: 'API',
      custom_details: { alertType: 'ALERT_FAILURE', checkId },
    });

    const ogHits = providers.hits.filter((h) => h.provider === 'opsgenie');
    expect(ogHits.map((h) => h.path)).toEqual(['/opsgenie/v2/alerts', '/opsgenie/v2/alerts', `/opsgenie/v2/alerts/check-${checkId}/close`]);
    expect(ogHits.every((h) => h.authorization === 'GenieKey og-key-123')).toBe(true);
    expect(ogHits[2]!.query.get('identifierType')).toBe('alias');
    expect(ogHits[0]!.body).toMatchObject({
      message: 'Checkout is failing',
      alias: `check-${checkId}`,
      priority: 'P2',
      entity: 'Checkout',
      tags: ['shop', 'ALERT_FAILURE'],
    });
    // Degraded is one step below the channel's priority.
    expect(ogHits[1]!.body).toMatchObject({ alias: `check-${checkId}`, priority: 'P3' });

    // Each delivery is in the log with what the provider answered.
    const log = (await svc.call('GET', `/v1/alert-notifications?checkId=${checkId}&limit=20`)).body as {
      type: string;
      status: string;
      notificationResult: string;
    }[];
    expect(log).toHaveLength(6);
    expect(log.every((n) => n.status === 'SUCCESS' && /^HTTP 202 /.test(n.notificationResult))).toBe(true);
  });

  it('an update that sends a key back empty keeps it; a channel without a key, and the kinds not delivered here, are a clear 400', async () => {
    const pd = await create({ type: 'PAGERDUTY', config: { serviceKey: 'KEEPMEKEEPMEKEEPMEKEEPMEKEEPME12' } });
    const back = (await svc.call('GET', `/v1/alert-channels/${pd.id}`)).body as { type: string; config: Record<string, unknown> };
    expect(
      (await svc.call('PUT', `/v1/alert-channels/${pd.id}`, { body: { type: back.type, config: { ...back.config, serviceName: 'Renamed' } } })).status,
    ).toBe(200);
    const before = providers.hits.length;
    expect((await svc.call('POST', `/v1/alert-channels/${pd.id}/test`)).body).toMatchObject({ ok: true, detail: expect.stringMatching(/^HTTP 202/) });
    expect(providers.hits[before]!.body).toMatchObject({ routing_key: 'KEEPMEKEEPMEKEEPMEKEEPMEKEEPME12', event_action: 'trigger' });
    // The test's incident does not stay open paging someone: it is resolved right after.
    expect(providers.hits[before + 1]!.body).toMatchObject({
      event_action: 'resolve',
      dedup_key: (providers.hits[before]!.body as { dedup_key: string }).dedup_key,
    });

    const count = async () => ((await svc.call('GET', '/v1/alert-channels?limit=100')).body as unknown[]).length;
    const n = await count();
    expectFieldError(
      await svc.call('POST', '/v1/alert-channels', { body: { type: 'PAGERDUTY', config: { serviceKey: '' } } }),
      'body.config.serviceKey',
      'required',
    );
    expectFieldError(
      await svc.call('POST', '/v1/alert-channels', { body: { type: 'OPSGENIE', config: { name: 'x', apiKey: 'k', region: 'MARS', priority: 'P1' } } }),
      'body.config.region',
    );
    for (const type of ['CALL', 'SLACK_APP']) {
      const res = await svc.call('POST', '/v1/alert-channels', { body: { type, config: {} } });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/type/);
    }
    expect(await count()).toBe(n);
  });

  it('a provider that refuses is recorded, retried and visible', async () => {
    const pd = await create({ type: 'PAGERDUTY', config: { serviceKey: 'short' } });
    const checkId = await check('Refused', [pd.id]);
    providers.refuseNext(5);
    await report(checkId, 'fail');
    const [n] = await waitFor(
      async () =>
        (await svc.call('GET', `/v1/alert-notifications?checkId=${checkId}`)).body as { status: string; attempts: { ok: boolean; detail?: string }[] }[],
      (l) => l[0]?.status === 'FAILURE',
    );
    expect(n!.attempts).toHaveLength(2);
    expect(n!.attempts.every((a) => !a.ok && /HTTP 400 .*Event object is invalid/.test(a.detail ?? ''))).toBe(true);
  });

  it("delivers one check's messages to a channel in order: a trigger retried after a slow refusal still lands before the resolve", async () => {
    const pd = await create({ type: 'PAGERDUTY', config: { serviceKey: 'ORDERORDERORDERORDERORDERORDER12' } });
    const checkId = await check('In order', [pd.id]);
    const mine = () => providers.hits.filter((h) => (h.body as { dedup_key?: string }).dedup_key === `check-${checkId}`);
    // The first trigger is held 1.5 s and refused: the check recovers meanwhile.
    providers.refuseNext(1, 1500);
    await report(checkId, 'fail');
    await waitFor(
      async () => mine().length,
      (n) => n >= 1,
    );
    await report(checkId, 'pass');
    await waitFor(
      async () => mine().length,
      (n) => n >= 3,
      20_000,
    );
    expect(mine().map((h) => (h.body as { event_action: string }).event_action)).toEqual(['trigger', 'trigger', 'resolve']);
    const log = await waitFor(
      async () => (await svc.call('GET', `/v1/alert-notifications?checkId=${checkId}`)).body as { status: string }[],
      (l) => l.every((n) => n.status !== 'IN_PROGRESS'),
    );
    expect(log.map((n) => n.status)).toEqual(['SUCCESS', 'SUCCESS']);
  });

  it('deploys from the CLI constructs PagerdutyAlertChannel and OpsgenieAlertChannel', async () => {
    const body = {
      project: { logicalId: 'paging', name: 'Paging', repoUrl: null },
      resources: [
        {
          logicalId: 'pd',
          type: 'alert-channel',
          member: true,
          payload: {
            type: 'PAGERDUTY',
            config: { account: 'acme', serviceName: 'Shop', serviceKey: 'DEPLOYEDKEYDEPLOYEDKEYDEPLOYED12' },
            sendRecovery: true,
            sendFailure: true,
            sendDegraded: false,
            sslExpiry: false,
            sslExpiryThreshold: 30,
          },
        },
        {
          logicalId: 'og',
          type: 'alert-channel',
          member: true,
          payload: {
            type: 'OPSGENIE',
            config: { name: 'Ops', apiKey: 'deployed-og', region: 'US', priority: 'P1' },
            sendRecovery: true,
            sendFailure: true,
            sendDegraded: false,
            sslExpiry: false,
            sslExpiryThreshold: 30,
          },
        },
      ],
    };
    const res = await svc.call('POST', '/v1/projects/deploy?dryRun=false', { body });
    expect(res.status, res.text).toBe(202);
    const done = await svc.call('GET', `/v1/projects/paging/deployments/${res.body.id}/completion?maxWaitSeconds=30`);
    expect(done.body.status, JSON.stringify(done.body)).toBe('SUCCEEDED');
    const types = ((await svc.call('GET', '/v1/alert-channels?limit=100')).body as { type: string; config: Record<string, unknown> }[])
      .filter((c) => c.config.serviceName === 'Shop' || c.config.name === 'Ops')
      .map((c) => c.type);
    expect(types).toEqual(expect.arrayContaining(['PAGERDUTY', 'OPSGENIE']));
  });
});
