import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver, startSmtpSink } from '../../test/support/receivers.js';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { sweepHeartbeats } from '../heartbeats/pings.js';
import { tickStates } from '../state/apply.js';
import { checkIncidentHooks } from '../status-pages/incident-repository.js';
import { DeliveryQueue } from './deliveries.js';

/**
 * The loop end to end, with real receivers: results in → state → alert → delivery to a local HTTP server
 * (webhook, Slack, SMS provider) and a local SMTP server.
 */
describe('alerts delivered through the alert channels', () => {
  let svc: TestService;
  let http: Awaited<ReturnType<typeof startHttpReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

  beforeAll(async () => {
    http = await startHttpReceiver();
    smtp = await startSmtpSink();
    svc = await startTestService({
      STATE_SWEEP_INTERVAL_MS: '100',
      ALERT_RETRY_BASE_MS: '50',
      ALERT_DELIVERY_ATTEMPTS: '4',
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: 'monitor@example.test',
      SMS_PROVIDER_URL: `${http.url}/sms`,
      SMS_PROVIDER_TOKEN: 'sms-token',
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await http?.close();
    await smtp?.close();
  });

  const post = async (path: string, body: unknown) => {
    const res = await svc.call('POST', path, { body });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  /** A check with only the channels given subscribed (no auto-assignment). */
  const apiCheck = (name: string, extra: Record<string, unknown> = {}) =>
    post('/v1/checks/api?autoAssignAlerts=false', { name, request: { url: 'https://shop.example.test' }, ...extra });
  const webhook = async (path: string, config: Record<string, unknown> = {}, flags: Record<string, unknown> = {}) =>
    post('/v1/alert-channels', { type: 'WEBHOOK', config: { name: path, url: `${http.url}${path}`, ...config }, ...flags });
  const subscribe = (channelId: number, target: { checkId?: string; groupId?: number }) =>
    svc.call('PUT', `/v1/alert-channels/${channelId}/subscriptions`, { body: { ...target, activated: true } });
  let clock = Date.now() - 30 * 60_000;
  /** Results a minute apart, in order. */
  const report = async (checkId: string, outcomes: ('pass' | 'fail' | 'degraded')[], extra: Record<string, unknown> = {}) => {
    const results = outcomes.map((o) => {
      clock += 60_000;
      return {
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: 'eu-west-1',
        startedAt: new Date(clock).toISOString(),
        stoppedAt: new Date(clock + 300).toISOString(),
        hasFailures: o === 'fail',
        isDegraded: o === 'degraded',
        responseTime: 300,
        statusCode: o === 'fail' ? 503 : 200,
        ...extra,
      };
    });
    await post('/v1/check-results', { results });
    return results;
  };
  const alertsOf = async (checkId: string) =>
    (await svc.call('GET', `/v1/check-alerts/${checkId}?limit=100`)).body as {
      alertType: string;
      silenced: boolean;
      muted: boolean;
      incidentId: string | null;
      id: string;
    }[];
  const waitAlerts = (checkId: string, n: number) =>
    waitFor(
      () => alertsOf(checkId),
      (a) => a.length >= n,
    );
  const notifications = async (q = '') =>
    (await svc.call('GET', `/v1/alert-notifications?limit=100${q}`)).body as {
      status: string;
      alertChannelId: number;
      checkAlertId: string;
      attempts: { at: string; ok: boolean }[];
      notificationResult: string;
      timestamp: string | null;
    }[];

  it('a failing result reaches a webhook with the payload and a valid signature, then recovery', async () => {
    const channel = await webhook('/hook-a');
    const check = await apiCheck('Checkout API', { tags: ['shop'] });
    await subscribe(channel.id, { checkId: check.id });
    const [failing] = await report(check.id, ['fail']);
    const [hit] = await waitFor(
      async () => http.to('/hook-a'),
      (r) => r.length >= 1,
    );
    expect(hit.method).toBe('POST');
    const body = JSON.parse(hit.body);
    expect(body).toMatchObject({
      alertType: 'ALERT_FAILURE',
      title: 'Checkout API is failing',
      check: { id: check.id, name: 'Checkout API', checkType: 'API', tags: ['shop'] },
      run: { id: failing.id, location: 'eu-west-1', responseTime: 300, statusCode: 503 },
    });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hit.headers['x-monitoring-signature']))!;
    expect(createHmac('sha256', channel.signingSecret).update(`${t}.${hit.body}`).digest('hex')).toBe(v1);
    await report(check.id, ['pass']);
    const both = await waitFor(
      async () => http.to('/hook-a'),
      (r) => r.length >= 2,
    );
    expect(JSON.parse(both[1].body).alertType).toBe('ALERT_RECOVERY');
    expect((await alertsOf(check.id)).map((a) => a.alertType)).toEqual(['ALERT_RECOVERY', 'ALERT_FAILURE']);
    const sent = await waitFor(
      () => notifications(`&alertChannelId=${channel.id}`),
      (n) => n.every((x) => x.status === 'SUCCESS') && n.length === 2,
    );
    expect(sent[0]).toMatchObject({ status: 'SUCCESS', notificationResult: 'HTTP 200 {"ok":true}' });
    // Filtered by check: this check's deliveries only.
    const other = await apiCheck('Other API');
    expect((await notifications(`&checkId=${check.id}`)).map((x) => x.checkAlertId).sort()).toEqual(sent.map((x) => x.checkAlertId).sort());
    expect(await notifications(`&checkId=${other.id}`)).toEqual([]);
  });

  it('webhooks follow their method, headers, query parameters and template', async () => {
    const channel = await webhook('/hook-tpl', {
      method: 'PUT',
      headers: [{ key: 'X-Team', value: 'payments' }],
      queryParameters: [{ key: 'check', value: '{{CHECK_NAME}}' }],
      template: '{"text": "{{ALERT_TITLE}} at {{RUN_LOCATION}}", "id": "{{CHECK_ID}}"}',
    });
    const check = await apiCheck('Quote "API"');
    await subscribe(channel.id, { checkId: check.id });
    await report(check.id, ['fail']);
    const [hit] = await waitFor(
      async () => http.to('/hook-tpl'),
      (r) => r.length >= 1,
    );
    expect(hit.method).toBe('PUT');
    expect(hit.headers['x-team']).toBe('payments');
    expect(new URL(hit.path, http.url).searchParams.get('check')).toBe('Quote "API"');
    expect(JSON.parse(hit.body)).toEqual({ text: 'Quote "API" is failing at eu-west-1', id: check.id });
  });

  it('Slack, email and SMS get the alert in their own form', async () => {
    const slack = await post('/v1/alert-channels', { type: 'SLACK', config: { url: `${http.url}/slack`, channel: '#ops' } });
    const email = await post('/v1/alert-channels', { type: 'EMAIL', config: { address: 'oncall@example.test' } });
    const sms = await post('/v1/alert-channels', { type: 'SMS', config: { number: '+15555550100', name: 'On call' } });
    const check = await apiCheck('Payments');
    for (const c of [slack, email, sms]) await subscribe(c.id, { checkId: check.id });
    await report(check.id, ['fail']);
    const [slackHit] = await waitFor(
      async () => http.to('/slack'),
      (r) => r.length >= 1,
    );
    expect(JSON.parse(slackHit.body)).toMatchObject({ channel: '#ops', text: 'Payments is failing', attachments: [{ color: 'danger' }] });
    const [smsHit] = await waitFor(
      async () => http.to('/sms'),
      (r) => r.length >= 1,
    );
    expect(smsHit.headers.authorization).toBe('Bearer sms-token');
    expect(JSON.parse(smsHit.body)).toMatchObject({ to: '+15555550100', name: 'On call' });
    expect(JSON.parse(smsHit.body).text).toContain('Payments is failing');
    const [mail] = await waitFor(
      async () => smtp.mails.filter((m) => m.subject?.includes('Payments')),
      (m) => m.length >= 1,
    );
    expect(mail.subject).toBe('[ALERT_FAILURE] Payments is failing');
    expect(mail.from?.text).toBe('monitor@example.test');
    expect(mail.text).toContain(`Check: Payments (API, ${check.id})`);
  });

  it('alerts after failedRunThreshold failures, reminds while failing, and sends only what a channel takes', async () => {
    const channel = await webhook('/hook-threshold', {}, { sendRecovery: false });
    const check = await apiCheck('Threshold', {
      useGlobalAlertSettings: false,
      alertSettings: { escalationType: 'RUN_BASED', runBasedEscalation: { failedRunThreshold: 3 }, reminders: { amount: 2, interval: 1 } },
    });
    await subscribe(channel.id, { checkId: check.id });
    await report(check.id, ['fail', 'fail']);
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200,
    );
    expect(await alertsOf(check.id)).toEqual([]);
    await report(check.id, ['fail']);
    await waitAlerts(check.id, 1);
    // Reminders fall due with time: sweeps a minute, two and three minutes on (the sweeper's own step, run early).
    const deliveries = new DeliveryQueue(svc.deps.queues, svc.deps.config.alerts);
    const notified = [];
    for (const minutes of [1, 2, 3]) notified.push(...(await tickStates(svc.deps.sql, Date.now() + minutes * 60_000 + 1000, checkIncidentHooks)).notifications);
    expect(notified).toHaveLength(2);
    await deliveries.enqueue(notified);
    expect((await alertsOf(check.id)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE']);
    await report(check.id, ['pass']);
    await waitAlerts(check.id, 4);
    await waitFor(
      async () => http.to('/hook-threshold'),
      (r) => r.length >= 3,
    );
    await new Promise((r) => setTimeout(r, 500));
    // sendRecovery false: three deliveries (failure, two reminders), no recovery.
    expect(http.to('/hook-threshold').map((r) => JSON.parse(r.body).alertType)).toEqual(['ALERT_FAILURE', 'ALERT_FAILURE_REMAIN', 'ALERT_FAILURE_REMAIN']);
  });

  it('muted checks record alerts and send nothing; shouldFail inverts what fails', async () => {
    const channel = await webhook('/hook-muted');
    const muted = await apiCheck('Muted', { muted: true });
    const inverted = await apiCheck('Expect an error', { shouldFail: true });
    await subscribe(channel.id, { checkId: muted.id });
    await subscribe(channel.id, { checkId: inverted.id });
    await report(muted.id, ['fail']);
    const [alert] = await waitAlerts(muted.id, 1);
    expect(alert).toMatchObject({ alertType: 'ALERT_FAILURE', muted: true, silenced: false });
    await report(inverted.id, ['fail']);
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${inverted.id}`),
      (r) => r.status === 200,
    );
    expect(await alertsOf(inverted.id)).toEqual([]);
    await report(inverted.id, ['pass']);
    await waitAlerts(inverted.id, 1);
    const hits = await waitFor(
      async () => http.to('/hook-muted'),
      (r) => r.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(http.to('/hook-muted').map((r) => JSON.parse(r.body).check.name)).toEqual(['Expect an error']);
    expect(hits[0]).toBeDefined();
  });

  it("a check changed between two batches has its next runs judged by what it is now (state's kept checks are forgotten)", async () => {
    const check = await apiCheck('Expected to pass, then to fail');
    await report(check.id, ['pass']);
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200,
    );
    expect(await alertsOf(check.id)).toEqual([]);
    // Kept since that batch (state read the check then); the change is announced a few milliseconds after its commit.
    expect((await svc.call('PUT', `/v1/checks/api/${check.id}`, { body: { shouldFail: true } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    // A pass of a check that should fail is a failure: judged with the check as it was, it would raise nothing.
    await report(check.id, ['pass']);
    const [alert] = await waitAlerts(check.id, 1);
    expect(alert).toMatchObject({ alertType: 'ALERT_FAILURE' });
  });

  it('a group subscription covers the checks in the group', async () => {
    const channel = await webhook('/hook-group');
    const group = await post('/v1/check-groups?autoAssignAlerts=false', { name: 'storefront' });
    await subscribe(channel.id, { groupId: group.id });
    const check = await apiCheck('Grouped', { groupId: group.id });
    await report(check.id, ['fail']);
    const [hit] = await waitFor(
      async () => http.to('/hook-group'),
      (r) => r.length >= 1,
    );
    expect(JSON.parse(hit.body).check.id).toBe(check.id);
  });

  it('a receiver that fails twice then succeeds gets the alert once, after three attempts on record', async () => {
    const channel = await webhook('/hook-flaky');
    const check = await apiCheck('Flaky receiver');
    await subscribe(channel.id, { checkId: check.id });
    http.failNext('/hook-flaky', 2);
    await report(check.id, ['fail']);
    const [n] = await waitFor(
      () => notifications(`&alertChannelId=${channel.id}`),
      (x) => x[0]?.status === 'SUCCESS',
    );
    expect(n.attempts).toHaveLength(3);
    expect(n.attempts.map((a) => a.ok)).toEqual([false, false, true]);
    expect(n.timestamp).toBe(n.attempts[2].at);
    expect(http.to('/hook-flaky')).toHaveLength(3);
    expect(http.to('/hook-flaky').filter((r) => r.body.includes('ALERT_FAILURE'))).toHaveLength(3);
  });

  it('a channel that keeps failing is visible: FAILURE deliveries and a FAILING health', async () => {
    const channel = await webhook('/hook-down');
    const check = await apiCheck('Down receiver');
    await subscribe(channel.id, { checkId: check.id });
    http.alwaysFail('/hook-down');
    await report(check.id, ['fail']);
    const [n] = await waitFor(
      () => notifications(`&alertChannelId=${channel.id}`),
      (x) => x[0]?.status === 'FAILURE',
      30_000,
    );
    expect(n.attempts).toHaveLength(4);
    expect(n.notificationResult).toBe('HTTP 500 receiver says no');
    // When it was last tried: what a reader of the delivery log needs to see for a failed one.
    expect(n.timestamp).toBe(n.attempts[3].at);
    expect((await notifications('&hasFailures=true')).map((x) => x.alertChannelId)).toContain(channel.id);
    const health = (await svc.call('GET', `/v1/alert-channels/${channel.id}`)).body.health;
    expect(health).toMatchObject({ status: 'FAILING', consecutiveFailures: 1, lastError: 'HTTP 500 receiver says no' });
  });

  it('triggerIncident opens an incident with the failure and resolves it with the recovery', async () => {
    const check = await apiCheck('Incident', {
      triggerIncident: { serviceId: 'svc-1', name: 'Checkout down', description: 'd', severity: 'MAJOR', notifySubscribers: false },
    });
    await report(check.id, ['fail']);
    const [failure] = await waitAlerts(check.id, 1);
    expect(failure.incidentId).toEqual(expect.any(String));
    const [open] = await svc.deps.sql`select * from incidents where id = ${failure.incidentId}`;
    expect(open).toMatchObject({ service_id: 'svc-1', name: 'Checkout down', severity: 'MAJOR', resolved_at: null });
    await report(check.id, ['pass']);
    const [recovery] = await waitAlerts(check.id, 2);
    expect(recovery).toMatchObject({ alertType: 'ALERT_RECOVERY', incidentId: failure.incidentId });
    const [closed] = await svc.deps.sql`select resolved_at from incidents where id = ${failure.incidentId}`;
    expect(closed.resolved_at).not.toBeNull();

    // An operator tailing the log at the default level reads each of these, with its ids and an ISO time; what went
    // wrong at warn, so LOG_LEVEL=warn is the list of it.
    const lines = svc.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.checkId === check.id);
    const said = lines.map((l) => [l.event, l.msg, l.level]);
    expect(said).toEqual([
      ['check.state', 'check failing', 40],
      ['incident.opened', 'incident opened', 40],
      ['check.state', 'check recovered', 30],
      ['incident.resolved', 'incident resolved', 30],
    ]);
    expect(lines[0]).toMatchObject({
      level: 40,
      check: 'Incident',
      alertType: 'ALERT_FAILURE',
      alertId: failure.id,
      notifications: 0,
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(lines[1]).toMatchObject({ incidentId: failure.incidentId });
  });

  it('a maintenance window silences alerts (recorded as silenced) and pauses checks (runs flagged)', async () => {
    const channel = await webhook('/hook-maint');
    const silenced = await apiCheck('Silenced', { tags: ['db'] });
    const paused = await apiCheck('Paused', { tags: ['batch'] });
    await subscribe(channel.id, { checkId: silenced.id });
    await subscribe(channel.id, { checkId: paused.id });
    const day = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
    await post('/v1/maintenance-windows', { name: 'db work', startsAt: day(-1), endsAt: day(1), silenceAlertsTags: ['db'] });
    await post('/v1/maintenance-windows', { name: 'batch pause', startsAt: day(-1), endsAt: day(1), tags: ['batch'], pauseAllChecks: true });
    await report(silenced.id, ['fail']);
    const [s] = await waitAlerts(silenced.id, 1);
    expect(s).toMatchObject({ alertType: 'ALERT_FAILURE', silenced: true });
    const [p] = await report(paused.id, ['fail']);
    const [a] = await waitAlerts(paused.id, 1);
    expect(a.silenced).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(http.to('/hook-maint')).toEqual([]);
    const [flag] = await svc.deps.store.query<{ m: boolean }>('SELECT in_maintenance AS m FROM check_results WHERE result_id = {id:UUID}', { id: p.id });
    expect(Boolean(flag.m)).toBe(true);
  });
});

describe('heartbeats', () => {
  let svc: TestService;
  let http: Awaited<ReturnType<typeof startHttpReceiver>>;
  beforeAll(async () => {
    http = await startHttpReceiver();
    svc = await startTestService({ STATE_SWEEP_INTERVAL_MS: '100', ALERT_RETRY_BASE_MS: '50' });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await http?.close();
  });

  const heartbeat = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await svc.call('POST', '/v1/checks/heartbeat?autoAssignAlerts=false', {
      body: { name, heartbeat: { period: 1, periodUnit: 'seconds', grace: 0, graceUnit: 'seconds' }, ...extra },
    });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const results = (id: string) => svc.call('GET', `/v1/check-results/${id}?limit=100`).then((r) => r.body as { hasFailures: boolean; runLocation: string }[]);

  it('a missed ping records a failed run and alerts; a ping records a passing run and recovers', async () => {
    const channel = (await svc.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', config: { name: 'hb', url: `${http.url}/hb` } } })).body;
    const check = await heartbeat('nightly backup');
    await svc.call('PUT', `/v1/alert-channels/${channel.id}/subscriptions`, { body: { checkId: check.id } });
    const missed = await waitFor(
      () => results(check.id),
      (r) => r.length >= 1,
    );
    expect(missed[0]).toMatchObject({ hasFailures: true, runLocation: 'heartbeat' });
    const [hit] = await waitFor(
      async () => http.to('/hb'),
      (r) => r.length >= 1,
    );
    expect(JSON.parse(hit.body)).toMatchObject({ alertType: 'ALERT_FAILURE', check: { id: check.id, checkType: 'HEARTBEAT' } });
    // Ping by the URL the check shows, without a key.
    const ping = await fetch(check.heartbeat.pingUrl, { method: 'POST' });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toEqual({ status: 'ok', checkId: check.id });
    await waitFor(
      async () => http.to('/hb'),
      (r) => r.some((x) => JSON.parse(x.body).alertType === 'ALERT_RECOVERY'),
    );
    const all = await results(check.id);
    expect(all.some((r) => !r.hasFailures)).toBe(true);
  });

  it('pings with /fail record a failure; HEAD and GET ping too; an unknown token is a 404', async () => {
    const check = await heartbeat('cron', { activated: false });
    const token = check.heartbeat.pingToken;
    expect((await svc.call('GET', `/ping/${token}/fail`, { key: null })).status).toBe(200);
    expect((await fetch(`${svc.url}/ping/${token}`, { method: 'HEAD' })).status).toBe(200);
    const got = await waitFor(
      () => results(check.id),
      (r) => r.length >= 2,
    );
    expect(got.map((r) => r.hasFailures).sort()).toEqual([false, true]);
    expect((await svc.call('GET', `/ping/${randomUUID()}`, { key: null })).status).toBe(404);
    expect((await svc.call('GET', '/ping/not-a-token', { key: null })).status).toBe(400);
    // A deactivated check records pings but no misses: only the two pings after several periods.
    await new Promise((r) => setTimeout(r, 2500));
    expect(await results(check.id)).toHaveLength(2);
  });

  it('limits pings per token, every way of pinging and either letter case together, and other tokens go on', async () => {
    const check = await heartbeat('chatty', { activated: false });
    const token: string = check.heartbeat.pingToken;
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) {
      const spelled = i % 2 ? token.toUpperCase() : token;
      const method = i % 4 < 2 ? 'GET' : 'POST';
      statuses.push((await svc.call(method, `/ping/${spelled}${i % 3 === 0 ? '/fail' : ''}`, { key: null })).status);
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    const limited = await svc.call('GET', `/ping/${token.toUpperCase()}`, { key: null });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    const other = (await heartbeat('quiet', { activated: false })).heartbeat.pingToken;
    expect((await svc.call('GET', `/ping/${other}`, { key: null })).status).toBe(200);
  });

  it('is not evaluated while a maintenance window pauses it', async () => {
    const day = (d: number) => new Date(Date.now() + d * 86_400_000).toISOString().slice(0, 10);
    await svc.call('POST', '/v1/maintenance-windows', {
      body: { name: 'pause hb', startsAt: day(-1), endsAt: day(1), tags: ['paused-hb'], pauseAllChecks: true },
    });
    const check = await heartbeat('paused', { tags: ['paused-hb'] });
    await new Promise((r) => setTimeout(r, 2000));
    expect(await results(check.id)).toEqual([]);
  });

  it('refuses a period or grace over 365 days, whatever the unit, creating nothing', async () => {
    const before = (await svc.deps.sql`select count(*)::int as n from checks`)[0].n;
    for (const [hb, field] of [
      [{ period: 366, periodUnit: 'days', grace: 0, graceUnit: 'seconds' }, 'body.heartbeat.period'],
      [{ period: 1, periodUnit: 'hours', grace: 9000, graceUnit: 'hours' }, 'body.heartbeat.grace'],
    ] as const) {
      const res = await svc.call('POST', '/v1/checks/heartbeat', { body: { name: 'x', heartbeat: hb } });
      expect(res.status).toBe(400);
      expect(res.body.attributes.errors).toContainEqual(expect.objectContaining({ field, rule: 'range' }));
    }
    expect((await svc.deps.sql`select count(*)::int as n from checks`)[0].n).toBe(before);
  });

  it('two sweepers evaluating the same missed deadline record one run and one alert', async () => {
    const check = await heartbeat('contested', { heartbeat: { period: 1, periodUnit: 'hours', grace: 0, graceUnit: 'seconds' } });
    const past = new Date(Date.now() - 5_000);
    await svc.deps.sql`update heartbeat_deadlines set next_deadline_at = ${past} where check_id = ${check.id}`;
    const now = Date.now();
    const recorded = await Promise.all([sweepHeartbeats(svc.deps.sql, svc.deps.ingest, now), sweepHeartbeats(svc.deps.sql, svc.deps.ingest, now)]);
    await waitFor(
      () => results(check.id),
      (r) => r.length >= 1,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(await results(check.id)).toHaveLength(1);
    expect((await svc.call('GET', `/v1/check-alerts/${check.id}`)).body).toHaveLength(1);
    expect(recorded.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(0);
    const [d] = await svc.deps.sql`select next_deadline_at from heartbeat_deadlines where check_id = ${check.id}`;
    expect(d.next_deadline_at.getTime()).toBeGreaterThan(now);
  });
});
