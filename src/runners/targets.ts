import type { Rules } from '../http/rules.js';
import type { CheckType } from '../model/checks.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import { DEFAULT_NAMESERVER } from './types/dns.js';

type Data = Record<string, unknown>;
const obj = (v: unknown): Data => (v && typeof v === 'object' ? (v as Data) : {});

/**
 * The 400s of a check the runners could never reach: a target that is a literal address the outbound policy
 * refuses (names are judged when connected to). Templated URLs (`{{…}}`) are judged at run time.
 */
export function checkTargetRules(type: CheckType, data: Data, policy: OutboundPolicy, rules: Rules): void {
  const request = obj(data.request);
  const host = (field: string, value: unknown, port: number) => {
    if (typeof value !== 'string' || !value || value.includes('{{')) return;
    const why = policy.literalRefusal(value, port);
    if (why) rules.fail(field, 'outbound', `blocked by outbound policy: ${why}`);
  };
  switch (type) {
    case 'API':
    case 'URL': {
      const url = request.url;
      if (typeof url === 'string' && !url.includes('{{') && /^https?:\/\//i.test(url)) {
        const why = policy.urlRefusal(url);
        if (why) rules.fail('body.request.url', 'outbound', `blocked by outbound policy: ${why}`);
      }
      return;
    }
    case 'TCP':
      return host('body.request.hostname', request.hostname ?? request.url, Number(request.port) || 0);
    case 'ICMP':
      return host('body.request.hostname', request.hostname, 0);
    case 'DNS':
      return host('body.request.nameServer', request.nameServer || DEFAULT_NAMESERVER, Number(request.port) || 53);
    case 'SSL': {
      const ssl = obj(request.sslConfig ?? data.sslConfig);
      return host('body.request.sslConfig.hostname', ssl.hostname, Number(ssl.port) || 443);
    }
    case 'GRPC':
      return host('body.request.url', request.url ?? request.hostname, Number(request.port) || 443);
    case 'TRACEROUTE':
      return host('body.request.url', request.url ?? request.hostname, Number(request.port) || 443);
    default:
      return;
  }
}
