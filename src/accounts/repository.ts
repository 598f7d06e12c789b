import { type Account, type AccountRole, KEY_ROLE_AS, type Principal } from '../model/accounts.js';
import { generateApiKey, hashSecret, keySuffix, type Role } from '../model/secrets.js';
import { type Sql, transaction } from '../storage/postgres.js';

export type { Account, AccountRole, Principal } from '../model/accounts.js';

export interface CreatedKey {
  id: string;
  /** The raw key: returned here once and never stored. */
  key: string;
  accountId: string;
  role: Role;
}

export interface AccountRow {
  id: string;
  name: string;
  is_default: boolean;
  rate_limit_points: number | null;
  rate_limit_window_seconds: number | null;
  runtime_id: string;
  alert_settings: Record<string, unknown>;
  browser_check_limit: number | null;
  badges_enabled: boolean;
  require_two_factor: boolean;
}

/** An API key as lists show it: never the key, only its last characters. */
export interface ApiKeyRow {
  id: string;
  name: string;
  key_suffix: string;
  role: Role;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  expires_at: Date | null;
  /** The email of the person who made it (null: made by a key or the CLI). */
  created_by: string | null;
}

/** A person's own key (it acts with the person's role in each account they are a member of). */
export interface UserKeyRow {
  id: string;
  name: string;
  key_suffix: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}

export function toAccountRow(row: AccountRow): Account {
  return toAccount(row);
}

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    isDefault: row.is_default,
    rateLimitPoints: row.rate_limit_points ?? null,
    rateLimitWindowSeconds: row.rate_limit_window_seconds ?? null,
    runtimeId: row.runtime_id,
    alertSettings: row.alert_settings,
    browserCheckLimit: row.browser_check_limit ?? null,
    badgesEnabled: row.badges_enabled ?? false,
    requireTwoFactor: row.require_two_factor ?? false,
  };
}

export async function createAccount(sql: Sql, name: string, isDefault = false): Promise<Account> {
  const [row] = await sql<AccountRow[]>`insert into accounts (name, is_default) values (${name}, ${isDefault}) returning *`;
  return toAccount(row);
}

/** The account the service made at first start. */
export async function defaultAccount(sql: Sql): Promise<Account | undefined> {
  const [row] = await sql<AccountRow[]>`select * from accounts where is_default`;
  return row ? toAccount(row) : undefined;
}

export async function findAccount(sql: Sql, id: string): Promise<Account | undefined> {
  const [row] = await sql<AccountRow[]>`select * from accounts where id = ${id}`;
  return row ? toAccount(row) : undefined;
}

/** The accounts a key is a member of, oldest first. */
export async function accountsOfKey(sql: Sql, keyId: string): Promise<Account[]> {
  const rows = await sql<AccountRow[]>`select a.* from memberships m join accounts a on a.id = m.account_id
    where m.api_key_id = ${keyId} order by a.created_at, a.id`;
  return rows.map(toAccount);
}

/** The key's own name (the anchor API's clients call the caller a user). */
export async function keyName(sql: Sql, keyId: string): Promise<string | undefined> {
  const [row] = await sql<{ name: string }[]>`select name from api_keys where id = ${keyId}`;
  return row?.name;
}

export async function setAccountRateLimit(sql: Sql, accountId: string, limit: { points: number; windowSeconds: number } | null): Promise<void> {
  await sql`update accounts set rate_limit_points = ${limit?.points ?? null},
    rate_limit_window_seconds = ${limit?.windowSeconds ?? null}, updated_at = now() where id = ${accountId}`;
}

export async function setBrowserCheckLimit(sql: Sql, accountId: string, max: number | null): Promise<void> {
  await sql`update accounts set browser_check_limit = ${max}, updated_at = now() where id = ${accountId}`;
}

export async function setBadgesEnabled(sql: Sql, accountId: string, enabled: boolean): Promise<void> {
  await sql`update accounts set badges_enabled = ${enabled}, updated_at = now() where id = ${accountId}`;
}

export async function createApiKey(
  sql: Sql,
  opts: { accountId: string; role: Role; name?: string; rawKey?: string; createdByUserId?: string | null },
): Promise<CreatedKey> {
  const key = opts.rawKey ?? generateApiKey();
  const id = await transaction(sql, (tx) => insertKey(tx, key, opts.accountId, opts.role, opts.name ?? 'api key', opts.createdByUserId ?? null));
  return { id, key, accountId: opts.accountId, role: opts.role };
}

export async function grantMembership(sql: Sql, keyId: string, accountId: string, role: Role): Promise<void> {
  await sql`insert into memberships (api_key_id, account_id, role) values (${keyId}, ${accountId}, ${role})
    on conflict (api_key_id, account_id) do update set role = excluded.role`;
}

export async function revokeApiKey(sql: Sql, keyId: string): Promise<void> {
  await sql`update api_keys set revoked_at = now() where id = ${keyId} and revoked_at is null`;
}

