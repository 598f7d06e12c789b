import { randomBytes } from 'node:crypto';
import type { Sql } from '../../storage/postgres.js';

/**
 * Custom domains of status pages and dashboards (docs/status-pages.md, "Custom domains"): per-account claims, each
 * with the token its TXT record must hold, verified once the record is seen.
 */

export interface ClaimRow {
  account_id: string;
  domain: string;
  token: string;
  verified_at: Date | null;
  created_at: Date;
}

export type DomainUser = { type: 'status-page'; id: string } | { type: 'dashboard'; id: number };

/** The TXT record a claim is proved by. */
export const challengeName = (domain: string) => `_monitoring-challenge.${domain}`;

/**
 * Makes `domain` the one of `self` among the account's pages and dashboards, and the account's claim on it (kept if
 * it exists): answers the other page or dashboard of the account that uses it, if one does (the caller refuses).
 * Runs under a lock of the domain, to the end of the caller's transaction.
 */
export async function claimDomain(tx: Sql, accountId: string, domain: string, self: DomainUser): Promise<DomainUser | undefined> {
  const name = domain.toLowerCase();
  await tx`select pg_advisory_xact_lock(hashtextextended(${`custom-domain:${name}`}, 0))`;
  const [other] = await tx<{ type: 'status-page' | 'dashboard'; id: string }[]>`
    select 'status-page' as type, id::text from status_pages
      where account_id = ${accountId} and lower(custom_domain) = ${name} and (${self.type !== 'status-page'} or id::text <> ${String(self.id)})
    union all
    select 'dashboard', id::text from dashboards
      where account_id = ${accountId} and lower(custom_domain) = ${name} and (${self.type !== 'dashboard'} or id::text <> ${String(self.id)})
    limit 1`;
  if (other) return other.type === 'dashboard' ? { type: 'dashboard', id: Number(other.id) } : { type: 'status-page', id: other.id };
  await tx`insert into domain_claims (account_id, domain, token) values (${accountId}, ${name}, ${randomBytes(16).toString('hex')})
    on conflict (account_id, domain) do nothing`;
  return undefined;
}

export async function listClaims(sql: Sql, accountId: string): Promise<ClaimRow[]> {
  return sql<ClaimRow[]>`select * from domain_claims where account_id = ${accountId} order by domain`;
}

export async function findClaim(sql: Sql, accountId: string, domain: string): Promise<ClaimRow | undefined> {
  const [row] = await sql<ClaimRow[]>`select * from domain_claims where account_id = ${accountId} and domain = ${domain.toLowerCase()}`;
  return row;
}

/** The account's pages and dashboards that name each of its claimed domains. */
export async function domainUsers(sql: Sql, accountId: string): Promise<Map<string, DomainUser[]>> {
  const rows = await sql<{ domain: string; type: 'status-page' | 'dashboard'; id: string }[]>`
    select lower(custom_domain) as domain, 'status-page' as type, id::text from status_pages where account_id = ${accountId} and custom_domain is not null
    union all
    select lower(custom_domain), 'dashboard', id::text from dashboards where account_id = ${accountId} and custom_domain is not null`;
  const users = new Map<string, DomainUser[]>();
  for (const r of rows)
    users.set(r.domain, [...(users.get(r.domain) ?? []), r.type === 'dashboard' ? { type: 'dashboard', id: Number(r.id) } : { type: 'status-page', id: r.id }]);
  return users;
}

/** Marks the claim verified; false when another account holds the domain verified already. */
export async function markVerified(sql: Sql, accountId: string, domain: string): Promise<boolean> {
  try {
    await sql`update domain_claims set verified_at = coalesce(verified_at, now()) where account_id = ${accountId} and domain = ${domain}`;
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return false;
    throw err;
  }
}

/** Gives up the account's claim; false when none was there. */
export async function dropClaim(sql: Sql, accountId: string, domain: string): Promise<boolean> {
  const rows = await sql`delete from domain_claims where account_id = ${accountId} and domain = ${domain} returning domain`;
  return rows.length > 0;
}
