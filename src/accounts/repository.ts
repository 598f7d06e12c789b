import type { Sql } from '../storage/postgres.js';
import { generateApiKey, hashSecret, keySuffix, type Role } from './keys.js';

export interface Account {
  id: string;
  name: string;
  isDefault: boolean;
  rateLimitPoints: number | null;
  rateLimitWindowSeconds: number | null;
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

type Db = Sql;

function toAccount(row: Record<string, unknown>): Account {
  return {
    id: row.id as string,
    name: row.name as string,
    isDefault: row.is_default as boolean,
    rateLimitPoints: (row.rate_limit_points as number | null) ?? null,
    rateLimitWindowSeconds: (row.rate_limit_window_seconds as number | null) ?? null,
  };
}

export async function createAccount(sql: Db, name: string, isDefault = false): Promise<Account> {
  const [row] = await sql`insert into accounts (name, is_default) values (${name}, ${isDefault}) returning *`;
  return toAccount(row);
}

export async function findAccount(sql: Db, id: string): Promise<Account | undefined> {
  const [row] = await sql`select * from accounts where id = ${id}`;
  return row ? toAccount(row) : undefined;
}

export async function setAccountRateLimit(
  sql: Db,
  accountId: string,
  limit: { points: number; windowSeconds: number } | null,
): Promise<void> {
  await sql`update accounts set rate_limit_points = ${limit?.points ?? null},
    rate_limit_window_seconds = ${limit?.windowSeconds ?? null}, updated_at = now() where id = ${accountId}`;
}

export async function createApiKey(
  sql: Db,
  opts: { accountId: string; role: Role; name?: string; rawKey?: string },
): Promise<CreatedKey> {
  const key = opts.rawKey ?? generateApiKey();
  const id = (await sql.begin((tx) =>
    insertKey(tx as unknown as Db, key, opts.accountId, opts.role, opts.name ?? 'api key'),
  )) as string;
  return { id, key, accountId: opts.accountId, role: opts.role };
}

export async function grantMembership(sql: Db, keyId: string, accountId: string, role: Role): Promise<void> {
  await sql`insert into memberships (api_key_id, account_id, role) values (${keyId}, ${accountId}, ${role})
    on conflict (api_key_id, account_id) do update set role = excluded.role`;
}

export async function revokeApiKey(sql: Db, keyId: string): Promise<void> {
  await sql`update api_keys set revoked_at = now() where id = ${keyId} and revoked_at is null`;
}

/**
 * Resolves a raw key and the account it asks for. `undefined` means the key is unknown or revoked (401);
 * 'forbidden' means the key is valid but not a member of the requested account (403).
 */
export async function resolvePrincipal(
  sql: Db,
  rawKey: string,
  requestedAccountId: string | undefined,
): Promise<Principal | 'forbidden' | undefined> {
  const rows = await sql`
    select k.id as key_id, k.default_account_id, m.role, a.*
    from api_keys k
    left join memberships m on m.api_key_id = k.id
      and m.account_id = coalesce(${requestedAccountId ?? null}::uuid, k.default_account_id)
    left join accounts a on a.id = m.account_id
    where k.key_hash = ${hashSecret(rawKey)} and k.revoked_at is null`;
  const row = rows[0];
  if (!row) return undefined;
  if (!row.role) return 'forbidden';
  return { keyId: row.key_id as string, role: row.role as Role, account: toAccount(row) };
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
export async function bootstrap(sql: Db, bootstrapKey: string | undefined): Promise<BootstrapResult> {
  return (await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(727401002)`;
    const [existing] = await tx`select * from accounts where is_default`;
    const [{ count }] = await tx`select count(*)::int as count from accounts`;
    let account = existing ? toAccount(existing) : undefined;
    let generatedKey: string | undefined;
    if (!account) {
      const [row] = await tx`insert into accounts (name, is_default) values ('default', true) returning *`;
      account = toAccount(row);
    }
    const txDb = tx as unknown as Db;
    if (bootstrapKey) {
      const [known] = await tx`select id from api_keys where key_hash = ${hashSecret(bootstrapKey)}`;
      if (known) await grantMembership(txDb, known.id as string, account.id, 'admin');
      else await insertKey(txDb, bootstrapKey, account.id, 'admin', 'bootstrap key');
    } else if (count === 0) {
      generatedKey = generateApiKey();
      await insertKey(txDb, generatedKey, account.id, 'admin', 'bootstrap key');
    }
    return { account, generatedKey };
  })) as BootstrapResult;
}

async function insertKey(tx: Db, key: string, accountId: string, role: Role, name: string): Promise<string> {
  const [row] = await tx`insert into api_keys (name, key_hash, key_suffix, default_account_id)
    values (${name}, ${hashSecret(key)}, ${keySuffix(key)}, ${accountId}) returning id`;
  await tx`insert into memberships (api_key_id, account_id, role) values (${row.id}, ${accountId}, ${role})`;
  return row.id as string;
}
