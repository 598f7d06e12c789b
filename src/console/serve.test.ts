import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { consoleHost, LINKS, PAGES } from './serve.js';

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
});
