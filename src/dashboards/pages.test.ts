import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantile } from '../../test/support/analytics-oracle.js';
import { createOtherTenant, startTestService, type TestService, verifyDomain, waitFor } from '../../test/support/service.js';
import { startDnsTarget } from '../../test/support/targets.js';
import type { DashboardView } from './data.js';

/** The rendered dashboards over HTTP: what a page and its data document hold, private access, caching. */
describe('rendered dashboards', () => {
  let svc: TestService;
  let other: { accountId: string; key: string };
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;

  beforeAll(async () => {
    dns = await startDnsTarget({});
    svc = await startTestService({ STATE_SWEEP_INTERVAL_MS: '100', TRUST_PROXY: 'true', DOMAIN_DNS_SERVERS: `127.0.0.1:${dns.udpPort}` });
    other = await createOtherTenant(svc);
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    dns?.close();
  });

  const post = async (path: string, body: unknown, key?: string) => {
    const res = await svc.call('POST', path, { body, key });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const apiCheck = (name: string, tags: string[], key?: string) =>
    post('/v1/checks/api?autoAssignAlerts=false', { name, tags, request: { url: 'https://shop.example.test' } }, key) as Promise<{ id: string }>;
  const dashboard = (body: Record<string, unknown>) =>
    post('/v1/dashboards', { header: 'Shop status', ...body }) as Promise<{ id: number; keys: { rawKey?: string }[] }>;
  /** Raw HTTP, no API key: what a viewer's browser sends. */
  const view = (path: string, init: RequestInit = {}) => fetch(svc.url + path, { redirect: 'manual', ...init });
  /**
   * A GET with exactly the headers given: its own Host (fetch does not let one set it), or a conditional
   * request as a browser revalidating sends it (fetch adds Cache-Control: no-cache to those).
   */
  const rawGet = (path: string, headers: Record<string, string>) =>
    new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const url = new URL(svc.url);
      http
        .get({ host: url.hostname, port: url.port, path, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text, headers: res.headers }));
        })
        .on('error', reject);
    });
  const viewAs = (host: string, path: string) => rawGet(path, { host });

  let clock = Date.now() - 20 * 60 * 60_000;
  const runsOf = new Map<string, { failed: boolean; responseTime: number }[]>();
  const report = async (checkId: string, outcomes: boolean[], key?: string) => {
    const results = outcomes.map((failed, i) => {
      clock += 60_000;
      const responseTime = 100 + ((i * 37) % 400);
      runsOf.set(checkId, [...(runsOf.get(checkId) ?? []), { failed, responseTime }]);
      return {
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: i % 2 ? 'eu-west-1' : 'us-east-1',
        startedAt: new Date(clock).toISOString(),
        stoppedAt: new Date(clock + responseTime).toISOString(),
        hasFailures: failed,
        responseTime,
        statusCode: failed ? 503 : 200,
      };
    });
    await post('/v1/check-results', { results }, key);
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${checkId}?limit=1`, { key }),
      (r) => Number(r.headers.get('x-total-count') ?? r.body?.length) >= 1,
    );
  };

  let web: { id: string };
  let api: { id: string };
  let internal: { id: string };
  let both: { id: string };

  beforeAll(async () => {
    web = await apiCheck('Storefront', ['web', 'public']);
    api = await apiCheck('Payments API', ['api', 'public']);
    internal = await apiCheck('Admin backend', ['internal']);
    both = await apiCheck('Checkout', ['web', 'api']);
    await report(
      web.id,
      Array.from({ length: 40 }, (_, i) => i % 10 === 0),
    );
    await report(
      api.id,
      Array.from({ length: 20 }, () => false),
    );
    // The other account's check carries the same tags: it must never show.
    const theirs = await apiCheck('Their storefront', ['web', 'public'], other.key);
    await report(theirs.id, [true, true], other.key);
    await waitFor(
      () => svc.deps.sql`select count(*)::int as n from check_statuses where check_id = any(${[web.id, api.id]}::uuid[])`,
      ([r]) => r.n === 2,
    );
  }, 60_000);

  it('serves the page at /dashboards/{customUrl} with the fields it was given, and only the tagged checks of its account', async () => {
    await dashboard({
      customUrl: 'shop',
      tags: ['web', 'api'],
      description: 'Live status of the shop',
      hideTags: false,
      showGroupNames: true,
      checksPerPage: 10,
      refreshRate: 60,
      width: '960PX',
      link: 'https://shop.example.test',
      logo: 'https://cdn.example.test/logo.png',
    });
    const res = await view('/dashboards/shop');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    // With a logo, the link wraps the logo and the header is plain text.
    expect(html).toContain('<a href="https://shop.example.test" rel="noopener"><img class="logo" src="https://cdn.example.test/logo.png" alt=""></a>');
    expect(html).toContain('<h1>Shop status</h1>');
    expect(html).toContain('Live status of the shop');
    expect(html).toContain('src="https://cdn.example.test/logo.png"');
    expect(html).toContain('class="width-960"');
    for (const name of ['Storefront', 'Payments API', 'Checkout']) expect(html).toContain(`<span class="check-name">${name}</span>`);
    expect(html).not.toContain('Admin backend');
    expect(html).not.toContain('Their storefront');
    expect(html).toContain('<span class="tag">web</span>');

    const data = (await (await view('/dashboards/shop/data.json')).json()) as DashboardView;
    expect(data.checks.map((c) => c.name)).toEqual(['Checkout', 'Payments API', 'Storefront']);
    expect(data.incidents).toBeNull();
  });

  it("data.json figures are the runs' own: availability and exact p95/p99 over 24 hours, current status, recent runs", async () => {
    const data = (await (await view('/dashboards/shop/data.json')).json()) as DashboardView;
    const storefront = data.checks.find((c) => c.id === web.id)!;
    const runs = runsOf.get(web.id)!;
    const times = runs.map((r) => r.responseTime).sort((a, b) => a - b);
    expect(storefront.windows['24h'].availability).toBeCloseTo((100 * runs.filter((r) => !r.failed).length) / runs.length, 9);
    expect(storefront.windows['24h'].p95).toBeCloseTo(quantile(times, 0.95), 9);
    expect(storefront.windows['24h'].p99).toBeCloseTo(quantile(times, 0.99), 9);
    expect(storefront.windows['30d'].availability).toBeCloseTo(storefront.windows['24h'].availability!, 9);
    // The last run passed (run 39 of 40 did not fail).
    expect(storefront.status).toBe('passing');
    expect(storefront.recentRuns).toHaveLength(10);
    expect(storefront.recentRuns.map((r) => r.startedAt)).toEqual([...storefront.recentRuns.map((r) => r.startedAt)].sort().reverse());
    const checkout = data.checks.find((c) => c.id === both.id)!;
    expect(checkout).toMatchObject({ status: 'unknown', recentRuns: [], windows: { '24h': { availability: null, p95: null, p99: null } } });
  });

  it('selects checks carrying every tag with useTagsAndOperator, hides tags and group names when told', async () => {
    await dashboard({ customUrl: 'web-and-api', tags: ['web', 'api'], useTagsAndOperator: true, hideTags: true });
    const data = (await (await view('/dashboards/web-and-api/data.json')).json()) as DashboardView;
    expect(data.checks.map((c) => c.name)).toEqual(['Checkout']);
    expect(data.checks[0].tags).toEqual([]);
    expect(await (await view('/dashboards/web-and-api')).text()).not.toContain('class="tag"');
  });

  it('serves a dashboard at / of its customDomain, and nothing at / of another host', async () => {
    await dashboard({ customUrl: 'domain-one', customDomain: 'status.shop.example.test', tags: ['api'] });
    // Served there once the account proved the domain (a TXT record).
    expect((await verifyDomain(svc, dns, 'status.shop.example.test')).status).toBe(200);
    const own = await viewAs('status.shop.example.test', '/');
    expect(own.status).toBe(200);
    expect(own.text).toContain('<span class="check-name">Payments API</span>');
    const data = await viewAs('Status.Shop.Example.Test:443', '/data.json');
    expect((JSON.parse(data.text) as DashboardView).checks.map((c) => c.name)).toEqual(['Checkout', 'Payments API']);
    expect((await viewAs('elsewhere.example.test', '/')).status).toBe(404);
    // The API stays the API on a dashboard's domain.
    expect((await viewAs('status.shop.example.test', '/health')).status).toBe(200);
  });

  it('answers an unknown dashboard with a 404 page, and other methods with 405', async () => {
    const res = await view('/dashboards/no-such-board');
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('There is no dashboard at this address.');
    expect((await view('/dashboards/shop/data.json', { method: 'DELETE' })).status).toBe(405);
    expect((await view('/dashboards/shop/nothing-here')).status).toBe(404);
  });

  it('inlines customCSS only after removing everything that could load or run something', async () => {
    await dashboard({
      customUrl: 'styled',
      tags: ['api'],
      customCSS:
        '@import url(https://evil.example/x.css); body { background: url(javascript:alert(1)); color: #123456 } a { content: "</style><script>alert(1)</script>" }',
    });
    const html = await (await view('/dashboards/styled')).text();
    const css = /<style id="custom-css">([\s\S]*?)<\/style>/.exec(html)![1];
    expect(css).toContain('color:#123456');
    expect(css).not.toMatch(/@import|url\(|<\/style|<script/i);
    expect(html.match(/<script/g)).toHaveLength(1); // the page's own script only
  });

  it('a private dashboard opens only with one of its keys: login form, cookie, ?key=, and wrong keys are refused and limited', async () => {
    const d = await dashboard({ customUrl: 'private-board', tags: ['api'], isPrivate: true });
    const rawKey = d.keys[0].rawKey!;
    expect(rawKey).toMatch(/^dk_/);

    const locked = await view('/dashboards/private-board');
    expect(locked.status).toBe(401);
    const lockedHtml = await locked.text();
    expect(lockedHtml).toContain('This dashboard is private');
    expect(lockedHtml).not.toContain('Payments API');
    // Nothing of the dashboard shows before a key opens it: not even its title.
    expect(lockedHtml).not.toContain('Shop status');
    const lockedData = await view('/dashboards/private-board/data.json');
    expect(lockedData.status).toBe(401);
    expect(await lockedData.json()).toMatchObject({ statusCode: 401 });

    const form = (key: string, from = '10.0.0.1') =>
      view('/dashboards/private-board/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
        body: new URLSearchParams({ key }),
      });
    const wrong = await form('dk_wrong');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('That key does not open this dashboard.');
    expect(wrong.headers.get('set-cookie')).toBeNull();

    const right = await form(rawKey);
    expect(right.status).toBe(303);
    expect(right.headers.get('location')).toBe('/dashboards/private-board/');
    const cookie = right.headers.get('set-cookie')!;
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=lax/i);
    expect(cookie).not.toContain(rawKey);
    const session = cookie.split(';')[0];
    const page = await view('/dashboards/private-board', { headers: { cookie: session } });
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    expect(await page.text()).toContain('Payments API');
    expect((await view('/dashboards/private-board/data.json', { headers: { cookie: session } })).status).toBe(200);
    // A forged or foreign cookie opens nothing.
    expect(
      (await view('/dashboards/private-board', { headers: { cookie: `${session.split('=')[0]}=${randomUUID()}.9999999999.${'A'.repeat(43)}` } })).status,
    ).toBe(401);

    const wall = await view(`/dashboards/private-board?key=${encodeURIComponent(rawKey)}`);
    expect(wall.status).toBe(303);
    expect(wall.headers.get('location')).toBe('/dashboards/private-board/');
    expect(wall.headers.get('set-cookie')).toMatch(/httponly/i);

    // Ten wrong keys from one address, then more wrong keys from it have to wait; the right key still opens
    // the dashboard from that address (a guesser cannot lock out its viewers), and other addresses go on.
    for (let i = 0; i < 10; i++) expect((await form(`dk_guess_${i}`, '10.0.0.9')).status).toBe(401);
    const limited = await form('dk_guess_last', '10.0.0.9');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await form(rawKey, '10.0.0.9')).status).toBe(303);
    expect((await form('dk_guess_again', '10.0.0.9')).status).toBe(429);
    expect((await form(rawKey, '10.0.0.10')).status).toBe(303);

    // Made public, it removes its keys and opens to everyone (settings are reread within 5 s).
    expect((await svc.call('PUT', `/v1/dashboards/${d.id}`, { body: { isPrivate: false } })).body.keys).toEqual([]);
    await waitFor(
      () => view('/dashboards/private-board'),
      (r) => r.status === 200,
      10_000,
    );
    expect(svc.logs.join('\n')).not.toContain(rawKey);
  });

  it('takes only http(s) links, logos and favicons', async () => {
    for (const field of ['link', 'logo', 'favicon']) {
      for (const url of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,<script>alert(1)</script>', 'vbscript:x', 'file:///etc/passwd']) {
        const res = await svc.call('POST', '/v1/dashboards', { body: { header: 'Bad', [field]: url } });
        expect(res.status, `${field}=${url}`).toBe(400);
        expect(res.body.attributes.errors[0].field).toBe(`body.${field}`);
      }
    }
    expect(
      (await svc.call('POST', '/v1/dashboards', { body: { header: 'Good', link: 'https://status.example.test', logo: 'HTTPS://cdn.example.test/l.png' } }))
        .status,
    ).toBe(201);
  });

  it('keeps in customCSS only URLs of the service itself and inline data: images', async () => {
    await dashboard({
      customUrl: 'css-urls',
      tags: ['api'],
      customCSS:
        'header { background: url("https://tracker.example/p.gif") } main { background: url(//cdn.example/x.png) } ' +
        '.a { background: url("data:image/png;base64,iVBORw0KGgo=") } .b { background: url(/dashboards/assets/dashboard.css) } ' +
        '.c { background: url("data:text/html,<b>x</b>") } .d { color: #abcdef }',
    });
    const css = /<style id="custom-css">([\s\S]*?)<\/style>/.exec(await (await view('/dashboards/css-urls')).text())![1];
    expect(css).toContain('url(data:image/png;base64,iVBORw0KGgo=)');
    expect(css).toContain('url(/dashboards/assets/dashboard.css)');
    expect(css).toContain('color:#abcdef');
    expect(css).not.toMatch(/tracker\.example|cdn\.example|data:text/);
  });

  it("signs sessions with a secret of the service: the database's key digests alone forge nothing", async () => {
    const d = await dashboard({ customUrl: 'forge-me', tags: ['api'], isPrivate: true });
    const [key] = await svc.deps.sql<{ id: string; key_hash: Buffer }[]>`select id, key_hash from dashboard_keys where dashboard_id = ${d.id}`;
    const { dashboard_id: dashboardId } = (await svc.deps.sql<{ dashboard_id: string }[]>`select dashboard_id from dashboards where id = ${d.id}`)[0];
    const expires = Math.floor(Date.now() / 1000) + 3600;
    // What someone who can read the dashboards tables could compute: the old MAC, keyed by the key's digest.
    const { createHmac } = await import('node:crypto');
    const forged = createHmac('sha256', key.key_hash).update(`${dashboardId}.${key.id}.${expires}`).digest('base64url');
    expect((await view('/dashboards/forge-me', { headers: { cookie: `dashboard_${d.id}=${key.id}.${expires}.${forged}` } })).status).toBe(401);
    const right = await view(`/dashboards/forge-me?key=${encodeURIComponent(d.keys[0].rawKey!)}`);
    const session = right.headers.get('set-cookie')!.split(';')[0];
    expect((await view('/dashboards/forge-me', { headers: { cookie: session } })).status).toBe(200);
    const names = (await svc.deps.sql<{ name: string }[]>`select name from service_secrets`).map((r) => r.name);
    expect(names).toContain('dashboard-sessions');
  });

  it('sends pages and data compressed to browsers that take it', async () => {
    await dashboard({ customUrl: 'zipped', tags: ['api'] });
    for (const path of ['/dashboards/zipped', '/dashboards/zipped/data.json']) {
      const plain = await rawGet(path, {});
      const zipped = await rawGet(path, { 'accept-encoding': 'gzip' });
      expect(plain.headers['content-encoding'], path).toBeUndefined();
      expect(zipped.headers['content-encoding'], path).toBe('gzip');
      expect(Number(zipped.headers['content-length'] ?? zipped.text.length), path).toBeLessThan(plain.text.length);
    }
  });

  it("links recent runs to a run page only with showCheckRunLinks, and only for runs of the dashboard's checks", async () => {
    await dashboard({ customUrl: 'no-links', tags: ['web'] });
    await dashboard({ customUrl: 'links', tags: ['web'], showCheckRunLinks: true });
    const data = (await (await view('/dashboards/links/data.json')).json()) as DashboardView;
    const run = data.checks.find((c) => c.id === web.id)!.recentRuns[0];
    expect(await (await view('/dashboards/links')).text()).toContain(`href="/dashboards/links/runs/${web.id}/${run.id}"`);
    expect(await (await view('/dashboards/no-links')).text()).not.toContain('/runs/');
    const page = await view(`/dashboards/links/runs/${web.id}/${run.id}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Storefront');
    expect(html).toContain(run.location);
    expect((await view(`/dashboards/no-links/runs/${web.id}/${run.id}`)).status).toBe(404);
    expect((await view(`/dashboards/links/runs/${internal.id}/${run.id}`)).status).toBe(404);
    expect((await view(`/dashboards/links/runs/${web.id}/${randomUUID()}`)).status).toBe(404);
  });

  it("a failed browser run's page shows its error and links its screenshot, served to the dashboard's viewers only", async () => {
    const check = (await post('/v1/checks/browser?autoAssignAlerts=false', {
      name: 'Checkout flow',
      tags: ['shots'],
      script: 'test("x", async () => {})',
    })) as { id: string };
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    const { Readable } = await import('node:stream');
    const blob = await svc.deps.blobs.put(svc.defaultAccountId, 'screenshots', Readable.from([png]), 1024);
    const runId = randomUUID();
    await post('/v1/check-results', {
      results: [
        {
          id: runId,
          checkId: check.id,
          checkType: 'BROWSER',
          runLocation: 'eu-west-1',
          startedAt: new Date(Date.now() - 60_000).toISOString(),
          stoppedAt: new Date(Date.now() - 58_000).toISOString(),
          hasFailures: true,
          responseTime: 2000,
          browserCheckResult: {
            errors: [{ message: 'expect(locator).toHaveText(expected) failed <script>alert(1)</script>' }],
            assets: [{ type: 'screenshot', name: 'test-failed-1.png', contentType: 'image/png', key: blob.key, size: blob.size }],
          },
        },
      ],
    });
    await waitFor(
      () => svc.call('GET', `/v1/check-results/${check.id}/${runId}`),
      (r) => r.status === 200,
    );
    await dashboard({ customUrl: 'shots', tags: ['shots'], showCheckRunLinks: true });
    await dashboard({ customUrl: 'shots-no-links', tags: ['shots'] });
    const page = await view(`/dashboards/shots/runs/${check.id}/${runId}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('toHaveText(expected) failed &lt;script&gt;');
    expect(html).not.toContain('<script>alert(1)');
    const link = `/dashboards/shots/runs/${check.id}/${runId}/screenshots/test-failed-1.png`;
    expect(html).toContain(`<img src="${link}"`);
    const shot = await view(link);
    expect(shot.status).toBe(200);
    expect(shot.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await shot.arrayBuffer())).toEqual(png);
    expect((await view(`/dashboards/shots/runs/${check.id}/${runId}/screenshots/other.png`)).status).toBe(404);
    expect((await view(`/dashboards/shots-no-links/runs/${check.id}/${runId}/screenshots/test-failed-1.png`)).status).toBe(404);
  });

  it('builds the data once per refreshRate however many viewers ask, and again when the dashboard changes', async () => {
    const d = await dashboard({ customUrl: 'cached', tags: ['api'], refreshRate: 600 });
    const builds = () => svc.deps.metrics.dashboardBuilds.get().then((m) => m.values[0]?.value ?? 0);
    await view('/dashboards/cached/data.json');
    const before = await builds();
    const answers = await Promise.all(Array.from({ length: 25 }, () => view('/dashboards/cached/data.json').then((r) => r.json())));
    expect(new Set(answers.map((a) => (a as DashboardView).generatedAt)).size).toBe(1);
    expect(await builds()).toBe(before);
    await svc.call('PUT', `/v1/dashboards/${d.id}`, { body: { tags: ['web'] } });
    // The dashboard's settings are reread within 5 s; then the new selection shows.
    const changed = await waitFor(
      () => view('/dashboards/cached/data.json').then((r) => r.json() as Promise<DashboardView>),
      (v) => v.checks.some((c) => c.name === 'Storefront'),
      10_000,
    );
    expect(changed.checks.map((c) => c.name)).toEqual(['Checkout', 'Storefront']);
    expect(await builds()).toBe(before + 1);
  });

  it('answers a viewer revalidating the document it holds with 304 until the next build', async () => {
    const d = await dashboard({ customUrl: 'revalidated', tags: ['api'], refreshRate: 600 });
    const first = await view('/dashboards/revalidated/data.json');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"\d+-\d+-\d+"$/);
    const doc = (await first.json()) as DashboardView;
    const again = await rawGet('/dashboards/revalidated/data.json', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    // A reload that insists on a fresh copy gets the document whole.
    expect((await rawGet('/dashboards/revalidated/data.json', { 'if-none-match': etag, 'cache-control': 'no-cache' })).status).toBe(200);
    // Another build (the dashboard changed) is another document: the old tag gets it whole.
    await svc.call('PUT', `/v1/dashboards/${d.id}`, { body: { description: 'changed' } });
    const rebuilt = await waitFor(
      () => rawGet('/dashboards/revalidated/data.json', { 'if-none-match': etag }),
      (r) => r.status === 200,
      10_000,
    );
    expect(rebuilt.headers.etag).not.toBe(etag);
    expect((JSON.parse(rebuilt.text) as DashboardView).checks.map((c) => c.id)).toEqual(doc.checks.map((c) => c.id));
    // The page is the same for every viewer of a build, and says what the data says.
    const [a, b] = await Promise.all([view('/dashboards/revalidated'), view('/dashboards/revalidated')]);
    expect(await a.text()).toBe(await b.text());
  });

  it('shows incidents when enableIncidents: open ones first, then those resolved in the last 7 days', async () => {
    const check = (await post('/v1/checks/api?autoAssignAlerts=false', {
      name: 'Incident check',
      tags: ['incidents'],
      request: { url: 'https://shop.example.test' },
      triggerIncident: { serviceId: 'svc-1', name: 'Checkout down', description: 'd', severity: 'MAJOR', notifySubscribers: false },
    })) as { id: string };
    await dashboard({ customUrl: 'incidents', tags: ['incidents'], enableIncidents: true });
    await dashboard({ customUrl: 'no-incidents', tags: ['incidents'] });
    await report(check.id, [true]);
    await waitFor(
      () => svc.deps.sql`select count(*)::int as n from incidents where check_id = ${check.id}`,
      ([r]) => r.n === 1,
    );
    const data = (await (await view('/dashboards/incidents/data.json')).json()) as DashboardView;
    expect(data.incidents).toEqual([expect.objectContaining({ name: 'Checkout down', checkName: 'Incident check', severity: 'MAJOR', resolvedAt: null })]);
    expect(await (await view('/dashboards/incidents')).text()).toContain('<strong>Checkout down</strong>');
    expect(((await (await view('/dashboards/no-incidents/data.json')).json()) as DashboardView).incidents).toBeNull();
  });
});
