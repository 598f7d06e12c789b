import { randomBytes } from 'node:crypto';
import type { AccountRole, Principal } from '../model/accounts.js';
import type { Sql } from '../storage/postgres.js';
import { type AccountRow, toAccountRow } from './repository.js';
import { newToken, tokenHash } from './users.js';

/**
 * Browser sessions (docs/people.md): the cookie holds a random token, the row its hash, a CSRF token, when it was
 * last used and when it ends whatever happens. A session is made at each sign-in (a new token: never one the browser
 * had before), ended at sign-out and, but for the one that changed it, at a password change.
 */
export interface SessionSettings {
  /** Unused this long, a session ends. */
  idleMs: number;
  /** Used or not, a session ends this long after sign-in. */
  absoluteMs: number;
}

/** How a sign-in through an account's provider binds its session: to that account, and how a second factor was proved. */
export interface SessionScope {
  accountId: string;
  secondFactor: 'totp' | 'provider' | null;
}

export async function createSession(
  db: Sql,
  userId: string,
  settings: SessionSettings,
  meta: { address?: string; userAgent?: string },
  scope?: SessionScope,
): Promise<{ id: string; token: string; csrfToken: string }> {
  const { raw, hash } = newToken();
  const csrfToken = randomBytes(24).toString('base64url');
  const [row] = await db<
    { id: string }[]
  >`insert into user_sessions (user_id, token_hash, csrf_token, expires_at, address, user_agent, account_id, second_factor)
    values (${userId}, ${hash}, ${csrfToken}, ${new Date(Date.now() + settings.absoluteMs)}, ${meta.address ?? null}, ${(meta.userAgent ?? '').slice(0, 512)},
      ${scope?.accountId ?? null}, ${scope?.secondFactor ?? null})
    returning id`;
  return { id: row!.id, token: raw, csrfToken };
}

/**
 * A live session's principal in the account it asks for (else the user's first account): undefined when the
 * session is unknown, ended, idle too long or past its end; 'forbidden' when the user is no member of that account,
 * or the session was made by another account's provider (it acts for that account only).
 * Where the account requires a second factor the user has not turned on, the principal says so (`secondFactorMissing`)
 * and reaches only the person's own settings. Its last use is stamped at most once a minute.
 */
export async function resolveSession(
  db: Sql,
  token: string,
  requestedAccountId: string | undefined,
  settings: SessionSettings,
): Promise<(Principal & { csrfToken: string }) | 'forbidden' | undefined> {
  return (await lookupSession(db, token, requestedAccountId, settings))?.principal;
}

/** A live session found: what it resolves to, and until when it may be believed without a second look (its idle and absolute ends). */
export interface FoundSession {
  principal: (Principal & { csrfToken: string }) | 'forbidden';
  endsAt: number;
}

/** `resolveSession`, with when the session ends by itself (PrincipalCache keeps it no longer). */
export async function lookupSession(
  db: Sql,
  token: string,
  requestedAccountId: string | undefined,
  settings: SessionSettings,
): Promise<FoundSession | undefined> {
  // One round trip, as a key's: the session, its person, and their membership of the account asked for (or their first).
  const [row] = await db<
    (Partial<AccountRow> & {
      session_id: string;
      user_id: string;
      csrf_token: string;
      last_seen_at: Date;
      session_expires_at: Date;
      email: string;
      totp_enabled_at: Date | null;
      member_role: AccountRole | null;
      only_account_id: string | null;
      second_factor: 'totp' | 'provider' | null;
    })[]
  >`
    select s.id as session_id, s.user_id, s.csrf_token, s.last_seen_at, s.expires_at as session_expires_at, s.account_id as only_account_id, s.second_factor, u.email, u.totp_enabled_at, m.role as member_role, a.*
    from user_sessions s
    join users u on u.id = s.user_id
    left join lateral (
      select am.account_id, am.role from account_members am
      where am.user_id = s.user_id and (${requestedAccountId ?? null}::uuid is null or am.account_id = ${requestedAccountId ?? null}::uuid)
        and (s.account_id is null or am.account_id = s.account_id)
      order by am.created_at, am.account_id limit 1
    ) m on true
    left join accounts a on a.id = m.account_id
    where s.token_hash = ${tokenHash(token)} and s.ended_at is null and s.expires_at > now()
      and s.last_seen_at > ${new Date(Date.now() - settings.idleMs)}`;
  if (!row) return undefined;
  // Idle from its last stamp (at most a minute old), absolutely at its expiry.
  const endsAt = Math.min(row.last_seen_at.getTime() + settings.idleMs, row.session_expires_at.getTime());
  if (!row.member_role || !row.id) return { principal: 'forbidden', endsAt };
  let seen = row.last_seen_at.getTime();
  if (Date.now() - seen > 60_000) {
    seen = Date.now();
    db`update user_sessions set last_seen_at = now() where id = ${row.session_id}`.catch(() => undefined);
  }
  const principal: Principal & { csrfToken: string } = {
    account: toAccountRow(row as AccountRow),
    role: row.member_role,
    keyId: null,
    userId: row.user_id,
    sessionId: row.session_id,
    actor: { type: 'user', id: row.user_id, name: row.email },
    csrfToken: row.csrf_token,
    ...(row.require_two_factor && !row.totp_enabled_at && row.second_factor !== 'provider' ? { secondFactorMissing: true } : {}),
    ...(row.only_account_id ? { onlyAccountId: row.only_account_id } : {}),
  };
  return { principal, endsAt: Math.min(seen + settings.idleMs, row.session_expires_at.getTime()) };
}

export async function endSession(db: Sql, id: string): Promise<void> {
  await db`update user_sessions set ended_at = now() where id = ${id} and ended_at is null`;
}

/** Ends every live session of the user but `except` (a password change keeps the one that made it). */
export async function endUserSessions(db: Sql, userId: string, except?: string): Promise<void> {
  await db`update user_sessions set ended_at = now() where user_id = ${userId} and ended_at is null and (${except ?? null}::uuid is null or id <> ${except ?? null}::uuid)`;
}

/** The live session a cookie holds: its CSRF token (to check a sign-out came from this service's pages), its person and account scope. */
export async function sessionByToken(
  db: Sql,
  token: string,
): Promise<{ id: string; csrf_token: string; user_id: string; account_id: string | null } | undefined> {
  const [row] = await db<
    { id: string; csrf_token: string; user_id: string; account_id: string | null }[]
  >`select id, csrf_token, user_id, account_id from user_sessions
    where token_hash = ${tokenHash(token)} and ended_at is null and expires_at > now()`;
  return row;
}
