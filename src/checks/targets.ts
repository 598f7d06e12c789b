import type { Rules } from '../http/rules.js';
import { type CheckType, DEFAULT_NAMESERVER, targetHost } from '../model/checks.js';
import type { OutboundPolicy } from '../platform/outbound.js';

type Data = Record<string, unknown>;
const obj = (v: unknown): Data => (v && typeof v === 'object' ? (v as Data) : {});

/** Where each type connects, as its create body names it: a URL, a host and port, or nothing to judge (one entry per type). */
type Target = { url: string } | { field: string; host: unknown; port: number } | null;
const TARGETS: Record<CheckType, (request: Data, data: Data) => Target> = {
  API: () => ({ url: 'body.request.url' }),
  URL: () => ({ url: 'body.request.url' }),
  TCP: (request) => ({
    field: request.hostname ? 'body.request.hostname' : 'body.request.url',
    host: request.hostname ?? targetHost(request.url),
    port: Number(request.port) || 0,
  }),
  ICMP: (request) => ({ field: 'body.request.hostname', host: request.hostname, port: 0 }),
  DNS: (request) => ({ field: 'body.request.nameServer', host: request.nameServer || DEFAULT_NAMESERVER, port: Number(request.port) || 53 }),
  SSL: (request, data) => {
    const ssl = obj(request.sslConfig ?? data.sslConfig);
    return { field: 'body.request.sslConfig.hostname', host: targetHost(ssl.hostname), port: Number(ssl.port) || 443 };
  },
  GRPC: (request) => ({ field: 'body.request.url', host: targetHost(request.url ?? request.hostname), port: Number(request.port) || 443 }),
  TRACEROUTE: (request) => ({ field: 'body.request.url', host: targetHost(request.url ?? request.hostname), port: Number(request.port) || 443 }),
  // Browser scripts and agents reach their targets through the egress proxy, judged at connect; heartbeats connect nowhere.
  BROWSER: () => null,
  MULTI_STEP: () => null,
  PLAYWRIGHT: () => null,
  AGENTIC: () => null,
  HEARTBEAT: () => null,
};

/**
 * The 400s of a check the runners could never reach: a target that is a literal address the outbound policy
 * refuses (names are judged when connected to). Templated URLs (`{{…}}`) are judged at run time.
 */
export function checkTargetRules(type: CheckType, data: Data, policy: OutboundPolicy, rules: Rules): void {
  const request = obj(data.request);
  const target = TARGETS[type](request, data);
  if (!target) return;
  if ('url' in target) {
    const url = request.url;
    if (typeof url === 'string' && !url.includes('{{') && /^https?:\/\//i.test(url)) {
      const why = policy.urlRefusal(url);
      if (why) rules.fail(target.url, 'outbound', `blocked by outbound policy: ${why}`);
    }
    return;
  }
  const { field, host, port } = target;
  if (typeof host !== 'string' || !host || host.includes('{{')) return;
  const why = policy.literalRefusal(host, port);
  if (why) rules.fail(field, 'outbound', `blocked by outbound policy: ${why}`);
}