/** One page of the keys that are members of an account, and how many there are. */
export async function listApiKeys(sql: Sql, accountId: string, limit: number, offset: number) {
  const [rows, [{ n }]] = await Promise.all([
    sql<ApiKeyRow[]>`select k.id, k.name, k.key_suffix, k.created_at, k.revoked_at, k.last_used_at, k.expires_at, u.email as created_by, m.role
      from memberships m join api_keys k on k.id = m.api_key_id left join users u on u.id = k.created_by_user_id
      where m.account_id = ${accountId}
      order by k.created_at, k.id limit ${limit} offset ${offset}`,
    sql<{ n: number }[]>`select count(*)::int as n from memberships where account_id = ${accountId}`,
  ]);
  return { rows, total: n };
}

export async function findApiKey(sql: Sql, accountId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await sql<
    ApiKeyRow[]
  >`select k.id, k.name, k.key_suffix, k.created_at, k.revoked_at, k.last_used_at, k.expires_at, u.email as created_by, m.role
    from api_keys k join memberships m on m.api_key_id = k.id left join users u on u.id = k.created_by_user_id
    where k.id = ${keyId} and m.account_id = ${accountId}`;
  return row;
}

/** A key whose home is this account (a key shared into it is revoked by its own account). */
export async function findOwnApiKey(sql: Sql, accountId: string, keyId: string): Promise<{ id: string; revoked_at: Date | null } | undefined> {
  const [row] = await sql<{ id: string; revoked_at: Date | null }[]>`select id, revoked_at from api_keys
    where id = ${keyId} and default_account_id = ${accountId}`;
  return row;
}

/**
 * Resolves a raw key and the account it asks for. `undefined` means the key is unknown, revoked or expired (401);
 * 'forbidden' means the key is valid but may not act for the requested account (403). A service key acts with its
 * membership's role; a user's key with its user's role as a member now (so it stops when the user leaves or is
 * demoted). The key's last use is stamped at most once a minute, off the request's path.
 */
export async function resolvePrincipal(sql: Sql, rawKey: string, requestedAccountId: string | undefined): Promise<Principal | 'forbidden' | undefined> {
  return (await resolveKey(sql, rawKey, requestedAccountId))?.principal;
}

/** What resolvePrincipal answers for a key it knows, and until when the key is valid (null: no expiry). */
export async function resolveKey(
  sql: Sql,
  rawKey: string,
  requestedAccountId: string | undefined,
): Promise<{ principal: Principal | 'forbidden'; expiresAt: Date | null } | undefined> {
  const [row] = await sql<
    (AccountRow & {
      key_id: string;
      key_name: string;
      user_id: string | null;
      user_email: string | null;
      user_totp: Date | null;
      key_role: Role | null;
      member_role: AccountRole | null;
      last_used_at: Date | null;
      key_expires_at: Date | null;
      only_account_id: string | null;
    })[]
  >`
    select k.id as key_id, k.name as key_name, k.user_id, u.email as user_email, u.totp_enabled_at as user_totp, k.last_used_at, k.expires_at as key_expires_at,
      k.only_account_id, m.role as key_role, am.role as member_role, a.*
    from api_keys k
    left join users u on u.id = k.user_id
    left join memberships m on k.user_id is null and m.api_key_id = k.id
      and m.account_id = coalesce(${requestedAccountId ?? null}::uuid, k.default_account_id)
    left join account_members am on k.user_id is not null and am.user_id = k.user_id
      and am.account_id = coalesce(${requestedAccountId ?? null}::uuid, k.default_account_id)
    left join accounts a on a.id = coalesce(m.account_id, am.account_id)
    where k.key_hash = ${hashSecret(rawKey)} and k.revoked_at is null and (k.expires_at is null or k.expires_at > now())`;
  if (!row) return undefined;
  const role = row.member_role ?? (row.key_role ? KEY_ROLE_AS[row.key_role] : null);
  // A person's key is refused where the account requires a second factor they have not turned on, and a key made
  // by a session of an account's provider anywhere but in that account.
  if (!role || (row.user_id && row.require_two_factor && !row.user_totp) || (row.only_account_id && row.only_account_id !== row.id)) {
    return { principal: 'forbidden', expiresAt: row.key_expires_at };
  }
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000) {
    sql`update api_keys set last_used_at = now() where id = ${row.key_id}`.catch(() => undefined);
  }
  const principal: Principal = {
    keyId: row.key_id,
    userId: row.user_id,
    sessionId: null,
    role,
    account: toAccount(row),
    actor: row.user_id ? { type: 'user', id: row.user_id, name: row.user_email ?? '' } : { type: 'key', id: row.key_id, name: row.key_name },
    ...(row.only_account_id ? { onlyAccountId: row.only_account_id } : {}),
  };
  return { principal, expiresAt: row.key_expires_at };
}

