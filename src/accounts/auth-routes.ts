import { createHash, randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import * as OTPAuth from 'otpauth';
import { CSRF_HEADER, fromOwnPages, SESSION_COOKIE } from '../http/auth.js';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute, type RequestContext } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { ACCOUNT_ROLES, type AccountRole, may, type Principal } from '../model/accounts.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import { serviceSecret } from '../storage/service-secrets.js';
import { recordAudit } from './audit.js';
import { createSession, endSession, endUserSessions, type SessionScope, sessionByToken } from './browser-sessions.js';
import { type IdentityRow, identityUser, linkIdentity, listIdentities, takeUnbound, unlinkIdentity } from './identities.js';
import { queueMail } from './mail.js';
import { addMember, findMember } from './members.js';
import {
  deleteAccountOidc,
  findAccountOidc,
  forgetProvider,
  type OidcSettings,
  type OidcState,
  oidcClient,
  openState,
  providerConfig,
  roleFromClaims,
  sameOriginPath,
  saveAccountOidc,
  seal,
  sealState,
  unseal,
} from './oidc.js';
import { decoyHash, HashingBusy, hashPassword, limitHashing, passwordMatches, passwordProblem } from './passwords.js';
import { attemptLimit, hashCode, secondFactorHolds, totpOf, totpStep } from './proofs.js';
import { accountsOf, defaultAccount, findAccount, revokeAllUserKeys } from './repository.js';
import {
  consumeUserToken,
  createUser,
  createUserToken,
  disableTotp,
  enableTotp,
  findUser,
  findUserByEmail,
  setPassword,
  setTotpSecret,
  takeTotpStep,
  type UserRow,
} from './users.js';

/**
 * Sign-in and what a person does to their own sign-in (docs/people.md): password (throttled per email and per
 * client address), a second factor (TOTP, RFC 6238, with recovery codes), one-time links (the CLI's create-user,
 * password resets by mail), OpenID Connect, sign-out. A sign-in makes a new session (a new cookie: never one the
 * browser had), and each sign-in and failed sign-in lands in the audit log.
 */

const tag = 'Sign-in';
const OIDC_COOKIE = 'monitoring_oidc';
const Email = Type.String({ format: 'email', maxLength: 320 });
const Password = Type.String({ minLength: 1, maxLength: 256 });
const Code = Type.String({ minLength: 6, maxLength: 32, description: 'A 6-digit code of the authenticator app, or a recovery code' });
const Role = StringEnum(ACCOUNT_ROLES);

const Me = Type.Object({
  user: Type.Object({ id: Type.String({ format: 'uuid' }), email: Type.String(), name: Type.String(), twoFactorEnabled: Type.Boolean() }),
  account: Nullable(
    Type.Object(
      {
        id: Type.String({ format: 'uuid' }),
        name: Type.String(),
        role: Role,
        may: Type.Object(
          { run: Type.Boolean(), write: Type.Boolean(), admin: Type.Boolean() },
          { description: "What the role may do here (the access levels of the operations' x-roles): a client hides what would be refused" },
        ),
      },
      { description: 'The account this session acts for; null for a person who is a member of none (yet)' },
    ),
  ),
  secondFactorRequired: Type.Boolean({
    description: 'The account requires a second factor this person has not turned on: only their own settings answer until they do',
  }),
  accounts: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() })),
  csrfToken: Nullable(Type.String({ description: 'Send it as x-csrf-token with every write made with the session cookie' })),
  onlyAccountId: Type.Optional(
    Type.String({ format: 'uuid', description: "The session was made by this account's OpenID provider: it acts for this account only" }),
  ),
});

