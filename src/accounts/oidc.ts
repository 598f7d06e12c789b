import { createHmac, timingSafeEqual } from 'node:crypto';
import * as client from 'openid-client';
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import type { AccountRole } from '../model/accounts.js';
import type { Sql } from '../storage/postgres.js';
import { openSecret, sealSecret } from '../storage/secret-box.js';

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
  /**
   * The account states its provider asks people for a second factor: a sign-in through it is not asked for the
   * person's own TOTP code, and counts as a second factor where the account requires one (docs/people.md).
   */
  trustProviderMfa: boolean;
  /** From the environment (trusted) or an account's own (through the outbound policy). */
  source: 'environment' | 'account';
}

export async function findAccountOidc(db: Sql, accountId: string): Promise<OidcSettings | undefined> {
  const [row] = await db<
    {
      issuer: string;
      client_id: string;
      client_secret: string;
      role_claim: string;
      role_map: { value: string; role: AccountRole }[];
      default_role: AccountRole | null;
      trust_provider_mfa: boolean;
    }[]
  >`
    select issuer, client_id, client_secret, role_claim, role_map, default_role, trust_provider_mfa from account_oidc where account_id = ${accountId}`;
  return (
    row && {
      issuer: row.issuer,
      clientId: row.client_id,
      clientSecret: openSecret(row.client_secret),
      roleClaim: row.role_claim,
      roleMap: row.role_map,
      defaultRole: row.default_role,
      trustProviderMfa: row.trust_provider_mfa,
      source: 'account',
    }
  );
}

export async function saveAccountOidc(db: Sql, accountId: string, s: Omit<OidcSettings, 'source'>): Promise<void> {
  await db`insert into account_oidc (account_id, issuer, client_id, client_secret, role_claim, role_map, default_role, trust_provider_mfa)
    values (${accountId}, ${s.issuer}, ${s.clientId}, ${sealSecret(s.clientSecret)}, ${s.roleClaim}, ${db.json(s.roleMap as never)}, ${s.defaultRole}, ${s.trustProviderMfa})
    on conflict (account_id) do update set issuer = excluded.issuer, client_id = excluded.client_id, client_secret = excluded.client_secret,
      role_claim = excluded.role_claim, role_map = excluded.role_map, default_role = excluded.default_role,
      trust_provider_mfa = excluded.trust_provider_mfa, updated_at = now()`;
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

/** The most a provider's answer (discovery, keys, tokens, userinfo) may hold: past it, the answer is refused. */
export const PROVIDER_ANSWER_BYTES = 1 << 20;
const KEPT_MS = 3_600_000;
const FAILURE_KEPT_MS = 60_000;
const configs = new Map<string, { until: number; config: Promise<client.Configuration> }>();

/** Reads an answer's body up to `limit` bytes (a longer one is refused, never buffered whole). */
async function boundedAnswer(res: Awaited<ReturnType<typeof undiciFetch>>, limit: number): Promise<Response> {
  const declared = Number(res.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw new Error(`its answer is larger than ${limit} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (res.body) {
    for await (const chunk of res.body) {
      size += chunk.byteLength;
      if (size > limit) {
        await res.body.cancel().catch(() => undefined);
        throw new Error(`its answer is larger than ${limit} bytes`);
      }
      chunks.push(chunk);
    }
  }
  const body = [204, 205, 304].includes(res.status) ? null : Buffer.concat(chunks);
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers as unknown as Headers });
}

/**
 * The provider's configuration (discovery), kept an hour; a failure is kept a minute, so anonymous sign-in starts
 * against a broken provider do not each reach it. Every answer of the provider is read up to
 * PROVIDER_ANSWER_BYTES.
 */
export function providerConfig(settings: OidcSettings, dispatcher: Dispatcher | undefined): Promise<client.Configuration> {
  const key = `${settings.source}|${settings.issuer}|${settings.clientId}|${settings.clientSecret}`;
  const cached = configs.get(key);
  if (cached && Date.now() < cached.until) return cached.config;
  const customFetch: client.CustomFetch = async (url, options) => {
    const res = await undiciFetch(url, {
      signal: AbortSignal.timeout(10_000),
      ...(options as object),
      ...(settings.source === 'account' && dispatcher ? { dispatcher } : {}),
    });
    return boundedAnswer(res, PROVIDER_ANSWER_BYTES) as unknown as ReturnType<client.CustomFetch>;
  };
  const config = client
    .discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
      [client.customFetch]: customFetch,
      ...(settings.issuer.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : {}),
    })
    .then((c) => {
      c[client.customFetch] = customFetch;
      return c;
    });
  const entry = { until: Date.now() + KEPT_MS, config };
  config.catch(() => {
    entry.until = Date.now() + FAILURE_KEPT_MS;
  });
  configs.set(key, entry);
  if (configs.size > 1000) configs.delete(configs.keys().next().value!);
  return config;
}

/** Forgets what was kept of a provider (its settings were saved again). */
export function forgetProvider(settings: Pick<OidcSettings, 'issuer'>): void {
  for (const key of configs.keys()) if (key.split('|')[1] === settings.issuer) configs.delete(key);
}

/** What the browser carries between start and callback, signed (it never holds a secret of the provider). */
export interface OidcState {
  accountId: string;
  state: string;
  nonce: string;
  verifier: string;
  redirect: string;
  at: number;
  /** A signed-in person linking this provider to themselves (their session), not signing in. */
  link?: { userId: string; sessionId: string };
}

/** A value the browser carries, signed with the service's secret (it can read it, never change it). */
export function seal<T extends { at: number }>(secret: Buffer, value: T): string {
  const body = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

/** What a sealed cookie carries, when its signature holds and it is at most `maxAgeMs` old. */
export function unseal<T extends { at: number }>(secret: Buffer, sealed: string | undefined, maxAgeMs: number): T | undefined {
  if (!sealed) return undefined;
  const [body, mac] = sealed.split('.');
  if (!body || !mac) return undefined;
  const want = createHmac('sha256', secret).update(body).digest();
  const got = Buffer.from(mac, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  try {
    const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    return typeof s.at === 'number' && Date.now() - s.at < maxAgeMs && s.at <= Date.now() + 5_000 ? s : undefined;
  } catch {
    return undefined;
  }
}

export const sealState = (secret: Buffer, s: OidcState) => seal(secret, s);
export const openState = (secret: Buffer, sealed: string | undefined) => unseal<OidcState>(secret, sealed, 600_000);

/**
 * Where a sign-in may send the browser afterwards: a path of this service only. `redirect` is read as a URL against
 * the service's own origin (the way a browser reads a Location), and kept only when it stays there.
 */
export function sameOriginPath(redirect: string, base: string): string | undefined {
  if (/[\u0000-\u001f\u007f\\]/.test(redirect) || !redirect.startsWith('/')) return undefined;
  let url: URL;
  try {
    url = new URL(redirect, base);
  } catch {
    return undefined;
  }
  if (url.origin !== new URL(base).origin) return undefined;
  return `${url.pathname}${url.search}${url.hash}`;
}

export { client as oidcClient };

/** Passes every stored OpenID client secret through `f` (sealing begins, or a key rotation); answers how many changed. */
export async function resealOidcSecrets(db: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  for (const row of await db<{ account_id: string; client_secret: string }[]>`select account_id, client_secret from account_oidc`) {
    const next = f(row.client_secret);
    if (next === row.client_secret) continue;
    await db`update account_oidc set client_secret = ${next} where account_id = ${row.account_id} and client_secret = ${row.client_secret}`;
    changed++;
  }
  return changed;
}
