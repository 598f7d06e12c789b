import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../storage/postgres.js';
import { sealSecret } from '../storage/secret-box.js';

/** People (docs/people.md): users, their second factor and recovery codes, and single-use links. */

export interface UserRow {
  id: string;
  email: string;
  name: string;
  password_hash: string | null;
  password_changed_at: Date | null;
  /** The TOTP secret, sealed (docs/platform.md, "Secrets at rest"): proofs.ts opens it. */
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  /** The last TOTP time step a code was accepted for: a code signs in once. */
  totp_last_step: string | null;
  created_at: Date;
  updated_at: Date | null;
}

/** A random token for a link or a cookie, and the hash that is all that is kept of it. */
export function newToken(): { raw: string; hash: Buffer } {
  const raw = randomBytes(32).toString('base64url');
  return { raw, hash: tokenHash(raw) };
}
export const tokenHash = (raw: string) => createHash('sha256').update(raw).digest();

export async function findUserByEmail(db: Sql, email: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`select * from users where lower(email) = ${email.trim().toLowerCase()}`;
  return row;
}

export async function findUser(db: Sql, id: string): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`select * from users where id = ${id}`;
  return row;
}

/** The user with this email, made when there is none (its name kept when it has one). */
export async function ensureUser(db: Sql, email: string, name = ''): Promise<UserRow> {
  const [row] = await db<UserRow[]>`insert into users (email, name) values (${email.trim()}, ${name})
    on conflict (lower(email)) do update set name = case when users.name = '' then excluded.name else users.name end returning *`;
  return row!;
}

export async function setPassword(db: Sql, userId: string, passwordHash: string): Promise<void> {
  await db`update users set password_hash = ${passwordHash}, password_changed_at = now(), updated_at = now() where id = ${userId}`;
}

export async function setName(db: Sql, userId: string, name: string): Promise<void> {
  await db`update users set name = ${name}, updated_at = now() where id = ${userId}`;
}

/** A TOTP secret being set up (the second factor is not on until confirmed with a code). */
export async function setTotpSecret(db: Sql, userId: string, secret: string): Promise<void> {
  await db`update users set totp_secret = ${sealSecret(secret)}, totp_enabled_at = null, totp_last_step = null, updated_at = now() where id = ${userId}`;
}

/** Turns the second factor on and replaces the recovery codes (their hashes). */
export async function enableTotp(db: Sql, userId: string, recoveryCodeHashes: Buffer[]): Promise<void> {
  await db`update users set totp_enabled_at = now(), updated_at = now() where id = ${userId}`;
  await db`delete from user_recovery_codes where user_id = ${userId}`;
  if (recoveryCodeHashes.length) {
    await db`insert into user_recovery_codes ${db(recoveryCodeHashes.map((code_hash) => ({ user_id: userId, code_hash })))}`;
  }
}

export async function disableTotp(db: Sql, userId: string): Promise<void> {
  await db`update users set totp_secret = null, totp_enabled_at = null, updated_at = now() where id = ${userId}`;
  await db`delete from user_recovery_codes where user_id = ${userId}`;
}

/**
 * Takes a TOTP code's time step for the user: true only when it is later than the last one taken, so a code (and
 * any earlier one) is accepted once (RFC 6238 section 5.2).
 */
export async function takeTotpStep(db: Sql, userId: string, step: number): Promise<boolean> {
  const rows = await db`update users set totp_last_step = ${step} where id = ${userId} and (totp_last_step is null or totp_last_step < ${step}) returning 1`;
  return rows.length > 0;
}

/** A new person with this email; undefined when one has it already (any letter case). */
export async function createUser(db: Sql, email: string, name = ''): Promise<UserRow | undefined> {
  const [row] = await db<UserRow[]>`insert into users (email, name) values (${email.trim()}, ${name}) on conflict (lower(email)) do nothing returning *`;
  return row;
}

/** Uses a recovery code once; false when it is not one of the user's unused codes. */
export async function useRecoveryCode(db: Sql, userId: string, codeHash: Buffer): Promise<boolean> {
  const rows = await db`update user_recovery_codes set used_at = now() where user_id = ${userId} and code_hash = ${codeHash} and used_at is null returning 1`;
  return rows.length > 0;
}

/** A single-use link's token for the user, valid for `ttlMs`; answers the raw token (shown or mailed once). */
export async function createUserToken(db: Sql, userId: string, purpose: 'sign-in' | 'password-reset', ttlMs: number): Promise<string> {
  const { raw, hash } = newToken();
  await db`insert into user_tokens (token_hash, user_id, purpose, expires_at) values (${hash}, ${userId}, ${purpose}, ${new Date(Date.now() + ttlMs)})`;
  return raw;
}

/** Uses a link's token once: the user it was made for, or undefined (unknown, used, expired, another purpose). */
export async function consumeUserToken(db: Sql, raw: string, purpose: 'sign-in' | 'password-reset'): Promise<string | undefined> {
  const [row] = await db<{ user_id: string }[]>`update user_tokens set used_at = now()
    where token_hash = ${tokenHash(raw)} and purpose = ${purpose} and used_at is null and expires_at > now() returning user_id`;
  return row?.user_id;
}

/** Passes every stored TOTP secret through `f` (sealing begins, or a key rotation); answers how many changed. */
export async function resealTotpSecrets(db: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  for (const row of await db<{ id: string; totp_secret: string }[]>`select id, totp_secret from users where totp_secret is not null`) {
    const next = f(row.totp_secret);
    if (next === row.totp_secret) continue;
    await db`update users set totp_secret = ${next} where id = ${row.id} and totp_secret = ${row.totp_secret}`;
    changed++;
  }
  return changed;
}
