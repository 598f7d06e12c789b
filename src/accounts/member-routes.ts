import { createHash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { SESSION_COOKIE } from '../http/auth.js';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { ACCOUNT_ROLES, type AccountRole, may, type Principal } from '../model/accounts.js';
import { generateApiKey } from '../model/secrets.js';
import { iso } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import { transaction } from '../storage/postgres.js';
import { type AuditRow, auditPage, recordAudit } from './audit.js';
import { createSession, resolveSession } from './browser-sessions.js';
import { queueMail } from './mail.js';
import {
  addMember,
  createInvitation,
  findMember,
  type InvitationRow,
  invitationByToken,
  lockOwners,
  type MemberRow,
  markAccepted,
  membersAndInvitations,
  pendingInvitation,
  removeMember,
  revokeInvitation,
  setMemberRole,
} from './members.js';
import { hashPassword, passwordMatches, passwordProblem } from './passwords.js';
import { attemptLimit, secondFactorHolds } from './proofs.js';
import { accountsOf, createUserKey, findAccount, listUserKeys, revokeUserKey, type UserKeyRow } from './repository.js';
import { ensureUser, findUser, findUserByEmail, setName, setPassword } from './users.js';

/**
 * The anchor's members operations with its shapes, invitations (our addition, documented), people's own API keys
 * and the audit log (docs/people.md). An account keeps at least one Owner: a change that would leave none is a 409,
 * and only an Owner changes or removes an Owner.
 */

const Uuid = Type.String({ format: 'uuid' });
const Role = StringEnum(ACCOUNT_ROLES);
const InviteRole = StringEnum(['ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as const);

const Member = Type.Object({
  type: Type.Literal('member'),
  accountId: Uuid,
  userId: Uuid,
  name: Nullable(Type.String()),
  email: Type.String(),
  role: Role,
  status: Type.Literal('ACTIVE'),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  isSupportMembership: Type.Boolean(),
  ssoEnabled: Type.Boolean(),
  mfaEnabled: Type.Boolean(),
});
const Invite = Type.Object({
  type: Type.Literal('invite'),
  id: Uuid,
  accountId: Uuid,
  email: Type.String(),
  role: InviteRole,
  status: StringEnum(['PENDING', 'EXPIRED'] as const),
  inviterEmail: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  expiresAt: Type.String({ format: 'date-time' }),
});
const MembersList = Type.Object({ members: Type.Array(Type.Union([Member, Invite])), length: Type.Integer({ minimum: 0 }), nextId: Nullable(Type.String()) });
const MembersQuery = Type.Object(
  {
    search: Type.Optional(Type.String({ maxLength: 320 })),
    type: Type.Optional(StringEnum(['member', 'invite'] as const)),
    role: Type.Optional(Role),
    status: Type.Optional(StringEnum(['ACTIVE', 'PENDING', 'EXPIRED'] as const)),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    nextId: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  },
  { additionalProperties: false },
);

const UserKey = Type.Object({
  id: Uuid,
  name: Type.String(),
  maskedKey: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  lastUsedAt: Nullable(Type.String({ format: 'date-time' })),
  expiresAt: Nullable(Type.String({ format: 'date-time' })),
  revoked_at: Nullable(Type.String({ format: 'date-time' })),
});

const AuditEntry = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Object({ type: StringEnum(['user', 'key', 'anonymous'] as const), id: Nullable(Type.String()), name: Nullable(Type.String()) }),
  operation: Type.String(),
  method: Type.String(),
  path: Type.String(),
  resourceId: Nullable(Type.String()),
  fields: Type.Array(Type.String(), { description: 'The names of the fields the request sent (never their values)' }),
  status: Type.Integer(),
  address: Nullable(Type.String()),
});

const toMember = (m: MemberRow) => ({
  type: 'member' as const,
  accountId: m.account_id,
  userId: m.user_id,
  name: m.name || null,
  email: m.email,
  role: m.role,
  status: 'ACTIVE' as const,
  createdAt: iso(m.created_at)!,
  updatedAt: iso(m.updated_at)!,
  isSupportMembership: false,
  ssoEnabled: false,
  mfaEnabled: m.totp_enabled_at !== null,
});
const toInvite = (i: InvitationRow) => ({
  type: 'invite' as const,
  id: i.id,
  accountId: i.account_id,
  email: i.email,
  role: i.role as Exclude<AccountRole, 'OWNER'>,
  status: i.expires_at.getTime() <= Date.now() ? ('EXPIRED' as const) : ('PENDING' as const),
  inviterEmail: i.inviter_email,
  createdAt: iso(i.created_at)!,
  updatedAt: iso(i.updated_at)!,
  expiresAt: iso(i.expires_at)!,
});
const toUserKey = (k: UserKeyRow) => ({
  id: k.id,
  name: k.name,
  maskedKey: `mk_****${k.key_suffix}`,
  created_at: iso(k.created_at)!,
  lastUsedAt: iso(k.last_used_at),
  expiresAt: iso(k.expires_at),
  revoked_at: iso(k.revoked_at),
});

/** The opaque cursor of a members page: where it stops, and the query it belongs to (another query refuses it). */
const cursorOf = (offset: number, q: object) =>
  Buffer.from(JSON.stringify({ o: offset, q: createHash('sha256').update(JSON.stringify(q)).digest('hex').slice(0, 16) })).toString('base64url');
function offsetOf(nextId: string | undefined, q: object): number {
  if (!nextId) return 0;
  try {
    const c = JSON.parse(Buffer.from(nextId, 'base64url').toString('utf8')) as { o: unknown; q: unknown };
    if (Number.isSafeInteger(c.o) && (c.o as number) >= 0 && c.q === createHash('sha256').update(JSON.stringify(q)).digest('hex').slice(0, 16))
      return c.o as number;
  } catch {
    // falls through
  }
  throw badRequest('query.nextId is not a cursor of this query', {
    errors: [{ field: 'query.nextId', rule: 'cursor', message: 'is not a cursor of this query' }],
  });
}

export function memberRoutes(deps: Deps): AnyRoute[] {
  const { sql, config } = deps;
  const tag = 'Account members';
  const publicUrl = () => config.publicUrl ?? `http://localhost:${config.port}`;

  /** The account a members route names: `me`, or one the caller may act for (404 otherwise). */
  async function accountOf(principal: Principal, accountId: string | undefined): Promise<string> {
    if (!accountId || accountId.toLowerCase() === principal.account.id) return principal.account.id;
    const account = (await accountsOf(sql, principal)).find((a) => a.id === accountId.toLowerCase());
    if (!account) throw notFound();
    return account.id;
  }

  const list = async (accountId: string, query: Static<typeof MembersQuery>) => {
    if (query.nextId && !query.limit)
      throw badRequest('query.nextId needs query.limit', { errors: [{ field: 'query.nextId', rule: 'requires', message: 'needs limit' }] });
    const filter = { search: query.search, type: query.type, role: query.role, status: query.status };
    const { members, invitations } = await membersAndInvitations(sql, accountId, filter);
    const all = [...members.map(toMember), ...invitations.map(toInvite)];
    const offset = offsetOf(query.nextId, { accountId, ...filter });
    const page = query.limit ? all.slice(offset, offset + query.limit) : all;
    const next = query.limit && offset + query.limit < all.length ? cursorOf(offset + query.limit, { accountId, ...filter }) : null;
    return { status: 200, body: { members: page, length: page.length, nextId: next } };
  };

  /** A member's new role, or their removal (role null), with the Owner rules, in one transaction. */
  async function change(principal: Principal, accountId: string, userId: string, role: AccountRole | null) {
    if (accountId !== principal.account.id) {
      // Acting for another account needs the same right there.
      const there = principal.userId ? await findMember(sql, accountId, principal.userId) : undefined;
      if (!there || !may(there.role, 'admin')) throw new HttpError(403);
    }
    return transaction(sql, async (tx) => {
      const owners = await lockOwners(tx, accountId);
      const member = await findMember(tx, accountId, userId, true);
      if (!member) throw notFound();
      const callerRole = accountId === principal.account.id ? principal.role : (await findMember(tx, accountId, principal.userId!))!.role;
      if (member.role === 'OWNER' && callerRole !== 'OWNER') throw new HttpError(403, 'Only an Owner changes or removes an Owner');
      if (member.role === 'OWNER' && owners.length === 1 && role !== 'OWNER') {
        throw conflict('An account keeps at least one Owner: make another member Owner first (npm run cli -- create-user --role OWNER)');
      }
      if (role === null) {
        await removeMember(tx, accountId, userId);
        return undefined;
      }
      await setMemberRole(tx, accountId, userId, role);
      return toMember((await findMember(tx, accountId, userId))!);
    });
  }

  const guesses = attemptLimit(deps, 'password-check-user', config.people.signInFailures);
  /** A new person's first password, hashed; a refused one is a 400 at the field. */
  const newPassword = async (password: string | undefined, email: string) => {
    const problem = password ? passwordProblem(password, email) : 'is required to make your sign-in';
    if (problem) throw badRequest(`body.password ${problem}`, { errors: [{ field: 'body.password', rule: 'password', message: problem }] });
    return hashPassword(password!);
  };

  const personOf = async (principal: Principal) => {
    const user = principal.userId ? await findUser(sql, principal.userId) : undefined;
    if (!user) throw new HttpError(403, 'This is for a person: sign in, or use a key of your own');
    return user;
  };

  const MemberParams = Type.Object({ userId: Uuid }, { additionalProperties: false });
  const AccountMemberParams = Type.Object({ accountId: Uuid, userId: Uuid }, { additionalProperties: false });
  const UpdateBody = Type.Object(
    { role: InviteRole },
    { additionalProperties: false, description: "OWNER is not supported (the anchor's rule): an Owner is made with `npm run cli -- create-user --role OWNER`" },
  );

  return [
    ...[
      { path: '/v1/accounts/me/members', operationId: 'listMembers' },
      { path: '/v1/accounts/{accountId}/members', operationId: 'listAccountMembers' },
    ].map(({ path, operationId }) =>
      defineRoute({
        method: 'GET',
        path,
        operationId,
        tag,
        access: 'read',
        errors: [400, 404],
        summary: 'Members and pending invitations of the account: search, filter by type, role and status, and pages by nextId',
        schema: {
          ...(path.includes('{accountId}') ? { params: Type.Object({ accountId: Uuid }, { additionalProperties: false }) } : {}),
          query: MembersQuery,
          responses: { 200: MembersList },
        },
        handler: async ({ principal, params, query }) => list(await accountOf(principal, (params as { accountId?: string }).accountId), query),
      }),
    ),
    ...(['me', 'id'] as const).flatMap((which) => {
      const path = which === 'me' ? '/v1/accounts/me/members/{userId}' : '/v1/accounts/{accountId}/members/{userId}';
      const params = which === 'me' ? MemberParams : AccountMemberParams;
      return [
        defineRoute({
          method: 'PATCH',
          path,
          operationId: which === 'me' ? 'updateMember' : 'updateAccountMember',
          tag,
          access: 'admin',
          errors: [404, 409],
          summary: "Change a member's role (an Owner's only by an Owner; never the last Owner's)",
          schema: { params, body: UpdateBody, responses: { 200: Member } },
          handler: async ({ principal, params: p, body }) => {
            const accountId = await accountOf(principal, (p as { accountId?: string }).accountId);
            return { status: 200, body: (await change(principal, accountId, p.userId.toLowerCase(), body.role))! };
          },
        }),
        defineRoute({
          method: 'DELETE',
          path,
          operationId: which === 'me' ? 'removeMember' : 'removeAccountMember',
          tag,
          access: 'admin',
          errors: [404, 409],
          summary: 'Remove a member: their sessions no longer act for the account and their keys stop working here (an Owner only by an Owner; never the last)',
          schema: { params, responses: { 204: null } },
          handler: async ({ principal, params: p }) => {
            await change(principal, await accountOf(principal, (p as { accountId?: string }).accountId), p.userId.toLowerCase(), null);
            return { status: 204 };
          },
        }),
      ];
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/accounts/me/invitations',
      operationId: 'inviteMember',
      tag,
      access: 'admin',
      errors: [409],
      summary: 'Invite a person by email with a role (our addition): they get a single-use link, valid INVITATION_TTL_HOURS',
      description:
        'With mail set up (SMTP_URL) the person gets the link by mail (`mailSent: true`). Without it no mail can go: the answer carries ' +
        '`acceptUrl`, the link to hand over yourself (`mailSent: false`). The link works once.',
      schema: {
        body: Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }), role: InviteRole }, { additionalProperties: false }),
        responses: {
          201: Type.Object({
            ...Invite.properties,
            mailSent: Type.Boolean({ description: 'Whether a mail with the link is on its way (false: this service sends no mail)' }),
            acceptUrl: Type.Optional(Type.String({ description: 'The invitation link, when no mail carries it' })),
          }),
        },
      },
      handler: async ({ principal, body }) => {
        const accountId = principal.account.id;
        const existing = await findUserByEmail(sql, body.email);
        if (existing && (await findMember(sql, accountId, existing.id))) throw conflict(`${body.email} is a member already`);
        if (await pendingInvitation(sql, accountId, body.email)) throw conflict(`${body.email} has a pending invitation: revoke it to send another`);
        const inviterEmail = principal.userId ? ((await findUser(sql, principal.userId))?.email ?? principal.actor.name) : `key ${principal.actor.name}`;
        const row = await transaction(sql, async (tx) => {
          const { row, token } = await createInvitation(tx, accountId, {
            email: body.email,
            role: body.role,
            inviterEmail,
            ttlMs: config.people.invitationTtlMs,
          });
          const acceptUrl = `${publicUrl()}/invitations/accept?token=${token}`;
          // No mail server: nothing would ever carry the link, so the inviter gets it to hand over.
          if (!config.alerts.smtpUrl) return { row, acceptUrl };
          await queueMail(tx, {
            to: body.email,
            kind: 'invitation',
            subject: `You are invited to ${principal.account.name}`,
            body:
              `${inviterEmail} invites you to the monitoring account ${principal.account.name} as ${body.role}.\n\n` +
              `Accept within ${Math.round(config.people.invitationTtlMs / 3_600_000)} hours (the link works once):\n\n` +
              `${acceptUrl}\n\nor with the API: POST ${publicUrl()}/v1/invitations/accept and this token:\n\n${token}\n\n` +
              'If you did not expect this, ignore this mail.',
          });
          return { row, acceptUrl: undefined };
        });
        return { status: 201, body: { ...toInvite(row.row), mailSent: row.acceptUrl === undefined, ...(row.acceptUrl ? { acceptUrl: row.acceptUrl } : {}) } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/accounts/me/invitations/{invitationId}',
      operationId: 'revokeInvitation',
      tag,
      access: 'admin',
      errors: [404],
      summary: 'Revoke a pending invitation: its link stops working',
      schema: { params: Type.Object({ invitationId: Uuid }, { additionalProperties: false }), responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await revokeInvitation(sql, principal.account.id, params.invitationId.toLowerCase()))) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/invitations/preview',
      operationId: 'previewInvitation',
      tag,
      access: 'public',
      errors: [400, 404, 410, 429],
      summary: "What an invitation's link is for (our addition): the account, who invited, the address and role, until when",
      description: 'The token goes in the body, never in a URL (addresses end up in logs). Used, revoked or expired links answer 410.',
      rateLimit: { points: 30, windowSeconds: 60 },
      schema: {
        body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }) }, { additionalProperties: false }),
        responses: {
          200: Type.Object({
            accountName: Type.String(),
            inviter: Type.String({ description: 'Who invited: their email, or the key that did' }),
            email: Type.String(),
            role: Role,
            expiresAt: Type.String({ format: 'date-time' }),
          }),
        },
      },
      handler: async ({ body }) => {
        const invite = await invitationByToken(sql, body.token);
        if (!invite) throw notFound();
        if (invite.accepted_at || invite.revoked_at || invite.expires_at.getTime() <= Date.now()) {
          throw new HttpError(
            410,
            `This invitation was ${invite.accepted_at ? 'used already' : invite.revoked_at ? 'revoked' : 'not accepted in time'}: ask for a new one`,
          );
        }
        const account = (await findAccount(sql, invite.account_id))?.name;
        return {
          status: 200,
          body: {
            accountName: account ?? 'an account',
            inviter: invite.inviter_email,
            email: invite.email,
            role: invite.role,
            expiresAt: invite.expires_at.toISOString(),
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/invitations/accept',
      operationId: 'acceptInvitation',
      tag,
      access: 'public',
      errors: [400, 401, 404, 409, 410, 429, 503],
      summary: "Accept an invitation with its link's token: become a member (a new person sets a password; a known one proves it), signed in",
      description:
        'Signed in (the session cookie), the invitation must be for your own address (409 otherwise). Otherwise a person who has a password gives it, ' +
        'and one with a second factor its `code` too (401 `reason: "second-factor"` without it); a new person sets a password. Wrong passwords are ' +
        'limited per person (429). Used, revoked or expired links answer 410.',
      schema: {
        body: Type.Object(
          {
            token: Type.String({ minLength: 20, maxLength: 100 }),
            name: Type.Optional(Type.String({ maxLength: 200 })),
            password: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
            code: Type.Optional(
              Type.String({ minLength: 6, maxLength: 32, description: "The authenticator's code or a recovery code, for a person whose second factor is on" }),
            ),
          },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Object({ accountId: Uuid, role: Role, userId: Uuid }) },
      },
      handler: async ({ body, context }) => {
        /** In the inviting account's log: the invitation accepted (or a wrong password given for it), by whom, from where. */
        const record = (accountId: string, who: { id: string; email: string }, status: number) =>
          recordAudit(sql, {
            accountId,
            actor: { type: 'user', id: who.id, name: who.email },
            operation: 'acceptInvitation',
            method: context.method,
            path: context.path,
            status,
            address: context.client.address,
          }).catch((err: Error) => deps.logger.error({ err: err.message }, 'could not record an accepted invitation'));
        const cookie = context.cookie(SESSION_COOKIE);
        const signedIn = cookie
          ? await resolveSession(sql, cookie, undefined, { idleMs: config.people.sessionIdleMs, absoluteMs: config.people.sessionAbsoluteMs })
          : undefined;
        const sessionUser = signedIn && signedIn !== 'forbidden' ? signedIn.userId : null;
        const usable = (invite: InvitationRow | undefined): InvitationRow => {
          if (!invite) throw notFound();
          if (invite.accepted_at || invite.revoked_at || invite.expires_at.getTime() <= Date.now()) {
            throw new HttpError(
              410,
              `This invitation was ${invite.accepted_at ? 'used already' : invite.revoked_at ? 'revoked' : 'not accepted in time'}: ask for a new one`,
            );
          }
          return invite;
        };
        // Who accepts is proved before the transaction (hashing holds no connection); the transaction checks nothing changed meanwhile.
        const invite = usable(await invitationByToken(sql, body.token));
        const known = await findUserByEmail(sql, invite.email);
        let newHash: string | undefined;
        if (sessionUser) {
          if (!known || known.id !== sessionUser) throw conflict('This invitation is for another address than the one you are signed in with');
        } else if (known?.password_hash || known?.totp_enabled_at) {
          const guess = await guesses.take(known.id);
          if (guess) throw new HttpError(429, 'Too many wrong passwords or codes; wait and try again', undefined, { 'Retry-After': String(guess) });
          if (known.password_hash && !(body.password && (await passwordMatches(known.password_hash, body.password)))) {
            await record(invite.account_id, { id: known.id, email: known.email }, 401);
            throw new HttpError(401, `Sign in as ${invite.email}, or give its password`, { reason: 'credentials' });
          }
          if (known.totp_enabled_at && !(body.code && (await secondFactorHolds(sql, known, body.code)))) {
            await record(invite.account_id, { id: known.id, email: known.email }, 401);
            throw new HttpError(401, 'The second factor is on: send the code of your authenticator app (or a recovery code)', { reason: 'second-factor' });
          }
          await guesses.clear(known.id);
          if (!known.password_hash) newHash = await newPassword(body.password, invite.email);
        } else {
          newHash = await newPassword(body.password, invite.email);
        }
        const outcome = await transaction(sql, async (tx) => {
          const current = usable(await invitationByToken(tx, body.token));
          let user = await findUserByEmail(tx, current.email);
          if ((user?.id ?? null) !== (known?.id ?? null) || (user && known && user.password_hash !== known.password_hash)) {
            throw conflict('This person changed while the invitation was accepted: try again');
          }
          if (newHash) {
            user = user ?? (await ensureUser(tx, current.email, body.name ?? ''));
            await setPassword(tx, user.id, newHash);
            if (body.name) await setName(tx, user.id, body.name);
          }
          if (await findMember(tx, current.account_id, user!.id)) throw conflict(`${current.email} is a member already: the invitation changes no role`);
          await addMember(tx, current.account_id, user!.id, current.role);
          await markAccepted(tx, current.id, user!.id);
          return { accountId: current.account_id, role: current.role, userId: user!.id };
        });
        await record(outcome.accountId, { id: outcome.userId, email: invite.email }, 200);
        const session = sessionUser
          ? undefined
          : await createSession(
              sql,
              outcome.userId,
              { idleMs: config.people.sessionIdleMs, absoluteMs: config.people.sessionAbsoluteMs },
              { address: context.client.address, userAgent: context.client.userAgent },
            );
        return {
          status: 200,
          body: outcome,
          ...(session ? { cookies: [{ name: SESSION_COOKIE, value: session.token, maxAgeMs: config.people.sessionAbsoluteMs }] } : {}),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/users/me/api-keys',
      operationId: 'listUserApiKeys',
      tag: 'Account',
      access: 'read',
      summary: 'Your own API keys: each acts with your role in each account, and stops when you leave or the key expires',
      schema: { responses: { 200: Type.Array(UserKey) } },
      handler: async ({ principal }) => ({
        status: 200,
        body: (await listUserKeys(sql, (await personOf(principal)).id, principal.onlyAccountId)).map(toUserKey),
      }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/users/me/api-keys',
      operationId: 'createUserApiKey',
      tag: 'Account',
      access: 'read',
      summary: 'Make an API key of your own (shown in this response only)',
      schema: {
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }), expiresInDays: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 3650 }))) },
          { additionalProperties: false },
        ),
        responses: { 201: Type.Intersect([UserKey, Type.Object({ key: Type.String({ description: 'The key itself; shown only in this response' }) })]) },
      },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        const key = generateApiKey();
        const expiresAt = body.expiresInDays ? new Date(Date.now() + body.expiresInDays * 86_400_000) : null;
        const row = await createUserKey(sql, {
          userId: user.id,
          accountId: principal.account.id,
          name: body.name,
          key,
          expiresAt,
          onlyAccountId: principal.onlyAccountId,
        });
        return { status: 201, body: { ...toUserKey(row), key } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/users/me/api-keys/{id}',
      operationId: 'revokeUserApiKey',
      tag: 'Account',
      access: 'read',
      errors: [404],
      summary: 'Revoke one of your API keys',
      schema: { params: Type.Object({ id: Uuid }, { additionalProperties: false }), responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await revokeUserKey(sql, (await personOf(principal)).id, params.id.toLowerCase(), principal.onlyAccountId))) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/audit-logs',
      operationId: 'listAuditLogs',
      tag: 'Account',
      access: 'admin',
      errors: [400],
      summary: 'Every write to the account (resources, keys, members, roles, deploys, sign-ins and failed ones): who, what, when, from where; newest first',
      description: `Kept AUDIT_RETENTION_DAYS (${config.people.auditRetentionDays} here). Pages by nextId (an entry id: the next page holds older entries).`,
      schema: {
        query: Type.Object(
          {
            from: Type.Optional(Type.String({ format: 'date-time' })),
            to: Type.Optional(Type.String({ format: 'date-time' })),
            actorId: Type.Optional(Type.String({ maxLength: 64 })),
            operation: Type.Optional(Type.String({ maxLength: 128 })),
            resourceId: Type.Optional(Type.String({ maxLength: 512 })),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
            nextId: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })),
          },
          { additionalProperties: false },
        ),
        responses: { 200: Type.Object({ entries: Type.Array(AuditEntry), length: Type.Integer(), nextId: Nullable(Type.String()) }) },
      },
      handler: async ({ principal, query }) => {
        const rows = await auditPage(
          sql,
          principal.account.id,
          {
            from: query.from ? new Date(query.from) : undefined,
            to: query.to ? new Date(query.to) : undefined,
            actorId: query.actorId,
            operation: query.operation,
            resourceId: query.resourceId,
          },
          query.limit + 1,
          query.nextId ? Number(query.nextId) : undefined,
        );
        const page = rows.slice(0, query.limit);
        const view = (r: AuditRow) => ({
          id: String(r.id),
          at: iso(r.at)!,
          actor: { type: r.actor_type, id: r.actor_id, name: r.actor_name },
          operation: r.operation,
          method: r.method,
          path: r.path,
          resourceId: r.resource_id,
          fields: r.fields,
          status: r.status,
          address: r.address,
        });
        return { status: 200, body: { entries: page.map(view), length: page.length, nextId: rows.length > query.limit ? String(page.at(-1)!.id) : null } };
      },
    }),
  ];
}
