import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkly, cliEnv } from '../../test/support/checkly-cli.js';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startHttpTarget } from '../../test/support/targets.js';

/**
 * Browser and multi-step checks run in Debian's Chromium, sandboxed (docs/browser-checks.md), against pages this
 * test serves on 127.0.0.1: a click-through, a failing expectation, `request` steps, a script that never ends, a
 * script looking for the runner's environment and files, a secret in the logs, a target the outbound policy refuses.
 */
describe('browser and multi-step checks', { timeout: 120_000 }, () => {
  let svc: TestService;
  let site: HttpTarget;

  beforeAll(async () => {
    site = await startHttpTarget();
    svc = await startTestService({ RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1' });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await site?.close();
  });

  const create = async (segment: 'browser' | 'multistep', name: string, script: string, extra: Record<string, unknown> = {}) => {
    const res = await svc.call('POST', `/v1/checks/${segment}?autoAssignAlerts=false`, {
      body: {
        name,
        script,
        locations: ['eu-west-1'],
        frequency: 60,
        retryStrategy: null,
        doubleCheck: false,
        activated: true,
        environmentVariables: [{ key: 'SITE', value: site.url }],
        ...extra,
      },
    });
    if (res.status !== 201) throw new Error(`create ${segment}: ${res.status} ${res.text}`);
    return res.body as { id: string };
  };
  /** Runs the check now; its stored result once its session ended. */
  const runNow = async (checkId: string) => {
    const trigger = await svc.call('POST', '/v2/check-sessions/trigger', { body: { target: { checkId: [checkId] } } });
    expect(trigger.status, trigger.text).toBe(201);
    const sessionId = trigger.body.sessions[0].checkSessionId as string;
    const done = await waitFor(
      () => svc.call('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=5`),
      (r) => r.status !== 408,
      90_000,
    );
    expect(done.status).toBe(200);
    const resultId = done.body.results[0].checkResultId as string;
    return (
      await waitFor(
        () => svc.call('GET', `/v1/check-results/${checkId}/${resultId}`),
        (r) => r.status === 200,
      )
    ).body;
  };

  it('a click-through passes, with its steps', async () => {
    const check = await create(
      'browser',
      'shop click-through',
      `
      import { test, expect } from '@playwright/test';
      test('add to cart', async ({ page }) => {
        await test.step('open the shop', async () => { await page.goto(process.env.SITE + '/shop'); });
        await test.step('add one', async () => {
          await page.getByRole('button', { name: 'Add to cart' }).click();
          await expect(page.locator('#count')).toHaveText('1');
        });
        await page.getByRole('link', { name: 'Cart' }).click();
        await expect(page).toHaveTitle('Cart');
        console.log('reached the cart');
      });`,
    );
    const result = await runNow(check.id);
    expect(result.hasFailures, JSON.stringify(result.browserCheckResult)).toBe(false);
    expect(result.browserCheckResult.steps.map((s: { title: string }) => s.title)).toEqual(expect.arrayContaining(['open the shop', 'add one']));
    expect(result.browserCheckResult.jobLog).toContainEqual(expect.objectContaining({ msg: 'reached the cart' }));
    expect(site.hits('/shop/cart').length).toBeGreaterThan(0);
  });

  it('a failing expectation fails with its message and a screenshot', async () => {
    const check = await create(
      'browser',
      'wrong count',
      `
      const { test, expect } = require('@playwright/test');
      test('count', async ({ page }) => {
        await page.goto(process.env.SITE + '/shop');
        await expect(page.locator('#count')).toHaveText('5', { timeout: 1000 });
      });`,
    );
    const result = await runNow(check.id);
    expect(result.hasFailures).toBe(true);
    expect(result.browserCheckResult.errors[0].message).toMatch(/toHaveText/);
    expect(result.browserCheckResult.errors[0].message).toMatch(/Expected: "5"/);
    expect(result.browserCheckResult.assets).toContainEqual(expect.objectContaining({ type: 'screenshot', contentType: 'image/png' }));
    expect(result.browserCheckResult.playwrightTestTraces).toHaveLength(1);

    // The screenshot, from the result's asset list, is a PNG; the anchor CLI downloads it too.
    const manifest = await svc.call('GET', `/v1/check-results/${check.id}/${result.id}/assets?type=screenshot`);
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.assets).toHaveLength(1);
    expect(manifest.body.assets[0]).toMatchObject({ type: 'screenshot', contentType: 'image/png', source: { type: 'check-result', checkId: check.id } });
    expect(manifest.body.assets[0].url.startsWith(`${svc.url}/v1/check-results/`)).toBe(true);
    // Without PUBLIC_URL, links follow the address the client used: reached as localhost, it gets localhost links
    // (the anchor CLI sends its key only to the origin it was pointed at).
    const { port } = new URL(svc.url);
    const asLocalhost = await new Promise<string>((resolve, reject) => {
      http
        .get(
          `${svc.url}/v1/check-results/${check.id}/${result.id}/assets?type=screenshot`,
          { headers: { host: `localhost:${port}`, authorization: `Bearer ${svc.adminKey}` } },
          (res) => {
            let text = '';
            res
              .setEncoding('utf8')
              .on('data', (d) => (text += d))
              .on('end', () => resolve(text));
          },
        )
        .on('error', reject);
    });
    expect((JSON.parse(asLocalhost) as { assets: { url: string }[] }).assets[0]!.url).toBe(
      manifest.body.assets[0].url.replace(svc.url, `http://localhost:${port}`),
    );
    const png = await fetch(manifest.body.assets[0].url, { headers: { authorization: `Bearer ${svc.adminKey}` } });
    expect(png.status).toBe(200);
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    // Another account sees none of it.
    const other = await createOtherTenant(svc);
    expect((await fetch(manifest.body.assets[0].url, { headers: { authorization: `Bearer ${other.key}` } })).status).toBe(404);

    const home = mkdtempSync(path.join(os.tmpdir(), 'browser-assets-'));
    try {
      const env = cliEnv(svc.url, svc.adminKey, svc.defaultAccountId, home);
      const listed = await checkly(env, home, ['assets', 'list', '--check-id', check.id, '--result-id', result.id]);
      expect(listed.code, listed.out).toBe(0);
      expect(listed.out).toContain(manifest.body.assets[0].name);
      const dir = path.join(home, 'out');
      const got = await checkly(env, home, ['assets', 'download', '--check-id', check.id, '--result-id', result.id, '--type', 'screenshot', '--dir', dir]);
      expect(got.code, got.out).toBe(0);
      expect(readFileSync(path.join(dir, manifest.body.assets[0].name)).subarray(1, 4).toString()).toBe('PNG');

      // Run as a test session (what `checkly trigger` starts): its result lists the same kind of files.
      const trigger = await svc.call('POST', '/v1/test-sessions/trigger', {
        body: { name: 'ad hoc', runLocation: 'eu-west-1', target: { checkId: [check.id] } },
      });
      expect(trigger.status, trigger.text).toBe(201);
      const sessionId = trigger.body.testSessionId as string;
      const ended = await svc.call('GET', `/v1/test-sessions/${sessionId}/completion?maxWaitSeconds=30`);
      expect(ended.status, ended.text).toBe(200);
      const sessionResultId = ended.body.results[0].testSessionResultId ?? ended.body.results[0].id;
      const sessionManifest = await svc.call('GET', `/v1/test-sessions/${sessionId}/results/${sessionResultId}/assets?type=screenshot`);
      expect(sessionManifest.status, sessionManifest.text).toBe(200);
      expect(sessionManifest.body.assets).toEqual([
        expect.objectContaining({
          type: 'screenshot',
          source: expect.objectContaining({ type: 'test-session-result', testSessionId: sessionId, checkId: check.id }),
        }),
      ]);
      const shot = await fetch(sessionManifest.body.assets[0].url, { headers: { authorization: `Bearer ${svc.adminKey}` } });
      expect(
        Buffer.from(await shot.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
      expect((await svc.call('GET', `/v1/test-sessions/${sessionId}/results/${sessionResultId}/assets`, { key: other.key })).status).toBe(404);
      const fromSession = await checkly(env, home, [
        'assets',
        'download',
        '--test-session-id',
        sessionId,
        '--result-id',
        sessionResultId,
        '--type',
        'screenshot',
        '--dir',
        path.join(home, 'session'),
      ]);
      expect(fromSession.code, fromSession.out).toBe(0);
      expect(
        readFileSync(path.join(home, 'session', sessionManifest.body.assets[0].name))
          .subarray(1, 4)
          .toString(),
      ).toBe('PNG');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('a multi-step check with request steps passes, and a refused target is refused by the outbound policy', async () => {
    const check = await create(
      'multistep',
      'api steps',
      `
      import { test, expect } from '@playwright/test';
      test('api', async ({ request }) => {
        await test.step('read', async () => {
          const res = await request.get(process.env.SITE + '/ok');
          expect(res.status()).toBe(200);
          expect((await res.json()).nested.name).toBe('shop');
        });
        await test.step('refused', async () => {
          // Not on this service's allow-list: the egress answers 403 and connects nowhere.
          const res = await request.get('http://10.255.255.1/');
          expect(res.status()).toBe(403);
          expect(await res.text()).toMatch(/not allowed|blocked|refus/i);
        });
      });`,
    );
    const result = await runNow(check.id);
    expect(result.hasFailures, JSON.stringify(result.multiStepCheckResult)).toBe(false);
    expect(result.multiStepCheckResult.steps.map((s: { title: string }) => s.title)).toEqual(['read', 'refused']);
  });

  it('a script that never ends is stopped at its maxResponseTime', async () => {
    const check = await create(
      'browser',
      'forever',
      `
      import { test } from '@playwright/test';
      test('wait', async () => { await new Promise(() => {}); });`,
      { maxResponseTime: 3000, degradedResponseTime: 2000 },
    );
    const result = await runNow(check.id);
    expect(result.hasFailures).toBe(true);
    expect(JSON.stringify(result.browserCheckResult.errors)).toMatch(/timeout of 3000 ?ms/i);
  });

  it("sees nothing of the runner's environment, files or processes, and a secret never shows in the logs", async () => {
    const check = await create(
      'browser',
      'nosy',
      `
      import { test, expect } from '@playwright/test';
      import fs from 'node:fs';
      test('look around', async () => {
        expect(process.env.DATABASE_URL).toBeUndefined();
        expect(process.env.REDIS_URL).toBeUndefined();
        expect(Object.keys(process.env)).toContain('SITE');
        expect(fs.existsSync('/work')).toBe(false);
        expect(fs.existsSync(${JSON.stringify(process.cwd())})).toBe(false);
        // Only the sandbox's own processes.
        const pids = fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).map(Number);
        expect(Math.max(...pids)).toBeLessThan(100);
        console.log('token is ' + process.env.SHOP_TOKEN);
      });`,
      {
        environmentVariables: [
          { key: 'SITE', value: site.url },
          { key: 'SHOP_TOKEN', value: 'tok-8c1f2e9d', secret: true },
        ],
      },
    );
    const result = await runNow(check.id);
    expect(result.hasFailures, JSON.stringify(result.browserCheckResult)).toBe(false);
    expect(result.browserCheckResult.jobLog).toContainEqual(expect.objectContaining({ msg: 'token is ********' }));
    expect(JSON.stringify(result)).not.toContain('tok-8c1f2e9d');
  });

  it("an attachment turned into a link to the service's environment or /etc/shadow keeps nothing of them", async () => {
    const check = await create(
      'browser',
      'link attachments',
      `
      import { test } from '@playwright/test';
      import fs from 'node:fs';
      test('links', async ({}, info) => {
        for (const name of ['environ', 'shadow']) {
          fs.writeFileSync('/tmp/' + name + '.png', 'x');
          await info.attach(name, { path: '/tmp/' + name + '.png', contentType: 'image/png' });
        }
        for (const a of info.attachments) {
          fs.rmSync(a.path);
          fs.symlinkSync(a.name === 'environ' ? '/proc/self/environ' : '/etc/shadow', a.path);
        }
      });`,
    );
    const result = await runNow(check.id);
    expect(result.hasFailures, JSON.stringify(result.browserCheckResult)).toBe(false);
    expect(result.browserCheckResult.assets).toEqual([]);
    const manifest = await svc.call('GET', `/v1/check-results/${check.id}/${result.id}/assets`);
    expect(manifest.body.assets).toEqual([]);
    expect(JSON.stringify(result)).not.toMatch(/DATABASE_URL|REDIS_URL|root:/);
  });

  it("a script imports the files deployed with it and the account's snippets", async () => {
    const snippet = await svc.call('POST', '/v1/snippets', { body: { name: 'greeting', script: "module.exports = { greet: (who) => 'hello ' + who };" } });
    expect(snippet.status, snippet.text).toBe(201);
    const check = await create(
      'browser',
      'with imports',
      `
      import { test, expect } from '@playwright/test';
      import { openShop } from './helpers/shop';
      const { greet } = require('./snippets/greeting');
      test('imports', async ({ page }) => {
        await openShop(page);
        await expect(page.locator('h1')).toHaveText('Shop');
        console.log(greet('cart'));
      });`,
      {
        scriptPath: '__checks__/shop.spec.ts',
        dependencies: [
          { path: '__checks__/helpers/shop.ts', content: 'export async function openShop(page: any) { await page.goto(process.env.SITE + "/shop"); }' },
        ],
      },
    );
    const result = await runNow(check.id);
    expect(result.hasFailures, JSON.stringify(result.browserCheckResult)).toBe(false);
    expect(result.browserCheckResult.jobLog).toContainEqual(expect.objectContaining({ msg: 'hello cart' }));
  });

  it('a Playwright check suite runs from its code bundle with its own config: the chosen project, a failing test named', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pw-suite-'));
    try {
      mkdirSync(path.join(dir, 'e2e', 'tests'), { recursive: true });
      writeFileSync(
        path.join(dir, 'e2e', 'playwright.config.ts'),
        `
        import { defineConfig, devices } from '@playwright/test';
        export default defineConfig({
          testDir: './tests',
          use: { baseURL: process.env.SITE },
          projects: [
            { name: 'chromium', use: { ...devices['Desktop Chrome'] } },
            { name: 'firefox', use: { ...devices['Desktop Firefox'] } },
          ],
        });`,
      );
      writeFileSync(
        path.join(dir, 'e2e', 'tests', 'shop.spec.ts'),
        `
        import { test, expect } from '@playwright/test';
        test.describe('shop', () => {
          test('has a title @smoke', async ({ page }) => {
            await page.goto('/shop');
            await expect(page).toHaveTitle('Local shop');
          });
          test('adds to the cart @smoke', async ({ page }) => {
            await page.goto('/shop');
            await page.getByRole('button', { name: 'Add to cart' }).click();
            await expect(page.locator('#count')).toHaveText('1');
          });
          test('counts wrong @broken', async ({ page }) => {
            await page.goto('/shop');
            await expect(page.locator('#count')).toHaveText('9', { timeout: 500 });
          });
        });`,
      );
      const bundleFile = path.join(dir, 'bundle.tar.gz');
      execFileSync('tar', ['-czf', bundleFile, '-C', dir, 'e2e']);
      const upload = await fetch(`${svc.url}/next/checkly-storage/upload-code-bundle`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/octet-stream' },
        body: readFileSync(bundleFile),
      });
      expect(upload.status).toBe(200);
      const { key } = (await upload.json()) as { key: string };
      const suite = (name: string, grep: string) =>
        svc.call('POST', '/v1/checks/playwright?autoAssignAlerts=false', {
          body: {
            name,
            codeBundlePath: key,
            workingDir: 'e2e',
            installCommand: 'npm ci',
            browsers: ['chromium'],
            locations: ['eu-west-1'],
            frequency: 60,
            activated: true,
            testCommand: `npx playwright test --config playwright.config.ts --project 'chromium' --grep '${grep}'`,
            environmentVariables: [{ key: 'SITE', value: site.url }],
          },
        });
      const good = await suite('smoke suite', '@smoke');
      expect(good.status, good.text).toBe(201);
      const passed = await runNow(good.body.id);
      expect(passed.hasFailures, JSON.stringify(passed.playwrightCheckResult)).toBe(false);
      expect(passed.playwrightCheckResult.steps.map((s: { title: string }) => s.title).sort()).toEqual([
        'shop.spec.ts › shop › adds to the cart @smoke',
        'shop.spec.ts › shop › has a title @smoke',
      ]);
      // Only the Chromium project ran; the install step is said to be skipped.
      expect(passed.playwrightCheckResult.playwrightTestJsonReport).toMatchObject({ expected: 2, unexpected: 0 });
      expect(passed.playwrightCheckResult.jobLog).toContainEqual(
        expect.objectContaining({ level: 'WARN', msg: expect.stringMatching(/^installCommand "npm ci" was not run/) }),
      );

      const bad = await suite('broken suite', '@broken');
      const failed = await runNow(bad.body.id);
      expect(failed.hasFailures).toBe(true);
      expect(failed.playwrightCheckResult.errors[0]).toMatchObject({
        title: 'shop.spec.ts › shop › counts wrong @broken',
        message: expect.stringMatching(/toHaveText/),
      });
      expect(failed.playwrightCheckResult.playwrightTraceFiles).toHaveLength(1);
      const shots = await svc.call('GET', `/v1/check-results/${bad.body.id}/${failed.id}/assets?type=screenshot`);
      expect(shots.body.assets, JSON.stringify(failed.playwrightCheckResult.assets)).toHaveLength(1);

      // A command that is not `playwright test` is refused, saying what runs.
      const other = await svc.call('POST', '/v1/checks/playwright?autoAssignAlerts=false', {
        body: { name: 'shell', codeBundlePath: key, testCommand: 'rm -rf / && npx playwright test', locations: ['eu-west-1'], frequency: 60, activated: true },
      });
      const refused = await runNow(other.body.id);
      expect(refused).toMatchObject({ hasErrors: true, hasFailures: true });
      expect(refused.playwrightCheckResult.errors[0].message).toMatch(/is not a single command/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
