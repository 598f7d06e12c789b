import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkly, cliEnv } from '../../test/support/checkly-cli.js';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { createApiKey } from '../accounts/repository.js';

/**
 * Root-cause analyses (docs/rca.md): the anchor's three operations, made from the service's own evidence. Each
 * situation is built for real (runs that land, a check changed, another check on the host…) and the analysis must
 * name it; when nothing explains the failure, it must say so. The anchor CLI's `rca run --watch` reads a real one.
 */
describe('root-cause analyses', { timeout: 180_000 }, () => {
  let svc: TestService;
  let target: Server;
  let targetUrl: string;
  let mode: 'up' | 'down' = 'up';

  beforeAll(async () => {
    target = createServer((_req, res) => {
      if (mode === 'up') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', version: 7 }));
      else res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '30' }).end(JSON.stringify({ error: 'database unavailable' }));
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/health`;
    svc = await startTestService({ RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1' });
  }, 90_000);
  afterAll(async () => {
    await svc?.stop();
    await new Promise((r) => target?.close(r));
  });

  const post = async (p: string, body: unknown) => {
    const res = await svc.call('POST', p, { body });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${res.text}`);
    return res.body;
  };
  let clock = Date.now() - 2 * 3_600_000;
  const run = (checkId: string, checkType: string, failed: boolean, detail: Record<string, unknown>, location = 'eu-west-1', at?: number) => {
    clock += 60_000;
    const startedAt = at ?? clock;
    return {
      id: randomUUID(),
      checkId,
      checkType,
      runLocation: location,
      startedAt: new Date(startedAt).toISOString(),
      stoppedAt: new Date(startedAt + 120).toISOString(),
      hasFailures: failed,
      responseTime: 120,
      ...detail,
    };
  };
  const api = (status: number, body: unknown, extra: Record<string, unknown> = {}) => ({
    apiCheckResult: {
      request: { method: 'GET', url: 'https://shop.example.test/api/cart' },
      response: {
        status,
        statusText: status === 200 ? 'OK' : 'Service Unavailable',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        timingPhases: { dns: 2, tcp: 3, firstByte: 40, download: 2, total: 47 },
      },
      assertions: [],
      requestError: null,
      ...extra,
    },
  });
  const groupOf = async (checkId: string) =>
    (
      await waitFor(
        () => svc.call('GET', `/v1/error-groups/checks/${checkId}`),
        (r) => r.status === 200 && r.body.length > 0,
      )
    ).body[0] as { id: string; rootCauseAnalyses: unknown[] };
  type Rca = {
    id: string;
    status: string;
    checkId: string | null;
    errorGroupId: string;
    provider: string;
    model: string;
    analysis: {
      classification: string;
      rootCause: string;
      userImpact: string;
      codeFix: string | null;
      evidence: { description: string; artifacts: unknown[] }[];
    };
  };
  const analyse = async (groupId: string, userContext?: string): Promise<Rca> => {
    const asked = await svc.call('POST', `/v1/root-cause-analyses/error-groups/${groupId}`, userContext ? { body: { userContext } } : {});
    expect(asked.status, asked.text).toBe(202);
    expect(asked.body).toEqual({ id: expect.any(String), status: 'PENDING' });
    const done = await waitFor(
      () => svc.call('GET', `/v1/root-cause-analyses/${asked.body.id}`),
      (r) => r.status !== 202,
    );
    expect(done.status, done.text).toBe(200);
    return done.body as Rca;
  };
  const said = (r: Rca) => [r.analysis.rootCause, ...r.analysis.evidence.map((e) => e.description)].join('\n');

  it('explains a real failure: the target began answering 503; the CLI’s rca run --watch prints it', async () => {
    const check = await post('/v1/checks/api?autoAssignAlerts=false', {
      name: 'Shop health',
      locations: ['eu-west-1'],
      request: { url: targetUrl, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    const runNow = async () => {
      const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [check.id] } } });
      expect(trigger.status, trigger.text).toBe(201);
      const sessionId = trigger.body.sessions[0].checkSessionId as string;
      await waitFor(
        () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
        (r) => r.status !== 408,
        90_000,
      );
    };
    await runNow();
    mode = 'down';
    await runNow();
    const group = await groupOf(check.id);

    const home = mkdtempSync(path.join(os.tmpdir(), 'rca-'));
    try {
      const env = cliEnv(svc.url, svc.adminKey, svc.defaultAccountId, home);
      const out = await checkly(env, home, ['rca', 'run', '--error-group', group.id, '--watch']);
      expect(out.code, out.out).toBe(0);
      expect(out.out).toContain('503');
      expect(out.out).toMatch(/APPLICATION ERROR/);
      expect(out.out).toContain('where it answered 200 at the last passing run');
      // Its creation is no change that broke it.
      expect(out.out).not.toContain('createApiCheck');
      // And `rca get` reads it back by id; the group lists it.
      const listed = (await svc.call('GET', `/v1/error-groups/${group.id}`)).body as { rootCauseAnalyses: Rca[] };
      expect(listed.rootCauseAnalyses).toHaveLength(1);
      expect(listed.rootCauseAnalyses[0]).toMatchObject({ provider: 'local', status: 'COMPLETED', checkId: check.id, errorGroupId: group.id });
      const got = await checkly(env, home, ['rca', 'get', listed.rootCauseAnalyses[0]!.id]);
      expect(got.code, got.out).toBe(0);
      expect(got.out).toContain('503');
      const shown = await checkly(env, home, ['checks', 'get', check.id, '--error-group', group.id]);
      expect(shown.code, shown.out).toBe(0);
      expect(shown.out).toContain('APPLICATION ERROR');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('names an expired certificate, with the fix', async () => {
    const check = await post('/v1/checks/ssl?autoAssignAlerts=false', { name: 'Shop TLS', request: { sslConfig: { hostname: 'shop.example.test' } } });
    const cert = (validTo: string, days: number, fp: string) => ({
      issuerCN: 'Local CA',
      subjectCN: 'shop.example.test',
      validTo,
      daysUntilExpiry: days,
      fingerprintSha256: fp,
    });
    await post('/v1/check-results', {
      results: [
        run(check.id, 'SSL', false, {
          sslCheckResult: { failureCategory: null, requestError: null, assertions: [], response: { certificate: cert('2026-11-28T00:00:00.000Z', 3, 'AA') } },
        }),
        run(check.id, 'SSL', true, {
          sslCheckResult: {
            failureCategory: 'EXPIRED',
            requestError: null,
            assertions: [],
            errors: [{ message: 'certificate has expired' }],
            response: { certificate: cert('2026-11-28T00:00:00.000Z', -1, 'AA') },
          },
        }),
      ],
    });
    const r = await analyse((await groupOf(check.id)).id);
    expect(r.analysis.classification).toBe('INFRA ERROR');
    expect(r.analysis.rootCause).toMatch(/certificate of shop\.example\.test .*expired on 2026-11-28/);
    expect(r.analysis.codeFix).toMatch(/Renew the certificate/);
    expect(r.analysis.evidence.some((e) => JSON.stringify(e.artifacts).includes('TLS_CERTIFICATE'))).toBe(true);
  });

  it('names a DNS answer that changed', async () => {
    const check = await post('/v1/checks/dns?autoAssignAlerts=false', { name: 'Shop DNS', request: { hostname: 'shop.example.test', recordType: 'A' } });
    await post('/v1/check-results', {
      results: [
        run(check.id, 'DNS', false, {
          dnsCheckResult: { response: { returnCode: 'NOERROR', answer: 'shop.example.test. 300 IN A 10.0.0.1' }, assertions: [], requestError: null },
        }),
        run(check.id, 'DNS', true, {
          dnsCheckResult: {
            response: { returnCode: 'NOERROR', answer: 'shop.example.test. 300 IN A 10.0.0.99' },
            assertions: [
              {
                source: 'TEXT_ANSWER',
                comparison: 'CONTAINS',
                target: '10.0.0.1',
                actual: 'shop.example.test. 300 IN A 10.0.0.99',
                error: 'expected to contain 10.0.0.1',
              },
            ],
            errors: [{ message: 'expected the answer to contain 10.0.0.1' }],
            requestError: null,
          },
        }),
      ],
    });
    const r = await analyse((await groupOf(check.id)).id);
    expect(r.analysis.classification).toBe('NETWORK ERROR');
    expect(r.analysis.rootCause).toContain('The DNS answer for shop.example.test changed');
    expect(r.analysis.rootCause).toContain('10.0.0.99');
  });

  it('names one location failing while the others pass, and a JSON field that moved, with the new path', async () => {
    const check = await post('/v1/checks/api?autoAssignAlerts=false', { name: 'Cart API', request: { url: 'https://cart.example.test/api' } });
    const assertion = (actual: unknown, error?: string) => ({
      assertions: [{ source: 'JSON_BODY', property: '$.total', comparison: 'EQUALS', target: '3', actual, ...(error ? { error } : {}) }],
    });
    await post('/v1/check-results', {
      results: [
        run(check.id, 'API', false, api(200, { total: 3 }, assertion(3)), 'eu-west-1'),
        run(check.id, 'API', false, api(200, { total: 3 }, assertion(3)), 'us-east-1'),
        run(
          check.id,
          'API',
          true,
          api(
            200,
            { cart: { total: 3 } },
            { ...assertion(undefined, 'expected undefined to equal 3'), errors: [{ message: 'JSON body $.total: expected undefined to equal 3' }] },
          ),
          'eu-west-1',
        ),
        run(check.id, 'API', false, api(200, { total: 3 }, assertion(3)), 'us-east-1'),
      ],
    });
    const r = await analyse((await groupOf(check.id)).id);
    expect(r.analysis.classification).toBe('APPLICATION ERROR');
    expect(r.analysis.rootCause).toContain('no longer has $.total');
    expect(r.analysis.codeFix).toContain('$.cart.total');
    expect(said(r)).toMatch(/fails only from eu-west-1 \(1 of 2 runs\); from us-east-1 \(2 runs\) it passes/);
  });

  it('names other checks failing against the same host, and a change made to the check just before', async () => {
    const make = (name: string) => post('/v1/checks/api?autoAssignAlerts=false', { name, request: { url: `https://billing.example.test/${name}` } });
    const a = await make('invoices');
    const b = await make('payments');
    // A change to the check (the audit log records it), then the failures.
    const changed = await svc.call('PUT', `/v1/checks/api/${a.id}`, {
      body: { name: 'invoices', maxResponseTime: 20000, request: { url: 'https://billing.example.test/invoices' } },
    });
    expect(changed.status, changed.text).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    const now = Date.now();
    const failing = (id: string, at: number) =>
      run(id, 'API', true, api(500, { error: 'ledger locked' }, { errors: [{ message: 'Status code 500 not 2xx' }] }), 'eu-west-1', at);
    await post('/v1/check-results', { results: [failing(a.id, now + 10), failing(b.id, now + 20), failing(a.id, now + 30)] });
    const r = await analyse((await groupOf(a.id)).id);
    expect(said(r)).toMatch(/Another check against billing\.example\.test failed over the same time \("payments": 1 of 1 runs\)/);
    expect(said(r)).toMatch(/Changed after the last passing run, before this failure: the check \(\w+\) at/);
  });

  it('names a deploy made between the last passing run and the first failure', async () => {
    const check = await post('/v1/checks/api?autoAssignAlerts=false', { name: 'Deployed one', request: { url: 'https://deployed.example.test/' } });
    await post('/v1/check-results', { results: [run(check.id, 'API', false, api(200, { ok: true }), 'eu-west-1', Date.now() - 60_000)] });
    const deployed = await svc.call('POST', '/v1/projects/deploy?dryRun=false&scheduleOnDeploy=false', {
      body: { project: { logicalId: 'rca-project', name: 'rca' }, resources: [] },
    });
    expect(deployed.status, deployed.text).toBeLessThan(300);
    await waitFor(
      () => svc.call('GET', `/v1/projects/rca-project/deployments/${deployed.body.id}`),
      (r) => r.body?.status === 'SUCCEEDED',
    );
    await new Promise((r) => setTimeout(r, 300));
    await post('/v1/check-results', {
      results: [run(check.id, 'API', true, api(200, { ok: false }, { errors: [{ message: 'Deployed and broken' }] }), 'eu-west-1', Date.now())],
    });
    const r = await analyse((await groupOf(check.id)).id);
    expect(said(r)).toMatch(/Changed after the last passing run, before this failure: a deploy of the account’s checks \(deployProject\) at/);
  });

  it('says so when nothing in the evidence explains the failure, and keeps what the person said', async () => {
    const check = await post('/v1/checks/api?autoAssignAlerts=false', { name: 'Quiet one', request: { url: 'https://quiet.example.test/' } });
    const same = api(200, { ok: true });
    await post('/v1/check-results', {
      results: [run(check.id, 'API', false, same), run(check.id, 'API', true, api(200, { ok: true }, { errors: [{ message: 'Something odd happened' }] }))],
    });
    const r = await analyse((await groupOf(check.id)).id, 'We rotated keys at noon');
    expect(r.analysis.classification).toBe('UNKNOWN');
    expect(r.analysis.rootCause).toContain('The evidence does not show a cause');
    expect(r.analysis.rootCause).toContain('We rotated keys at noon');
    expect(r.analysis.codeFix).toBeNull();
  });

  it('keeps to its account and its roles; bad input is a 400 and unknown ids a 404', async () => {
    const other = await createOtherTenant(svc);
    const check = await post('/v1/checks/api?autoAssignAlerts=false', { name: 'Mine', request: { url: 'https://mine.example.test/' } });
    await post('/v1/check-results', {
      results: [run(check.id, 'API', true, api(500, {}, { errors: [{ message: 'boom' }] }))],
    });
    const group = await groupOf(check.id);
    const asked = await svc.call('POST', `/v1/root-cause-analyses/error-groups/${group.id}`);
    expect(asked.status).toBe(202);
    // Another account sees neither the group nor the analysis.
    expect((await svc.call('POST', `/v1/root-cause-analyses/error-groups/${group.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', `/v1/root-cause-analyses/${asked.body.id}`, { key: other.key })).status).toBe(404);
    // A read-only key reads, but does not ask.
    const { key: readOnly } = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    expect((await svc.call('POST', `/v1/root-cause-analyses/error-groups/${group.id}`, { key: readOnly })).status).toBe(403);
    expect([200, 202]).toContain((await svc.call('GET', `/v1/root-cause-analyses/${asked.body.id}`, { key: readOnly })).status);
    // Bad input.
    const tooLong = await svc.call('POST', `/v1/root-cause-analyses/error-groups/${group.id}`, { body: { userContext: 'x'.repeat(257) } });
    expect(tooLong.status).toBe(400);
    expect((await svc.call('POST', '/v1/root-cause-analyses/error-groups/not-a-uuid')).status).toBe(400);
    expect((await svc.call('GET', `/v1/root-cause-analyses/${randomUUID()}`)).status).toBe(404);
    expect([400, 404]).toContain((await svc.call('GET', `/v1/root-cause-analyses/urn:uuid:${randomUUID()}`)).status);
    expect((await svc.call('POST', `/v1/root-cause-analyses/test-session-error-groups/${randomUUID()}`)).status).toBe(404);
  });
});

/** RCA_MODEL_URL: a model the team runs rewrites the prose from the same evidence, secrets masked; when it fails, the rules stand. */
describe('root-cause analyses with a model', { timeout: 120_000 }, () => {
  let svc: TestService;
  let model: Server;
  const asked: { auth?: string; body: { model: string; messages: { role: string; content: string }[] } }[] = [];
  let failing = false;

  beforeAll(async () => {
    model = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c));
      req.on('end', () => {
        asked.push({ auth: req.headers.authorization, body: JSON.parse(text) });
        if (failing) return void res.writeHead(500).end('{"error":"overloaded"}');
        const content = JSON.stringify({
          rootCause: 'The cart service started answering 503 (model).',
          userImpact: 'Shoppers could not check out.',
          codeFix: 'Restart the cart database.',
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
      });
    });
    await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
    svc = await startTestService({
      RCA_MODEL_URL: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`,
      RCA_MODEL: 'tiny-model',
      RCA_MODEL_API_KEY: 'model-key-123',
    });
  }, 90_000);
  afterAll(async () => {
    await svc?.stop();
    await new Promise((r) => model?.close(r));
  });

  const failure = async (name: string) => {
    const check = (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name, request: { url: 'https://cart.example.test/' } } })).body;
    const at = Date.now() - 60_000;
    const result = (failed: boolean, i: number) => ({
      id: randomUUID(),
      checkId: check.id,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(at + i * 1000).toISOString(),
      stoppedAt: new Date(at + i * 1000 + 50).toISOString(),
      hasFailures: failed,
      responseTime: 50,
      apiCheckResult: {
        request: { method: 'GET', url: 'https://cart.example.test/' },
        response: { status: failed ? 503 : 200, headers: { 'set-cookie': 'session=very-secret-cookie' }, body: '{}' },
        assertions: [],
        ...(failed ? { errors: [{ message: 'Status code 503' }] } : {}),
      },
    });
    expect((await svc.call('POST', '/v1/check-results', { body: { results: [result(false, 0), result(true, 1)] } })).status).toBe(202);
    const group = (
      await waitFor(
        () => svc.call('GET', `/v1/error-groups/checks/${check.id}`),
        (r) => r.body?.length === 1,
      )
    ).body[0];
    const id = (await svc.call('POST', `/v1/root-cause-analyses/error-groups/${group.id}`)).body.id;
    return (
      await waitFor(
        () => svc.call('GET', `/v1/root-cause-analyses/${id}`),
        (r) => r.status === 200,
      )
    ).body;
  };

  it('lets the model write the prose; the class and the evidence stay the rules’, and no secret reaches it', async () => {
    const rca = await failure('with a model');
    expect(rca).toMatchObject({ provider: 'local+model', model: 'evidence-rules/1 + tiny-model' });
    expect(rca.analysis.rootCause).toBe('The cart service started answering 503 (model).');
    expect(rca.analysis.codeFix).toBe('Restart the cart database.');
    expect(rca.analysis.classification).toBe('APPLICATION ERROR');
    expect(rca.analysis.evidence.length).toBeGreaterThan(0);
    const sent = asked.at(-1)!;
    expect(sent.auth).toBe('Bearer model-key-123');
    expect(sent.body.model).toBe('tiny-model');
    const prompt = sent.body.messages.map((m) => m.content).join('\n');
    expect(prompt).toContain('503');
    expect(prompt).not.toContain('very-secret-cookie');
  });

  it('keeps the rules’ analysis when the model fails', async () => {
    failing = true;
    try {
      const rca = await failure('model down');
      expect(rca.provider).toBe('local');
      expect(rca.analysis.rootCause).toContain('answered 503');
    } finally {
      failing = false;
    }
  });
});
