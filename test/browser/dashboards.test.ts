import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../support/service.js';

/** Debian's Chromium (installed by `npm run browser:install`); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** SCREENSHOTS=docs/img regenerates the README's pictures; otherwise they go to a scratch directory. */
const SHOTS = path.resolve(process.env.SCREENSHOTS ?? path.join(process.env.MONITORING_TEST_ROOT ?? '/tmp', `screenshots-${process.pid}`));

/**
 * What a viewer sees, in a real browser: the header and the right checks, pages flipping on their own, a
 * refresh picking up a new failing result without reloading, and a private page refusing a wrong key.
 */
describe('dashboards in Chromium', () => {
  let svc: TestService;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // Data documents are rebuilt every second here, so a refresh sees a result posted a moment before.
    svc = await startTestService({ DASHBOARD_CACHE_SECONDS: '1', STATE_SWEEP_INTERVAL_MS: '100' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  const post = async (p: string, body: unknown) => {
    const res = await svc.call('POST', p, { body });
    if (res.status >= 300) throw new Error(`${p}: ${res.status} ${res.text}`);
    return res.body;
  };
  const check = (name: string, tags: string[]) =>
    post('/v1/checks/api?autoAssignAlerts=false', { name, tags, request: { url: 'https://shop.example.test' } }) as Promise<{ id: string }>;
  let clock = Date.now() - 6 * 3_600_000;
  const report = async (checkId: string, outcomes: boolean[]) => {
    const results = outcomes.map((failed, i) => {
      clock += 60_000;
      const rt = 120 + ((i * 41) % 300);
      return {
        id: randomUUID(),
        checkId,
        checkType: 'API',
        runLocation: ['eu-west-1', 'us-east-1', 'ap-south-1'][i % 3],
        startedAt: new Date(clock).toISOString(),
        stoppedAt: new Date(clock + rt).toISOString(),
        hasFailures: failed,
        responseTime: rt,
        statusCode: failed ? 503 : 200,
      };
    });
    await post('/v1/check-results', { results });
  };
  const settled = (ids: string[]) =>
    waitFor(
      () => svc.deps.sql`select count(*)::int as n from check_statuses where check_id = any(${ids}::uuid[])`,
      ([r]) => r.n === ids.length,
    );
  const names = (page: Page) => page.locator('#checks > .check:visible .check-name').allTextContents();

  let shop: { id: string }[];

  beforeAll(async () => {
    shop = [];
    for (const [name, tags] of [
      ['Storefront', ['shop']],
      ['Checkout', ['shop', 'payments']],
      ['Payments API', ['payments']],
      ['Search', ['shop']],
      ['Recommendations', ['shop']],
    ] as const)
      shop.push(await check(name, [...tags]));
    await check('Internal admin', ['internal']);
    for (const [i, c] of shop.entries())
      await report(
        c.id,
        Array.from({ length: 30 }, (_, k) => i === 3 && k % 7 === 0),
      );
    await settled(shop.map((c) => c.id));
  }, 60_000);

  it('shows the header, the description and exactly the checks with its tags', async () => {
    await post('/v1/dashboards', {
      header: 'Acme shop status',
      description: 'Live status of the storefront and payments',
      customUrl: 'acme',
      tags: ['shop', 'payments'],
      paginate: false,
      showCheckRunLinks: true,
      expandChecks: true,
      refreshRate: 60,
    });
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${svc.url}/dashboards/acme`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Acme shop status');
    await expect(page.locator('.description').textContent()).resolves.toBe('Live status of the storefront and payments');
    expect((await names(page)).sort()).toEqual(['Checkout', 'Payments API', 'Recommendations', 'Search', 'Storefront']);
    await expect(page.locator('#overall').textContent()).resolves.toBe('All checks passing');
    // Expanded: each check's figures are visible, 24 h / 7 d / 30 d.
    await expect(page.locator('.check[data-check-id] table.figures').first().isVisible()).resolves.toBe(true);
    await page.screenshot({ path: path.join(SHOTS, 'dashboard.png'), fullPage: true });
    await page.close();
  });

  it('flips pages on its own every paginationRate seconds', async () => {
    await post('/v1/dashboards', { header: 'Paged', customUrl: 'paged', tags: ['shop', 'payments'], paginate: true, checksPerPage: 2, paginationRate: 30 });
    const page = await browser.newPage();
    await page.clock.install();
    await page.goto(`${svc.url}/dashboards/paged`);
    const first = await names(page);
    expect(first).toHaveLength(2);
    await expect(page.locator('#pager').textContent()).resolves.toMatch(/Page\s*1\s*of\s*3/);
    await page.clock.runFor(30_000);
    const second = await names(page);
    expect(second).toHaveLength(2);
    expect(second).not.toEqual(first);
    await expect(page.locator('#page-number').textContent()).resolves.toBe('2');
    await page.clock.runFor(60_000);
    await expect(page.locator('#page-number').textContent()).resolves.toBe('1');
    expect(await names(page)).toEqual(first);
    await page.close();
  });

  it('picks up a new failing result on refresh, without a reload', async () => {
    await post('/v1/dashboards', { header: 'Live', customUrl: 'live', tags: ['payments'], refreshRate: 60, paginate: false });
    const page = await browser.newPage();
    await page.clock.install();
    await page.goto(`${svc.url}/dashboards/live`);
    const payments = page.locator(`.check[data-check-id="${shop[2].id}"]`);
    await expect(payments.getAttribute('class')).resolves.toContain('status-passing');
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));

    await report(shop[2].id, [true]);
    await waitFor(
      () => svc.deps.sql`select has_failures from check_statuses where check_id = ${shop[2].id}`,
      ([r]) => r.has_failures === true,
    );
    await new Promise((r) => setTimeout(r, 1100)); // past the service's 1-second data cache
    await page.clock.runFor(60_000);
    await waitFor(
      () => payments.getAttribute('class'),
      (c) => c?.includes('status-failing') ?? false,
      10_000,
    );
    await expect(page.locator('#overall').textContent()).resolves.toBe('1 of 2 checks failing');
    // Same document: the page was redrawn, not reloaded.
    await expect(page.evaluate(() => (globalThis as unknown as { marker: number }).marker)).resolves.toBe(42);
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-failing.png'), fullPage: true });
    await page.close();
  });

  it('refuses a wrong key on a private page and opens with the right one', async () => {
    const d = (await post('/v1/dashboards', { header: 'Private board', customUrl: 'private-acme', tags: ['shop'], isPrivate: true })) as {
      keys: { rawKey: string }[];
    };
    const page = await browser.newPage();
    await page.goto(`${svc.url}/dashboards/private-acme`);
    await expect(page.locator('.login p').first().textContent()).resolves.toContain('This dashboard is private');
    await expect(page.locator('.check').count()).resolves.toBe(0);
    await page.fill('#key', 'dk_not-the-key');
    await page.click('button[type=submit]');
    await expect(page.locator('.error').textContent()).resolves.toBe('That key does not open this dashboard.');
    await expect(page.locator('.check').count()).resolves.toBe(0);
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-login.png') });
    await page.fill('#key', d.keys[0].rawKey);
    await page.click('button[type=submit]');
    await page.waitForURL(`${svc.url}/dashboards/private-acme/`);
    expect((await names(page)).length).toBeGreaterThan(0);
    await expect(page.locator('h1').textContent()).resolves.toBe('Private board');
    await page.close();
  });

  it('shows the API reference at /docs as it arrives, and opens the operation its address names', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url)) outside.push(r.url());
    });
    await page.goto(`${svc.url}/docs#createApiCheck`, { waitUntil: 'domcontentloaded' });
    await expect(page.locator('h1').textContent()).resolves.toContain('Monitoring Management API');
    expect(await page.locator('details.op').count()).toBeGreaterThan(150);
    await expect.poll(() => page.locator('#createApiCheck').evaluate((d) => (d as unknown as { open: boolean }).open)).toBe(true);
    await expect(page.locator('#createApiCheck .fields').first().isVisible()).resolves.toBe(true);
    expect(outside).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'api-reference.png') });
    await page.close();
  });

  it('renders the interactive reference at /docs/try from /openapi.json', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    await page.goto(`${svc.url}/docs/try`);
    // Swagger UI resolves an OpenAPI 3.1 document with its own (apidom) resolver before it draws anything: about
    // 5 s of the page's CPU on an idle machine (a profile: resolveSubtree 2.9 s, normalize 2.6 s), and more than
    // 20 s once on a loaded 2-core CI machine. /docs is the fast page; this one is given a minute.
    await page.waitForSelector('.opblock-tag', { timeout: 60_000 });
    await expect(page.locator('.info .title').first().textContent()).resolves.toContain('Monitoring Management API');
    await expect(page.locator('.opblock-summary-path').first().textContent()).resolves.toBe('/health');
    // The whole document is loaded (the page draws sections as they scroll into view).
    const paths = await page.evaluate(() => {
      const ui = (globalThis as unknown as { ui: { specSelectors: { specJson(): { toJS(): { paths: object } } } } }).ui;
      return Object.keys(ui.specSelectors.specJson().toJS().paths);
    });
    expect(paths).toContain('/v1/dashboards');
    expect(paths.length).toBeGreaterThan(100);
    expect(outside).toEqual([]);
    await page.close();
  }, 90_000);
});