/** The accounts a principal may act for: a service key's memberships, or its user's. */
export async function accountsOf(sql: Sql, principal: Principal): Promise<Account[]> {
  if (principal.userId) {
    const only = principal.onlyAccountId ?? null;
    const rows = await sql<AccountRow[]>`select a.* from account_members m join accounts a on a.id = m.account_id
      where m.user_id = ${principal.userId} and (${only}::uuid is null or a.id = ${only}::uuid) order by a.created_at, a.id`;
    return rows.map(toAccount);
  }
  return principal.keyId ? accountsOfKey(sql, principal.keyId) : [];
}

/** A person's key; `onlyAccountId` (a session of an account's provider made it) keeps it to that account. */
export async function createUserKey(
  sql: Sql,
  k: { userId: string; accountId: string; name: string; key: string; expiresAt: Date | null; onlyAccountId?: string },
): Promise<UserKeyRow> {
  const [row] = await sql<
    UserKeyRow[]
  >`insert into api_keys (name, key_hash, key_suffix, default_account_id, user_id, created_by_user_id, expires_at, only_account_id)
    values (${k.name}, ${hashSecret(k.key)}, ${keySuffix(k.key)}, ${k.accountId}, ${k.userId}, ${k.userId}, ${k.expiresAt}, ${k.onlyAccountId ?? null})
    returning id, name, key_suffix, created_at, last_used_at, expires_at, revoked_at`;
  return row!;
}

/** A person's keys; with `onlyAccountId`, only those kept to that account (what a provider's session may see). */
export async function listUserKeys(sql: Sql, userId: string, onlyAccountId?: string): Promise<UserKeyRow[]> {
  return sql<UserKeyRow[]>`select id, name, key_suffix, created_at, last_used_at, expires_at, revoked_at from api_keys
    where user_id = ${userId} and (${onlyAccountId ?? null}::uuid is null or only_account_id = ${onlyAccountId ?? null}::uuid) order by created_at, id`;
}

export async function revokeUserKey(sql: Sql, userId: string, id: string, onlyAccountId?: string): Promise<boolean> {
  const rows = await sql`update api_keys set revoked_at = now() where id = ${id} and user_id = ${userId} and revoked_at is null
    and (${onlyAccountId ?? null}::uuid is null or only_account_id = ${onlyAccountId ?? null}::uuid) returning 1`;
  return rows.length > 0;
}

/** Revokes every key of the person (a password reset; a change that asks for it). */
export async function revokeAllUserKeys(sql: Sql, userId: string): Promise<number> {
  const rows = await sql`update api_keys set revoked_at = now() where user_id = ${userId} and revoked_at is null returning 1`;
  return rows.length;
}

/** Sets whether the account's members must have a second factor. */
export async function setRequireTwoFactor(sql: Sql, accountId: string, required: boolean): Promise<void> {
  await sql`update accounts set require_two_factor = ${required}, updated_at = now() where id = ${accountId}`;
}

export interface BootstrapResult {
  account: Account;
  /** Set when this call generated a key that must be shown to the operator once. */
  generatedKey?: string;
}

/**
 * First start: creates the default account and its admin key. With `bootstrapKey` that value becomes
 * (or stays) an admin key of the default account. Serialised by an advisory lock so parallel starts agree.
 */
export async function bootstrap(sql: Sql, bootstrapKey: string | undefined): Promise<BootstrapResult> {
  return transaction(sql, async (tx) => {
    await tx`select pg_advisory_xact_lock(727401002)`;
    const [existing] = await tx<AccountRow[]>`select * from accounts where is_default`;
    const [{ count }] = await tx<{ count: number }[]>`select count(*)::int as count from accounts`;
    let account = existing ? toAccount(existing) : undefined;
    let generatedKey: string | undefined;
    if (!account) {
      const [row] = await tx<AccountRow[]>`insert into accounts (name, is_default) values ('default', true) returning *`;
      account = toAccount(row);
    }
    if (bootstrapKey) {
      const [known] = await tx<{ id: string }[]>`select id from api_keys where key_hash = ${hashSecret(bootstrapKey)}`;
      if (known) await grantMembership(tx, known.id, account.id, 'admin');
      else await insertKey(tx, bootstrapKey, account.id, 'admin', 'bootstrap key');
    } else if (count === 0) {
      generatedKey = generateApiKey();
      await insertKey(tx, generatedKey, account.id, 'admin', 'bootstrap key');
    }
    return { account, generatedKey };
  });
}

async function insertKey(tx: Sql, key: string, accountId: string, role: Role, name: string, createdByUserId: string | null = null): Promise<string> {
  const [row] = await tx<{ id: string }[]>`insert into api_keys (name, key_hash, key_suffix, default_account_id, created_by_user_id)
    values (${name}, ${hashSecret(key)}, ${keySuffix(key)}, ${accountId}, ${createdByUserId}) returning id`;
  await tx`insert into memberships (api_key_id, account_id, role) values (${row.id}, ${accountId}, ${role})`;
  return row.id;
}
