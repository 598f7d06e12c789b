import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';

/** GET /docs: the API reference page and every asset it loads, served by the service itself. */
describe('/docs', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('serves the reference page, which loads only assets served here and reads /openapi.json', async () => {
    const res = await fetch(`${svc.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const asset of assets) {
      expect(asset.startsWith('/docs/assets/')).toBe(true);
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
