import dns from 'node:dns';
import net, { isIP, type LookupFunction, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import tls, { type TLSSocket } from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, Client, Dispatcher } from 'undici';

/**
 * The outbound policy: which addresses a call the service makes for an account (alert deliveries, check
 * runs) may reach. Checked on the address a connection is actually made to (after DNS, so a name that
 * re-resolves to an internal address is refused: no rebinding gap), on every redirect, and at create or
 * update where the address is literal. docs/outbound.md.
 *
 * Denied by default: loopback, link-local (cloud metadata at 169.254.169.254 included), unspecified, private
 * (RFC 1918), carrier-grade NAT, unique-local IPv6, multicast and reserved ranges, in every spelling the URL
 * parser or ipaddr.js accepts (2130706433, 0x7f000001, 127.1, [::ffff:127.0.0.1]). Always denied, whatever
 * OUTBOUND_ALLOW says: the service's own endpoints (its HTTP port on this machine, Postgres, Redis,
 * ClickHouse). OUTBOUND_ALLOW opens CIDRs and host names; OUTBOUND_PUBLIC=false refuses public addresses, and
 * then a host name OUTBOUND_ALLOW does not name is refused before any DNS lookup.
 */

export const OUTBOUND_BLOCKED = 'EOUTBOUNDBLOCKED';

/** A target the policy refuses; the message says why ("blocked by outbound policy: …"). */
export class OutboundBlocked extends Error {
  readonly code = OUTBOUND_BLOCKED;
  constructor(reason: string) {
    super(`blocked by outbound policy: ${reason}`);
    this.name = 'OutboundBlocked';
  }
}

export interface OutboundSettings {
  /** OUTBOUND_PUBLIC: public (globally routable) addresses may be reached. */
  allowPublic: boolean;
  /** OUTBOUND_ALLOW: CIDRs (or single addresses) and host names (`*.corp.example` for a domain and its subdomains). */
  allow: string[];
  /** DNS_SERVERS: the name servers host names are resolved with (ip[:port]); none: the system's (/etc/resolv.conf). */
  dnsServers?: string[];
}

type Answer = { address: string; family: number };

/**
 * Resolves names with c-ares (dns.Resolver: its own sockets, never libuv's thread pool, so a burst of password hashing,
 * compression or file reads cannot make a check's lookup wait). A name the name servers do not know is asked of the
 * system resolver too (getaddrinfo: /etc/hosts, search domains), unless DNS_SERVERS names the servers to ask.
 */
export function nameResolver(servers: readonly string[] = [], timeoutMs = 2_500): (host: string, family: 0 | 4 | 6) => Promise<Answer[]> {
  const resolver = new dns.promises.Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length) resolver.setServers([...servers]);
  return async (host, family) => {
    const [v4, v6] = await Promise.allSettled([
      family === 6 ? Promise.resolve([]) : resolver.resolve4(host),
      family === 4 ? Promise.resolve([]) : resolver.resolve6(host),
    ]);
    const found: Answer[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (found.length) return found;
    const failure = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason as NodeJS.ErrnoException | undefined;
    const unknown = !failure || failure.code === 'ENOTFOUND' || failure.code === 'ENODATA';
    if (unknown && !servers.length) return dns.promises.lookup(host, { all: true, family, verbatim: true });
    throw failure ?? Object.assign(new Error(`${host}: no such host`), { code: 'ENOTFOUND' });
  };
}

export interface Endpoint {
  host: string;
  port: number;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * An address in its one canonical form: IPv4-mapped IPv6 (`::ffff:a.b.c.d`), IPv4-compatible IPv6 (`::a.b.c.d`,
 * deprecated but still an IPv4 address to some stacks) and IPv4-translated IPv6 (`::ffff:0:a.b.c.d`) as the IPv4
 * address they carry, so `[::127.0.0.1]` is judged as 127.0.0.1.
 */
export function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  return remembered(parsedAddresses, text, readAddress);
}

/**
 * The last answers of a pure function of a text (parseAddress, canonicalHost: each connection a run makes asks them
 * several times of the same few hosts, 1.5 % of a scheduled run's CPU); forgotten all at once past 4,096 texts.
 */