const OidcBody = Type.Object(
  {
    issuer: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
    clientId: Type.String({ minLength: 1, maxLength: 512 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 2048, description: 'Never returned' }),
    roleClaim: Type.String({ minLength: 1, maxLength: 128, default: 'groups' }),
    roleMap: Type.Array(
      Type.Object(
        { value: Type.String({ minLength: 1, maxLength: 256 }), role: StringEnum(['ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as const) },
        { additionalProperties: false },
      ),
      { maxItems: 50, default: [] },
    ),
    defaultRole: Nullable(StringEnum(['ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as const, { default: null })),
    trustProviderMfa: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "The provider asks people for a second factor itself: a sign-in through it does not ask for the person's own code, and counts as a second factor where the account requires one",
      }),
    ),
  },
  { additionalProperties: false },
);
const OidcView = Type.Object({
  issuer: Type.String(),
  clientId: Type.String(),
  roleClaim: Type.String(),
  roleMap: Type.Array(Type.Object({ value: Type.String(), role: Role })),
  defaultRole: Nullable(Role),
  trustProviderMfa: Type.Boolean(),
  startUrl: Type.String({ description: 'Where people of this account start signing in' }),
});
const Identity = Type.Object({
  id: Type.String({ format: 'uuid' }),
  accountId: Type.String({ format: 'uuid' }),
  accountName: Type.String(),
  issuer: Type.String(),
  subject: Type.String(),
  email: Type.String({ description: 'The email the provider last gave' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Nullable(Type.String({ format: 'date-time' })),
});
const toIdentity = (i: IdentityRow & { account_name: string }) => ({
  id: i.id,
  accountId: i.account_id,
  accountName: i.account_name,
  issuer: i.issuer,
  subject: i.subject,
  email: i.email,
  createdAt: i.created_at.toISOString(),
  lastUsedAt: i.last_used_at?.toISOString() ?? null,
});

/** A browser a person signed in with before: failures by others on their email do not lock it out (docs/people.md). */
interface KnownDevice {
  at: number;
  id: string;
  /** SHA-256 of the email it signed in with (the address itself is not in the cookie). */
  email: string;
}
const DEVICE_COOKIE = 'monitoring_device';
const DEVICE_DAYS = 365;
const emailDigest = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');

/** A sign-in through a provider that still needs the person's own second factor, carried between the callback and the code. */
interface PendingSignIn {
  at: number;
  userId: string;
  accountId: string;
  redirect: string;
}
const PENDING_COOKIE = 'monitoring_pending';

export function authRoutes(deps: Deps): AnyRoute[] {
  const { sql, config } = deps;
  const people = config.people;
  limitHashing({ threads: people.hashThreads, queue: people.hashQueue });
  const byEmail = attemptLimit(deps, 'sign-in-email', people.signInFailures);
  const byDevice = attemptLimit(deps, 'sign-in-device', people.signInFailures);
  const byAddress = attemptLimit(deps, 'sign-in-address', people.signInFailures * 5);
  const resetsByEmail = attemptLimit(deps, 'password-reset-email', 3);
  const byGuesses = attemptLimit(deps, 'password-check-user', people.signInFailures);
  const publicUrl = () => config.publicUrl ?? `http://localhost:${config.port}`;
  const secrets = new Map<string, Promise<Buffer>>();
  const secret = (name: string) => {
    let kept = secrets.get(name);
    if (!kept) {
      kept = serviceSecret(sql, name);
      kept.catch(() => secrets.delete(name));
      secrets.set(name, kept);
    }
    return kept;
  };
  const stateSecret = () => secret('oidc-state');

  const sessionCookie = (token: string | null) => ({ name: SESSION_COOKIE, value: token, maxAgeMs: token ? people.sessionAbsoluteMs : undefined });

  const audit = (accountId: string | null, operation: string, ctx: RequestContext, user: { id: string | null; email: string } | null, status: number) =>
    recordAudit(sql, {
      accountId,
      actor: user ? { type: 'user', id: user.id, name: user.email } : { type: 'anonymous', id: null, name: null },
      operation,
      method: ctx.method,
      path: ctx.path,
      status,
      address: ctx.client.address,
    }).catch((err: Error) => deps.logger.error({ err: err.message }, 'could not record a sign-in'));

  /** Every account the sign-in is into gets the entry (a password sign-in is into all of the person's; a provider's into its own). */
  const auditUser = async (userId: string, operation: string, ctx: RequestContext, email: string, status: number, onlyAccountId?: string) => {
    const accounts = await accountsOf(sql, { userId, onlyAccountId } as Principal);
    await Promise.all((accounts.length ? accounts : [null]).map((a) => audit(a?.id ?? null, operation, ctx, { id: userId, email }, status)));
  };

  /** Signs the user in: a new session (bound to the provider's account when `scope` says so), the cookie, and what the session may see. */
  async function signIn(user: UserRow, ctx: RequestContext, operation: string, scope?: SessionScope) {
    const session = await createSession(
      sql,
      user.id,
      { idleMs: people.sessionIdleMs, absoluteMs: people.sessionAbsoluteMs },
      { address: ctx.client.address, userAgent: ctx.client.userAgent },
      scope,
    );
    await auditUser(user.id, operation, ctx, user.email, 200, scope?.accountId);
    return {
      status: 200,
      cookies: [sessionCookie(session.token)],
      body: await me(user, scope?.accountId ?? null, session.csrfToken, {
        onlyAccountId: scope?.accountId,
        secondFactorByProvider: scope?.secondFactor === 'provider',
      }),
    };
  }

  async function me(
    user: UserRow,
    accountId: string | null,
    csrfToken: string | null,
    scope: { onlyAccountId?: string; secondFactorByProvider?: boolean } = {},
  ) {
    const accounts = await accountsOf(sql, { userId: user.id, onlyAccountId: scope.onlyAccountId } as Principal);
    const current = accounts.find((a) => a.id === accountId) ?? accounts[0];
    const member = current ? await findMember(sql, current.id, user.id) : undefined;
    return {
      user: { id: user.id, email: user.email, name: user.name, twoFactorEnabled: user.totp_enabled_at !== null },
      account:
        current && member
          ? {
              id: current.id,
              name: current.name,
              role: member.role,
              may: { run: may(member.role, 'run'), write: may(member.role, 'write'), admin: may(member.role, 'admin') },
            }
          : null,
      secondFactorRequired: Boolean(current?.requireTwoFactor && user.totp_enabled_at === null && !scope.secondFactorByProvider),
      accounts: accounts.map((a) => ({ id: a.id, name: a.name })),
      csrfToken,
      ...(scope.onlyAccountId ? { onlyAccountId: scope.onlyAccountId } : {}),
    };
  }

  const personOf = async (principal: Principal): Promise<UserRow> => {
    const user = principal.userId ? await findUser(sql, principal.userId) : undefined;
    if (!user) throw new HttpError(403, 'This is for a person: sign in, or use a key of your own');
    return user;
  };
  /** A session made by an account's provider may not change how the person signs in elsewhere. */
  const notThroughProvider = (principal: Principal, what: string) => {
    if (principal.onlyAccountId) {
      throw new HttpError(403, `You signed in through an account's OpenID provider: sign in with your password or a link to ${what}`, {
        reason: 'provider-session',
      });
    }
  };

  /** The OpenID Connect provider people of `accountId` sign in with, if any. */
  async function oidcOf(accountId: string): Promise<OidcSettings | undefined> {
    const own = await findAccountOidc(sql, accountId);
    if (own) return own;
    const env = people.oidc;
    if (!env) return undefined;
    const account = await findAccount(sql, accountId);
    return account?.isDefault
      ? { ...env, roleMap: env.roleMap as OidcSettings['roleMap'], defaultRole: env.defaultRole as AccountRole | null, source: 'environment' }
      : undefined;
  }
  const redirectUri = () => `${publicUrl()}/v1/auth/oidc/callback`;
  /** The provider's discovery; unreachable or not a provider is a 502 naming why. */
  const reachProvider = (settings: OidcSettings) =>
    providerConfig(settings, deps.outbound.dispatcher()).catch((err: Error) => {
      throw new HttpError(502, `The OpenID provider ${settings.issuer} could not be used: ${causes(err)}`);
    });
  /** Where a sign-in may send the browser afterwards: a path of this service, else a 400. */
  const ownPath = (redirect: string, field: string) => {
    const path = sameOriginPath(redirect, publicUrl());
    if (path === undefined)
      throw badRequest(`${field} must be a path of this service`, { errors: [{ field, rule: 'redirect', message: 'must be a path of this service' }] });
    return path;
  };
  /** The state cookie and the provider's authorization URL for a sign-in (or a link) through the account's provider. */
  async function authorization(accountId: string, settings: OidcSettings, redirect: string, link?: OidcState['link']) {
    const provider = await reachProvider(settings);
    const state: OidcState = {
      accountId,
      state: oidcClient.randomState(),
      nonce: oidcClient.randomNonce(),
      verifier: oidcClient.randomPKCECodeVerifier(),
      redirect,
      at: Date.now(),
      ...(link ? { link } : {}),
    };
    const url = oidcClient.buildAuthorizationUrl(provider, {
      redirect_uri: redirectUri(),
      scope: 'openid email profile',
      response_type: 'code',
      code_challenge: await oidcClient.calculatePKCECodeChallenge(state.verifier),
      code_challenge_method: 'S256',
      state: state.state,
      nonce: state.nonce,
    });
    return { url, cookie: { name: OIDC_COOKIE, value: sealState(await stateSecret(), state), maxAgeMs: 600_000 } };
  }

  /** The browser's known-device cookie for this email, when it carries one (docs/people.md, "Throttling"). */
  const knownDevice = async (ctx: RequestContext, email: string) => {
    const device = unseal<KnownDevice>(await secret('sign-in-devices'), ctx.cookie(DEVICE_COOKIE), DEVICE_DAYS * 86_400_000);
    return device && device.email === emailDigest(email) && typeof device.id === 'string' ? device : undefined;
  };
  const deviceCookie = async (email: string) => ({
    name: DEVICE_COOKIE,
    value: seal(await secret('sign-in-devices'), {
      at: Date.now(),
      id: randomBytes(12).toString('base64url'),
      email: emailDigest(email),
    } satisfies KnownDevice),
    maxAgeMs: DEVICE_DAYS * 86_400_000,
    sameSite: 'strict' as const,
  });

  /**
   * Takes a sign-in attempt's points (the address's, and the email's or, from a browser the person signed in with
   * before, that browser's) before any hashing: a 429 with Retry-After once either is spent.
   */
  async function takeAttempt(ctx: RequestContext, email: string) {
    const device = await knownDevice(ctx, email);
    const wait = (await byAddress.take(ctx.client.address)) ?? (device ? await byDevice.take(device.id) : await byEmail.take(email));
    if (wait) throw new HttpError(429, 'Too many sign-ins; wait and try again', undefined, { 'Retry-After': String(wait) });
    return {
      device,
      /** The attempt was refused before hashing (busy): its points are given back. */
      refund: () => Promise.all([byAddress.give(ctx.client.address), device ? byDevice.give(device.id) : byEmail.give(email)]),
      /**
       * It signed in: the address's point back, and the count it was under cleared (the browser's, or the email's when
       * it came without one: a sign-in from a known browser leaves what others spent on the email as it is).
       */
      succeeded: () => Promise.all([byAddress.give(ctx.client.address), device ? byDevice.clear(device.id) : byEmail.clear(email)]),
    };
  }

  /** Runs `fn`; when hashing is past its limits, the attempt's points are given back and the 503 goes on. */
  async function hashingOrRefund<T>(attempt: { refund: () => Promise<unknown> }, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof HashingBusy) await attempt.refund();
      throw err;
    }
  }

  /** A signed-in person's own password checked: limited per person (a session guessing it gets a 429, as sign-ins do). */
  async function takeGuess(user: UserRow) {
    const wait = await byGuesses.take(user.id);
    if (wait) throw new HttpError(429, 'Too many wrong passwords or codes; wait and try again', undefined, { 'Retry-After': String(wait) });
    return { refund: () => byGuesses.give(user.id), succeeded: () => byGuesses.clear(user.id) };
  }
  async function provePassword(user: UserRow, password: string | undefined, wrong: string) {
    const guess = await takeGuess(user);
    if (!(password && (await hashingOrRefund(guess, () => passwordMatches(user.password_hash, password)))))
      throw new HttpError(401, wrong, { reason: 'credentials' });
    await guess.succeeded();
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/auth/sign-in',
      operationId: 'signIn',
      tag,
      access: 'public',
      errors: [400, 401, 429, 503],
      summary: 'Sign in with email and password (and the second factor when it is on): sets the session cookie',
      description:
        'A wrong email or password is the same 401 (`attributes.reason: "credentials"`). With the second factor on, no `code` is a 401 with ' +
        '`reason: "second-factor"` that asks for it (a step, not a failed sign-in: neither logged nor counted); a wrong `code` is a counted, ' +
        'logged failure with the same reason and the field error at `body.code`. Attempts are limited per email and per client address (a 429 with Retry-After, before any password is ' +
        'checked); a browser that signed in as the person before is limited on its own, so failures by others do not lock the person out. ' +
        'Past the hashes the service runs at once, a 503 with Retry-After.',
      schema: { body: Type.Object({ email: Email, password: Password, code: Type.Optional(Code) }, { additionalProperties: false }), responses: { 200: Me } },
      handler: async ({ body, context }) => {
        const email = body.email.trim().toLowerCase();
        const attempt = await takeAttempt(context, email);
        const user = await findUserByEmail(sql, email);
        const ok = await hashingOrRefund(attempt, async () =>
          user?.password_hash ? passwordMatches(user.password_hash, body.password) : (await passwordMatches(await decoyHash(), body.password), false),
        );
        const failed = async (reason: 'credentials' | 'code') => {
          if (user) await auditUser(user.id, 'signInFailed', context, user.email, 401);
          else await audit(null, 'signInFailed', context, null, 401);
          return reason === 'credentials'
            ? new HttpError(401, 'Wrong email or password', { reason })
            : new HttpError(401, 'That code is not right: enter the code your authenticator app shows now, or a recovery code', {
                reason: 'second-factor',
                errors: [{ field: 'body.code', rule: 'code', message: 'is not the code your app shows now, nor an unused recovery code' }],
              });
        };
        if (!user || !ok) throw await failed('credentials');
        if (user.totp_enabled_at && !body.code) {
          // The right password, and the second factor still to come: a step of the sign-in, not a failed one (not logged, not counted).
          await attempt.refund();
          throw new HttpError(401, 'The second factor is on: send the code of your authenticator app (or a recovery code)', { reason: 'second-factor' });
        }
        if (user.totp_enabled_at && !(await secondFactorHolds(sql, user, body.code!))) throw await failed('code');
        await attempt.succeeded();
        const signedIn = await signIn(user, context, 'signIn');
        return { ...signedIn, cookies: [...signedIn.cookies, await deviceCookie(email)] };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/sign-in/second-factor',
      operationId: 'finishSignInWithSecondFactor',
      tag,
      access: 'public',
      errors: [400, 401, 429],
      summary: "Finish a sign-in through an account's OpenID provider with your own second factor (the provider's sign-in sent you here)",
      description: 'The code of your authenticator app, or a recovery code; the sign-in must have started within five minutes in this browser.',
      schema: { body: Type.Object({ code: Code }, { additionalProperties: false }), responses: { 200: Me } },
      handler: async ({ body, context }) => {
        const pending = unseal<PendingSignIn>(await stateSecret(), context.cookie(PENDING_COOKIE), 300_000);
        const user = pending ? await findUser(sql, pending.userId) : undefined;
        if (!pending || !user) throw new HttpError(401, 'No sign-in waits for a code here, or it took too long: sign in again', { reason: 'state' });
        const attempt = await takeAttempt(context, user.email);
        if (!(user.totp_enabled_at && (await secondFactorHolds(sql, user, body.code)))) {
          await audit(pending.accountId, 'signInFailed', context, { id: user.id, email: user.email }, 401);
          throw new HttpError(401, 'That is not the code of your authenticator app (or an unused recovery code)', { reason: 'second-factor' });
        }
        await attempt.succeeded();
        const signedIn = await signIn(user, context, 'signInWithOidc', { accountId: pending.accountId, secondFactor: 'totp' });
        return { ...signedIn, cookies: [...signedIn.cookies, { name: PENDING_COOKIE, value: null }] };
      },
    }),
    ...(['GET', 'POST'] as const).map((method) =>
      defineRoute({
        method,
        path: '/v1/auth/sign-in/link',
        operationId: method === 'GET' ? 'signInWithLink' : 'signInWithLinkPost',
        tag,
        access: 'public',
        errors: [400, 401],
        summary: 'Sign in once with a link (what `npm run cli -- create-user` prints): a new session; GET then goes to /',
        schema:
          method === 'GET'
            ? { query: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }) }, { additionalProperties: false }), responses: { 303: null } }
            : { body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }) }, { additionalProperties: false }), responses: { 200: Me } },
        handler: async ({ query, body, context }) => {
          const token = method === 'GET' ? (query as { token: string }).token : (body as { token: string }).token;
          const userId = await consumeUserToken(sql, token, 'sign-in');
          const user = userId ? await findUser(sql, userId) : undefined;
          if (!user) throw new HttpError(401, 'This sign-in link is unknown, used or expired: ask for a new one', { reason: 'link' });
          const signedIn = await signIn(user, context, 'signInWithLink');
          return method === 'GET' ? { status: 303, headers: { Location: '/' }, cookies: signedIn.cookies } : signedIn;
        },
      }),
    ),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/sign-out',
      operationId: 'signOut',
      tag,
      access: 'public',
      errors: [403],
      summary: 'End this session (the cookie stops working everywhere at once); without a live session, only the cookie is cleared',
      description: `Like every write made with the session cookie it needs the CSRF token (${CSRF_HEADER}) or this service's Origin.`,
      schema: {
        headers: Type.Object({ [CSRF_HEADER]: Type.Optional(Type.String({ maxLength: 200 })), origin: Type.Optional(Type.String({ maxLength: 2048 })) }),
        responses: { 204: null },
      },
      handler: async ({ headers, context }) => {
        const token = context.cookie(SESSION_COOKIE);
        const session = token && /^[\w-]{20,100}$/.test(token) ? await sessionByToken(sql, token) : undefined;
        if (session) {
          const user = await findUser(sql, session.user_id);
          const record = (status: number) =>
            user ? auditUser(user.id, 'signOut', context, user.email, status, session.account_id ?? undefined) : Promise.resolve();
          if (
            !fromOwnPages({ csrfToken: headers[CSRF_HEADER] ?? '', origin: headers.origin ?? '' }, context.client.origin, session.csrf_token, config.publicUrl)
          ) {
            await record(403);
            throw new HttpError(403, `A write made with a session cookie needs its CSRF token (${CSRF_HEADER}) or this service's Origin`);
          }
          await endSession(sql, session.id);
          await record(204);
        }
        return { status: 204, cookies: [sessionCookie(null)] };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/auth/session',
      operationId: 'getSession',
      tag,
      access: 'read',
      personal: true,
      summary: 'Who is signed in: the person, the account this request acts for and their role in it, their accounts, the CSRF token',
      schema: { responses: { 200: Me } },
      handler: async ({ principal }) => {
        const user = await personOf(principal);
        const body = await me(user, principal.account.id, (principal as Principal & { csrfToken?: string }).csrfToken ?? null, {
          onlyAccountId: principal.onlyAccountId,
          // A session whose provider's MFA stands in does not miss one (resolveSession said so).
          secondFactorByProvider: Boolean(principal.onlyAccountId && !principal.secondFactorMissing),
        });
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/password',
      operationId: 'changePassword',
      tag,
      access: 'read',
      personal: true,
      errors: [400, 401, 403, 429, 503],
      summary: 'Change your password: every other session of yours ends (and, with revokeApiKeys, every API key of yours)',
      description:
        "A person who has no password yet sets one without `currentPassword`, but not in a session made by an account's OpenID provider (403). " +
        'Wrong current passwords are limited per person, as sign-ins are (429).',
      schema: {
        body: Type.Object(
          {
            currentPassword: Type.Optional(Password),
            newPassword: Password,
            revokeApiKeys: Type.Optional(Type.Boolean({ default: false, description: 'Also revoke every API key of yours' })),
          },
          { additionalProperties: false },
        ),
        responses: { 204: null },
      },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        if (!user.password_hash) notThroughProvider(principal, 'set a first password');
        if (user.password_hash) await provePassword(user, body.currentPassword, 'The current password is wrong');
        const problem = passwordProblem(body.newPassword, user.email);
        if (problem) throw badRequest(`body.newPassword ${problem}`, { errors: [{ field: 'body.newPassword', rule: 'password', message: problem }] });
        await setPassword(sql, user.id, await hashPassword(body.newPassword));
        await endUserSessions(sql, user.id, principal.sessionId ?? undefined);
        if (body.revokeApiKeys) await revokeAllUserKeys(sql, user.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/password-reset',
      operationId: 'requestPasswordReset',
      tag,
      access: 'public',
      errors: [400, 429],
      summary: 'Mail a password-reset link (valid one hour, single use) to the address, if a person has it; the answer is the same either way',
      description: 'Limited per client address (10 in 15 minutes) and per email (3 in 15 minutes, whoever asks): a 429 with Retry-After.',
      rateLimit: { points: 10, windowSeconds: 900 },
      schema: { body: Type.Object({ email: Email }, { additionalProperties: false }), responses: { 202: null } },
      handler: async ({ body, context }) => {
        const wait = await resetsByEmail.take(body.email.trim().toLowerCase());
        if (wait) throw new HttpError(429, 'Too many resets asked for this address; wait and try again', undefined, { 'Retry-After': String(wait) });
        const user = await findUserByEmail(sql, body.email);
        if (user) {
          // In the person's accounts' logs: someone asked (who, from where), though the answer says nothing.
          await auditUser(user.id, 'requestPasswordReset', context, user.email, 202);
          const token = await createUserToken(sql, user.id, 'password-reset', 3_600_000);
          await queueMail(sql, {
            to: user.email,
            kind: 'password-reset',
            subject: 'Reset your password',
            body:
              `Someone (we hope you) asked to reset the password of ${user.email}.\n\nSet a new one within an hour (the link works once):\n\n` +
              `${publicUrl()}/reset-password?token=${token}\n\nor with the API: POST ${publicUrl()}/v1/auth/password-reset/confirm and this token:\n\n${token}\n\n` +
              'If it was not you, ignore this mail: your password stays.',
          });
        }
        return { status: 202 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/password-reset/confirm',
      operationId: 'resetPassword',
      tag,
      access: 'public',
      errors: [400, 401, 503],
      summary: "Set a new password with a reset link's token: every session and every API key of the person ends",
      schema: {
        body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }), password: Password }, { additionalProperties: false }),
        responses: { 204: null },
      },
      handler: async ({ body, context }) => {
        const probe = passwordProblem(body.password);
        if (probe) throw badRequest(`body.password ${probe}`, { errors: [{ field: 'body.password', rule: 'password', message: probe }] });
        const userId = await consumeUserToken(sql, body.token, 'password-reset');
        const user = userId ? await findUser(sql, userId) : undefined;
        if (!user) throw new HttpError(401, 'This reset link is unknown, used or expired: ask for a new one', { reason: 'link' });
        const problem = passwordProblem(body.password, user.email);
        if (problem) throw badRequest(`body.password ${problem}`, { errors: [{ field: 'body.password', rule: 'password', message: problem }] });
        await setPassword(sql, user.id, await hashPassword(body.password));
        await endUserSessions(sql, user.id);
        // Whoever had the old password may have made keys with it: a reset ends them too.
        await revokeAllUserKeys(sql, user.id);
        await auditUser(user.id, 'resetPassword', context, user.email, 204);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/two-factor/setup',
      operationId: 'setUpTwoFactor',
      tag,
      access: 'read',
      personal: true,
      errors: [403, 409],
      summary: 'Start setting up a second factor: a new TOTP secret and its otpauth:// URI for an authenticator app (on once confirmed)',
      description:
        "In a session made by an account's OpenID provider, only a person who has no password sets one up (403 otherwise: sign in with the password).",
      schema: { responses: { 200: Type.Object({ secret: Type.String(), uri: Type.String() }) } },
      handler: async ({ principal }) => {
        const user = await personOf(principal);
        if (user.password_hash) notThroughProvider(principal, 'set up a second factor');
        if (user.totp_enabled_at) throw conflict('The second factor is on already: turn it off first to set up another');
        const secret = new OTPAuth.Secret({ size: 20 }).base32;
        await setTotpSecret(sql, user.id, secret);
        return { status: 200, body: { secret, uri: totpOf({ email: user.email, totp_secret: secret })!.toString() } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/two-factor/enable',
      operationId: 'enableTwoFactor',
      tag,
      access: 'read',
      personal: true,
      errors: [400, 409],
      summary: 'Confirm the second factor with a code of the app: it is on, and ten recovery codes are shown once',
      schema: {
        body: Type.Object({ code: Type.String({ pattern: '^\\d{6}$' }) }, { additionalProperties: false }),
        responses: { 200: Type.Object({ recoveryCodes: Type.Array(Type.String()) }) },
      },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        const totp = totpOf(user);
        if (!totp || user.totp_enabled_at) throw conflict('Set up the second factor first (POST /v1/auth/two-factor/setup)');
        const step = totpStep(totp, body.code);
        if (step === undefined)
          throw badRequest('body.code is not the code the app shows now', {
            errors: [{ field: 'body.code', rule: 'code', message: 'is not the code the app shows now' }],
          });
        const codes = Array.from({ length: 10 }, () =>
          randomBytes(5)
            .toString('hex')
            .replace(/(.{5})/, '$1-'),
        );
        await transaction(sql, async (tx) => {
          await enableTotp(tx, user.id, codes.map(hashCode));
          await takeTotpStep(tx, user.id, step);
        });
        return { status: 200, body: { recoveryCodes: codes } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/auth/two-factor/disable',
      operationId: 'disableTwoFactor',
      tag,
      access: 'read',
      personal: true,
      errors: [401, 409, 429, 503],
      summary: 'Turn the second factor off (your password, or a code, proves it is you)',
      description: 'Wrong passwords and codes are limited per person, as sign-ins are (429).',
      schema: {
        body: Type.Object({ password: Type.Optional(Password), code: Type.Optional(Code) }, { additionalProperties: false }),
        responses: { 204: null },
      },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        const guess = await takeGuess(user);
        const proved =
          (body.password && (await hashingOrRefund(guess, () => passwordMatches(user.password_hash, body.password!)))) ||
          (body.code && (await secondFactorHolds(sql, user, body.code)));
        if (!proved) throw new HttpError(401, 'Your password or a code is needed to turn the second factor off', { reason: 'credentials' });
        await guess.succeeded();
        const requiring = (await accountsOf(sql, principal)).filter((a) => a.requireTwoFactor);
        if (requiring.length) throw conflict(`${requiring.map((a) => a.name).join(', ')} requires a second factor: it stays on while you are a member`);
        await disableTotp(sql, user.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/auth/sign-in/options',
      operationId: 'getSignInOptions',
      tag,
      access: 'public',
      errors: [400],
      summary: 'How people sign in here: a password, and the OpenID Connect provider of the default account (or of `account`) when it has one',
      schema: {
        query: Type.Object({ account: Type.Optional(Type.String({ format: 'uuid' })) }, { additionalProperties: false }),
        responses: { 200: Type.Object({ password: Type.Boolean(), oidc: Nullable(Type.Object({ startUrl: Type.String() })) }) },
      },
      handler: async ({ query }) => {
        const accountId = query.account?.toLowerCase() ?? (await defaultAccount(sql))?.id;
        const settings = accountId ? await oidcOf(accountId) : undefined;
        return { status: 200, body: { password: true, oidc: settings ? { startUrl: `/v1/auth/oidc/${accountId}/start` } : null } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/auth/oidc/{accountId}/start',
      operationId: 'startOidcSignIn',
      tag,
      access: 'public',
      errors: [400, 404, 502],
      summary: "Sign in with the account's OpenID Connect provider: redirects there (authorization code, PKCE, state, nonce)",
      description: '`redirect` is where the browser goes once signed in: a path of this service (anything else is a 400).',
      schema: {
        params: Type.Object({ accountId: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        query: Type.Object({ redirect: Type.String({ maxLength: 1024, default: '/' }) }, { additionalProperties: false }),
        responses: { 302: null },
      },
      handler: async ({ params, query }) => {
        const redirect = ownPath(query.redirect, 'query.redirect');
        const accountId = params.accountId.toLowerCase();
        const settings = await oidcOf(accountId);
        if (!settings) throw notFound();
        const { url, cookie } = await authorization(accountId, settings, redirect);
        return { status: 302, headers: { Location: url.href }, cookies: [cookie] };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/account/oidc/link',
      operationId: 'linkOidcIdentity',
      tag,
      access: 'read',
      personal: true,
      errors: [400, 403, 404, 502],
      summary: "Link your identity at this account's OpenID provider to yourself: go to `url`; afterwards you can sign in here through the provider",
      description:
        'Only a signed-in person (a session, not a key) links, for themselves. The provider sends the browser back to `redirect` (a path of this ' +
        'service). An identity of the provider already linked to someone else is refused there (409).',
      schema: {
        body: Type.Object({ redirect: Type.Optional(Type.String({ maxLength: 1024 })) }, { additionalProperties: false }),
        responses: { 200: Type.Object({ url: Type.String({ description: "The provider's sign-in page to open in this browser" }) }) },
      },
      handler: async ({ principal, body }) => {
        if (!principal.sessionId || !principal.userId)
          throw new HttpError(403, 'Link your identity in a browser, signed in as yourself (not with a key)', { reason: 'session' });
        const redirect = ownPath(body.redirect ?? '/settings', 'body.redirect');
        const settings = await oidcOf(principal.account.id);
        if (!settings) throw notFound();
        const { url, cookie } = await authorization(principal.account.id, settings, redirect, { userId: principal.userId, sessionId: principal.sessionId });
        return { status: 200, body: { url: url.href }, cookies: [cookie] };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/auth/oidc/callback',
      operationId: 'finishOidcSignIn',
      tag,
      access: 'public',
      errors: [400, 401, 403, 409, 502],
      summary: 'Where the provider sends the person back: the ID token is checked, the person signed in as the identity bound to them (or linked)',
      description:
        "A person signs in through an account's provider only as the identity (issuer, subject) bound to them in that account: the one the provider " +
        'made them with, or one they linked themselves (POST /v1/account/oidc/link). An email the provider asserts never signs in a person who already ' +
        "exists here another way (409). The session acts for that account only. The role comes from the account's roleMap, else its defaultRole; no " +
        'role is a 403 and no membership. A person with a second factor is asked for its code (the browser goes to /sign-in?step=code), unless the ' +
        "account states its provider's MFA stands in (trustProviderMfa).",
      schema: { query: Type.Object({}, { additionalProperties: true }), responses: { 303: null } },
      handler: async ({ context, query }) => {
        const state = openState(await stateSecret(), context.cookie(OIDC_COOKIE));
        if (!state) throw new HttpError(401, 'The sign-in took too long or did not start here: start it again', { reason: 'state' });
        const redirect = sameOriginPath(state.redirect, publicUrl()) ?? '/';
        const settings = await oidcOf(state.accountId);
        if (!settings) throw notFound();
        const provider = await reachProvider(settings);
        const current = new URL(redirectUri());
        for (const [k, v] of Object.entries(query as Record<string, unknown>)) if (typeof v === 'string') current.searchParams.set(k, v);
        let claims: Record<string, unknown>;
        try {
          const tokens = await oidcClient.authorizationCodeGrant(provider, current, {
            pkceCodeVerifier: state.verifier,
            expectedState: state.state,
            expectedNonce: state.nonce,
            idTokenExpected: true,
          });
          claims = (tokens.claims() ?? {}) as Record<string, unknown>;
          // Providers that keep profile claims to userinfo (the ID token holds only sub): ask it, for the same subject.
          if ((typeof claims.email !== 'string' || !(settings.roleClaim in claims) || claims.email_verified === undefined) && tokens.access_token) {
            const info = await oidcClient.fetchUserInfo(provider, tokens.access_token, String(claims.sub));
            claims = { ...(info as Record<string, unknown>), ...claims };
          }
        } catch (err) {
          await audit(state.accountId, 'signInFailed', context, null, 401);
          throw new HttpError(401, `The provider's answer did not hold: ${(err as Error).message}`, { reason: 'oidc' });
        }
        const email = typeof claims.email === 'string' ? claims.email.trim() : '';
        // Only an email the provider says it verified: one it does not speak of is not verified.
        if (!email || claims.email_verified !== true) {
          await audit(state.accountId, 'signInFailed', context, null, 401);
          throw new HttpError(401, 'The provider gave no verified email for this person', { reason: 'oidc' });
        }
        const identity = { accountId: state.accountId, issuer: String(claims.iss), subject: String(claims.sub), email };
        const done = { name: OIDC_COOKIE, value: null };

        if (state.link) {
          // A signed-in person links this identity to themselves: their session must still be the one that asked.
          const token = context.cookie(SESSION_COOKIE);
          const session = token && /^[\w-]{20,100}$/.test(token) ? await sessionByToken(sql, token) : undefined;
          if (!session || session.id !== state.link.sessionId || !(await findMember(sql, state.accountId, state.link.userId))) {
            throw new HttpError(401, 'Link your identity while signed in, in the browser that asked for it: start again', { reason: 'state' });
          }
          const linked = await linkIdentity(sql, { ...identity, userId: state.link.userId });
          const user = await findUser(sql, state.link.userId);
          await audit(state.accountId, 'linkOidcIdentity', context, user ? { id: user.id, email: user.email } : null, linked ? 200 : 409);
          if (!linked) throw conflict('This identity at the provider is linked to another person here: sign in as them, or unlink it there');
          return { status: 303, headers: { Location: redirect }, cookies: [done] };
        }

        const role = roleFromClaims(settings, claims);
        const refused = (status: 403 | 409, message: string, attributes: Record<string, unknown>) =>
          Object.assign(new HttpError(status, message, attributes), { refusal: true });
        let userId: string;
        try {
          userId = await transaction(sql, async (tx) => {
            let id = await identityUser(tx, identity.accountId, identity.issuer, identity.subject, email);
            if (!id) {
              const made = await createUser(tx, email, typeof claims.name === 'string' ? claims.name.slice(0, 200) : '');
              if (made) id = made.id;
              else {
                // A person with this email exists: only one who signed in through this account's provider before identities were bound
                // (once), never anyone else, whatever the provider asserts.
                const existing = await findUserByEmail(tx, email);
                if (!existing || !(await takeUnbound(tx, identity.accountId, existing.id))) {
                  throw refused(
                    409,
                    `A person with this email already signs in here another way. Sign in as them (password or link), then link this provider under Settings → Profile`,
                    { reason: 'not-linked' },
                  );
                }
                id = existing.id;
              }
              if (!(await linkIdentity(tx, { ...identity, userId: id })))
                throw refused(409, 'This identity was linked to another person a moment ago: start again', { reason: 'not-linked' });
            }
            const member = await findMember(tx, identity.accountId, id, true);
            if (member?.role === 'OWNER') return id;
            if (!role) throw refused(403, `Your groups (${settings.roleClaim}) give you no role in this account`, { reason: 'role' });
            await addMember(tx, identity.accountId, id, role);
            return id;
          });
        } catch (err) {
          if ((err as { refusal?: boolean }).refusal) await audit(state.accountId, 'signInFailed', context, { id: null, email }, (err as HttpError).status);
          throw err;
        }
        const user = (await findUser(sql, userId))!;
        if (user.totp_enabled_at && !settings.trustProviderMfa) {
          // The person's own second factor stands: the browser brings its code to /sign-in, which finishes the sign-in.
          const pending = seal(await stateSecret(), { at: Date.now(), userId, accountId: identity.accountId, redirect } satisfies PendingSignIn);
          return {
            status: 303,
            headers: { Location: `/sign-in?step=code&next=${encodeURIComponent(redirect)}` },
            cookies: [done, { name: PENDING_COOKIE, value: pending, maxAgeMs: 300_000, sameSite: 'strict' as const }],
          };
        }
        const signedIn = await signIn(user, context, 'signInWithOidc', {
          accountId: identity.accountId,
          secondFactor: settings.trustProviderMfa ? 'provider' : null,
        });
        return { status: 303, headers: { Location: redirect }, cookies: [...signedIn.cookies, done] };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/users/me/identities',
      operationId: 'listUserIdentities',
      tag,
      access: 'read',
      personal: true,
      summary: "Your identities at accounts' OpenID providers: each signs you in to its account only",
      schema: { responses: { 200: Type.Array(Identity) } },
      handler: async ({ principal }) => {
        const user = await personOf(principal);
        return { status: 200, body: (await listIdentities(sql, user.id, principal.onlyAccountId)).map(toIdentity) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/users/me/identities/{id}',
      operationId: 'unlinkUserIdentity',
      tag,
      access: 'read',
      personal: true,
      errors: [404],
      summary: 'Unlink one of your identities: its provider no longer signs you in',
      schema: { params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }), responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const user = await personOf(principal);
        if (!(await unlinkIdentity(sql, user.id, params.id.toLowerCase(), principal.onlyAccountId))) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/account/oidc',
      operationId: 'getAccountOidc',
      tag: 'Account',
      access: 'admin',
      errors: [404],
      summary: "The account's OpenID Connect sign-in (its client secret is never shown)",
      schema: { responses: { 200: OidcView } },
      handler: async ({ principal }) => {
        const s = await oidcOf(principal.account.id);
        if (!s) throw notFound();
        return { status: 200, body: oidcView(principal.account.id, s) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/account/oidc',
      operationId: 'setAccountOidc',
      tag: 'Account',
      access: 'admin',
      errors: [400],
      summary: 'Sign people of this account in with an OpenID Connect provider; their groups give their role (just-in-time membership)',
      description:
        'The issuer is reached through the outbound policy (docs/outbound.md), and its discovery document is read now: an issuer that is not a ' +
        'reachable provider is a 400 naming why. Register the redirect URI `<PUBLIC_URL>/v1/auth/oidc/callback` at the provider.',
      schema: { body: OidcBody, responses: { 200: OidcView } },
      handler: async ({ principal, body }) => {
        const why = deps.outbound.urlRefusal(body.issuer);
        if (why)
          throw badRequest(`body.issuer: blocked by outbound policy: ${why}`, {
            errors: [{ field: 'body.issuer', rule: 'outbound', message: `blocked by outbound policy: ${why}` }],
          });
        const settings: OidcSettings = { ...body, defaultRole: body.defaultRole ?? null, trustProviderMfa: body.trustProviderMfa ?? false, source: 'account' };
        forgetProvider(settings);
        try {
          await providerConfig(settings, deps.outbound.dispatcher());
        } catch (err) {
          const message = `is not a provider this service can use: ${causes(err)}`;
          throw badRequest(`body.issuer ${message}`, { errors: [{ field: 'body.issuer', rule: 'provider', message }] });
        }
        await saveAccountOidc(sql, principal.account.id, settings);
        return { status: 200, body: oidcView(principal.account.id, settings) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/account/oidc',
      operationId: 'deleteAccountOidc',
      tag: 'Account',
      access: 'admin',
      errors: [404],
      summary: "Stop signing this account's people in with its OpenID Connect provider",
      schema: { responses: { 204: null } },
      handler: async ({ principal }) => {
        if (!(await deleteAccountOidc(sql, principal.account.id))) throw notFound();
        return { status: 204 };
      },
    }),
  ];

  function oidcView(accountId: string, s: OidcSettings) {
    return {
      issuer: s.issuer,
      clientId: s.clientId,
      roleClaim: s.roleClaim,
      roleMap: s.roleMap,
      defaultRole: s.defaultRole,
      trustProviderMfa: s.trustProviderMfa,
      startUrl: `${publicUrl()}/v1/auth/oidc/${accountId}/start`,
    };
  }
}

/** An error's message and those of its causes (openid-client wraps what went wrong). */
function causes(err: unknown): string {
  const said: string[] = [];
  for (let e = err as { message?: string; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.message && !said.includes(e.message)) said.push(e.message);
  }
  return said.join(': ') || 'unknown error';
}

/** A one-time sign-in link for `userId` (the CLI's create-user): valid a day. */
export async function signInLink(sql: Sql, publicUrl: string, userId: string): Promise<string> {
  return `${publicUrl}/v1/auth/sign-in/link?token=${await createUserToken(sql, userId, 'sign-in', 86_400_000)}`;
}
