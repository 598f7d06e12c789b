import type { Sql } from '../storage/postgres.js';

/**
 * External identities (docs/people.md, "OpenID Connect"): a person signs in through an account's provider only as
 * the (issuer, subject) bound to them in that account, made when that provider made them a new person, or linked by
 * the person themselves while signed in. The email a provider asserts never finds a person.
 */

export interface IdentityRow {
  id: string;
  account_id: string;
  issuer: string;
  subject: string;
  user_id: string;
  email: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** The person bound to (issuer, subject) in the account; its last use stamped. */
export async function identityUser(db: Sql, accountId: string, issuer: string, subject: string, email: string): Promise<string | undefined> {
  const [row] = await db<{ user_id: string }[]>`update user_identities set last_used_at = now(), email = ${email}
    where account_id = ${accountId} and issuer = ${issuer} and subject = ${subject} returning user_id`;
  return row?.user_id;
}

/** Binds (issuer, subject) to the person in the account; false when it is bound to someone else already. */
export async function linkIdentity(db: Sql, i: { accountId: string; issuer: string; subject: string; userId: string; email: string }): Promise<boolean> {
  await db`insert into user_identities (account_id, issuer, subject, user_id, email, last_used_at)
    values (${i.accountId}, ${i.issuer}, ${i.subject}, ${i.userId}, ${i.email}, now()) on conflict (account_id, issuer, subject) do nothing`;
  const [row] = await db<
    { user_id: string }[]
  >`select user_id from user_identities where account_id = ${i.accountId} and issuer = ${i.issuer} and subject = ${i.subject}`;
  return row?.user_id === i.userId;
}

/**
 * Whether the person signed in through this account's provider before identities were bound (migration 0019):
 * true once, and the mark is gone, so the identity their next sign-in presents is bound to them.
 */
export async function takeUnbound(db: Sql, accountId: string, userId: string): Promise<boolean> {
  const rows = await db`delete from user_identities_unbound where account_id = ${accountId} and user_id = ${userId} returning 1`;
  return rows.length > 0;
}

/** The person's identities, in the accounts `onlyAccountId` allows (all when undefined). */
export async function listIdentities(db: Sql, userId: string, onlyAccountId?: string): Promise<(IdentityRow & { account_name: string })[]> {
  return db<(IdentityRow & { account_name: string })[]>`select i.*, a.name as account_name from user_identities i join accounts a on a.id = i.account_id
    where i.user_id = ${userId} and (${onlyAccountId ?? null}::uuid is null or i.account_id = ${onlyAccountId ?? null}::uuid)
    order by i.created_at, i.issuer, i.subject`;
}

/** Unlinks one of the person's identities (in `onlyAccountId` when given); false when they have no such one. */
export async function unlinkIdentity(db: Sql, userId: string, id: string, onlyAccountId?: string): Promise<boolean> {
  const rows = await db`delete from user_identities where user_id = ${userId} and id = ${id}
    and (${onlyAccountId ?? null}::uuid is null or account_id = ${onlyAccountId ?? null}::uuid) returning 1`;
  return rows.length > 0;
}
