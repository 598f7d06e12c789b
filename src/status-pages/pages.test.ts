import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../../test/support/receivers.js';
import { createOtherTenant, startTestService, type TestService, verifyDomain, waitFor } from '../../test/support/service.js';
import { startDnsTarget } from '../../test/support/targets.js';

const DAY = 86_400_000;
const HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>';

/**
 * The public status pages: services and their state from linked checks, 90-day bars from the daily rollup, an
 * incident a failing check opens and its recovery resolves, subscribers told by mail (double opt-in, unsubscribe),
 * the Atom feed, a custom domain, maintenance; badges; the anchor's dashboard incidents on a dashboard.
 */
describe('status pages (public)', () => {
  let svc: TestService;
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;
  beforeAll(async () => {
    smtp = await startSmtpSink();
    // Custom domains are proved by a TXT record, looked up on this local DNS server.
    dns = await startDnsTarget({});
    svc = await startTestService({
      STATE_SWEEP_INTERVAL_MS: '100',
      ALERT_RETRY_BASE_MS: '50',
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: 'status@example.test',
      PUBLIC_URL: 'http://status.example.test',
      STATUS_PAGE_CACHE_SECONDS: '0',
      DOMAIN_DNS_SERVERS: `127.0.0.1:${dns.udpPort}`,
    });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await smtp?.close();
    dns?.close();
  });

  const post = async (path: string, body: unknown) => {
    const res = await svc.call('POST', path, { body });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const view = (path: string, init: RequestInit = {}) => fetch(svc.url + path, { redirect: 'manual', ...init });
  const form = (path: string, fields: Record<string, string>) =>
    view(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  const rawGet = (path: string, host: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(svc.url);
      http
        .get({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        })
        .on('error', reject);
    });
  /** The mails to `to` so far; the link of `purpose` in the newest, as a path of this service. */
  const mailsTo = (to: string) => smtp.mails.filter((m) => (m.to as { text: string }).text === to);
  const linkIn = (text: string, purpose: 'confirm' | 'unsubscribe') => {
    const m = new RegExp(`http://status\\.example\\.test(/status/[^\\s]+/${purpose}\\?token=[\\w-]+)`).exec(text);
    if (!m) throw new Error(`no ${purpose} link in ${text}`);
    return m[1]!;
  };
  const results = (checkId: string, outcomes: { at: number; failed: boolean; ms: number }[]) =>
    post('/v1/check-results', {
      results: outcomes.map((o) => ({
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: 'eu-west-1',
        startedAt: new Date(o.at).toISOString(),
        stoppedAt: new Date(o.at + o.ms).toISOString(),
        hasFailures: o.failed,
        responseTime: o.ms,
        statusCode: o.failed ? 503 : 200,
      })),
    });

  it('shows services with their state, uptime bars and response time; a failing check opens an incident subscribers hear of', async () => {
    const api = await post('/v1/status-pages/services', { name: 'Public API' });
    const hostile = await post('/v1/status-pages/services', { name: HOSTILE });
    const check = await post('/v1/checks/api?autoAssignAlerts=false', {
      name: 'api health',
      request: { url: 'https://api.example.test/health' },
      triggerIncident: { serviceId: api.id, name: 'Public API is down', description: 'Requests fail', severity: 'MAJOR', notifySubscribers: true },
    });
    const page = await post('/v1/status-pages', {
      name: 'Acme status',
      url: 'acme',
      customDomain: 'status.acme.test',
      description: HOSTILE,
      cards: [{ name: 'Platform', services: [{ id: api.id }, { id: hostile.id }] }],
      themeColors: { light: { ...palette('#FFFFFF'), linkFontColor: '#AA0000' }, dark: palette('#000000') },
    });
    // Two days ago: 3 of 4 runs passed; yesterday all passed.
    const today = Math.floor(Date.now() / DAY) * DAY;
    await results(
      check.id,
      [0, 1, 2, 3].map((i) => ({ at: today - 2 * DAY + 3_600_000 * (i + 1), failed: i === 0, ms: 200 + i * 10 })),
    );
    // Its failure opened (and its next run resolved) an incident before the later batch is sent: state follows the
    // newest run, so a batch of older runs evaluated after a newer one (two ingest batches at once) changes nothing.
    await waitFor(
      () => svc.call('GET', '/v1/status-pages/incidents'),
      (r) => r.status === 200 && r.body.entries.length === 1,
    );
    await results(
      check.id,
      [0, 1].map((i) => ({ at: today - DAY + 3_600_000 * (i + 1), failed: false, ms: 100 })),
    );
    // Every run landed (the state alone passes already after the first batch, before the second has landed).
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.id}?limit=100&from=${Math.floor((today - 3 * DAY) / 1000)}`),
      (r) => r.status === 200 && r.body.length === 6,
    );
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200 && r.body.hasFailures === false,
    );

    const res = await view('/status/acme');
    expect(res.status, svc.logs.filter((l) => l.includes('"level":50')).join('\n')).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    const html = await res.text();
    expect(html).toContain('All systems operational');
    expect(html).toContain('Public API');
    expect(html).toMatch(/75\.00 % of 4 runs passed/);
    expect(html).toMatch(/100\.00 % of 2 runs passed/);
    expect(html).toContain('class="rt-chart"');
    // Validated colours only, hostile text escaped everywhere, nothing fetched from elsewhere, no script.
    expect(html).toContain('--linkFontColor:#AA0000');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toMatch(/(src|href)="https?:\/\//);
    // The same page on its own domain once the account proved the domain; dark theme on request.
    expect((await verifyDomain(svc, dns, 'status.acme.test')).status).toBe(200);
    const onDomain = await rawGet('/?theme=dark', 'status.acme.test');
    expect(onDomain.status).toBe(200);
    expect(onDomain.text).toContain('Public API');
    expect(onDomain.text).toContain('--bodyBackgroundColor:#000000');
    expect((await view('/status/nope')).status).toBe(404);

    // Someone subscribes through the form: a confirm mail; nothing else until they confirm.
    expect((await form('/status/acme/subscribe', { email: 'nope' })).status).toBe(400);
    const signed = await form('/status/acme/subscribe', { email: 'reader@example.test' });
    expect(signed.status).toBe(200);
    const confirm = await waitFor(
      async () => mailsTo('reader@example.test'),
      (m) => m.length >= 1,
    );
    expect(confirm[0]!.subject).toBe('Confirm your subscription to Acme status');
    const confirmLink = linkIn(confirm[0]!.text!, 'confirm');
    const ask = await view(confirmLink);
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('method="post"');
    expect((await view(confirmLink.replace(/token=[\w-]+/, 'token=forged'), { method: 'POST' })).status).toBe(404);
    expect((await view(confirmLink, { method: 'POST' })).status).toBe(200);
    const subs = await svc.call('GET', `/v1/status-pages/${page.id}/subscriptions`);
    expect(subs.body).toEqual([expect.objectContaining({ address: 'reader@example.test', status: 'VERIFIED' })]);

    // The check fails: an incident opens on its service, the page says so and the subscriber hears of it.
    await results(check.id, [{ at: Date.now() - 60_000, failed: true, ms: 900 }]);
    // (The failed run two days ago opened one too, resolved by the run after it.)
    // Waits for both: on a loaded machine the old one can still be INVESTIGATING, alone, when the first look comes.
    const incidents = await waitFor(
      () => svc.call('GET', '/v1/status-pages/incidents'),
      (r) => r.body.entries.length === 2 && r.body.entries[0]?.lastUpdateStatus === 'INVESTIGATING',
    );
    expect(incidents.body.entries).toHaveLength(2);
    expect(incidents.body.entries[0]).toMatchObject({
      name: 'Public API is down',
      severity: 'MAJOR',
      lastUpdateStatus: 'INVESTIGATING',
      services: [{ id: api.id }],
    });
    const told = await waitFor(
      async () => mailsTo('reader@example.test'),
      (m) => m.length >= 2,
    );
    expect(told[1]!.subject).toBe('[INVESTIGATING] Public API is down');
    expect(told[1]!.text).toContain('Requests fail');
    await waitFor(
      async () => (await view('/status/acme')).text(),
      (t) => t.includes('Ongoing incidents'),
      40_000,
    );
    // It recovers: the incident is resolved with an update, and the feed has it.
    await results(check.id, [{ at: Date.now() - 30_000, failed: false, ms: 120 }]);
    await waitFor(
      () => svc.call('GET', `/v1/status-pages/incidents/${incidents.body.entries[0].id}`),
      (r) => r.body.lastUpdateStatus === 'RESOLVED',
    );
    const feed = await view('/status/acme/feed.atom');
    expect(feed.headers.get('content-type')).toMatch(/application\/atom\+xml/);
    const atom = await feed.text();
    expect(atom).toContain('<title>Public API is down (resolved)</title>');
    expect(atom).toContain(`urn:uuid:${incidents.body.entries[0].id}`);
    // Links from PUBLIC_URL (the feed is cached publicly): the page's own domain, whatever Host the request named.
    expect(atom).toContain('<link rel="alternate" type="text/html" href="http://status.acme.test"/>');
    expect(atom).toContain(`href="http://status.acme.test#incident-${incidents.body.entries[0].id}"`);
    const spoofed = await rawGet('/status/acme/feed.atom', 'evil.example.test');
    expect(spoofed.status).toBe(200);
    expect(spoofed.text).toContain('href="http://status.acme.test"');
    expect(spoofed.text).not.toContain('evil.example.test');

    // Unsubscribing ends the mail.
    const unsubscribe = linkIn(told[1]!.text!, 'unsubscribe');
    expect((await view(unsubscribe, { method: 'POST' })).status).toBe(200);
    expect((await svc.call('GET', `/v1/status-pages/${page.id}/subscriptions`)).body).toEqual([]);
    expect((await view(unsubscribe, { method: 'POST' })).status).toBe(404);

    // A run the daily rollup does not hold yet (started after its horizon, ROLLUPS=ticks) is on today's bar at once.
    const horizon = (svc.deps.store as { rollupTicks?: { rolledThrough: number } }).rollupTicks!.rolledThrough;
    const next = Math.max(horizon, Date.now()) + 1000;
    if (next < today + DAY) {
      await results(check.id, [{ at: next, failed: false, ms: 120 }]);
      await waitFor(
        () => svc.call('GET', `/v1/check-results/${check.id}?limit=1`),
        (r) => r.body[0]?.startedAt === new Date(next).toISOString(),
      );
      expect(await (await view('/status/acme')).text()).toContain(`${new Date(today).toISOString().slice(0, 10)}: 66.67 % of 3 runs passed`);
    }
  });

  it('shows maintenance in progress, and its updates reach subscribers', async () => {
    const db = await post('/v1/status-pages/services', { name: 'Database' });
    const page = await post('/v1/status-pages', { name: 'DB status', url: 'db-status', cards: [{ name: 'Data', services: [{ id: db.id }] }] });
    await post(`/v1/status-pages/${page.id}/subscriptions/bulk`, { subscriptions: [{ type: 'EMAIL', config: 'ops@example.test' }], autoVerify: true });
    const window = await post('/v1/maintenance-windows', {
      name: 'Database upgrade',
      startsAt: new Date(Date.now() - 3_600_000).toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      statusPageVisibility: { enabled: true, statusPageIds: [page.id] },
    });
    const list = await svc.call('GET', `/v1/maintenance-windows/${window.id}/maintenances`);
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual([expect.objectContaining({ maintenanceWindowId: window.id, status: 'IN_PROGRESS', updates: [] })]);
    const update = await svc.call('POST', `/v1/maintenance-windows/${window.id}/maintenances/${list.body[0].id}/updates`, {
      body: { status: 'VERIFYING', description: 'Upgrade done, verifying', notifySubscribers: true },
    });
    expect(update.status, update.text).toBe(201);
    expect(update.body).toMatchObject({ status: 'VERIFYING', previousStatus: 'IN_PROGRESS', notifySubscribers: true });
    const mail = await waitFor(
      async () => mailsTo('ops@example.test'),
      (m) => m.length >= 1,
    );
    expect(mail[0]!.subject).toBe('[Maintenance verifying] Database upgrade');
    const html = await (await view('/status/db-status')).text();
    expect(html).toContain('Database upgrade');
    expect(html).toContain('Under maintenance');
    expect(html).toContain('Upgrade done, verifying');
  });

  it("badges show a check's and a group's state as SVG, cacheable, once the account turns them on; unknown ids are a 404", async () => {
    const group = await post('/v1/check-groups', { name: 'Shop' });
    const check = await post('/v1/checks/api?autoAssignAlerts=false', {
      name: 'Cart API',
      groupId: group.id,
      request: { url: 'https://shop.example.test/cart' },
    });
    // Off by default (group ids are sequential): nothing to see, not even that the group exists.
    expect((await view(`/v1/badges/groups/${group.id}`)).status).toBe(404);
    expect((await view(`/v1/badges/checks/${check.id}`)).status).toBe(404);
    const { createApiKey } = await import('../accounts/repository.js');
    const writer = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-write' });
    expect((await svc.call('PATCH', '/v1/account', { key: writer.key, body: { badgesEnabled: true } })).status).toBe(403);
    const on = await svc.call('PATCH', '/v1/account', { body: { badgesEnabled: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.body.badgesEnabled).toBe(true);
    expect((await svc.call('GET', '/v1/accounts/me')).body.settings).toEqual({ badgesEnabled: true });
    const before = await view(`/v1/badges/checks/${check.id}`);
    expect(before.status).toBe(200);
    expect(before.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(before.headers.get('cache-control')).toBe('public, max-age=60');
    expect(await before.text()).toMatch(/^<svg[^>]*aria-label="Cart API: no data"/);
    await results(check.id, [{ at: Date.now() - 10_000, failed: true, ms: 321 }]);
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${check.id}`),
      (r) => r.status === 200,
    );
    const failing = await (await view(`/v1/badges/checks/${check.id}?style=for-the-badge&theme=dark&responseTime=true`)).text();
    expect(failing).toMatch(/aria-label="CART API: FAILING · 321 MS"/);
    expect(await (await view(`/v1/badges/groups/${group.id}`)).text()).toMatch(/aria-label="Shop: failing"/);
    expect((await view(`/v1/badges/checks/${randomUUID()}`)).status).toBe(404);
    expect((await view('/v1/badges/groups/999999')).status).toBe(404);
    expect((await view(`/v1/badges/checks/${check.id}?style=neon`)).status).toBe(400);
  });

  it("the anchor's dashboard incidents show on their dashboard, and only the account's own", async () => {
    const dashboard = await post('/v1/dashboards', { header: 'Ops', customUrl: 'ops-board', enableIncidents: true });
    const created = await svc.call('POST', '/v1/incidents', {
      body: { name: 'Checkout slow', impact: 'MAJOR', dashboardId: dashboard.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking' }] },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({
      name: 'Checkout slow',
      impact: 'MAJOR',
      dashboardId: dashboard.id,
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'Looking' }],
    });
    const added = await svc.call('POST', `/v1/incidents/${created.body.id}/updates`, { body: { status: 'IDENTIFIED', description: 'Cache cold' } });
    expect(added.status).toBe(201);
    expect((await svc.call('GET', `/v1/incidents/${created.body.id}`)).body.incidentUpdates).toEqual([expect.objectContaining({ status: 'IDENTIFIED' })]);
    expect((await svc.call('GET', `/v1/incidents/${created.body.id}?includeAllIncidentUpdates=true`)).body.incidentUpdates).toHaveLength(2);
    const html = await waitFor(
      async () => (await view('/dashboards/ops-board')).text(),
      (t) => t.includes('Checkout slow'),
      15_000,
    );
    expect(html).toContain('IDENTIFIED: Cache cold');
    const other = await createOtherTenant(svc);
    expect((await svc.call('GET', `/v1/incidents/${created.body.id}`, { key: other.key })).status).toBe(404);
    const theirs = await svc.call('POST', '/v1/incidents', {
      key: other.key,
      body: { name: 'x', impact: 'MINOR', dashboardId: dashboard.id, incidentUpdates: [{ status: 'INVESTIGATING', description: 'd' }] },
    });
    expect(theirs.status).toBe(400);
  });
});

function palette(background: string) {
  const fields = [
    'bodyBackgroundColor',
    'headerBackgroundColor',
    'headerFontColor',
    'titleFontColor',
    'bodyFontColor',
    'bodyFontColorMuted',
    'navigationFontColor',
    'linkFontColor',
    'cardBackgroundColor',
    'borderColor',
    'primaryButtonBackgroundColor',
    'primaryButtonFontColor',
  ];
  return Object.fromEntries(fields.map((f) => [f, f === 'bodyBackgroundColor' ? background : '#777777']));
}
