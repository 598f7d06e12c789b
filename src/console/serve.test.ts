import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { consoleHost, consolePages, LINKS, PAGES } from './serve.js';

const screens = readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console/src/screens/index.ts'), 'utf8');
/** Every path the console's router answers, with a sample value for each parameter. */
const screenPaths = [...screens.matchAll(/path: '([^']+)'/g)].map((m) => m[1]!.replace(/:[A-Za-z]+/g, 'a1b2'));

describe('console pages', () => {
  it('answers every screen of the console, and only those', () => {
    expect(screenPaths.length).toBeGreaterThan(20);
    for (const p of screenPaths) expect(PAGES.test(p) || LINKS.test(p), p).toBe(true);
    // Paths of the API and of the pages beside it stay theirs.
    for (const p of [
      '/checks/a1b2/trigger/tok',
      '/checks',
      '/v1/checks',
      '/status/shop',
      '/dashboards/board',
      '/dashboards/board/extra',
      '/edit/dashboards',
      '/settings/keys/extra',
      '/health',
      '/docs',
      '/reports/x',
    ])
      expect(PAGES.test(p), p).toBe(false);
  });

  it("is served on the service's own host, localhost and address literals, never on another name", () => {
    const own = consoleHost('https://monitor.corp.test');
    for (const h of ['monitor.corp.test', 'MONITOR.corp.test', 'localhost', 'app.localhost', '127.0.0.1', '::1', '[::1]', '10.0.0.7'])
      expect(own(h), h).toBe(true);
    for (const h of ['status.shop.test', 'monitor.corp.test.evil.test', 'corp.test', '']) expect(own(h), h).toBe(false);
    expect(consoleHost(undefined)('status.shop.test')).toBe(false);
    expect(consoleHost(undefined)('127.0.0.1')).toBe(true);
  });

  it('moves a screen asked for by another loopback spelling to the one the service names itself by, keeping the port', async () => {
    const config = { publicUrl: 'http://localhost:1', publicUrlGiven: false };
    const app = new Koa();
    app.use(consolePages(config));
    app.use((ctx) => {
      ctx.body = 'api';
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    try {
      const page = await fetch(`http://127.0.0.1:${port}/checks/abc?range=1h`, { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(page.status).toBe(302);
      expect(page.headers.get('location')).toBe(`http://localhost:${port}/checks/abc?range=1h`);
      // The API is never moved: a client keeps the address it was pointed at.
      const api = await fetch(`http://127.0.0.1:${port}/v1/checks`, { redirect: 'manual' });
      expect(api.status).toBe(200);
      // Named by PUBLIC_URL: nothing moves on a loopback address (the operator chose the name).
      config.publicUrlGiven = true;
      expect((await fetch(`http://127.0.0.1:${port}/checks/abc`, { redirect: 'manual' })).status).not.toBe(302);
    } finally {
      server.close();
    }
  });
});
