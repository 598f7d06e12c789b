import type { AccountRole } from '../model/accounts.js';
import type { Sql } from '../storage/postgres.js';
import { newToken, tokenHash } from './users.js';

/** Members of accounts and invitations to become one (docs/people.md). */

export interface MemberRow {
  account_id: string;
  user_id: string;
  role: AccountRole;
  created_at: Date;
  updated_at: Date;
  name: string;
  email: string;
  totp_enabled_at: Date | null;
}

export interface InvitationRow {
  id: string;
  account_id: string;
  email: string;
  role: AccountRole;
  inviter_email: string;
  created_at: Date;
  updated_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

export interface MemberFilter {
  search?: string;
  type?: 'member' | 'invite';
  role?: AccountRole;
  status?: 'ACTIVE' | 'PENDING' | 'EXPIRED';
}

/** Adds the user to the account with `role`, or changes the role of a member. */
export async function addMember(db: Sql, accountId: string, userId: string, role: AccountRole): Promise<void> {
  await db`insert into account_members (account_id, user_id, role) values (${accountId}, ${userId}, ${role})
    on conflict (account_id, user_id) do update set role = excluded.role, updated_at = now()`;
}

export async function findMember(db: Sql, accountId: string, userId: string, lock = false): Promise<MemberRow | undefined> {
  const [row] = await db<MemberRow[]>`select m.*, u.name, u.email, u.totp_enabled_at from account_members m join users u on u.id = m.user_id
    where m.account_id = ${accountId} and m.user_id = ${userId} ${lock ? db`for update of m` : db``}`;
  return row;
}

/** The account's owners, locked to the end of the transaction (so two changes cannot both leave none). */
export async function lockOwners(tx: Sql, accountId: string): Promise<string[]> {
  const rows = await tx<{ user_id: string }[]>`select user_id from account_members where account_id = ${accountId} and role = 'OWNER' for update`;
  return rows.map((r) => r.user_id);
}

export async function setMemberRole(db: Sql, accountId: string, userId: string, role: AccountRole): Promise<void> {
  await db`update account_members set role = ${role}, updated_at = now() where account_id = ${accountId} and user_id = ${userId}`;
}

/** Removes a member and the user keys that acted only through this membership stop (they resolve no role). */
export async function removeMember(db: Sql, accountId: string, userId: string): Promise<boolean> {
  const rows = await db`delete from account_members where account_id = ${accountId} and user_id = ${userId} returning 1`;
  return rows.length > 0;
}

/** Members then invitations of the account, after the filter, in a stable order (members by email, then invites). */
export async function membersAndInvitations(db: Sql, accountId: string, f: MemberFilter): Promise<{ members: MemberRow[]; invitations: InvitationRow[] }> {
  const like = f.search?.trim() ? `%${f.search.trim().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const wantMembers = f.type !== 'invite' && (!f.status || f.status === 'ACTIVE');
  const wantInvites = f.type !== 'member' && f.status !== 'ACTIVE' && f.role !== 'OWNER';
  const members = wantMembers
    ? await db<MemberRow[]>`select m.*, u.name, u.email, u.totp_enabled_at from account_members m join users u on u.id = m.user_id
        where m.account_id = ${accountId} and (${f.role ?? null}::account_role is null or m.role = ${f.role ?? null}::account_role)
          and (${like}::text is null or u.name ilike ${like} or u.email ilike ${like})
        order by lower(u.email), u.id`
    : [];
  const invitations = wantInvites
    ? await db<InvitationRow[]>`select * from invitations
        where account_id = ${accountId} and accepted_at is null and revoked_at is null
          and (${f.role ?? null}::account_role is null or role = ${f.role ?? null}::account_role)
          and (${like}::text is null or email ilike ${like})
          and (${f.status ?? null}::text is null or (${f.status ?? null} = 'EXPIRED') = (expires_at <= now()))
        order by lower(email), id`
    : [];
  return { members, invitations };
}

/** A new invitation; answers its row and the raw token of its link (mailed once, kept only as a hash). */
export async function createInvitation(
  db: Sql,
  accountId: string,
  invite: { email: string; role: AccountRole; inviterEmail: string; ttlMs: number },
): Promise<{ row: InvitationRow; token: string }> {
  const { raw, hash } = newToken();
  const [row] = await db<InvitationRow[]>`insert into invitations (account_id, email, role, token_hash, inviter_email, expires_at)
    values (${accountId}, ${invite.email.trim()}, ${invite.role}, ${hash}, ${invite.inviterEmail}, ${new Date(Date.now() + invite.ttlMs)}) returning *`;
  return { row: row!, token: raw };
}

/** A pending invitation to the same address in the account, if any. */
export async function pendingInvitation(db: Sql, accountId: string, email: string): Promise<InvitationRow | undefined> {
  const [row] = await db<InvitationRow[]>`select * from invitations where account_id = ${accountId} and lower(email) = ${email.trim().toLowerCase()}
    and accepted_at is null and revoked_at is null and expires_at > now()`;
  return row;
}

/** The invitation a link's token names, locked, whatever its state (the caller says why it cannot be used). */
export async function invitationByToken(tx: Sql, raw: string): Promise<InvitationRow | undefined> {
  const [row] = await tx<InvitationRow[]>`select * from invitations where token_hash = ${tokenHash(raw)} for update`;
  return row;
}

export async function markAccepted(tx: Sql, id: string, userId: string): Promise<void> {
  await tx`update invitations set accepted_at = now(), accepted_user_id = ${userId}, updated_at = now() where id = ${id}`;
}

/** Revokes a pending invitation of the account; false when there is none. */
export async function revokeInvitation(db: Sql, accountId: string, id: string): Promise<boolean> {
  const rows = await db`update invitations set revoked_at = now(), updated_at = now()
    where id = ${id} and account_id = ${accountId} and accepted_at is null and revoked_at is null returning 1`;
  return rows.length > 0;
}
