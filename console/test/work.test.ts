import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import jsQRModule from 'jsqr';
import * as OTPAuth from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/members.js';
import { hashPassword } from '../../src/accounts/passwords.js';
import { ensureUser, setPassword } from '../../src/accounts/users.js';
import { startAgentProcess } from '../../test/support/agents.js';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startHttpTarget } from '../../test/support/targets.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** SCREENSHOTS=docs/img regenerates the pictures in docs/console.md; otherwise a scratch directory. */
const SHOTS = path.resolve(process.env.SCREENSHOTS ?? path.join(process.env.MONITORING_TEST_ROOT ?? '/tmp', `screenshots-work-${process.pid}`));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'console test password';
// jsqr ships CommonJS whose default export is the function.
type JsQr = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR: JsQr = typeof jsQRModule === 'function' ? (jsQRModule as unknown as JsQr) : (jsQRModule as unknown as { default: JsQr }).default;

/**
 * The console as a new team works in it, from the console alone: an API check made from the form and tried before
 * saving, a browser check written in the editor and run to its screenshot, a heartbeat pinged, a status page with an
 * incident, a private location whose agent comes and goes in the fleet view, a second factor from its QR code, an
 * invitation without a mail server, and a Read & Run member who sees no control that changes anything. Bad input is
 * refused at its field and stores nothing; axe-core holds on every new screen, light and dark, and at a phone's width.
 */
