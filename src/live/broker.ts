import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Aedes, type Client, type PublishPacket } from 'aedes';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { createWebSocketStream, WebSocketServer } from 'ws';
import type { PrincipalResolver } from '../model/accounts.js';
import type { Logger } from '../platform/logger.js';
import { type LiveMessage, liveChannel } from './publisher.js';

/** Where MQTT over WebSocket is served, on the service's own port (the anchor CLI's CHECKLY_MQTT_URL points here). */
export const MQTT_PATH = '/mqtt';
/** Largest MQTT packet a client may send: clients only connect and subscribe. */
const MAX_CLIENT_PACKET = 64 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Failed logins a client address may make per minute; past them its logins are refused before any key is looked up
 * (CONNACK 5, not authorized) until the minute ends, so guessing keys cannot turn into a Postgres lookup each.
 */
export const LOGIN_FAILURES_PER_MINUTE = 20;

/** The account a connected client authenticated as (set at CONNECT). */
const accountOf = new WeakMap<Client, string>();

/**
 * Whether `filter` stays inside `account/<id>/`: its first two levels are literally `account` and the id (no
 * wildcard can widen them), so no subscription can match another account's topics.
 */
export function withinAccount(filter: string, accountId: string): boolean {
  const [root, id, ...rest] = filter.split('/');
  return root === 'account' && id === accountId && rest.length > 0 && !filter.startsWith('$');
}

export interface LiveBroker {
  close(): Promise<void>;
}

/**
 * The MQTT broker (aedes) for live results, on WebSocket at /mqtt of the service's HTTP server. Clients log in as
 * the anchor's CLI does (username = account id, password = an API key of it) and may only subscribe inside their
 * account's topics; only the service publishes. What runners publish reaches every service process through Redis
 * (one channel), and each process hands it to its own connected clients.
 */
export async function attachLiveBroker(
  server: Server,
  opts: {
    resolvePrincipal: PrincipalResolver;
    redis: Redis;
    redisUrl: string;
    redisPrefix: string;
    logger: Logger;
    trustProxy?: boolean;
    trustProxyHops?: number;
  },
): Promise<LiveBroker> {
  const rule = { keyPrefix: `${opts.redisPrefix}rl:mqtt-login`, points: LOGIN_FAILURES_PER_MINUTE, duration: 60 };
  const failures = new RateLimiterRedis({ ...rule, storeClient: opts.redis, insuranceLimiter: new RateLimiterMemory(rule) });
  const addressOf = (client: Client) => {
    const req = client.req;
    // As the API reads it: the address the trusted proxies saw, TRUST_PROXY_HOPS entries from the right.
    const hops = String(req?.headers['x-forwarded-for'] ?? '')
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    const forwarded = opts.trustProxy ? (hops.slice(-(opts.trustProxyHops ?? 1))[0] ?? '') : '';
    return forwarded || req?.socket.remoteAddress || 'unknown';
  };
  const broker = await Aedes.createBroker({
    authenticate: (client, username, password, done) => {
      const accountId = username ?? '';
      const key = password?.toString('utf8') ?? '';
      const address = addressOf(client);
      const failed = () => {
        failures.consume(address).catch(() => undefined);
        done(authError(), false);
      };
      failures
        .get(address)
        .catch(() => null)
        .then(async (seen) => {
          if (seen && seen.remainingPoints <= 0) return done(throttledError(), false);
          if (!UUID.test(accountId) || !key || key.length > 512) return failed();
          const principal = await opts.resolvePrincipal(key, accountId);
          if (!principal || principal === 'forbidden') return failed();
          accountOf.set(client, principal.account.id);
          done(null, true);
        })
        .catch((err: unknown) => {
          opts.logger.warn({ err }, 'live broker: could not check a key');
          done(authError(), false);
        });
    },
    authorizeSubscribe: (client, subscription, done) => {
      const accountId = client ? accountOf.get(client) : undefined;
      // A refused subscription is answered with the failure code; the client stays connected.
      done(null, accountId && withinAccount(subscription.topic, accountId) ? subscription : null);
    },
    authorizePublish: (_client, _packet, done) => done(new Error('clients do not publish here')),
  });

  const subscriber = new Redis(opts.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  subscriber.on('error', (err) => opts.logger.warn({ err: err.message }, 'live broker: Redis subscriber error'));
  await subscriber.connect();
  await subscriber.subscribe(liveChannel(opts.redisPrefix));
  subscriber.on('message', (_channel, raw) => {
    let message: LiveMessage;
    try {
      message = JSON.parse(raw) as LiveMessage;
    } catch {
      return;
    }
    const packet: PublishPacket = {
      cmd: 'publish',
      topic: message.topic,
      payload: Buffer.from(JSON.stringify(message.payload)),
      qos: 0,
      retain: false,
      dup: false,
    };
    broker.publish(packet, () => {});
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_PACKET, handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : false) });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== MQTT_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const stream = createWebSocketStream(ws);
      stream.on('error', () => ws.terminate());
      broker.handle(stream, req);
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      subscriber.disconnect();
    },
  };
}

function throttledError(): Error & { returnCode: number } {
  // CONNACK 5: not authorized; this address failed too often in the last minute.
  return Object.assign(new Error('Too many failed logins from this address; wait a minute'), { returnCode: 5 });
}

function authError(): Error & { returnCode: number } {
  // CONNACK 4: bad user name or password (MQTT 3.1.1), what clients report as not authorized.
  return Object.assign(new Error('Bad account id or API key'), { returnCode: 4 });
}
