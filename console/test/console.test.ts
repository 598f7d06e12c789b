import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as OTPAuth from 'otpauth';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/members.js';
import { hashPassword } from '../../src/accounts/passwords.js';
import { ensureUser, setPassword } from '../../src/accounts/users.js';
import { startOidcProvider } from '../../test/support/oidc-provider.js';
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
/** SCREENSHOTS=docs/img regenerates the pictures in docs/console.md and the README; otherwise a scratch directory. */
const SHOTS = path.resolve(process.env.SCREENSHOTS ?? path.join(process.env.MONITORING_TEST_ROOT ?? '/tmp', `screenshots-${process.pid}`));
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'console test password';

/**
 * The console in Chromium, as members use it: signing in, Home, a failing run investigated down to its screenshot,
 * run now with its live progress, an edit the API refuses shown at its field, a read-only member, the keyboard,
 * both themes, a phone's width, and axe-core on every screen (no serious or critical violation).
 */
describe('the console in Chromium', { timeout: 180_000 }, () => {
  let svc: TestService;
  let site: HttpTarget;
  let browser: Browser;
  const checks: Record<string, string> = {};

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    site = await startHttpTarget();
    svc = await startTestService({ RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    for (const [email, role] of [
      ['olive@shop.test', 'OWNER'],
      ['reed@shop.test', 'READ_ONLY'],
    ] as const) {
      const user = await ensureUser(svc.deps.sql, email, email === 'olive@shop.test' ? 'Olive Owner' : 'Reed Reader');
      await setPassword(svc.deps.sql, user.id, await hashPassword(PASSWORD));
      await addMember(svc.deps.sql, svc.defaultAccountId, user.id, role);
    }
    const create = async (segment: string, body: Record<string, unknown>) => {
      const res = await svc.call('POST', `/v1/checks/${segment}?autoAssignAlerts=false`, { body: { locations: ['eu-west-1'], frequency: 10, ...body } });
      if (res.status !== 201) throw new Error(`${segment}: ${res.status} ${res.text}`);
      return res.body.id as string;
    };
    checks.checkout = await create('api', {
      name: 'Checkout API',
      tags: ['shop'],
      request: { url: `${site.url}/fail`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
    });
    checks.catalog = await create('api', { name: 'Catalog <b>API</b>', tags: ['shop', 'search'], request: { url: `${site.url}/ok` } });
    checks.cart = await create('browser', {
      name: 'Cart journey',
      tags: ['shop'],
      environmentVariables: [{ key: 'SITE', value: site.url }],
      script: `const { test, expect } = require('@playwright/test');
        test('cart', async ({ page }) => {
          await page.goto(process.env.SITE + '/shop');
          await expect(page.locator('#count')).toHaveText('3', { timeout: 1000 });
        });`,
    });
    checks.paused = await create('api', { name: 'Old endpoint', activated: false, request: { url: `${site.url}/ok` } });
    // A day of history, with failures in the last hour of the checkout.
    const now = Date.now();
    const results = [];
    for (let i = 0; i < 144; i++) {
      for (const [id, fails] of [
        [checks.checkout, i < 6],
        [checks.catalog, false],
      ] as const) {
        const at = now - i * 600_000 - 30_000;
        results.push({
          id: randomUUID(),
          checkId: id,
          checkType: 'API',
          runLocation: 'eu-west-1',
          startedAt: new Date(at).toISOString(),
          stoppedAt: new Date(at + 180).toISOString(),
          hasFailures: fails,
          responseTime: 150 + (i % 7) * 20,
          statusCode: fails ? 500 : 200,
        });
      }
    }
    for (let i = 0; i < results.length; i += 100) await svc.call('POST', '/v1/check-results', { body: { results: results.slice(i, i + 100) } });
    await waitFor(
      () => svc.call('GET', '/v1/check-statuses'),
      (r) => r.body.length === 2,
    );
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
    await page.goto(`${svc.url}/`);
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Checks' }).waitFor();
    return { context, page };
  }

  /** axe-core on the page as it is: no serious or critical violation (evaluated over the DevTools protocol: the page's policy allows no injected script). */
  async function expectAccessible(page: Page, what: string) {
    await page.evaluate(AXE);
    const violations = (await page.evaluate(
      `axe.run({ resultTypes: ['violations'] }).then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => v.id + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')))`,
    )) as string[];
    expect(violations, `${what}: ${violations.join('\n')}`).toEqual([]);
  }

  const noSidewaysScroll = (page: Page) =>
    page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1') as Promise<boolean>;

  it('refuses a wrong password, signs in, and serves its pages with a policy that allows no inline script', async () => {
    const res = await fetch(`${svc.url}/`);
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self';/);
    expect(res.headers.get('content-security-policy')).not.toMatch(/unsafe-inline'?;?\s*[^;]*script/);
    expect(await res.text()).not.toMatch(/<script>(?!<\/script>)/);

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${svc.url}/checks/${checks.checkout}`);
    await page.waitForURL(/\/sign-in\?next=/);
    await expectAccessible(page, 'sign-in');
    await page.screenshot({ path: path.join(SHOTS, 'console-sign-in.png') });
    await page.getByLabel('Email').fill('olive@shop.test');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Wrong email or password/);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back where the link pointed.
    await page.getByRole('heading', { name: 'Checkout API' }).waitFor();
    await context.close();
  });

  it('Home shows every check with its state, failing first, filters and searches, and escapes what checks are named', async () => {
    const { context, page } = await signedIn();
    const rows = page.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(4);
    expect(await rows.first().locator('td').first().textContent()).toContain('Checkout API');
    expect(await rows.first().getByText('Failing').count()).toBe(1);
    // Text stays text.
    expect(await page.getByText('Catalog <b>API</b>').count()).toBe(1);
    expect(await page.locator('tbody b').count()).toBe(0);
    await expect.poll(() => page.locator('[data-check-id] .strip').count()).toBeGreaterThan(0);
    await page.getByLabel('State', { exact: true }).selectOption('paused');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Old endpoint');
    await page.getByLabel('State', { exact: true }).selectOption('');
    await page.getByLabel('Search', { exact: true }).fill('catalog');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Search', { exact: true }).fill('');
    await expectAccessible(page, 'Home');
    await page.screenshot({ path: path.join(SHOTS, 'console-home.png'), fullPage: true });
    await context.close();
  });

  it('a failing check tells its story: its runs by bucket, the runs of a bucket, a run with its response and the failed assertion', async () => {
    const { context, page } = await signedIn();
    await page.getByRole('link', { name: 'Checkout API' }).click();
    await page.getByRole('heading', { name: 'Results' }).waitFor();
    await expect.poll(() => page.locator('.bar').count()).toBe(60);
    await page.locator('.bar[data-failed]:not([data-failed="0"])').first().waitFor();
    await expectAccessible(page, 'a check');
    await page.screenshot({ path: path.join(SHOTS, 'console-check.png'), fullPage: true });
    // The newest bar with a failure lists its runs.
    const failingBar = page.locator('.bar[data-failed]:not([data-failed="0"])').last();
    await failingBar.click();
    await page.getByRole('heading', { name: /^Runs from/ }).waitFor();
    await page.locator('table a').first().click();
    await page.getByRole('heading', { name: /^Run of/ }).waitFor();
    expect(await page.getByText('Failing').count()).toBeGreaterThan(0);
    // A run the service made itself tells the whole story, not one error line: the request, the response with its
    // timing phases, and each assertion with the value the run saw.
    await page.goto(`${svc.url}/checks/${checks.checkout}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    const runLink = page.getByRole('region', { name: 'Run now' }).getByRole('link', { name: 'the run' });
    await runLink.waitFor({ timeout: 60_000 });
    await runLink.click();
    await page.getByRole('heading', { name: 'Assertions' }).waitFor();
    const request = page.getByRole('region', { name: 'Request' });
    expect(await request.textContent()).toContain(`GET ${site.url}/fail`);
    const response = page.getByRole('region', { name: 'Response' });
    expect(await response.textContent()).toMatch(/Status 5\d\d/);
    expect(await response.locator('.phases dt').count()).toBeGreaterThan(2);
    const assertion = page.getByRole('region', { name: 'Assertions' }).locator('tbody tr').first();
    expect((await assertion.locator('td').allTextContents()).map((t) => t.trim())).toEqual([
      'Status code',
      '',
      'equals',
      '200',
      expect.stringMatching(/^5\d\d$/),
      expect.stringMatching(/.+/),
    ]);
    await expectAccessible(page, 'a run');
    await context.close();
  });

  it('runs a browser check now with live progress, and its failed run shows the failing line and the screenshot', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/checks/${checks.cart}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page
      .getByRole('region', { name: 'Run now' })
      .getByText(/running|started|progress/i)
      .first()
      .waitFor();
    const link = page.getByRole('region', { name: 'Run now' }).getByRole('link', { name: 'the run' });
    await link.waitFor({ timeout: 90_000 });
    await link.click();
    await page.getByRole('heading', { name: 'Errors' }).waitFor();
    expect(await page.locator('.run-error').textContent()).toMatch(/toHaveText/);
    expect(await page.locator('.run-error').textContent()).toMatch(/At line \d+/);
    const shot = page.getByRole('img', { name: /^Screenshot:/ });
    await shot.waitFor();
    await expect
      .poll(() =>
        shot.evaluate(
          (img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth > 0,
        ),
      )
      .toBe(true);
    await expectAccessible(page, 'a failed browser run');
    await page.screenshot({ path: path.join(SHOTS, 'console-browser-run.png'), fullPage: true });
    // The check's errors, grouped, each with how often and where.
    await page.goto(`${svc.url}/checks/${checks.cart}`);
    await expect
      .poll(() => page.locator('section[aria-labelledby="errors-title"] li').first().textContent(), { timeout: 20_000 })
      .toMatch(/toHaveText.*· 1 time in 1 location · last/s);
    await context.close();
  });

  it('an edit the API refuses shows its error at the field and changes nothing', async () => {
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/checks/${checks.catalog}`);
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: /^Edit Catalog/ }).waitFor();
    const name = page.getByLabel('Name', { exact: true }).first();
    // An empty name: the API refuses it, and says so at the field.
    await name.fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field.invalid .field-error').first().textContent()).toMatch(/characters|empty|short|required/i);
    await expectAccessible(page, 'the edit form');
    expect((await svc.call('GET', `/v1/checks/${checks.catalog}`)).body.name).toBe('Catalog <b>API</b>');
    await name.fill('Catalog API v2');
    await page.getByLabel('Run every').selectOption({ label: '5 minutes' });
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await svc.call('GET', `/v1/checks/${checks.catalog}`)).body).toMatchObject({ name: 'Catalog API v2', frequency: 5 });
    await context.close();
  });

  it('a read-only member sees no control that writes, and the settings it may read', async () => {
    const { context, page } = await signedIn('reed@shop.test');
    await page.goto(`${svc.url}/checks/${checks.catalog}`);
    await page.getByRole('heading', { name: 'Results' }).waitFor();
    for (const name of ['Run now', 'Pause', 'Edit', 'Delete', 'Clone']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    await page.goto(`${svc.url}/settings/members`);
    await page.getByRole('heading', { name: 'Members and invitations' }).waitFor();
    expect(await page.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    await expectAccessible(page, 'members (read-only)');
    await context.close();
  });

  it('works from the keyboard: skip link, search, and a check opened with Enter', async () => {
    const { context, page } = await signedIn();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Skip to content');
    await page.getByLabel('Search', { exact: true }).focus();
    await page.keyboard.type('Checkout');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('link', { name: 'Checkout API' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Checkout API' }).waitFor();
    await context.close();
  });

  it('the settings screens, in the dark theme and at a phone width, without sideways scrolling', async () => {
    const { context, page } = await signedIn('olive@shop.test', { colorScheme: 'dark', width: 390 });
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('dark');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(4);
    expect(await noSidewaysScroll(page)).toBe(true);
    await expectAccessible(page, 'Home, dark, phone');
    await page.screenshot({ path: path.join(SHOTS, 'console-home-dark-phone.png'), fullPage: true });
    for (const [p, heading] of [
      ['/settings/profile', 'Password'],
      ['/settings/keys', 'Service API keys'],
      ['/settings/members', 'Members and invitations'],
      ['/settings/audit', 'Audit log'],
      ['/settings/account', 'default'],
    ] as const) {
      await page.goto(`${svc.url}${p}`);
      await page.getByRole('heading', { name: heading }).waitFor();
      expect(await noSidewaysScroll(page), p).toBe(true);
      await expectAccessible(page, p);
    }
    await page.goto(`${svc.url}/checks/${checks.checkout}`);
    await page.getByRole('heading', { name: 'Results' }).waitFor();
    expect(await noSidewaysScroll(page)).toBe(true);
    await expectAccessible(page, 'a check, dark, phone');
    await context.close();
    const wide = await signedIn('olive@shop.test', { colorScheme: 'dark' });
    await wide.page.goto(`${svc.url}/settings/members`);
    await wide.page.getByRole('heading', { name: 'Members and invitations' }).waitFor();
    await wide.page.screenshot({ path: path.join(SHOTS, 'console-settings.png'), fullPage: true });
    await wide.context.close();
  });

  it('every other screen answers and holds up to axe: reports with their CSV, alerts with a test message, maintenance, status pages, dashboards, private locations', async () => {
    const { startHttpReceiver } = await import('../../test/support/receivers.js');
    const receiver = await startHttpReceiver();
    const { context, page } = await signedIn();
    try {
      await page.goto(`${svc.url}/reports`);
      await page.getByRole('heading', { name: 'Reports' }).waitFor();
      await page.locator('tbody tr').first().waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
      const csv = readFileSync((await download.path())!, 'utf8');
      expect(csv.split('\n')[0]).toBe('check,checkId,type,tags,successRatio,avgMs,p95Ms,p99Ms');
      expect(csv).toContain(checks.checkout);
      await expectAccessible(page, 'reports');

      await page.goto(`${svc.url}/alerts`);
      await page.getByRole('heading', { name: 'Alert channels' }).waitFor();
      await page.getByRole('link', { name: 'New alert channel' }).click();
      await page.getByLabel('Kind', { exact: true }).selectOption('WEBHOOK');
      await page.getByLabel('Name', { exact: true }).fill('Ops hook');
      await page.getByLabel('URL', { exact: true }).fill(`${receiver.url}/console-hook`);
      await expectAccessible(page, 'a webhook channel');
      await page.getByRole('button', { name: 'Create alert channel' }).click();
      await page.getByRole('button', { name: 'Send a test to Ops hook' }).click();
      await page.getByText(/Test delivered/).waitFor();
      expect(receiver.to('/console-hook')).toHaveLength(1);
      await expectAccessible(page, 'alerts');

      await page.goto(`${svc.url}/maintenance/new`);
      await page.getByLabel('Name', { exact: true }).fill('Database upgrade');
      await page.getByLabel('Starts', { exact: true }).fill('2030-01-01T01:00');
      await page.getByLabel('Ends', { exact: true }).fill('2030-01-01T03:00');
      await page.getByRole('button', { name: 'Create maintenance window' }).click();
      await page.getByRole('cell', { name: 'Database upgrade', exact: true }).waitFor();
      await expectAccessible(page, 'maintenance');

      const service = (await svc.call('POST', '/v1/status-pages/services', { body: { name: 'Checkout' } })).body;
      await svc.call('POST', '/v1/status-pages', {
        body: { name: 'Shop status', url: 'shop-status', cards: [{ name: 'Shop', services: [{ id: service.id }] }] },
      });
      await svc.call('POST', '/v1/status-pages/incidents', {
        body: { name: 'Slow checkout', severity: 'MINOR', services: [{ id: service.id }], incidentUpdates: [{ description: 'Looking into it' }] },
      });
      await page.goto(`${svc.url}/status-pages`);
      await page.getByRole('link', { name: 'Shop status', exact: true }).waitFor();
      await page.getByLabel('Update', { exact: true }).fill('A fix is out');
      await page.getByRole('button', { name: 'Post update' }).click();
      await page.getByText('A fix is out').waitFor();
      await expectAccessible(page, 'status pages');

      await svc.call('POST', '/v1/dashboards', { body: { header: 'Shop wall', customUrl: 'shop-wall' } });
      await page.goto(`${svc.url}/dashboards`);
      await page.getByRole('link', { name: 'Shop wall', exact: true }).waitFor();
      await expectAccessible(page, 'dashboards');

      await svc.call('POST', '/v1/private-locations', { body: { name: 'Office', slugName: 'office' } });
      await page.goto(`${svc.url}/private-locations`);
      await page.getByRole('heading', { name: /Office/ }).waitFor();
      await expectAccessible(page, 'private locations');
    } finally {
      await context.close();
      await receiver.close();
    }
  });

  it('an invitation accepted from its link makes a member, signed in', async () => {
    // No mail server here: the answer carries the link to hand over.
    const invite = await svc.call('POST', '/v1/accounts/me/invitations', { body: { email: 'newbie@shop.test', role: 'READ_RUN' } });
    expect(invite.status).toBe(201);
    expect(invite.body).toMatchObject({ mailSent: false, acceptUrl: expect.stringMatching(/\/invitations\/accept\?token=/) });
    const link = new URL(invite.body.acceptUrl as string);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${svc.url}${link.pathname}${link.search}`);
    await page.getByRole('heading', { name: /^Join / }).waitFor();
    await expectAccessible(page, 'invitation');
    await page.getByLabel('Your name', { exact: true }).fill('Nina Newbie');
    await page.getByLabel('Password', { exact: true }).fill('joining the shop team');
    await page.getByRole('button', { name: 'Join' }).click();
    await page.getByRole('heading', { name: 'Checks' }).waitFor();
    expect(await page.getByRole('link', { name: 'Nina Newbie' }).count()).toBe(1);
    await context.close();
  });

  it("opens the CLI's links in the console for a browser, and keeps answering API clients with JSON", async () => {
    const session = await svc.call('POST', '/v1/test-sessions', {
      body: { name: 'Release 2.0', results: [{ checkId: checks.catalog, name: 'Catalog', runLocation: 'eu-west-1', hasFailures: false }] },
    });
    const id = session.body.testSessionId as string;
    const json = await fetch(`${svc.url}/v1/test-sessions/${id}`, { headers: { authorization: `Bearer ${svc.adminKey}` } });
    expect(json.headers.get('content-type')).toMatch(/json/);
    const { context, page } = await signedIn();
    await page.goto(`${svc.url}/accounts/${svc.defaultAccountId}/test-sessions/${id}`);
    await page.getByRole('heading', { name: 'Release 2.0' }).waitFor();
    await page.goto(`${svc.url}/v1/test-sessions/${id}`);
    await page.getByRole('heading', { name: 'Release 2.0' }).waitFor();
    await expectAccessible(page, 'a test session');
    await context.close();
  });

  it("links the account's identity provider from the profile, then signs in through it with the person's own second factor", async () => {
    const client = { clientId: 'console', clientSecret: 'a client secret for the console suite' };
    const idp = await startOidcProvider({ ...client, redirectUri: `${svc.url}/v1/auth/oidc/callback` });
    idp.people.set('olive-at-idp', { sub: 'olive-at-idp', email: 'olive@corp.test', name: 'Olive' });
    try {
      expect((await svc.call('PUT', '/v1/account/oidc', { body: { issuer: idp.issuer, ...client } })).status).toBe(200);
      const { context, page } = await signedIn();
      await page.goto(`${svc.url}/settings/profile`);
      await page.getByRole('heading', { name: 'Identity providers' }).waitFor();
      idp.signInNext('olive-at-idp');
      await page.getByRole('button', { name: /Link .* identity provider/ }).click();
      await page.waitForURL(`${svc.url}/settings/profile`);
      await page.getByRole('cell', { name: 'olive@corp.test' }).waitFor();
      await context.close();

      // Her own second factor goes on; the provider's sign-in then asks for its code.
      const secret = new OTPAuth.Secret({ size: 20 });
      await svc.deps.sql`update users set totp_secret = ${secret.base32}, totp_enabled_at = now() where email = 'olive@shop.test'`;
      const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page2 = await fresh.newPage();
      await page2.goto(`${svc.url}/`);
      idp.signInNext('olive-at-idp');
      await page2.getByRole('link', { name: "Sign in with your organisation's provider" }).click();
      await page2.getByRole('heading', { name: 'One more step' }).waitFor();
      await expectAccessible(page2, 'the second factor after a provider');
      await page2.screenshot({ path: path.join(SHOTS, 'console-sign-in-code.png') });
      await page2.getByLabel('Authenticator code').fill('000000');
      await page2.getByRole('button', { name: 'Sign in' }).click();
      await page2.getByText(/not the code/).waitFor();
      await page2.getByLabel('Authenticator code').fill(new OTPAuth.TOTP({ secret }).generate());
      await page2.getByRole('button', { name: 'Sign in' }).click();
      await page2.getByRole('heading', { name: 'Checks' }).waitFor();
      await fresh.close();
    } finally {
      await svc.deps.sql`update users set totp_secret = null, totp_enabled_at = null where email = 'olive@shop.test'`;
      await svc.call('DELETE', '/v1/account/oidc');
      await idp.close();
    }
  });
});
