import { deflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { ENTRY_LIMIT_BYTES } from './reporter.js';

/**
 * Files of a Playwright reporter's uploaded zip, read back one by one: a deflated entry is inflated as it is sent,
 * never past ENTRY_LIMIT_BYTES (a 1 MB upload must not become 1 GiB in this process), and what a tenant uploaded is
 * served as a download (attachment, nosniff, a sandboxing CSP), never as a live page of the service's origin.
 */
describe('reporter zip entries', { timeout: 60_000 }, () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('serves small entries with their length, refuses one that inflates past the limit, and serves HTML as an inert download', async () => {
    const created = await svc.call('POST', '/next/test-sessions/create', { body: { name: 'zip', testResults: [{ name: 'suite' }], provider: 'PW_REPORTER' } });
    expect(created.status, created.text).toBe(200);
    const sessionId = created.body.testSessionId as string;
    const resultId = created.body.testResults[0].testResultId as string;

    const report = deflateRawSync(Buffer.from(JSON.stringify({ stats: { expected: 3 } })));
    const page = Buffer.from('<html><script>fetch("/v1/api-keys")</script></html>');
    // ~130 KiB that inflate to more than the limit.
    const bomb = deflateRawSync(Buffer.alloc(ENTRY_LIMIT_BYTES + 1024 * 1024), { level: 9 });
    const zip = Buffer.concat([report, page, bomb]);
    const upload = await fetch(`${svc.url}/next/test-sessions/${sessionId}/results/${resultId}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/octet-stream' },
      body: zip,
    });
    expect(upload.status).toBe(200);
    const entries = [
      { name: 'output/checkly-report.json', start: 0, end: report.length - 1, compressionMethod: 8 },
      { name: 'report/index.html', start: report.length, end: report.length + page.length - 1, compressionMethod: 0 },
      { name: 'bomb.txt', start: report.length + page.length, end: zip.length - 1, compressionMethod: 8 },
    ];
    const finished = await svc.call('POST', `/next/test-sessions/${sessionId}/results/${resultId}`, { body: { status: 'PASSED', assetEntries: entries } });
    expect(finished.status, finished.text).toBe(204);

    const asset = (name: string) =>
      fetch(`${svc.url}/next/test-sessions/${sessionId}/results/${resultId}/asset?name=${encodeURIComponent(name)}`, {
        headers: { authorization: `Bearer ${svc.adminKey}` },
      });
    const json = await asset('output/checkly-report.json');
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ stats: { expected: 3 } });

    const html = await asset('report/index.html');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-disposition')).toBe('attachment; filename="index.html"');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(await html.text()).toBe(page.toString());

    const refused = await asset('bomb.txt');
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { message: string }).message).toMatch(/inflates to more than/);
    // The service still answers.
    expect((await svc.call('GET', '/v1/checks')).status).toBe(200);
  });
});