describe('the console, as a new team works in it', { timeout: 240_000 }, () => {
  let svc: TestService;
  let site: HttpTarget;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    site = await startHttpTarget();
    svc = await startTestService({ RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1', AGENT_SEEN_SECONDS: '15' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    for (const [email, role] of [
      ['olive@shop.test', 'OWNER'],
      ['tess@shop.test', 'READ_WRITE'],
      ['rita@shop.test', 'READ_RUN'],
    ] as const) {
      const user = await ensureUser(
        svc.deps.sql,
        email,
        email.split('@')[0]!.replace(/^./, (c) => c.toUpperCase()),
      );
      await setPassword(svc.deps.sql, user.id, await hashPassword(PASSWORD));
      await addMember(svc.deps.sql, svc.defaultAccountId, user.id, role);
    }
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await site?.close();
  });

  async function signedIn(
    email = 'olive@shop.test',
    options: { colorScheme?: 'light' | 'dark'; width?: number } = {},
  ): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, colorScheme: options.colorScheme ?? 'light' });
    const page = await context.newPage();
    await page.goto(`${svc.url}/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Checks' }).waitFor();
    return { context, page };
  }

  async function expectAccessible(page: Page, what: string) {
    await page.evaluate(AXE);
    const violations = (await page.evaluate(
      `axe.run({ resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`,
    )) as string[];
    expect(violations, `${what}: ${violations.join('\n')}`).toEqual([]);
  }

  const checkCount = async () => (await svc.call('GET', '/v1/checks?limit=100')).body.length as number;
  const storedResults = async () => Number((await svc.deps.store.query<{ n: number }>('SELECT count() AS n FROM check_results', {}))[0]!.n);

  it('makes an API check with two assertions from the form, runs it before saving (the target sees it, nothing is stored), saves it, finds it on Home', async () => {
    const { context, page } = await signedIn();
    await page.getByRole('link', { name: 'New check' }).click();
    await page.getByRole('heading', { name: 'New check' }).waitFor();
    await expectAccessible(page, 'the type chooser');
    await page.screenshot({ path: path.join(SHOTS, 'console-new-check.png'), fullPage: true });
    await page.getByRole('link', { name: /^API/ }).click();
    await page.getByRole('heading', { name: 'New API check' }).waitFor();
    await page.getByLabel('Name', { exact: true }).first().fill('Shop health');
    await page.getByLabel('URL', { exact: true }).fill(`${site.url}/ok`);
    await page.getByRole('button', { name: 'Add assertion' }).click();
    const second = page.getByRole('group', { name: 'Assertions 2' });
    await second.getByLabel('Source').selectOption('JSON_BODY');
    await second.getByLabel('JSON path').fill('$.status');
    await second.getByLabel('Target').fill('ok');

    const before = { checks: await checkCount(), results: await storedResults(), hits: site.hits('/ok').length };
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = page.locator('.trial-result');
    await result.getByText('Passing').first().waitFor({ timeout: 60_000 });
    // Each assertion with the value the run saw.
    const rows = result.locator('table tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toMatch(/JSON body.*\$\.status.*equals.*ok.*ok.*Passed/);
    expect(await result.getByRole('heading', { name: 'Response' }).count()).toBe(1);
    expect(site.hits('/ok').length).toBe(before.hits + 1);
    expect(await checkCount()).toBe(before.checks);
    expect(await storedResults()).toBe(before.results);
    await expectAccessible(page, 'the API form with its trial');
    await page.screenshot({ path: path.join(SHOTS, 'console-api-form.png'), fullPage: true });

    await page.getByRole('button', { name: 'Create check' }).click();
    await page.waitForURL(/\/checks\/[0-9a-f-]{36}$/);
    await page.getByRole('heading', { name: 'Shop health' }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const stored = (await svc.call('GET', `/v1/checks/${id}`)).body;
    expect(stored.request).toMatchObject({ url: `${site.url}/ok`, method: 'GET' });
    expect(stored.request.assertions).toEqual([
      expect.objectContaining({ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }),
      expect.objectContaining({ source: 'JSON_BODY', property: '$.status', comparison: 'EQUALS', target: 'ok' }),
    ]);
    await page.getByRole('link', { name: '← Checks' }).click();
    await page.locator(`tr[data-check-id="${id}"]`).waitFor();

    // Edit opens the same form, filled in; a change is saved.
    await page.goto(`${svc.url}/checks/${id}/edit`);
    await page.getByRole('heading', { name: 'Edit Shop health' }).waitFor();
    expect(await page.getByLabel('URL', { exact: true }).inputValue()).toBe(`${site.url}/ok`);
    await page.getByLabel('Run every').selectOption({ label: '5 minutes' });
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(new RegExp(`/checks/${id}$`));
    expect((await svc.call('GET', `/v1/checks/${id}`)).body.frequency).toBe(5);
    await context.close();
  });

  it('refuses bad input at its field and stores nothing: a URL that is none, a mail address that is none', async () => {
    const { context, page } = await signedIn();
    const before = await checkCount();
    await page.goto(`${svc.url}/checks/new?type=api`);
    await page.getByLabel('Name', { exact: true }).first().fill('Broken');
    await page.getByLabel('URL', { exact: true }).fill('not a url at all');
    await page.getByRole('button', { name: 'Create check' }).click();
    const url = page.getByLabel('URL', { exact: true });
    await expect.poll(() => url.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field.invalid .field-error').first().textContent()).toMatch(/must/);
    expect(await page.getByRole('alert').first().textContent()).toBeTruthy();
    expect(await checkCount()).toBe(before);
    await expectAccessible(page, 'the API form, refused');

    await page.goto(`${svc.url}/alerts/new`);
    await page.getByLabel('Kind').selectOption('EMAIL');
    await page.getByLabel('Email address').fill('nobody-at-all');
    await page.getByRole('button', { name: 'Create alert channel' }).click();
    await expect.poll(() => page.getByLabel('Email address').getAttribute('aria-invalid')).toBe('true');
    expect((await svc.call('GET', '/v1/alert-channels')).body).toHaveLength(0);
    await context.close();
  });

  it('makes a browser check in the code editor and runs it to its screenshot', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/checks/new?type=browser`);
    await page.getByRole('heading', { name: 'New Browser check' }).waitFor();
    const editor = page.locator('.cm-content');
    await editor.waitFor();
    // A working example to start from.
    expect(await editor.textContent()).toContain("require('@playwright/test')");
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(
      `const { test, expect } = require('@playwright/test');\n` +
        `test('shop', async ({ page }, testInfo) => {\n` +
        `  await page.goto('${site.url}/shop');\n` +
        `  await page.getByRole('button', { name: 'Add to cart' }).click();\n` +
        `  await expect(page.locator('#count')).toHaveText('1');\n` +
        `  await page.screenshot({ path: testInfo.outputPath('shop.png') });\n` +
        `  await testInfo.attach('shop', { path: testInfo.outputPath('shop.png'), contentType: 'image/png' });\n` +
        `});\n`,
    );
    await page.getByLabel('Name', { exact: true }).first().fill('Shop journey');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = page.locator('.trial-result');
    await result.getByText('Passing').first().waitFor({ timeout: 120_000 });
    await result.getByRole('img', { name: /^Screenshot: shop.*\.png$/ }).waitFor({ timeout: 30_000 });
    await result.getByRole('heading', { name: 'Steps' }).waitFor();
    await expectAccessible(page, 'the browser form with its trial');
    await page.screenshot({ path: path.join(SHOTS, 'console-browser-form.png'), fullPage: true });
    await page.getByRole('button', { name: 'Create check' }).click();
    await page.waitForURL(/\/checks\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    expect((await svc.call('GET', `/v1/checks/${id}`)).body.script).toContain(`${site.url}/shop`);
    await context.close();
  });

  it('makes a heartbeat and shows its ping URL to copy; a ping to it counts', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/checks/new?type=heartbeat`);
    await page.getByLabel('Name', { exact: true }).first().fill('Nightly backup');
    await page.getByLabel('Expect a ping every').fill('1');
    await page.getByRole('button', { name: 'Create check' }).click();
    await page.getByRole('heading', { name: 'Ping URL' }).waitFor();
    await expectAccessible(page, 'a heartbeat with its ping URL');
    await page.screenshot({ path: path.join(SHOTS, 'console-heartbeat.png'), fullPage: true });
    const url = (await page.locator('.copybox code').first().textContent())!;
    expect(url).toMatch(/^http:\/\/(localhost|127\.0\.0\.1):\d+\/ping\/[\w-]+$/);
    expect(await page.locator('.copybox code').nth(1).textContent()).toBe(`curl -fsS -m 10 --retry 3 ${url}`);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const ping = await fetch(url.replace('localhost', '127.0.0.1'));
    expect(ping.status).toBeLessThan(300);
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${id}`),
      (r) => r.status === 200 && r.body.hasFailures === false,
    );
    await context.close();
  });

  it('makes a status page with a service, declares an incident and posts an update, shown on the public page', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/status-pages`);
    await page.getByLabel('New service').fill('Checkout');
    await page.getByRole('button', { name: 'Add service' }).click();
    await page.getByText('Checkout', { exact: true }).waitFor();
    await page.getByRole('link', { name: 'New status page' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Shop status');
    await page.getByLabel('Address', { exact: true }).fill('shop-status');
    await page.getByRole('group', { name: 'Cards 1' }).getByLabel('Checkout').check();
    await expectAccessible(page, 'the status page form');
    await page.getByRole('button', { name: 'Create status page' }).click();
    await page.getByRole('link', { name: 'Shop status', exact: true }).waitFor();

    await page.getByRole('link', { name: 'Declare an incident' }).click();
    await page.getByLabel('What is happening').fill('Checkout is slow');
    await page.getByLabel('Severity').selectOption('MINOR');
    await page.getByLabel('Checkout').check();
    await page.getByLabel('First update').fill('Looking into it');
    await expectAccessible(page, 'the incident form');
    await page.getByRole('button', { name: 'Declare' }).click();
    await page.getByRole('region', { name: 'Checkout is slow' }).waitFor();
    await page.getByLabel('Update', { exact: true }).fill('A fix is out');
    await page.getByRole('button', { name: 'Post update' }).click();
    await page.getByText('A fix is out').waitFor();
    await expectAccessible(page, 'status pages');
    await page.screenshot({ path: path.join(SHOTS, 'console-status-pages.png'), fullPage: true });
    const publicPage = await (await fetch(`${svc.url}/status/shop-status`)).text();
    expect(publicPage).toContain('Checkout is slow');
    await context.close();
  });

  it('makes a private location, copies its key, and sees its agent online in the fleet view, then offline once stopped', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/private-locations`);
    await page.getByLabel('Name', { exact: true }).fill('Office');
    await page.getByLabel('Short name').fill('office');
    await page.getByRole('button', { name: 'Create location' }).click();
    await page.getByRole('heading', { name: 'Office is ready' }).waitFor();
    const key = (await page.locator('.notice .copybox code').first().textContent())!;
    expect(key.length).toBeGreaterThan(20);
    const agent = await startAgentProcess({ apiUrl: svc.url, apiKey: key, concurrency: 1 });
    try {
      const fleet = page.locator('[data-location="office"]');
      await fleet.getByText('1 of 1 agent online').waitFor({ timeout: 30_000 });
      expect(await fleet.getByRole('cell', { name: 'Online' }).count()).toBe(1);
      await expectAccessible(page, 'the fleet view');
      await page.screenshot({ path: path.join(SHOTS, 'console-private-locations.png'), fullPage: true });
      await agent.stop();
      await fleet.getByRole('cell', { name: 'Offline' }).waitFor({ timeout: 40_000 });
      expect(await fleet.getByText('0 of 1 agent online').count()).toBe(1);
    } finally {
      await agent.stop();
      agent.remove();
    }
    await context.close();
  });

  it('sets up a second factor from the QR code, with recovery codes to download', async () => {
    const { context, page } = await signedIn('tess@shop.test');
    await page.goto(`${svc.url}/settings/profile`);
    await page.getByRole('button', { name: 'Set up' }).click();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    // Read the code as a phone would: from the picture.
    const png = PNG.sync.read(await qr.screenshot());
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(decoded?.data).toMatch(/^otpauth:\/\/totp\//);
    const totp = OTPAuth.URI.parse(decoded!.data) as OTPAuth.TOTP;
    await expectAccessible(page, 'second factor set-up');
    await page.screenshot({ path: path.join(SHOTS, 'console-second-factor.png'), fullPage: true });
    // A wrong code is said to be wrong, at its field.
    await page.getByLabel('Code from the app').fill('000000' === totp.generate() ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => page.getByLabel('Code from the app').getAttribute('aria-invalid')).toBe('true');
    await page.getByLabel('Code from the app').fill(totp.generate());
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText(/Keep these recovery codes/).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download them' }).click()]);
    const codes = readFileSync((await download.path())!, 'utf8');
    expect(codes.trim().split('\n').slice(2)).toHaveLength(10);
    await context.close();
  });

  it('invites without a mail server: the link is shown to copy, and the Join page names the account and who invited', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/settings/members`);
    await page.getByLabel('Invite by email').fill('newbie@shop.test');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(/This service sends no mail/).waitFor();
    const link = (await page.locator('.notice .copybox code').textContent())!;
    expect(link).toMatch(/\/invitations\/accept\?token=/);
    expect(await svc.deps.sql`select 1 from account_mails where to_address = 'newbie@shop.test'`).toHaveLength(0);
    await context.close();

    const fresh = await browser.newContext();
    const join = await fresh.newPage();
    await join.goto(link);
    // The page names the account and who invited, once the link's invitation is read.
    await join.getByText(/olive@shop\.test invites you \(newbie@shop\.test\) to \S+ as Read & write/).waitFor();
    expect(await join.getByRole('heading', { name: /^Join / }).textContent()).not.toBe('Join the account');
    await expectAccessible(join, 'the join page');
    await join.getByLabel('Your name').fill('Nina Newbie');
    await join.getByLabel('Password', { exact: true }).fill('joining the shop team');
    await join.getByRole('button', { name: 'Join' }).click();
    await join.getByRole('heading', { name: 'Checks' }).waitFor();
    await fresh.close();
  });

  it('explains a failed run from its page: what changed since the last passing run, and what to do', async () => {
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'Cart API', request: { url: `${site.url}/ok` } } });
    const start = Date.now() - 10 * 60_000;
    const run = (i: number, status: number) => ({
      id: crypto.randomUUID(),
      checkId: check.body.id,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(start + i * 60_000).toISOString(),
      stoppedAt: new Date(start + i * 60_000 + 40).toISOString(),
      hasFailures: status !== 200,
      responseTime: 40,
      apiCheckResult: {
        request: { method: 'GET', url: `${site.url}/ok` },
        response: {
          status,
          statusText: status === 200 ? 'OK' : 'Service Unavailable',
          headers: {},
          body: status === 200 ? '{"status":"ok"}' : '{"error":"down"}',
        },
        assertions: [],
        requestError: null,
        ...(status === 200 ? {} : { errors: [{ message: 'Status code 503' }] }),
      },
    });
    const runs = [run(0, 200), run(1, 503)];
    expect((await svc.call('POST', '/v1/check-results', { body: { results: runs } })).status).toBe(202);
    await waitFor(
      () => svc.call('GET', `/v1/error-groups/checks/${check.body.id}`),
      (r) => r.body.length === 1,
    );
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/checks/${check.body.id}/results/${runs[1]!.id}`);
    await page.getByRole('button', { name: 'Explain this failure' }).click();
    await page.getByText('What to do:').waitFor();
    expect(
      await page
        .getByText(/answered 503 Service Unavailable where it answered 200 at the last passing run/)
        .first()
        .isVisible(),
    ).toBe(true);
    await expectAccessible(page, 'a failed run, explained');
    await context.close();
  });

  it('a Read & Run member sees no control that creates or changes anything, and may still run a check', async () => {
    const owner = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'Catalog', locations: ['eu-west-1'], request: { url: `${site.url}/ok` } },
    });
    const { context, page } = await signedIn('rita@shop.test');
    expect(await page.getByRole('link', { name: 'New check' }).count()).toBe(0);
    await page.goto(`${svc.url}/checks/${owner.body.id}`);
    await page.getByRole('button', { name: 'Run now' }).waitFor();
    for (const name of ['Edit', 'Clone', 'Delete', 'Pause']) {
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
      expect(await page.getByRole('link', { name }).count(), name).toBe(0);
    }
    for (const [where, control] of [
      ['/alerts', 'New alert channel'],
      ['/groups', 'New group'],
      ['/maintenance', 'New maintenance window'],
      ['/status-pages', 'New status page'],
      ['/dashboards', 'New dashboard'],
      ['/variables', 'New variable'],
    ] as const) {
      await page.goto(`${svc.url}${where}`);
      await page.locator('main h1').waitFor();
      expect(await page.getByRole('link', { name: control }).count(), where).toBe(0);
      expect(await page.getByRole('link', { name: /^Edit / }).count(), where).toBe(0);
    }
    await page.goto(`${svc.url}/private-locations`);
    await page.getByRole('heading', { name: 'Private locations' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create location' }).count()).toBe(0);
    await page.goto(`${svc.url}/checks/new?type=api`);
    await page.getByText(/Your role in this account does not change checks/).waitFor();
    await page.goto(`${svc.url}/settings/keys`);
    await page.getByText(/service keys are for its admins/).waitFor();
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    await expectAccessible(page, 'a Read & Run member');
    await context.close();
  });

  it('every new screen holds up to axe in light and dark and at a phone width, without sideways scrolling', async () => {
    const screens = [
      '/checks/new',
      '/checks/new?type=api',
      '/checks/new?type=tcp',
      '/checks/new?type=dns',
      '/checks/new?type=ssl',
      '/checks/new?type=icmp',
      '/checks/new?type=grpc',
      '/checks/new?type=traceroute',
      '/checks/new?type=url',
      '/checks/new?type=heartbeat',
      '/checks/new?type=browser',
      '/groups',
      '/groups/new',
      '/alerts',
      '/alerts/new',
      '/maintenance/new',
      '/status-pages',
      '/status-pages/new',
      '/status-pages/incidents/new',
      '/dashboards',
      '/edit/dashboards/new',
      '/variables',
      '/variables/new',
      '/private-locations',
    ];
    for (const look of [
      { colorScheme: 'light' as const, width: 1280 },
      { colorScheme: 'dark' as const, width: 1280 },
      { colorScheme: 'light' as const, width: 390 },
    ]) {
      const { context, page } = await signedIn('olive@shop.test', look);
      for (const where of screens) {
        await page.goto(`${svc.url}${where}`);
        await page.locator('main h1').first().waitFor();
        await page.locator('[role="status"]:has-text("Loading")').waitFor({ state: 'detached' });
        await expectAccessible(page, `${where}, ${look.colorScheme}, ${look.width}px`);
        if (look.width < 500) {
          const fits = await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1');
          expect(fits, `${where} scrolls sideways at ${look.width}px`).toBe(true);
        }
      }
      if (look.colorScheme === 'dark') {
        await page.goto(`${svc.url}/checks/new?type=browser`);
        await page.locator('.cm-content').waitFor();
        await page.screenshot({ path: path.join(SHOTS, 'console-browser-form-dark.png'), fullPage: true });
      }
      if (look.width < 500) {
        await page.goto(`${svc.url}/checks/new?type=api`);
        await page.getByLabel('URL', { exact: true }).waitFor();
        await page.screenshot({ path: path.join(SHOTS, 'console-api-form-phone.png'), fullPage: true });
      }
      await context.close();
    }
  });
});
