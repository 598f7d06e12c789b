import { transaction, type Sql } from '../storage/postgres.js';
import { generateApiKey, hashSecret, keySuffix, type Role } from '../model/secrets.js';

export interface Account {
  id: string;
  name: string;
  isDefault: boolean;
  rateLimitPoints: number | null;
  rateLimitWindowSeconds: number | null;
  /** Runtime of checks that name none. */
  runtimeId: string;
  /** What a check with useGlobalAlertSettings alerts by. */
  alertSettings: Record<string, unknown>;
  browserCheckLimit: number | null;
}

export interface CreatedKey {
  id: string;
  /** The raw key: returned here once and never stored. */
  key: string;
  accountId: string;
  role: Role;
}

/** What a valid key resolves to for one request. */
export interface Principal {
  keyId: string;
  account: Account;
  role: Role;
}

interface AccountRow {
  id: string;
  name: string;
  is_default: boolean;
  rate_limit_points: number | null;
  rate_limit_window_seconds: number | null;
  runtime_id: string;
  alert_settings: Record<string, unknown>;
  browser_check_limit: number | null;
}

/** An API key as lists show it: never the key, only its last characters. */
export interface ApiKeyRow {
  id: string;
  name: string;
  key_suffix: string;
  role: Role;
  created_at: Date;
  revoked_at: Date | null;
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
  };
}

export async function createAccount(sql: Sql, name: string, isDefault = false): Promise<Account> {
  const [row] = await sql<AccountRow[]>`insert into accounts (name, is_default) values (${name}, ${isDefault}) returning *`;
  return toAccount(row);
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

export async function setAccountRateLimit(
  sql: Sql,
  accountId: string,
  limit: { points: number; windowSeconds: number } | null,
): Promise<void> {
  await sql`update accounts set rate_limit_points = ${limit?.points ?? null},
    rate_limit_window_seconds = ${limit?.windowSeconds ?? null}, updated_at = now() where id = ${accountId}`;
}

export async function setBrowserCheckLimit(sql: Sql, accountId: string, max: number | null): Promise<void> {
  await sql`update accounts set browser_check_limit = ${max}, updated_at = now() where id = ${accountId}`;
}

export async function createApiKey(
  sql: Sql,
  opts: { accountId: string; role: Role; name?: string; rawKey?: string },
): Promise<CreatedKey> {
  const key = opts.rawKey ?? generateApiKey();
  const id = await transaction(sql, (tx) => insertKey(tx, key, opts.accountId, opts.role, opts.name ?? 'api key'));
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
    sql<ApiKeyRow[]>`select k.id, k.name, k.key_suffix, k.created_at, k.revoked_at, m.role
      from memberships m join api_keys k on k.id = m.api_key_id
      where m.account_id = ${accountId}
      order by k.created_at, k.id limit ${limit} offset ${offset}`,
    sql<{ n: number }[]>`select count(*)::int as n from memberships where account_id = ${accountId}`,
  ]);
  return { rows, total: n };
}

export async function findApiKey(sql: Sql, accountId: string, keyId: string): Promise<ApiKeyRow | undefined> {
  const [row] = await sql<ApiKeyRow[]>`select k.id, k.name, k.key_suffix, k.created_at, k.revoked_at, m.role
    from api_keys k join memberships m on m.api_key_id = k.id
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
 * Resolves a raw key and the account it asks for. `undefined` means the key is unknown or revoked (401);
 * 'forbidden' means the key is valid but not a member of the requested account (403).
 */
export async function resolvePrincipal(
  sql: Sql,
  rawKey: string,
  requestedAccountId: string | undefined,
): Promise<Principal | 'forbidden' | undefined> {
  const [row] = await sql<(AccountRow & { key_id: string; role: Role | null })[]>`
    select k.id as key_id, m.role, a.*
    from api_keys k
    left join memberships m on m.api_key_id = k.id
      and m.account_id = coalesce(${requestedAccountId ?? null}::uuid, k.default_account_id)
    left join accounts a on a.id = m.account_id
    where k.key_hash = ${hashSecret(rawKey)} and k.revoked_at is null`;
  if (!row) return undefined;
  if (!row.role) return 'forbidden';
  return { keyId: row.key_id, role: row.role, account: toAccount(row) };
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

async function insertKey(tx: Sql, key: string, accountId: string, role: Role, name: string): Promise<string> {
  const [row] = await tx<{ id: string }[]>`insert into api_keys (name, key_hash, key_suffix, default_account_id)
    values (${name}, ${hashSecret(key)}, ${keySuffix(key)}, ${accountId}) returning id`;
  await tx`insert into memberships (api_key_id, account_id, role) values (${row.id}, ${accountId}, ${role})`;
  return row.id;
}
