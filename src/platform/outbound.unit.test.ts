import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedFetch } from './http-client.js';
import { canonicalHost, OutboundPolicy } from './outbound.js';

/** Every spelling of an internal address the probe sent (and a few more). */
const PROBE_URLS = [
  'http://127.0.0.1/',
  'http://localhost/',
  'http://sub.localhost/',
  'http://0.0.0.0/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://127.1/',
  'http://0177.0.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://10.0.0.8/',
  'http://192.168.1.1/',
  'http://172.16.5.4/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://[::]/',
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]/',
  'http://[::10.0.0.1]/',
  'http://[::ffff:0:127.0.0.1]/',
  'http://[64:ff9b::127.0.0.1]/',
];

describe('outbound policy', () => {
  const lookups: string[] = [];
  const fakeDns = async (host: string) => {
    lookups.push(host);
    if (host === 'rebind.test') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'public.test') return [{ address: '93.184.216.34', family: 4 }];
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  };
  const policy = (allow: string[], allowPublic = true) =>
    new OutboundPolicy(
      { allow, allowPublic },
      [
        { host: '127.0.0.1', port: 5432 },
        { host: 'localhost', port: 6379 },
        { host: '0.0.0.0', port: 3000 },
      ],
      fakeDns,
    );

  it('refuses every spelling of an internal address at create, with the reason', () => {
    const p = policy([]);
    for (const url of PROBE_URLS) expect(p.urlRefusal(url), url).toMatch(/loopback|link-local|unspecified|private|unique-local|carrier-grade|rfc6052/);
    expect(p.urlRefusal('https://93.184.216.34/hook')).toBeUndefined();
    expect(p.urlRefusal('https://hooks.example.com/x')).toBeUndefined(); // a name: decided when connecting
    expect(canonicalHost('0x7f000001')).toBe('127.0.0.1');
    expect(canonicalHost('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });

  it("OUTBOUND_ALLOW opens CIDRs and names, never the service's own endpoints", () => {
    const p = policy(['127.0.0.0/8', '10.1.0.0/16']);
    expect(p.urlRefusal('http://127.0.0.1:8080/')).toBeUndefined();
    expect(p.urlRefusal('http://10.1.2.3/')).toBeUndefined();
    expect(p.urlRefusal('http://10.2.0.1/')).toMatch(/private/);
    expect(p.urlRefusal('http://127.0.0.1:5432/')).toMatch(/own endpoints/);
    expect(p.urlRefusal('http://127.0.0.2:6379/')).toMatch(/own endpoints/);
    expect(p.urlRefusal('http://2130706433:3000/')).toMatch(/own endpoints/);
    expect(p.urlRefusal('http://localhost:3000/')).toMatch(/own endpoints/);
  });

  it("the service's own endpoints named by host name are refused on the addresses the names resolve to, with any allow-list", async () => {
    const compose = async (host: string) => {
      if (host === 'redis') return [{ address: '172.18.0.3', family: 4 }];
      if (host === 'clickhouse')
        return [
          { address: '172.18.0.4', family: 4 },
          { address: 'fd00::4', family: 6 },
        ];
      if (host === 'postgres') return [{ address: '172.18.0.2', family: 4 }];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    };
    const p = new OutboundPolicy(
      { allow: ['172.16.0.0/12', 'fd00::/8'], allowPublic: false },
      OutboundPolicy.ownEndpointsOf({
        port: 3000,
        databaseUrl: 'postgres://u@postgres:5432/db',
        redisUrl: 'redis://redis:6379',
        clickhouse: { url: 'http://clickhouse:8123' },
      }),
      compose,
    );
    // Before the names resolve: their ports are closed on every internal address.
    expect(p.refusal('172.18.0.9', 6379)).toMatch(/own endpoints \(redis\)/);
    const watch = p.watchOwnNames(60_000);
    await watch.ready;
    watch.stop();
    expect(p.refusal('172.18.0.3', 6379)).toMatch(/172\.18\.0\.3:6379 is one of the service's own endpoints \(redis\)/);
    expect(p.refusal('172.18.0.4', 8123)).toMatch(/own endpoints \(clickhouse\)/);
    expect(p.refusal('fd00::4', 8123)).toMatch(/own endpoints \(clickhouse\)/);
    expect(p.refusal('172.18.0.2', 5432)).toMatch(/own endpoints \(postgres\)/);
    // The same ports elsewhere, and other ports of those hosts, are the allow-list's to open.
    expect(p.refusal('172.18.0.9', 6379)).toBeUndefined();
    expect(p.refusal('172.18.0.3', 80)).toBeUndefined();
    // At connect, whatever name leads there.
    await expect(p.resolve('172.18.0.3', 6379)).rejects.toThrow(/own endpoints/);
    expect(p.urlRefusal('http://172.18.0.4:8123/?query=select+1')).toMatch(/own endpoints/);
  });

  it('refuses at connect a name that resolves to an internal address (no rebinding gap)', async () => {
    await expect(policy([]).resolve('rebind.test', 80)).rejects.toThrow(/blocked by outbound policy: 127\.0\.0\.1 is a loopback address/);
    expect(await policy([]).resolve('public.test', 443)).toEqual([{ address: '93.184.216.34', family: 4 }]);
    // A name OUTBOUND_ALLOW names is open whatever it resolves to.
    expect(await policy(['rebind.test']).resolve('rebind.test', 80)).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('with OUTBOUND_PUBLIC=false refuses public addresses, and names it does not allow before any lookup', async () => {
    const p = policy(['127.0.0.0/8', '*.corp.test'], false);
    lookups.length = 0;
    await expect(p.resolve('public.test', 443)).rejects.toThrow(/not named by OUTBOUND_ALLOW/);
    await expect(p.resolve('hooks.example.com', 443)).rejects.toThrow(/not named by OUTBOUND_ALLOW/);
    expect(lookups).toEqual([]);
    // At create a public literal is left to connect time; connecting refuses it.
    expect(p.urlRefusal('https://93.184.216.34/')).toBeUndefined();
    expect(p.refusal('93.184.216.34', 443)).toMatch(/public address and OUTBOUND_PUBLIC is false/);
    await expect(p.resolve('api.corp.test', 443)).rejects.toThrow(/not found|no such host/);
    expect(lookups).toEqual(['api.corp.test']);
  });

  describe('connections', () => {
    let server: Server;
    let port: number;
    let served = 0;
    beforeAll(async () => {
      server = createServer((req, res) => {
        served++;
        if (req.url === '/redirect') {
          res.writeHead(302, { location: `http://169.254.169.254/latest/meta-data/` }).end();
          return;
        }
        if (req.url === '/endless') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const chunk = Buffer.alloc(64 * 1024, 'x');
          const pump = () => {
            while (res.write(chunk)) if (res.destroyed) return;
            if (!res.destroyed) res.once('drain', pump);
          };
          pump();
          return;
        }
        res.end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('connects only where the policy allows, checking each redirect', async () => {
      const open = policy(['127.0.0.0/8']).dispatcher();
      const closed = policy([]).dispatcher();
      expect((await boundedFetch(`http://127.0.0.1:${port}/`, { timeoutMs: 5000, maxBytes: 1024, dispatcher: open })).body.toString()).toBe('ok');
      const before = served;
      await expect(boundedFetch(`http://127.0.0.1:${port}/`, { timeoutMs: 5000, maxBytes: 1024, dispatcher: closed })).rejects.toThrow(
        /blocked by outbound policy/,
      );
      await expect(boundedFetch(`http://rebind.test:${port}/`, { timeoutMs: 5000, maxBytes: 1024, dispatcher: closed })).rejects.toThrow(
        /blocked by outbound policy/,
      );
      expect(served).toBe(before);
      await expect(
        boundedFetch(`http://127.0.0.1:${port}/redirect`, { timeoutMs: 5000, maxBytes: 1024, dispatcher: open, redirect: 'follow' }),
      ).rejects.toThrow(/blocked by outbound policy: 169\.254\.169\.254 is a link-local address/);
      await Promise.all([open.close(), closed.close()]);
    });

    it('reads at most maxBytes of an endless answer and ends', async () => {
      const res = await boundedFetch(`http://127.0.0.1:${port}/endless`, { timeoutMs: 5000, maxBytes: 100_000 });
      expect(res.status).toBe(200);
      expect(res.truncated).toBe(true);
      expect(res.body.length).toBe(100_000);
    });
  });
});
