import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';

/** GET /docs (the pre-rendered reference) and /docs/try (Swagger UI), with every asset they load served here. */
describe('/docs', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/[^"#]*)"/g)].map((m) => m[1]!).filter((a) => a.startsWith('/docs/assets/'));

  it('is every operation of /openapi.json as HTML, readable without running a script, compressed and revalidated by ETag', async () => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string; summary: string }>> };
    const res = await fetch(`${svc.url}/docs`, { headers: { 'accept-encoding': 'gzip' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-encoding')).toBe('gzip');
    // The one policy of every rendered page: scripts only its own, never inline.
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self';/);
    expect(res.headers.get('content-security-policy')).not.toMatch(/script-src[^;]*unsafe/);
    const html = await res.text();
    const operations = Object.values(doc.paths).flatMap((ops) => Object.values(ops));
    expect(operations.length).toBeGreaterThan(150);
    for (const op of operations) expect(html, op.operationId).toContain(`id="${op.operationId}"`);
    // A body's fields with their types; the roles that may call it; escaped text.
    const create = html.slice(html.indexOf('id="createApiCheck"'), html.indexOf('</details>', html.indexOf('id="createApiCheck"')));
    expect(create).toMatch(/<code>request<\/code> <span class="type">object<\/span> <span class="req">required<\/span>/);
    expect(create).toContain('roles: OWNER, ADMIN, READ_WRITE');
    expect(html).not.toMatch(/<script>/);
    // A body that is one of several shapes shows each, by what tells them apart.
    const channel = html.slice(html.indexOf('id="createAlertChannel"'), html.indexOf('</details>', html.indexOf('id="createAlertChannel"')));
    for (const type of ['EMAIL', 'WEBHOOK', 'SLACK', 'SMS', 'PAGERDUTY', 'OPSGENIE']) expect(channel).toContain(`<h4>type: &quot;${type}&quot;</h4>`);
    // Revalidated, not sent again.
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await fetch(`${svc.url}/docs`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    for (const asset of assetsOf(html)) expect((await fetch(svc.url + asset)).status, asset).toBe(200);
  });

  it('keeps the interactive reference at /docs/try, reading /openapi.json with assets served here', async () => {
    const res = await fetch(`${svc.url}/docs/try`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const assets = assetsOf(await res.text());
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      const a = await fetch(svc.url + asset);
      expect(a.status).toBe(200);
      expect((await a.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    const init = await (await fetch(`${svc.url}/docs/assets/init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    expect(init).toContain('validatorUrl: null');
    expect((await fetch(`${svc.url}/docs/assets/../package.json`)).status).toBe(404);
    expect((await fetch(`${svc.url}/docs/assets/swagger-ui.css.map`)).status).toBe(404);
  });
});
