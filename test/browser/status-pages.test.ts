import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, verifyDomain, waitFor } from '../support/service.js';
import { startDnsTarget } from '../support/targets.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** SCREENSHOTS=docs/img regenerates the README's pictures; otherwise they go to a scratch directory. */
const SHOTS = path.resolve(process.env.SCREENSHOTS ?? path.join(process.env.MONITORING_TEST_ROOT ?? '/tmp', `screenshots-${process.pid}`));
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const DAY = 86_400_000;

/**
 * A status page as its readers see it, in a real browser: services with their state and 90 daily bars, an
 * incident's timeline, light and dark themes, a phone's width, its custom domain; hostile text shows as text and
 * no script runs; nothing is fetched from anywhere but the service.
 */
describe('status pages in Chromium', () => {
  let svc: TestService;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;
  let browser: Browser;
  let incidentId: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dns = await startDnsTarget({});
    svc = await startTestService({ STATUS_PAGE_CACHE_SECONDS: '0', STATE_SWEEP_INTERVAL_MS: '100', DOMAIN_DNS_SERVERS: `127.0.0.1:${dns.udpPort}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    const post = async (p: string, body: unknown) => {
      const res = await svc.call('POST', p, { body });
      if (res.status >= 300) throw new Error(`${p}: ${res.status} ${res.text}`);
      return res.body;
    };
    const api = await post('/v1/status-pages/services', { name: 'Storefront' });
    const pay = await post('/v1/status-pages/services', { name: 'Payments' });
    const search = await post('/v1/status-pages/services', { name: 'Search <img src=x onerror=alert(1)>' });
    await post('/v1/status-pages', {
      name: 'Shop status',
      url: 'shop',
      customDomain: 'status.shop.test',
      description: 'Live status of the shop and its APIs',
      cards: [
        { name: 'Shop', services: [{ id: api.id }, { id: pay.id }] },
        { name: 'Discovery <svg onload=alert(2)>', services: [{ id: search.id }] },
      ],
    });
    // The page's own domain, proved by a TXT record on a local DNS server.
    expect((await verifyDomain(svc, dns, 'status.shop.test')).status).toBe(200);
    // 60 days of runs for the storefront and payments checks: a bad day for payments 12 days ago.
    const today = Math.floor(Date.now() / DAY) * DAY;
    for (const [service, name] of [
      [api, 'storefront'],
      [pay, 'payments'],
    ] as const) {
      const check = await post('/v1/checks/api?autoAssignAlerts=false', {
        name,
        request: { url: `https://${name}.example.test` },
        triggerIncident: { serviceId: service.id, name: `${name} down`, description: 'Runs fail', severity: 'MAJOR', notifySubscribers: false },
      });
      const results = [];
      for (let d = 60; d >= 1; d--) {
        for (let h = 0; h < 6; h++) {
          const failed = service === pay && d === 12 && h < 3;
          const ms = 150 + ((d * 37 + h * 11) % 120) + (service === pay ? 60 : 0);
          results.push({
            id: randomUUID(),
            checkId: check.id,
            checkType: 'API',
            runLocation: 'eu-west-1',
            startedAt: new Date(today - d * DAY + h * 3_600_000).toISOString(),
            stoppedAt: new Date(today - d * DAY + h * 3_600_000 + ms).toISOString(),
            hasFailures: failed,
            responseTime: ms,
            statusCode: failed ? 503 : 200,
          });
        }
      }
      await post('/v1/check-results', { results });
    }
    const incident = await post('/v1/status-pages/incidents', {
      name: 'Slow checkout',
      severity: 'MEDIUM',
      services: [{ id: pay.id }],
      incidentUpdates: [
        {
          status: 'INVESTIGATING',
          description: 'Checkout takes longer than usual. <script>alert("x")</script>',
          publicIncidentUpdateDate: new Date(Date.now() - 40 * 60_000).toISOString(),
        },
      ],
    });
    incidentId = incident.id;
    await post(`/v1/status-pages/incidents/${incidentId}/incident-updates`, {
      status: 'IDENTIFIED',
      description: 'A payment provider answers slowly; we are routing around it.',
    });
    await waitFor(
      () => svc.deps.sql`select count(*)::int as n from check_statuses`,
      ([r]) => r.n === 2,
    );
  }, 120_000);
  afterAll(async () => {
    dns?.close();
    await browser?.close();
    await svc?.stop();
  });

  /** A page that records every request it makes and every dialog a script would open. */
  async function open(target: Browser, url: string, options: Parameters<Browser['newPage']>[0] = {}) {
    const page = await target.newPage(options);
    const requests: string[] = [];
    const dialogs: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(url);
    return { page, requests, dialogs };
  }
  const background = (page: Page) => page.evaluate('getComputedStyle(document.body).backgroundColor') as Promise<string>;

  it("shows each service with its state, 90 daily bars and a response-time line, and the ongoing incident's timeline", async () => {
    const { page, requests, dialogs } = await open(browser, `${svc.url}/status/shop`, { viewport: { width: 1100, height: 1000 }, colorScheme: 'light' });
    expect(await page.locator('h1').textContent()).toBe('Shop status');
    expect(await page.locator('.service-name').allTextContents()).toEqual(['Storefront', 'Payments', 'Search <img src=x onerror=alert(1)>']);
    expect(await page.locator('.service.status-operational .service-name').allTextContents()).toContain('Storefront');
    expect(await page.locator('.service.status-degraded .service-name').allTextContents()).toEqual(['Payments']);
    expect((await page.locator('.overall').textContent())!.trim()).toBe('Some systems are degraded');
    expect(await page.locator('.service').first().locator('.bars rect').count()).toBe(90);
    // The bad day shows in the bar's title: 3 of 6 runs failed.
    expect(await page.locator('.service').nth(1).locator('.bars title').allTextContents()).toContainEqual(expect.stringMatching(/50\.00 % of 6 runs passed/));
    expect(await page.locator('.service').first().locator('.rt-chart').count()).toBe(1);
    const timeline = page.locator(`#incident-${incidentId} .timeline li strong`);
    expect(await timeline.allTextContents()).toEqual(['Identified', 'Investigating']);
    expect(await page.locator(`#incident-${incidentId}`).textContent()).toContain('<script>alert("x")</script>');
    expect(dialogs).toEqual([]);
    expect(await page.locator('script').count()).toBe(0);
    expect(requests.every((u) => u.startsWith(svc.url))).toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'status-page.png'), fullPage: true });
    await page.close();
  });

  it("follows the reader's dark theme, and ?theme= chooses one", async () => {
    const dark = await open(browser, `${svc.url}/status/shop`, { colorScheme: 'dark' });
    expect(await background(dark.page)).toBe('rgb(13, 17, 23)');
    await dark.page.screenshot({ path: path.join(SHOTS, 'status-page-dark.png') });
    await dark.page.goto(`${svc.url}/status/shop?theme=light`);
    expect(await background(dark.page)).toBe('rgb(246, 248, 250)');
    await dark.page.close();
  });

  it("fits a phone's width without sideways scrolling", async () => {
    const { page } = await open(browser, `${svc.url}/status/shop`, { viewport: { width: 375, height: 740 }, isMobile: true, hasTouch: true });
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await page.locator('.subscribe-form button').isVisible()).toBe(true);
    await page.close();
  });

  it('serves the page on its custom domain (the browser resolves it to this machine only)', async () => {
    const port = new URL(svc.url).port;
    const mapped = await chromium.launch({
      executablePath: CHROMIUM,
      args: [...ARGS, '--host-resolver-rules=MAP status.shop.test 127.0.0.1, EXCLUDE localhost'],
    });
    try {
      const { page } = await open(mapped, `http://status.shop.test:${port}/`);
      expect(await page.locator('h1').textContent()).toBe('Shop status');
      expect(await page.locator('.service-name').count()).toBe(3);
      // Links on the domain stay on it.
      expect(await page.locator('link[rel=alternate]').getAttribute('href')).toBe('/feed.atom');
    } finally {
      await mapped.close();
    }
  });
});
