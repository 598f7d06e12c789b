import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpReceiver } from '../../test/support/receivers.js';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startHttpTarget } from '../../test/support/targets.js';
import { phaseOf } from '../model/schedule.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * No data is never up (docs/analytics.md): a check whose runs stopped reads as no data on every surface, and its
 * channels hear once that it stopped and once that it runs again. The runs here are posted as a runner would have
 * posted them (the first 12 of the last 24 hours), then nothing: the runner is away.
 */
describe('no data', () => {
  let svc: TestService;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  beforeAll(async () => {
    receiver = await startHttpReceiver();
    svc = await startTestService({
      NO_DATA_ALERTS: 'true',
      NO_DATA_SWEEP_SECONDS: '1',
      STATE_SWEEP_INTERVAL_MS: '200',
      ALERT_RETRY_BASE_MS: '50',
      STATUS_PAGE_CACHE_SECONDS: '0',
      METRICS_TOKEN: 'operator-metrics-token',
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await receiver?.close();
  });

  const post = async (path: string, body: unknown) => {
    const res = await svc.call('POST', path, { body });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  /** Makes the check look created and activated `ms` ago. */
  const backdate = async (checkId: string, at: number) => {
    await svc.deps.sql`update checks set created_at = ${new Date(at)} where id = ${checkId}`;
    await svc.deps.sql`update check_activity set from_at = ${new Date(at)} where check_id = ${checkId}`;
  };
  const land = async (checkId: string, runs: { at: number; location?: string }[]) => {
    await post('/v1/check-results', {
      results: runs.map((r) => ({
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: r.location ?? 'eu-west-1',
        startedAt: new Date(r.at).toISOString(),
        stoppedAt: new Date(r.at + 120).toISOString(),
        hasFailures: false,
        responseTime: 120,
        statusCode: 200,
      })),
    });
  };
  /** Independently: every slot (k × period + phase) from the activation's grace to the grace before now, one by one. */
  const slotsBetween = (from: number, to: number, period: number, phase: number) => {
    let n = 0;
    for (let t = Math.ceil((from - phase) / period) * period + phase; t < to; t += period) n++;
    return n;
  };

  it('a check that ran 12 hours and then stopped reads as no data everywhere, and its channel hears it stopped, then that it runs again', async () => {
    const service = await post('/v1/status-pages/services', { name: 'Checkout' });
    const check = await post('/v1/checks/api?autoAssignAlerts=false', {
      name: 'Cart API',
      frequency: 10,
      locations: ['eu-west-1'],
      request: { url: 'http://127.0.0.1:9/cart' },
      triggerIncident: { serviceId: service.id, name: 'Checkout is down', description: 'Carts fail', severity: 'MAJOR', notifySubscribers: false },
    });
    const channel = await post('/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'ops', url: `${receiver.url}/ops` } });
    await svc.call('PUT', `/v1/alert-channels/${channel.id}/subscriptions`, { body: { checkId: check.id, activated: true } });
    await post('/v1/status-pages', { name: 'Shop status', url: 'shop-no-data', cards: [{ name: 'Shop', services: [{ id: service.id }] }] });
    await svc.call('PATCH', '/v1/account', { body: { badgesEnabled: true } });
    await post('/v1/dashboards', { header: 'Shop', customUrl: 'shop-no-data' });

    const now = Date.now();
    const period = 10 * MINUTE;
    const phase = phaseOf(check.id, period);
    const activated = now - 24 * HOUR;
    // A run in every slot of the first 12 hours, none since (landed before the activation is moved back, so that no
    // sweep sees a day-old check without runs in between).
    const slots: number[] = [];
    for (let t = Math.ceil((activated + MINUTE - phase) / period) * period + phase; t < activated + 12 * HOUR; t += period) slots.push(t);
    await land(
      check.id,
      slots.map((at) => ({ at })),
    );
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200 && r.body.lastRunAt === new Date(slots[slots.length - 1]!).toISOString(),
    );
    await backdate(check.id, activated);

    // The check's status: no data since its last run, not "passing".
    const status = (await svc.call('GET', `/v1/check-statuses/${check.id}`)).body;
    expect(status).toMatchObject({
      hasFailures: false,
      runState: 'NO_DATA',
      noDataSince: new Date(slots[slots.length - 1]!).toISOString(),
      noDataLocations: ['eu-west-1'],
    });
    expect((await svc.call('GET', '/v1/check-statuses')).body.find((s: { checkId: string }) => s.checkId === check.id).runState).toBe('NO_DATA');

    // /v1/reporting: the anchor's successRatio stays over the runs made; ours say half the expected runs are missing.
    const reporting = await svc.call('GET', '/v1/reporting?quickRange=last24Hrs');
    expect(reporting.status).toBe(200);
    const item = reporting.body.find((i: { checkId: string }) => i.checkId === check.id);
    const expected = slotsBetween(activated + MINUTE, Date.now() - MINUTE, period, phase);
    expect(item.aggregate.successRatio).toBe(100);
    expect(item.runs).toBe(slots.length);
    // The window ends when the request was served: the oracle's count may include one slot more or less at the edge.
    expect(Math.abs(item.expectedRuns - expected)).toBeLessThanOrEqual(1);
    expect(item.aggregate.expectedRuns).toBe(item.expectedRuns);
    expect(item.noDataRatio).toBeCloseTo((100 * (item.expectedRuns - slots.length)) / item.expectedRuns, 3);
    expect(item.noDataRatio).toBeGreaterThan(48);
    expect(item.noDataRatio).toBeLessThan(52);

    // The console's strip: the silent hours' buckets expected runs and got none.
    const strip = (await svc.call('POST', '/v1/analytics/checks/timeline?hours=24&buckets=24', { body: { checkIds: [check.id] } })).body[0];
    const silent = strip.expected.map((e: number, b: number) => (e > 0 && strip.runs[b] === 0 ? 1 : 0)).reduce((a: number, b: number) => a + b, 0);
    expect(silent).toBeGreaterThanOrEqual(11);
    expect(strip.total.noDataRatio).toBeGreaterThan(45);

    // The status page: the service is not monitored right now, and today's bar says what part had no data.
    const page = await (await fetch(`${svc.url}/status/shop-no-data`)).text();
    expect(page).toContain('No data: not monitored right now');
    expect(page).toMatch(/no data for [\d.]+ % of the expected runs|no data: no runs/);

    // The badge, the dashboard and the Prometheus export.
    const badge = await (await fetch(`${svc.url}/v1/badges/checks/${check.id}`)).text();
    expect(badge).toContain('no data');
    const dashboard = (await (await fetch(`${svc.url}/dashboards/shop-no-data/data.json`)).json()) as {
      checks: { id: string; status: string; windows: Record<string, { noData: number | null }> }[];
    };
    const tile = dashboard.checks.find((c) => c.id === check.id)!;
    expect(tile.status).toBe('unknown');
    expect(tile.windows['24h']!.noData).toBeGreaterThan(45);
    const prometheus = (await svc.call('GET', '/v1/prometheus/metrics')).text;
    expect(prometheus).toMatch(new RegExp(`monitoring_check_no_data\\{check_id="${check.id}"[^}]*\\} 1`));
    expect(prometheus).not.toMatch(new RegExp(`monitoring_check_status\\{check_id="${check.id}"`));

    // The sweep raised one "not running" alert, delivered to the channel and recorded like any delivery.
    await waitFor(
      async () => receiver.to('/ops'),
      (r) => r.length >= 1,
      20_000,
    );
    const stopped = JSON.parse(receiver.to('/ops')[0]!.body);
    expect(stopped).toMatchObject({ alertType: 'ALERT_NO_DATA', check: { id: check.id } });
    expect(stopped.title).toBe(`Cart API is not running: no results since ${new Date(slots[slots.length - 1]!).toISOString()}`);
    const notifications = await waitFor(
      () => svc.call('GET', '/v1/alert-notifications?limit=100'),
      (r) => r.body.some((n: { alertType?: string; status: string }) => n.status === 'SUCCESS'),
    );
    expect(notifications.status).toBe(200);
    const alerts = (await svc.call('GET', `/v1/check-alerts/${check.id}`)).body;
    expect(alerts.map((a: { alertType: string }) => a.alertType)).toEqual(['ALERT_NO_DATA']);
    // No incident: a check that stopped says nothing of the service it watches.
    expect((await svc.call('GET', '/v1/status-pages/incidents')).body.entries ?? []).toEqual([]);
    // The service's own health counts it.
    const ready = (await svc.call('GET', '/ready')).body;
    expect(ready.checksNotRunning).toBe(1);
    expect(
      (await (await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer operator-metrics-token' } })).text()).match(
        /^checks_not_running (\d+)$/m,
      )?.[1],
    ).toBe('1');

    // Several sweeps later, still one message; then the runner is back.
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.to('/ops')).toHaveLength(1);
    await land(check.id, [{ at: Date.now() - 1000 }]);
    await waitFor(
      async () => receiver.to('/ops'),
      (r) => r.length >= 2,
      20_000,
    );
    expect(JSON.parse(receiver.to('/ops')[1]!.body)).toMatchObject({ alertType: 'ALERT_NO_DATA_RECOVERY', title: 'Cart API is running again' });
    expect((await svc.call('GET', `/v1/check-statuses/${check.id}`)).body).toMatchObject({ runState: 'RUNNING', noDataLocations: [], noDataSince: null });
    await waitFor(
      () => svc.call('GET', '/ready'),
      (r) => r.body.checksNotRunning === 0,
    );
  }, 90_000);

  it('a check on a private location without an agent is no data in that location; paused and maintenance are said as such', async () => {
    await post('/v1/private-locations', { name: 'Office', slugName: 'office' });
    const check = await post('/v1/checks/api?autoAssignAlerts=false', {
      name: 'Intranet',
      frequency: 1,
      locations: ['eu-west-1'],
      privateLocations: ['office'],
      runParallel: true,
      request: { url: 'http://127.0.0.1:9/intranet' },
    });
    // The public location runs; the office has had no agent for the hour (the runs land before the activation is
    // moved back an hour, so that no sweep sees the check without runs in between).
    await land(
      check.id,
      [5, 4, 3, 2, 1].map((m) => ({ at: Date.now() - m * MINUTE })),
    );
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200,
    );
    await backdate(check.id, Date.now() - HOUR);
    const status = await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200 && r.body.noDataLocations?.length === 1,
    );
    expect(status.body).toMatchObject({ runState: 'RUNNING', noDataLocations: ['office'] });
    const alerts = await waitFor(
      () => svc.call('GET', `/v1/check-alerts/${check.id}`),
      (r) => r.body.length === 1,
      20_000,
    );
    expect(alerts.body[0]).toMatchObject({ alertType: 'ALERT_NO_DATA', runLocation: 'office' });
    // Each location's run per slot (runParallel): two expected a minute, one made.
    const reporting = (await svc.call('GET', '/v1/reporting?quickRange=last24Hrs')).body.find((i: { checkId: string }) => i.checkId === check.id);
    expect(reporting.noDataRatio).toBeGreaterThan(50);

    // A maintenance window that pauses it: MAINTENANCE, not no data.
    const window = await post('/v1/maintenance-windows', {
      name: 'Office move',
      startsAt: new Date(Date.now() - MINUTE).toISOString(),
      endsAt: new Date(Date.now() + HOUR).toISOString(),
      pauseAllChecks: true,
    });
    expect((await svc.call('GET', `/v1/check-statuses/${check.id}`)).body.runState).toBe('MAINTENANCE');
    await svc.call('DELETE', `/v1/maintenance-windows/${window.id}`);
    // Deactivated: PAUSED, and its gap goes without a "running again" message.
    expect((await svc.call('PUT', `/v1/checks/api/${check.id}`, { body: { activated: false } })).status).toBe(200);
    expect((await svc.call('GET', `/v1/check-statuses/${check.id}`)).body).toMatchObject({ runState: 'PAUSED', noDataLocations: [] });
    await waitFor(
      async () => (await svc.deps.sql`select 1 from check_gaps where check_id = ${check.id}`).length,
      (n) => n === 0,
      20_000,
    );
    expect((await svc.call('GET', `/v1/check-alerts/${check.id}`)).body).toHaveLength(1);
  }, 90_000);
});

/** A queue that stops moving: the scheduler and runner run for real, then the location's run queue is paused. */
describe('no data: a paused queue', () => {
  let svc: TestService;
  let target: HttpTarget;
  let receiver: Awaited<ReturnType<typeof startHttpReceiver>>;
  beforeAll(async () => {
    target = await startHttpTarget();
    receiver = await startHttpReceiver();
    svc = await startTestService({
      RUNNER: 'on',
      RUNNER_LOCATIONS: 'eu-west-1',
      SCHEDULER: 'on',
      SCHEDULER_TICK_MS: '100',
      SCHEDULER_RECONCILE_MS: '200',
      NO_DATA_ALERTS: 'true',
      NO_DATA_SWEEP_SECONDS: '1',
      NO_DATA_GRACE_SECONDS: '2',
      STATE_SWEEP_INTERVAL_MS: '200',
      ALERT_RETRY_BASE_MS: '50',
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([target?.close(), receiver?.close()]);
  });

  it('alerts within its periods when its runs stop coming, and again when the queue moves', async () => {
    const check = (
      await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
        body: { name: 'Every 10 s', frequency: 0, frequencyOffset: 10, locations: ['eu-west-1'], request: { url: `${target.url}/ok` } },
      })
    ).body;
    const channel = (await svc.call('POST', '/v1/alert-channels', { body: { type: 'WEBHOOK', config: { name: 'ops', url: `${receiver.url}/ops` } } })).body;
    await svc.call('PUT', `/v1/alert-channels/${channel.id}/subscriptions`, { body: { checkId: check.id, activated: true } });
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200 && r.body.runState === 'RUNNING',
      40_000,
    );
    const queue = svc.deps.queues.queue('runs-eu-west-1');
    await queue.pause();
    await waitFor(
      async () => receiver.to('/ops'),
      (r) => r.length >= 1,
      45_000,
    );
    // Two periods (20 s) and the grace (2 s) after the last run, found by a sweep of every second: well within the wait.
    expect(JSON.parse(receiver.to('/ops')[0]!.body)).toMatchObject({ alertType: 'ALERT_NO_DATA', check: { id: check.id } });
    expect((await svc.call('GET', `/v1/check-statuses/${check.id}`)).body.runState).toBe('NO_DATA');
    await queue.resume();
    await waitFor(
      async () => receiver.to('/ops'),
      (r) => r.length >= 2,
      45_000,
    );
    expect(JSON.parse(receiver.to('/ops')[1]!.body)).toMatchObject({ alertType: 'ALERT_NO_DATA_RECOVERY' });
    expect((await svc.call('GET', `/v1/check-statuses/${check.id}`)).body.runState).toBe('RUNNING');
  }, 120_000);
});