function remembered<T>(known: Map<string, T>, text: string, make: (text: string) => T): T {
  if (known.has(text)) return known.get(text) as T;
  const value = make(text);
  if (known.size >= 4096) known.clear();
  known.set(text, value);
  return value;
}
const parsedAddresses = new Map<string, ipaddr.IPv4 | ipaddr.IPv6 | undefined>();
const canonicalHosts = new Map<string, string | undefined>();

function readAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return undefined;
  try {
    const address = ipaddr.process(bare);
    if (address.kind() !== 'ipv6') return address;
    const parts = (address as ipaddr.IPv6).parts;
    const zeros = (n: number) => parts.slice(0, n).every((p) => p === 0);
    const compatible = zeros(6) && (parts[6] !== 0 || parts[7]! > 1);
    const translated = zeros(4) && parts[4] === 0xffff && parts[5] === 0;
    if (!compatible && !translated) return address;
    return ipaddr.IPv4.parse([parts[6]! >> 8, parts[6]! & 0xff, parts[7]! >> 8, parts[7]! & 0xff].join('.'));
  } catch {
    return undefined;
  }
}

/**
 * A host as connections will see it: the URL parser's canonical form (`2130706433`, `0x7f000001` and `127.1`
 * are 127.0.0.1; names lower-cased; IPv6 without brackets). Undefined when it is no host at all.
 */
export function canonicalHost(raw: string): string | undefined {
  return remembered(canonicalHosts, raw, readHost);
}

function readHost(raw: string): string | undefined {
  const text = raw.trim();
  if (!text) return undefined;
  const bracketed = !text.startsWith('[') && isIP(text) === 6 ? `[${text}]` : text;
  try {
    const { hostname } = new URL(`http://${bracketed}/`);
    if (!hostname) return undefined;
    const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    const address = parseAddress(host);
    return address ? address.toString() : host.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/** `localhost` and its subdomains always mean this machine (RFC 6761): answered without DNS. */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** Parses OUTBOUND_ALLOW entries; throws naming the first one that is neither a CIDR, an address nor a host name. */
export function parseAllowList(entries: readonly string[]): { cidrs: Cidr[]; names: string[] } {
  const cidrs: Cidr[] = [];
  const names: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.includes('/')) {
      const [addr, bits] = entry.split('/');
      const address = parseAddress(addr);
      const prefix = Number(bits);
      const max = address?.kind() === 'ipv4' ? 32 : 128;
      if (!address || !/^\d+$/.test(bits) || prefix > max) throw new Error(`"${raw}" is not a CIDR`);
      cidrs.push([address, prefix]);
    } else if (parseAddress(entry)) {
      const address = parseAddress(entry)!;
      cidrs.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(entry)) {
      names.push(entry);
    } else {
      throw new Error(`"${raw}" is neither a CIDR, an address nor a host name`);
    }
  }
  return { cidrs, names };
}

