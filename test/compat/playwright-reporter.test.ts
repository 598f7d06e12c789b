import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR } from '../support/checkly-cli.js';
import { createOtherTenant, startTestService, type TestService } from '../support/service.js';
import { type HttpTarget, startHttpTarget } from '../support/targets.js';

/**
 * The anchor's Playwright reporter (@checkly/playwright-reporter 1.13.2, pinned in test/compat/checkly-cli) on a
 * Playwright run of a sample project: the run shows as a test session (provider PW_REPORTER) with its result, and
 * the report in the uploaded zip is readable. The reporter only talks to http://127.0.0.1:3000 (CHECKLY_ENV=local,
 * fixed in its code), so this suite's service listens there.
 */
const run = promisify(execFile);
const SAMPLE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'projects/playwright');

describe('the Playwright reporter against this service', { timeout: 120_000 }, () => {
  let svc: TestService;
  let target: HttpTarget;
  let home: string;

  beforeAll(async () => {
    svc = await startTestService({ PORT: '3000' });
    target = await startHttpTarget();
    home = mkdtempSync(path.join(os.tmpdir(), 'pw-reporter-'));
    cpSync(SAMPLE, path.join(home, 'project'), { recursive: true });
    symlinkSync(path.join(CLI_DIR, 'node_modules'), path.join(home, 'project/node_modules'), 'dir');
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await target?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('records the run as a test session with its result and keeps its report', async () => {
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      CHECKLY_ENV: 'local',
      CHECKLY_API_KEY: svc.adminKey,
      CHECKLY_ACCOUNT_ID: svc.defaultAccountId,
      TARGET_URL: target.url,
      CI: '1',
    };
    const cwd = path.join(home, 'project');
    const result = await run(process.execPath, [path.join(CLI_DIR, 'node_modules/@playwright/test/cli.js'), 'test'], { env, cwd, timeout: 90_000 }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
    );
    // One test fails on purpose: Playwright exits 1, the reporter never changes that.
    expect(result.code, result.out).toBe(1);
    const { entries } = (await svc.call('GET', '/v1/test-sessions?providers=PW_REPORTER')).body as {
      entries: { id: string; name: string; status: string; provider: string; failed: string[] }[];
    };
    expect(entries).toHaveLength(1);
    const [session] = entries;
    expect(session).toMatchObject({ name: 'Shop API suite', status: 'FAILED', provider: 'PW_REPORTER' });
    expect(result.out).toContain(`${svc.url}/v1/test-sessions/${session.id}`);
    const detail = (await svc.call('GET', `/v1/test-sessions/${session.id}`)).body;
    expect(detail.results).toEqual([expect.objectContaining({ checkType: 'PLAYWRIGHT', status: 'FAILED', hasFailures: true })]);
    const resultId = detail.results[0].testSessionResultId;
    const files = (await svc.call('GET', `/next/test-sessions/${session.id}/results/${resultId}/assets`)).body;
    expect(files.files.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(['output/checkly-report.json', 'logs.txt']));
    const report = await svc.call(
      'GET',
      `/next/test-sessions/${session.id}/results/${resultId}/asset?name=${encodeURIComponent('output/checkly-report.json')}`,
    );
    expect(report.status).toBe(200);
    expect(report.body.stats).toMatchObject({ expected: 1, unexpected: 1 });
    expect(JSON.stringify(report.body)).toContain('orders endpoint status');

    // The multipart fallback keeps the same zip; another account can neither upload to the result nor read it.
    const zip = (await svc.call('GET', `/next/test-sessions/${session.id}/results/${resultId}/asset?name=logs.txt`)).text;
    expect(zip.length).toBeGreaterThan(0);
    const form = new FormData();
    form.append('assets', new Blob([Buffer.from(`PK\u0005\u0006${'\u0000'.repeat(18)}`)], { type: 'application/zip' }), 'assets.zip');
    const multipart = await fetch(`${svc.url}/next/test-sessions/${session.id}/results/${resultId}/assets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}` },
      body: form,
    });
    expect(multipart.status).toBe(200);
    expect(((await multipart.json()) as { assetId: string }).assetId).toMatch(/^reports\/[0-9a-f]{64}\.zip$/);
    const other = await createOtherTenant(svc);
    const theirs = await fetch(`${svc.url}/next/test-sessions/${session.id}/results/${resultId}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/octet-stream' },
      body: Buffer.from('zip'),
    });
    expect(theirs.status).toBe(404);
    expect((await svc.call('GET', `/next/test-sessions/${session.id}/results/${resultId}/assets`, { key: other.key })).status).toBe(404);
  });
});
