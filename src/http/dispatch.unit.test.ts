import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dispatchRoutes, type RouteEntry } from './dispatch.js';

/**
 * The dispatcher must answer every request exactly as the whole @koa/router would: the same route (the first
 * registered that matches, parameters and letter case included), the same 405 with its Allow header, the same 404.
 */
describe('routes found by their first two segments', () => {
  const answer =
    (name: string): Middleware =>
    (ctx) => {
      ctx.body = { name, params: ctx.params };
    };
  const routes: [string, string][] = [
    ['GET', '/health'],
    ['GET', '/v1/checks'],
    ['POST', '/v1/checks/api'],
    ['GET', '/v1/checks/:id'],
    ['PUT', '/v1/checks/:id'],
    ['GET', '/v1/checks/:id/statuses'],
    ['GET', '/v1/:kind/summary'],
    ['GET', '/ping/:token'],
    ['POST', '/ping/:token'],
    ['GET', '/v1/check-groups/:id/checks'],
    ['GET', '/:anything/x/y'],
  ];
  const entries: RouteEntry[] = routes.map(([method, path], i) => ({ method, path, name: `r${i}`, chain: [answer(`${method} ${path}`)] }));
  const servers: { close(): void }[] = [];
  let dispatched = '';
  let whole = '';

  const serve = async (mw: Middleware[]) => {
    const app = new Koa();
    for (const m of mw) app.use(m);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  beforeAll(async () => {
    dispatched = await serve([dispatchRoutes(entries).middleware]);
    const router = new Router();
    for (const e of entries) router.register(e.path, [e.method], e.chain, { name: e.name });
    whole = await serve([router.routes() as Middleware, router.allowedMethods() as Middleware]);
  });
  afterAll(() => servers.forEach((s) => s.close()));

  const requests: [string, string][] = [
    ['GET', '/health'],
    ['GET', '/health/'],
    ['GET', '/v1/checks'],
    ['GET', '/v1/checks/'],
    ['GET', '/V1/Checks/abc'],
    ['GET', '/v1/checks/api'],
    ['POST', '/v1/checks/api'],
    ['DELETE', '/v1/checks/abc'],
    ['OPTIONS', '/v1/checks/abc'],
    ['HEAD', '/v1/checks/abc'],
    ['GET', '/v1/checks/abc/statuses'],
    ['GET', '/v1/dashboards/summary'],
    ['GET', '/v1/checks/summary'],
    ['GET', '/ping/t0k3n'],
    ['POST', '/PING/t0k3n'],
    ['GET', '/v1/check-groups/7/checks'],
    ['GET', '/zzz/x/y'],
    ['GET', '/v1/x/y'],
    ['GET', '/v1/nothing/here'],
    ['GET', '/nothing'],
    ['GET', '/'],
    ['GET', '/v1/checks/a%2Fb'],
    ['GET', '//v1/checks'],
  ];

  it('answers each request with the same status, Allow header and route as the whole router', async () => {
    for (const [method, path] of requests) {
      const [a, b] = await Promise.all(
        [dispatched, whole].map(async (base) => {
          const res = await fetch(`${base}${path}`, { method });
          return { status: res.status, allow: res.headers.get('allow'), body: await res.text() };
        }),
      );
      expect(a, `${method} ${path}`).toEqual(b);
    }
    // The comparison means something: the routes answered, some with parameters, and a 405 came back.
    const check = await (await fetch(`${dispatched}/V1/Checks/abc`)).json();
    expect(check).toEqual({ name: 'GET /v1/checks/:id', params: { id: 'abc' } });
    expect((await fetch(`${dispatched}/v1/checks/api`)).status).toBe(200);
    expect((await fetch(`${dispatched}/v1/checks/abc`, { method: 'DELETE' })).status).toBe(405);
  });
});
