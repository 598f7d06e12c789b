import { Resolver } from 'node:dns/promises';
import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../../http/errors.js';
import { type AnyRoute, defineRoute } from '../../http/route.js';
import { iso } from '../../model/time.js';
import type { Deps } from '../../storage/deps.js';
import type { Sql } from '../../storage/postgres.js';
import { type ClaimRow, challengeName, claimDomain, type DomainUser, domainUsers, dropClaim, findClaim, listClaims, markVerified } from './repository.js';

/**
 * Custom domains (our addition to the anchor's API; docs/status-pages.md, "Custom domains"). A status page or a
 * dashboard with a `customDomain` makes its account's claim on the name; the page is served at that host only once
 * the claim is verified: a TXT record `_monitoring-challenge.<domain>` holding the claim's token, looked up when the
 * account asks (`POST …/verify`). One account's verified claim is the domain's for good (until it drops it).
 */

const tag = 'Custom domains';
const DomainParam = Type.Object(
  { domain: Type.String({ minLength: 3, maxLength: 253, pattern: '^(?=.{3,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9-]{2,63}$' }) },
  { additionalProperties: false },
);
const User = Type.Union([
  Type.Object({ type: Type.Literal('status-page'), id: Type.String({ format: 'uuid' }) }),
  Type.Object({ type: Type.Literal('dashboard'), id: Type.Integer() }),
]);
const Claim = Type.Object({
  domain: Type.String(),
  verified: Type.Boolean(),
  verifiedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  challenge: Type.Object({
    type: Type.Literal('TXT'),
    name: Type.String({ description: 'The DNS name of the record to create' }),
    value: Type.String({ description: 'What the record must hold' }),
  }),
  usedBy: Type.Array(User, { description: "The account's status page or dashboard that names this domain" }),
  created_at: Type.String({ format: 'date-time' }),
});

/**
 * Inside the write of a status page or dashboard that names `domain`: the account's claim on it (made unverified if
 * new), or a 409 when another page or dashboard of the account names it already.
 */
export async function useDomain(tx: Sql, accountId: string, domain: string | null | undefined, self: DomainUser): Promise<void> {
  if (!domain) return;
  const other = await claimDomain(tx, accountId, domain, self);
  if (other) throw conflict(`customDomain ${domain.toLowerCase()} is already used by this account's ${other.type} ${other.id}`, { field: 'customDomain' });
}

/** What a DNS lookup of a name may be asked: the configured servers, else the system's (within the outbound policy). */
function txtLookup(deps: Deps): (name: string) => Promise<string[][]> {
  const servers = deps.config.domainDnsServers;
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (servers.length) resolver.setServers(servers);
  return (name) => resolver.resolveTxt(name);
}

export function customDomainRoutes(deps: Deps): AnyRoute[] {
  const { sql, config, outbound } = deps;
  const lookup = txtLookup(deps);
  const claimBody = (c: ClaimRow, users: DomainUser[]) => ({
    domain: c.domain,
    verified: c.verified_at !== null,
    verifiedAt: iso(c.verified_at),
    challenge: { type: 'TXT' as const, name: challengeName(c.domain), value: c.token },
    usedBy: users,
    created_at: iso(c.created_at)!,
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/custom-domains',
      operationId: 'listCustomDomains',
      tag,
      access: 'read',
      summary: "The account's custom domains: each with the TXT record that proves it and whether it is verified",
      schema: { responses: { 200: Type.Array(Claim) } },
      handler: async ({ principal }) => {
        const [claims, users] = await Promise.all([listClaims(sql, principal.account.id), domainUsers(sql, principal.account.id)]);
        return { status: 200, body: claims.map((c) => claimBody(c, users.get(c.domain) ?? [])) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/custom-domains/{domain}/verify',
      operationId: 'verifyCustomDomain',
      tag,
      access: 'write',
      errors: [404, 409],
      summary: "Look up the domain's TXT record now: holding the claim's token, the domain becomes the account's and its page is served there",
      description: 'A 409 says why not: no such record (yet), a record with another value, or the domain verified by another account.',
      schema: { params: DomainParam, responses: { 200: Claim } },
      handler: async ({ principal, params }) => {
        const domain = params.domain.toLowerCase();
        const claim = await findClaim(sql, principal.account.id, domain);
        if (!claim) throw notFound();
        const name = challengeName(domain);
        if (!claim.verified_at) {
          // A lookup of a name is traffic too: with OUTBOUND_PUBLIC=false only DOMAIN_DNS_SERVERS or a name OUTBOUND_ALLOW names is asked.
          if (!config.domainDnsServers.length && !config.outbound.allowPublic && !outbound.allowsName(name)) {
            throw conflict(`${name} is not looked up: OUTBOUND_PUBLIC is false and neither DOMAIN_DNS_SERVERS nor OUTBOUND_ALLOW covers it`);
          }
          const records = await lookup(name).catch((err: NodeJS.ErrnoException) => {
            throw conflict(`No TXT record ${name} was found (${err.code ?? err.message}); create it with the value ${claim.token} and try again`);
          });
          const values = records.map((parts) => parts.join(''));
          if (!values.includes(claim.token))
            throw conflict(`The TXT record ${name} does not hold ${claim.token} (it holds ${values.length} other value${values.length === 1 ? '' : 's'})`);
          if (!(await markVerified(sql, principal.account.id, domain))) throw conflict(`${domain} is verified by another account`);
        }
        const users = await domainUsers(sql, principal.account.id);
        return { status: 200, body: claimBody((await findClaim(sql, principal.account.id, domain))!, users.get(domain) ?? []) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/custom-domains/{domain}',
      operationId: 'deleteCustomDomain',
      tag,
      access: 'write',
      errors: [404, 409],
      summary: "Give up the account's claim on a domain (a 409 while a status page or dashboard of the account names it)",
      schema: { params: DomainParam, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const domain = params.domain.toLowerCase();
        const users = (await domainUsers(sql, principal.account.id)).get(domain) ?? [];
        if (users.length) throw conflict(`${domain} is used by the account's ${users[0]!.type} ${users[0]!.id}: remove it there first`);
        if (!(await dropClaim(sql, principal.account.id, domain))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