function inCidr(address: ipaddr.IPv4 | ipaddr.IPv6, [base, bits]: Cidr): boolean {
  return address.kind() === base.kind() && (address as ipaddr.IPv4).match(base as ipaddr.IPv4, bits);
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  linkLocal: 'a link-local address (cloud metadata lives there)',
  unspecified: 'the unspecified address',
  private: 'a private address (RFC 1918)',
  uniqueLocal: 'a unique-local IPv6 address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

export class OutboundPolicy {
  private readonly cidrs: Cidr[];
  private readonly names: string[];
  /** Addresses (any port) of this machine: the own-endpoint check covers every local spelling. */
  private readonly local = new Set<string>();
  /** [address or '*local', port] pairs that are the service's own. */
  private readonly own: { address: string; port: number }[] = [];
  /**
   * Own endpoints the settings name by host name (`redis:6379` in a compose network): the addresses the name
   * resolved to (resolveOwnNames, at start and then periodically). Until a name has resolved once, its port is
   * refused on every address that is not public.
   */
  private readonly ownNames: { host: string; port: number; addresses: Set<string>; resolved: boolean }[] = [];

  constructor(
    readonly settings: OutboundSettings,
    ownEndpoints: readonly Endpoint[] = [],
    /** How names are resolved (c-ares, nameResolver); a test answers names itself. */
    private readonly lookupAll: (host: string, family: 0 | 4 | 6) => Promise<Answer[]> = nameResolver(settings.dnsServers),
  ) {
    ({ cidrs: this.cidrs, names: this.names } = parseAllowList(settings.allow));
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) this.local.add(parseAddress(i.address)?.toString() ?? i.address);
    for (const endpoint of ownEndpoints) this.addOwnEndpoint(endpoint);
  }

  /** One more of the service's own endpoints (its HTTP port once it listens). */
  addOwnEndpoint({ host, port }: Endpoint): void {
    const canonical = canonicalHost(host) ?? host;
    const address = parseAddress(canonical);
    // A name, a local or an unspecified address: the port is closed on every address of this machine.
    const local = isLocalhostName(canonical) || !address || this.isLocal(address);
    this.own.push({ address: local ? '*local' : address!.toString(), port });
    // A name is also closed on whatever it resolves to.
    if (!address && !isLocalhostName(canonical)) this.ownNames.push({ host: canonical, port, addresses: new Set(), resolved: false });
  }

  /**
   * Resolves the own endpoints named by host name, so their addresses are refused wherever they are (a name the
   * resolver cannot answer keeps what it resolved to before). The service calls it at start and every minute.
   */
  async resolveOwnNames(): Promise<void> {
    await Promise.all(
      this.ownNames.map(async (own) => {
        try {
          const found = await this.lookupAll(own.host, 0);
          own.addresses = new Set(found.map((f) => parseAddress(f.address)?.toString() ?? f.address));
          own.resolved = true;
        } catch {
          // Unresolvable now: the last answer stands (or, never resolved, the port stays closed on internal addresses).
        }
      }),
    );
  }

  /** resolveOwnNames now and every `intervalMs`; returns the stop. Nothing to do when no endpoint is named. */
  watchOwnNames(intervalMs = 60_000): { ready: Promise<void>; stop(): void } {
    if (!this.ownNames.length) return { ready: Promise.resolve(), stop: () => undefined };
    const timer = setInterval(() => void this.resolveOwnNames(), intervalMs);
    timer.unref();
    return { ready: this.resolveOwnNames(), stop: () => clearInterval(timer) };
  }

  /** The service's own endpoints as its settings name them: Postgres, Redis, ClickHouse and its HTTP port. */
  static ownEndpointsOf(config: { port: number; databaseUrl: string; redisUrl: string; clickhouse: { url: string | undefined } }): Endpoint[] {
    const endpoint = (raw: string, fallbackPort: number) => {
      const url = new URL(raw);
      return { host: url.hostname || '127.0.0.1', port: Number(url.port || fallbackPort) };
    };
    return [
      ...(config.port ? [{ host: '127.0.0.1', port: config.port }] : []),
      endpoint(config.databaseUrl, 5432),
      endpoint(config.redisUrl, 6379),
      ...(config.clickhouse.url ? [endpoint(config.clickhouse.url, config.clickhouse.url.startsWith('https:') ? 8443 : 8123)] : []),
    ];
  }

  private isLocal(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    const range = address.range();
    return range === 'loopback' || range === 'unspecified' || this.local.has(address.toString());
  }

  /** Whether OUTBOUND_ALLOW names this host (exactly, or as `*.domain`). */
  allowsName(host: string): boolean {
    return this.names.some((n) => (n.startsWith('*.') ? host === n.slice(2) || host.endsWith(n.slice(1)) : host === n));
  }

  /** Why a connection to `address:port` is refused, or undefined when it may be made. `viaName`: reached through an allowed name. */
  refusal(address: string, port: number, viaName = false): string | undefined {
    const parsed = parseAddress(address);
    if (!parsed) return `${address} is not an address`;
    const text = parsed.toString();
    for (const own of this.own) {
      if (own.port === port && (own.address === text || (own.address === '*local' && this.isLocal(parsed)))) {
        return `${text}:${port} is one of the service's own endpoints`;
      }
    }
    for (const own of this.ownNames) {
      if (own.port === port && (own.addresses.has(text) || (!own.resolved && parsed.range() !== 'unicast'))) {
        return `${text}:${port} is one of the service's own endpoints (${own.host})`;
      }
    }
    if (viaName || this.cidrs.some((c) => inCidr(parsed, c))) return undefined;
    const range = parsed.range();
    if (range !== 'unicast') return `${text} is ${RANGE_NAMES[range] ?? `a ${range} address`}; OUTBOUND_ALLOW opens it`;
    if (!this.settings.allowPublic) return `${text} is a public address and OUTBOUND_PUBLIC is false`;
    return undefined;
  }

  /**
   * The check at create or update: the reason a literal target (an address, or localhost) is refused for
   * being internal or the service's own; undefined for names (decided at connect time) and allowed addresses.
   * A public address refused only by OUTBOUND_PUBLIC=false is judged at connect time too (that setting is the
   * operator's, and may change without the target being wrong).
   */
  literalRefusal(rawHost: string, port: number): string | undefined {
    const host = canonicalHost(rawHost);
    if (!host) return `${rawHost} is not a host`;
    const why = isLocalhostName(host) && !this.allowsName(host) ? this.refusal('127.0.0.1', port) : parseAddress(host) ? this.refusal(host, port) : undefined;
    return why?.endsWith('OUTBOUND_PUBLIC is false') ? undefined : why;
  }

  /** The same for a URL (its host and port); also refuses a URL that is not http(s). */
  urlRefusal(rawUrl: string): string | undefined {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      return 'not a URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} URLs are not reached`;
    return this.literalRefusal(url.hostname, Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
  }

  /**
   * Resolves `host` to the addresses a connection to `port` may use, in DNS order; rejects with
   * OutboundBlocked when none may be used. With OUTBOUND_PUBLIC=false a name OUTBOUND_ALLOW does not name is
   * refused before any lookup.
   */
  async resolve(rawHost: string, port: number, family: 0 | 4 | 6 = 0): Promise<{ address: string; family: 4 | 6 }[]> {
    const host = canonicalHost(rawHost);
    if (!host) throw new OutboundBlocked(`${rawHost} is not a host`);
    const literal = parseAddress(host);
    const named = !literal && this.allowsName(host);
    let candidates: { address: string; family: number }[];
    if (literal) {
      candidates = [{ address: literal.toString(), family: literal.kind() === 'ipv4' ? 4 : 6 }];
    } else if (isLocalhostName(host)) {
      candidates = [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    } else {
      if (!this.settings.allowPublic && !named) throw new OutboundBlocked(`${host} is not named by OUTBOUND_ALLOW and OUTBOUND_PUBLIC is false`);
      candidates = await this.lookupAll(host, family).catch((err: NodeJS.ErrnoException) => {
        throw Object.assign(new Error(`${host}: ${err.code === 'ENOTFOUND' ? 'no such host' : err.message}`), { code: err.code ?? 'ENOTFOUND' });
      });
    }
    const fitting = candidates.filter((c) => family === 0 || c.family === family);
    const refusals: string[] = [];
    const allowed: { address: string; family: 4 | 6 }[] = [];
    for (const c of fitting) {
      const why = this.refusal(c.address, port, named);
      if (why) refusals.push(why);
      else allowed.push({ address: parseAddress(c.address)!.toString(), family: c.family === 6 ? 6 : 4 });
    }
    if (!allowed.length) throw new OutboundBlocked(refusals[0] ?? `${host} has no IPv${family} address`);
    return allowed;
  }

  /** A `lookup` for net/tls connections that answers only allowed addresses (the port is the connection's). */
  lookupFor(port: number): LookupFunction {
    return (hostname, options, callback) => {
      const family = (typeof options === 'object' ? options.family : options) as 0 | 4 | 6 | undefined;
      this.resolve(hostname, port, family ?? 0).then(
        (list) => {
          if (typeof options === 'object' && options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, list);
          else callback(null, list[0].address, list[0].family);
        },
        (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
      );
    };
  }

  /**
   * An undici dispatcher whose every connection (redirects included) goes to an address this policy allows,
   * resolved once and pinned: the TLS name stays the URL's host.
   */
  dispatcher(opts: { rejectUnauthorized?: boolean; family?: 0 | 4 | 6; connectTimeoutMs?: number } = {}): Agent {
    const connector = buildConnector({ rejectUnauthorized: opts.rejectUnauthorized ?? true, timeout: opts.connectTimeoutMs ?? 10_000 });
    return new Agent({
      connect: (options, callback) => {
        const port = Number(options.port || (options.protocol === 'https:' ? 443 : 80));
        this.resolve(options.hostname, port, opts.family ?? 0).then(
          ([target]) => {
            const literal = parseAddress(canonicalHost(options.hostname) ?? '');
            connector(
              { ...options, hostname: target.address, servername: options.servername ?? (literal ? undefined : canonicalHost(options.hostname)) },
              callback,
            );
          },
          (err: Error) => callback(err, null),
        );
      },
    });
  }
}

/** How long each step of making a connection took, in ms. */
export interface ConnectTimings {
  dns: number;
  tcp: number;
  tls: number;
}

export interface ConnectOptions {
  /** TLS on top (the host's name for SNI and certificate checks unless `servername` says otherwise). */
  tls?: { servername?: string; rejectUnauthorized?: boolean; ALPNProtocols?: string[] };
  family?: 0 | 4 | 6;
  timeoutMs: number;
}

/**
 * A TCP (or TLS) connection to `host:port` through `policy`: resolved and checked first, then connected to the
 * allowed address, each step timed. Rejects with OutboundBlocked, the socket's error, or a timeout.
 */
export async function connectThrough(
  policy: OutboundPolicy,
  host: string,
  port: number,
  opts: ConnectOptions,
): Promise<{ socket: Socket | TLSSocket; address: string; family: 4 | 6; timings: ConnectTimings }> {
  const t0 = performance.now();
  const [target] = await policy.resolve(host, port, opts.family ?? 0);
  const t1 = performance.now();
  const literal = parseAddress(canonicalHost(host) ?? '');
  return new Promise((resolve, reject) => {
    let t2 = t1;
    const servername = opts.tls ? (opts.tls.servername ?? (literal ? undefined : canonicalHost(host))) : undefined;
    const socket: Socket | TLSSocket = opts.tls
      ? tls.connect({ host: target.address, port, servername, rejectUnauthorized: opts.tls.rejectUnauthorized ?? true, ALPNProtocols: opts.tls.ALPNProtocols })
      : net.connect({ host: target.address, port });
    const timer = setTimeout(
      () => {
        socket.destroy();
        reject(Object.assign(new Error(`connecting to ${host}:${port} timed out after ${opts.timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      },
      Math.max(1, opts.timeoutMs - (t1 - t0)),
    );
    socket.once('connect', () => (t2 = performance.now()));
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.once(opts.tls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      const t3 = performance.now();
      socket.removeAllListeners('error');
      resolve({
        socket,
        address: target.address,
        family: target.family,
        timings: { dns: round(t1 - t0), tcp: round((opts.tls ? t2 : t3) - t1), tls: opts.tls ? round(t3 - t2) : 0 },
      });
    });
  });
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * An undici dispatcher for one check run: every connection it makes (redirects included) goes through
 * `connectThrough`, and `onConnect` hears each one's timings and address. A run calls one origin at a time, so it
 * holds one connection (an undici `Client`) per origin it calls, made when first called, instead of an `Agent` with
 * its pools: about 0.05 ms less a run (docs/performance.md). `destroy` ends them all.
 */
export function runDispatcher(
  policy: OutboundPolicy,
  opts: { rejectUnauthorized: boolean; family: 0 | 4 | 6; timeoutMs: number },
  onConnect: (info: { timings: ConnectTimings; address: string; host: string }) => void,
): Dispatcher {
  const connect: buildConnector.connector = (options, callback) => {
    const https = options.protocol === 'https:';
    const port = Number(options.port || (https ? 443 : 80));
    connectThrough(policy, options.hostname, port, {
      tls: https ? { servername: options.servername ?? undefined, rejectUnauthorized: opts.rejectUnauthorized, ALPNProtocols: ['http/1.1'] } : undefined,
      family: opts.family,
      timeoutMs: opts.timeoutMs,
    }).then(
      ({ socket, timings, address }) => {
        onConnect({ timings, address, host: options.hostname });
        callback(null, socket);
      },
      (err: Error) => callback(err, null),
    );
  };
  return new RunDispatcher(connect);
}

/** One `Client` per origin, made on first use (runDispatcher). */
class RunDispatcher extends Dispatcher {
  private readonly clients = new Map<string, Client>();

  constructor(private readonly connector: buildConnector.connector) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(options.origin);
    let client = this.clients.get(origin);
    if (!client) {
      client = new Client(origin, { connect: this.connector });
      this.clients.set(origin, client);
    }
    return client.dispatch(options, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all([...this.clients.values()].map((c) => c.close())).then(() => {});
    if (!callback) return closed;
    void closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    const err = typeof a === 'function' ? null : (a ?? null);
    const callback = typeof a === 'function' ? a : b;
    const destroyed = Promise.all([...this.clients.values()].map((c) => c.destroy(err))).then(() => {});
    if (!callback) return destroyed;
    void destroyed.then(callback, callback);
  }
}
