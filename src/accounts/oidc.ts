import { createHmac, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import type { AccountRole } from '../model/accounts.js';
import type { Sql } from '../storage/postgres.js';

/**
 * OpenID Connect sign-in (docs/people.md) with a maintained relying-party library (openid-client): authorization
 * code with PKCE, state and nonce; the ID token's issuer, audience, nonce and expiry are checked by the library.
 * Each account may have its own provider (PUT /v1/account/oidc); the default account may take one from the
 * environment (OIDC_*). A provider an account names is reached only through the outbound policy, like everything
 * a tenant points the service at; the operator's (environment) is trusted as configured.
 */

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  roleClaim: string;
  roleMap: { value: string; role: AccountRole }[];
  defaultRole: AccountRole | null;
  /** From the environment (trusted) or an account's own (through the outbound policy). */
  source: 'environment' | 'account';
}

export async function findAccountOidc(db: Sql, accountId: string): Promise<OidcSettings | undefined> {
  const [row] = await db<{ issuer: string; client_id: string; client_secret: string; role_claim: string; role_map: { value: string; role: AccountRole }[]; default_role: AccountRole | null }[]>`
    select issuer, client_id, client_secret, role_claim, role_map, default_role from account_oidc where account_id = ${accountId}`;
  return row && { issuer: row.issuer, clientId: row.client_id, clientSecret: row.client_secret, roleClaim: row.role_claim, roleMap: row.role_map, defaultRole: row.default_role, source: 'account' };
}

export async function saveAccountOidc(db: Sql, accountId: string, s: Omit<OidcSettings, 'source'>): Promise<void> {
  await db`insert into account_oidc (account_id, issuer, client_id, client_secret, role_claim, role_map, default_role)
    values (${accountId}, ${s.issuer}, ${s.clientId}, ${s.clientSecret}, ${s.roleClaim}, ${db.json(s.roleMap as never)}, ${s.defaultRole})
    on conflict (account_id) do update set issuer = excluded.issuer, client_id = excluded.client_id, client_secret = excluded.client_secret,
      role_claim = excluded.role_claim, role_map = excluded.role_map, default_role = excluded.default_role, updated_at = now()`;
}

export async function deleteAccountOidc(db: Sql, accountId: string): Promise<boolean> {
  const rows = await db`delete from account_oidc where account_id = ${accountId} returning 1`;
  return rows.length > 0;
}

/** The role a person's claims give: the first role_map entry whose value the role claim holds, else the default. */
export function roleFromClaims(settings: Pick<OidcSettings, 'roleClaim' | 'roleMap' | 'defaultRole'>, claims: Record<string, unknown>): AccountRole | null {
  const raw = claims[settings.roleClaim];
  const held = new Set((Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(/[\s,]+/) : []).map(String));
  return settings.roleMap.find((m) => held.has(m.value))?.role ?? settings.defaultRole;
}

const configs = new Map<string, { at: number; config: Promise<client.Configuration> }>();

/** The provider's configuration (discovery), kept five minutes. */
export function providerConfig(settings: OidcSettings, dispatcher: Dispatcher | undefined): Promise<client.Configuration> {
  const key = `${settings.source}|${settings.issuer}|${settings.clientId}|${settings.clientSecret}`;
  const cached = configs.get(key);
  if (cached && Date.now() - cached.at < 300_000) return cached.config;
  const customFetch: client.CustomFetch = (url, options) =>
    undiciFetch(url, {
      signal: AbortSignal.timeout(10_000),
      ...(options as object),
      ...(settings.source === 'account' && dispatcher ? { dispatcher } : {}),
    }) as unknown as ReturnType<client.CustomFetch>;
  const config = client
    .discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
      [client.customFetch]: customFetch,
      ...(settings.issuer.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : {}),
    })
    .then((c) => {
      c[client.customFetch] = customFetch;
      return c;
    });
  config.catch(() => configs.delete(key));
  configs.set(key, { at: Date.now(), config });
  return config;
}

/** What the browser carries between start and callback, signed (it never holds a secret of the provider). */
export interface OidcState {
  accountId: string;
  state: string;
  nonce: string;
  verifier: string;
  redirect: string;
  at: number;
}

export function sealState(secret: Buffer, s: OidcState): string {
  const body = Buffer.from(JSON.stringify(s)).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

/** The state a cookie carries, when its signature holds and it is at most ten minutes old. */
export function openState(secret: Buffer, sealed: string | undefined): OidcState | undefined {
  if (!sealed) return undefined;
  const [body, mac] = sealed.split('.');
  if (!body || !mac) return undefined;
  const want = createHmac('sha256', secret).update(body).digest();
  const got = Buffer.from(mac, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  try {
    const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as OidcState;
    return Date.now() - s.at < 600_000 ? s : undefined;
  } catch {
    return undefined;
  }
}

export { client as oidcClient };
