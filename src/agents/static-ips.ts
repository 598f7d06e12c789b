import { isIPv4, isIPv6 } from 'node:net';
import { Type } from '@sinclair/typebox';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { LOCATIONS } from '../model/checks.js';
import { agentEgress } from '../private-locations/index.js';
import type { Deps } from '../storage/deps.js';

const tag = 'Static IPs';

/** An address as a firewall rule names it: IPv4-mapped IPv6 as IPv4. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

const isV4 = (entry: string) => isIPv4(entry.split('/')[0]!);
const isV6 = (entry: string) => isIPv6(entry.split('/')[0]!);
/** IPv6 entries are ranges in the anchor's answers: a lone address is its own /128. */
const asRange = (entry: string) => (entry.includes('/') ? entry : `${entry}/128`);

/**
 * Where the account's runs come from, for firewalls: the anchor's six static-IP operations. Public locations
 * answer the service's own runners' addresses as configured (RUNNER_EGRESS_IPS: the service cannot see its own
 * egress); each private location answers its running agents' addresses, as the service sees their calls and as
 * they report (EGRESS_IPS, behind NAT).
 */
export function staticIpRoutes({ sql, config }: Deps): AnyRoute[] {
  async function byRegion(accountId: string): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (config.agents.runnerEgress.length)
      for (const l of config.runner.locations) if ((LOCATIONS as readonly string[]).includes(l)) out.set(l, config.agents.runnerEgress);
    for (const [slug, ips] of await agentEgress(sql, accountId, config.agents.seenSeconds)) out.set(slug, [...new Set(ips.map(plainAddress))].sort());
    return out;
  }
  const pick = (map: Map<string, string[]>, v6: boolean) =>
    Object.fromEntries(
      [...map].map(([region, ips]) => [region, v6 ? ips.filter(isV6).map(asRange) : ips.filter(isV4)]).filter(([, ips]) => (ips as string[]).length),
    );
  const flat = (map: Map<string, string[]>, v6: boolean) => [...new Set(Object.values(pick(map, v6)).flat() as string[])].sort();

  const routes: AnyRoute[] = [];
  for (const v6 of [false, true]) {
    const name = v6 ? 'static-ipv6s' : 'static-ips';
    const what = v6 ? 'IPv6 ranges' : 'IPv4 addresses';
    const Entry = v6 ? Type.String({ description: 'An IPv6 range (CIDR)' }) : Type.String({ format: 'ipv4' });
    routes.push(
      defineRoute({
        method: 'GET',
        path: `/v1/${name}`,
        operationId: v6 ? 'listStaticIpv6s' : 'listStaticIps',
        summary: `The ${what} check runs come from`,
        tag,
        access: 'read',
        schema: { responses: { 200: Type.Array(Entry) } },
        handler: async ({ principal }) => ({ status: 200, body: flat(await byRegion(principal.account.id), v6) }),
      }),
      defineRoute({
        method: 'GET',
        path: `/v1/${name}-by-region`,
        operationId: v6 ? 'listStaticIpv6sByRegion' : 'listStaticIpsByRegion',
        summary: `The ${what} check runs come from, by location`,
        tag,
        access: 'read',
        schema: { responses: { 200: Type.Record(Type.String(), Type.Array(Entry)) } },
        handler: async ({ principal }) => ({ status: 200, body: pick(await byRegion(principal.account.id), v6) }),
      }),
      defineRoute({
        method: 'GET',
        path: `/v1/${name}.txt`,
        operationId: v6 ? 'listStaticIpv6sText' : 'listStaticIpsText',
        summary: `The ${what} check runs come from, one a line`,
        tag,
        access: 'read',
        contentType: 'text/plain',
        schema: { responses: { 200: Type.String() } },
        handler: async ({ principal }) => {
          const list = flat(await byRegion(principal.account.id), v6);
          return { status: 200, body: list.length ? `${list.join('\n')}\n` : '', headers: { 'content-type': 'text/plain; charset=utf-8' } };
        },
      }),
    );
  }
  return routes;
}
