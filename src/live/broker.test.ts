import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestService, type TestService } from '../../test/support/service.js';
import { resolvePrincipal } from '../accounts/repository.js';
import { attachLiveBroker, type LiveBroker, LOGIN_FAILURES_PER_MINUTE, withinAccount } from './broker.js';
import { LivePublisher } from './publisher.js';

describe('the live broker', () => {
  let svc: TestService;
  let second: Server;
  let secondBroker: LiveBroker;
  let publisher: Redis;

  beforeAll(async () => {
    svc = await startTestService();
    // A second service process's broker: its own HTTP server, the same Redis prefix.
    second = createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => second.listen(0, '127.0.0.1', resolve));
    secondBroker = await attachLiveBroker(second, {
      resolvePrincipal: (key, account) => resolvePrincipal(svc.deps.sql, key, account),
      redis: svc.deps.redis,
      redisUrl: svc.env.REDIS_URL,
      redisPrefix: svc.env.REDIS_PREFIX,
      logger: svc.deps.logger,
    });
    publisher = new Redis(svc.env.REDIS_URL);
  }, 120_000);
  afterAll(async () => {
    await secondBroker?.close();
    second?.close();
    publisher?.disconnect();
    await svc?.stop();
  });

  it('keeps subscriptions inside the account: no wildcard can widen the account level', () => {
    const id = '0b6e1f54-2f2a-4b7e-9c55-111111111111';
    expect(withinAccount(`account/${id}/ad-hoc-check-results/a/+/+/+`, id)).toBe(true);
    expect(withinAccount(`account/${id}/#`, id)).toBe(true);
    for (const refused of [`account/${id}`, 'account/+/x', '#', '+/+/x', `account/${id.toUpperCase()}/#`, `$SYS/${id}`, `account/other/#`]) {
      expect(withinAccount(refused, id), refused).toBe(false);
    }
  });

  it("delivers what any process publishes to clients of every process's broker", async () => {
    const port = (second.address() as AddressInfo).port;
    const client = await mqtt.connectAsync(`ws://127.0.0.1:${port}/mqtt?authenticationScheme=userApiKey`, {
      username: svc.defaultAccountId,
      password: svc.adminKey,
      reconnectPeriod: 0,
    });
    try {
      const topic = `account/${svc.defaultAccountId}/ad-hoc-check-results/suite/seq/run/result`;
      await client.subscribeAsync(`account/${svc.defaultAccountId}/ad-hoc-check-results/suite/+/+/+`);
      const received = new Promise<{ topic: string; payload: unknown }>((resolve) =>
        client.once('message', (t, p) => resolve({ topic: t, payload: JSON.parse(p.toString()) })),
      );
      // Published from "another process": only through Redis.
      await new LivePublisher(publisher, svc.env.REDIS_PREFIX).publish(topic, { resultType: 'FINAL', result: { name: 'x' } });
      expect(await received).toEqual({ topic, payload: { resultType: 'FINAL', result: { name: 'x' } } });
    } finally {
      await client.endAsync();
    }
  });

  it('answers a WebSocket upgrade on any other path 404', async () => {
    const port = (second.address() as AddressInfo).port;
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/not-mqtt`, 'mqtt');
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => reject(new Error('upgraded')));
      ws.once('error', () => undefined);
    });
    expect(status).toBe(404);
  });

  it('throttles failed logins per client address before any key is looked up; other addresses still log in', async () => {
    const port = (second.address() as AddressInfo).port;
    const login = (password: string, localAddress: string) =>
      mqtt
        .connectAsync(`ws://127.0.0.1:${port}/mqtt`, {
          username: svc.defaultAccountId,
          password,
          reconnectPeriod: 0,
          connectTimeout: 5000,
          wsOptions: { localAddress },
        })
        .then(
          async (client) => {
            await client.endAsync();
            return 0;
          },
          (err: { code?: number }) => err.code ?? -1,
        );
    for (let i = 0; i < LOGIN_FAILURES_PER_MINUTE; i++) expect(await login(`mk_wrong_${i}`, '127.0.0.3')).toBe(4);
    // Past the limit this address is refused before its key is checked, even the right one.
    expect(await login('mk_wrong_again', '127.0.0.3')).toBe(5);
    expect(await login(svc.adminKey, '127.0.0.3')).toBe(5);
    // Another address is not held back.
    expect(await login(svc.adminKey, '127.0.0.4')).toBe(0);
  });
});
