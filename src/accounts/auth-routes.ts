import { createHash, randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import * as OTPAuth from 'otpauth';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import { CSRF_HEADER, fromOwnPages, SESSION_COOKIE } from '../http/auth.js';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.js';
import { defineRoute, type AnyRoute, type RequestContext } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { ACCOUNT_ROLES, may, type AccountRole, type Principal } from '../model/accounts.js';
import type { Deps } from '../storage/deps.js';
import { transaction, type Sql } from '../storage/postgres.js';
import { serviceSecret } from '../storage/service-secrets.js';
import { recordAudit } from './audit.js';
import { queueMail } from './mail.js';
import { addMember, findMember } from './members.js';
import { deleteAccountOidc, findAccountOidc, oidcClient, openState, providerConfig, roleFromClaims, saveAccountOidc, sealState, type OidcSettings } from './oidc.js';
import { decoyHash, hashPassword, passwordMatches, passwordProblem } from './passwords.js';
import { accountsOf, defaultAccount, findAccount } from './repository.js';
import { createSession, endSession, endUserSessions, sessionByToken } from './sessions.js';
import {
  consumeUserToken, createUserToken, disableTotp, enableTotp, ensureUser, findUser, findUserByEmail, setPassword, setTotpSecret, useRecoveryCode,
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
  secondFactorRequired: Type.Boolean({ description: 'The account requires a second factor this person has not turned on: only their own settings answer until they do' }),
  accounts: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() })),
  csrfToken: Nullable(Type.String({ description: 'Send it as x-csrf-token with every write made with the session cookie' })),
});

const OidcBody = Type.Object(
  {
    issuer: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
    clientId: Type.String({ minLength: 1, maxLength: 512 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 2048, description: 'Never returned' }),
    roleClaim: Type.String({ minLength: 1, maxLength: 128, default: 'groups' }),
    roleMap: Type.Array(Type.Object({ value: Type.String({ minLength: 1, maxLength: 256 }), role: StringEnum(['ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as const) }, { additionalProperties: false }), { maxItems: 50, default: [] }),
    defaultRole: Nullable(StringEnum(['ADMIN', 'READ_WRITE', 'READ_RUN', 'READ_ONLY'] as const, { default: null })),
  },
  { additionalProperties: false },
);
const OidcView = Type.Object({
  issuer: Type.String(),
  clientId: Type.String(),
  roleClaim: Type.String(),
  roleMap: Type.Array(Type.Object({ value: Type.String(), role: Role })),
  defaultRole: Nullable(Role),
  startUrl: Type.String({ description: 'Where people of this account start signing in' }),
});

/** A failure counter per key (email, address): past `points` in 15 minutes, a 429 before any password is checked. */
function failureThrottle(deps: Deps, name: string, points: number) {
  const rule = { keyPrefix: `${deps.config.redisPrefix}rl:${name}`, points, duration: 900 };
  const limiter = new RateLimiterRedis({ ...rule, storeClient: deps.redis, insuranceLimiter: new RateLimiterMemory(rule) });
  return {
    async blocked(key: string): Promise<number | undefined> {
      const res = await limiter.get(key).catch(() => null);
      return res && res.remainingPoints <= 0 ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : undefined;
    },
    fail: (key: string) => limiter.consume(key).catch(() => undefined),
    reset: (key: string) => limiter.delete(key).catch(() => undefined),
  };
}

const hashCode = (code: string) => createHash('sha256').update(code.replace(/[\s-]/g, '').toLowerCase()).digest();

function totpOf(user: Pick<UserRow, 'email' | 'totp_secret'>): OTPAuth.TOTP | undefined {
  if (!user.totp_secret) return undefined;
  return new OTPAuth.TOTP({ issuer: 'Monitoring', label: user.email, algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(user.totp_secret) });
}

/** A code of the user's authenticator (one step either side), or one of their unused recovery codes (used up). */
async function secondFactorHolds(db: Sql, user: UserRow, code: string): Promise<boolean> {
  const totp = totpOf(user);
  if (!totp) return false;
  if (/^\d{6}$/.test(code.trim()) && totp.validate({ token: code.trim(), window: 1 }) !== null) return true;
  return useRecoveryCode(db, user.id, hashCode(code));
}

export function authRoutes(deps: Deps): AnyRoute[] {
  const { sql, config } = deps;
  const people = config.people;
  const byEmail = failureThrottle(deps, 'sign-in-email', people.signInFailures);
  const byAddress = failureThrottle(deps, 'sign-in-address', people.signInFailures * 5);
  const publicUrl = () => config.publicUrl ?? `http://localhost:${config.port}`;
  let oidcSecret: Promise<Buffer> | undefined;
  const stateSecret = () => (oidcSecret ??= serviceSecret(sql, 'oidc-state').catch((err) => ((oidcSecret = undefined), Promise.reject(err))));

  const sessionCookie = (token: string | null) => ({ name: SESSION_COOKIE, value: token, maxAgeMs: token ? people.sessionAbsoluteMs : undefined });

  const audit = (accountId: string | null, operation: string, ctx: RequestContext, user: { id: string | null; email: string } | null, status: number) =>
    recordAudit(sql, {
      accountId,
      actor: user ? { type: 'user', id: user.id, name: user.email } : { type: 'anonymous', id: null, name: null },
      operation,
      method: ctx.method,
      path: operation === 'signIn' ? '/v1/auth/sign-in' : operation,
      status,
      address: ctx.client.address,
    }).catch((err: Error) => deps.logger.error({ err: err.message }, 'could not record a sign-in'));

  /** Every account the user is a member of gets the entry (a sign-in is into all of them). */
  const auditUser = async (userId: string, operation: string, ctx: RequestContext, email: string, status: number) => {
    const accounts = await accountsOf(sql, { userId } as Principal);
    await Promise.all((accounts.length ? accounts : [null]).map((a) => audit(a?.id ?? null, operation, ctx, { id: userId, email }, status)));
  };

  /** Signs the user in: a new session, the cookie, and what the session may see. */
  async function signIn(user: UserRow, ctx: RequestContext, operation: string) {
    const accounts = await accountsOf(sql, { userId: user.id } as Principal);
    const session = await createSession(sql, user.id, { idleMs: people.sessionIdleMs, absoluteMs: people.sessionAbsoluteMs }, { address: ctx.client.address, userAgent: ctx.client.userAgent });
    await auditUser(user.id, operation, ctx, user.email, 200);
    return {
      status: 200,
      cookies: [sessionCookie(session.token)],
      body: await me(user, accounts[0] ? accounts[0].id : null, session.csrfToken),
    };
  }

  async function me(user: UserRow, accountId: string | null, csrfToken: string | null) {
    const accounts = await accountsOf(sql, { userId: user.id } as Principal);
    const current = accounts.find((a) => a.id === accountId) ?? accounts[0];
    const member = current ? await findMember(sql, current.id, user.id) : undefined;
    return {
      user: { id: user.id, email: user.email, name: user.name, twoFactorEnabled: user.totp_enabled_at !== null },
      account: current && member
        ? { id: current.id, name: current.name, role: member.role, may: { run: may(member.role, 'run'), write: may(member.role, 'write'), admin: may(member.role, 'admin') } }
        : null,
      secondFactorRequired: Boolean(current?.requireTwoFactor && user.totp_enabled_at === null),
      accounts: accounts.map((a) => ({ id: a.id, name: a.name })),
      csrfToken,
    };
  }

  const personOf = async (principal: Principal): Promise<UserRow> => {
    const user = principal.userId ? await findUser(sql, principal.userId) : undefined;
    if (!user) throw new HttpError(403, 'This is for a person: sign in, or use a key of your own');
    return user;
  };

  /** The OpenID Connect provider people of `accountId` sign in with, if any. */
  async function oidcOf(accountId: string): Promise<OidcSettings | undefined> {
    const own = await findAccountOidc(sql, accountId);
    if (own) return own;
    const env = people.oidc;
    if (!env) return undefined;
    const account = await findAccount(sql, accountId);
    return account?.isDefault ? { ...env, roleMap: env.roleMap as OidcSettings['roleMap'], defaultRole: env.defaultRole as AccountRole | null, source: 'environment' } : undefined;
  }
  const redirectUri = () => `${publicUrl()}/v1/auth/oidc/callback`;
  /** The provider's discovery; unreachable or not a provider is a 502 naming why. */
  const reachProvider = (settings: OidcSettings) =>
    providerConfig(settings, deps.outbound.dispatcher()).catch((err: Error) => {
      throw new HttpError(502, `The OpenID provider ${settings.issuer} could not be used: ${err.message}`);
    });

  return [
    defineRoute({
      method: 'POST', path: '/v1/auth/sign-in', operationId: 'signIn', tag, access: 'public', errors: [400, 401, 429],
      summary: 'Sign in with email and password (and the second factor when it is on): sets the session cookie',
      description:
        'A wrong email or password is the same 401 (`attributes.reason: "credentials"`); with the second factor on and no or a wrong `code`, a 401 ' +
        'with `reason: "second-factor"`. Failures are throttled per email and per client address (a 429 with Retry-After, before any password is checked).',
      schema: { body: Type.Object({ email: Email, password: Password, code: Type.Optional(Code) }, { additionalProperties: false }), responses: { 200: Me } },
      handler: async ({ body, context }) => {
        const email = body.email.trim().toLowerCase();
        const wait = (await byEmail.blocked(email)) ?? (await byAddress.blocked(context.client.address));
        if (wait) throw new HttpError(429, 'Too many failed sign-ins; wait and try again', undefined, { 'Retry-After': String(wait) });
        const user = await findUserByEmail(sql, email);
        const ok = user?.password_hash ? await passwordMatches(user.password_hash, body.password) : (await passwordMatches(await decoyHash(), body.password), false);
        const failed = async (reason: 'credentials' | 'second-factor') => {
          await Promise.all([byEmail.fail(email), byAddress.fail(context.client.address)]);
          if (user) await auditUser(user.id, 'signInFailed', context, user.email, 401);
          else await audit(null, 'signInFailed', context, null, 401);
          return new HttpError(401, reason === 'credentials' ? 'Wrong email or password' : 'The second factor is on: send the code of your authenticator app (or a recovery code)', { reason });
        };
        if (!user || !ok) throw await failed('credentials');
        if (user.totp_enabled_at && !(body.code && (await secondFactorHolds(sql, user, body.code)))) throw await failed('second-factor');
        await byEmail.reset(email);
        return signIn(user, context, 'signIn');
      },
    }),
    ...(['GET', 'POST'] as const).map((method) =>
      defineRoute({
        method, path: '/v1/auth/sign-in/link', operationId: method === 'GET' ? 'signInWithLink' : 'signInWithLinkPost', tag, access: 'public', errors: [400, 401],
        summary: 'Sign in once with a link (what `npm run cli -- create-user` prints): a new session; GET then goes to /',
        schema: method === 'GET'
          ? { query: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }) }, { additionalProperties: false }), responses: { 303: null } }
          : { body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }) }, { additionalProperties: false }), responses: { 200: Me } },
        handler: async ({ query, body, context }) => {
          const token = (method === 'GET' ? (query as { token: string }).token : (body as { token: string }).token);
          const userId = await consumeUserToken(sql, token, 'sign-in');
          const user = userId ? await findUser(sql, userId) : undefined;
          if (!user) throw new HttpError(401, 'This sign-in link is unknown, used or expired: ask for a new one', { reason: 'link' });
          const signedIn = await signIn(user, context, 'signInWithLink');
          return method === 'GET' ? { status: 303, headers: { Location: '/' }, cookies: signedIn.cookies } : signedIn;
        },
      }),
    ),
    defineRoute({
      method: 'POST', path: '/v1/auth/sign-out', operationId: 'signOut', tag, access: 'public', errors: [403],
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
          if (!fromOwnPages({ csrfToken: headers[CSRF_HEADER] ?? '', origin: headers.origin ?? '' }, context.client.origin, session.csrf_token, config.publicUrl)) {
            throw new HttpError(403, `A write made with a session cookie needs its CSRF token (${CSRF_HEADER}) or this service's Origin`);
          }
          await endSession(sql, session.id);
        }
        return { status: 204, cookies: [sessionCookie(null)] };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/auth/session', operationId: 'getSession', tag, access: 'read', personal: true,
      summary: 'Who is signed in: the person, the account this request acts for and their role in it, their accounts, the CSRF token',
      schema: { responses: { 200: Me } },
      handler: async ({ principal }) => {
        const user = await personOf(principal);
        const body = await me(user, principal.account.id, (principal as Principal & { csrfToken?: string }).csrfToken ?? null);
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/password', operationId: 'changePassword', tag, access: 'read', personal: true, errors: [400, 401],
      summary: 'Change your password: every other session of yours ends',
      schema: { body: Type.Object({ currentPassword: Type.Optional(Password), newPassword: Password }, { additionalProperties: false }), responses: { 204: null } },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        if (user.password_hash && !(body.currentPassword && (await passwordMatches(user.password_hash, body.currentPassword)))) {
          throw new HttpError(401, 'The current password is wrong', { reason: 'credentials' });
        }
        const problem = passwordProblem(body.newPassword, user.email);
        if (problem) throw badRequest(`body.newPassword ${problem}`, { errors: [{ field: 'body.newPassword', rule: 'password', message: problem }] });
        await setPassword(sql, user.id, await hashPassword(body.newPassword));
        await endUserSessions(sql, user.id, principal.sessionId ?? undefined);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/password-reset', operationId: 'requestPasswordReset', tag, access: 'public', errors: [400, 429],
      summary: 'Mail a password-reset link (valid one hour, single use) to the address, if a person has it; the answer is the same either way',
      rateLimit: { points: 10, windowSeconds: 900 },
      schema: { body: Type.Object({ email: Email }, { additionalProperties: false }), responses: { 202: null } },
      handler: async ({ body }) => {
        const user = await findUserByEmail(sql, body.email);
        if (user) {
          const token = await createUserToken(sql, user.id, 'password-reset', 3_600_000);
          await queueMail(sql, {
            to: user.email,
            kind: 'password-reset',
            subject: 'Reset your password',
            body: `Someone (we hope you) asked to reset the password of ${user.email}.\n\nSet a new one within an hour (the link works once):\n\n` +
              `${publicUrl()}/reset-password?token=${token}\n\nor with the API: POST ${publicUrl()}/v1/auth/password-reset/confirm and this token:\n\n${token}\n\n` +
              'If it was not you, ignore this mail: your password stays.',
          });
        }
        return { status: 202 };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/password-reset/confirm', operationId: 'resetPassword', tag, access: 'public', errors: [400, 401],
      summary: 'Set a new password with a reset link\'s token: every session of the person ends',
      schema: { body: Type.Object({ token: Type.String({ minLength: 20, maxLength: 100 }), password: Password }, { additionalProperties: false }), responses: { 204: null } },
      handler: async ({ body }) => {
        const probe = passwordProblem(body.password);
        if (probe) throw badRequest(`body.password ${probe}`, { errors: [{ field: 'body.password', rule: 'password', message: probe }] });
        const userId = await consumeUserToken(sql, body.token, 'password-reset');
        const user = userId ? await findUser(sql, userId) : undefined;
        if (!user) throw new HttpError(401, 'This reset link is unknown, used or expired: ask for a new one', { reason: 'link' });
        const problem = passwordProblem(body.password, user.email);
        if (problem) throw badRequest(`body.password ${problem}`, { errors: [{ field: 'body.password', rule: 'password', message: problem }] });
        await setPassword(sql, user.id, await hashPassword(body.password));
        await endUserSessions(sql, user.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/two-factor/setup', operationId: 'setUpTwoFactor', tag, access: 'read', personal: true, errors: [409],
      summary: 'Start setting up a second factor: a new TOTP secret and its otpauth:// URI for an authenticator app (on once confirmed)',
      schema: { responses: { 200: Type.Object({ secret: Type.String(), uri: Type.String() }) } },
      handler: async ({ principal }) => {
        const user = await personOf(principal);
        if (user.totp_enabled_at) throw conflict('The second factor is on already: turn it off first to set up another');
        const secret = new OTPAuth.Secret({ size: 20 }).base32;
        await setTotpSecret(sql, user.id, secret);
        return { status: 200, body: { secret, uri: totpOf({ email: user.email, totp_secret: secret })!.toString() } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/two-factor/enable', operationId: 'enableTwoFactor', tag, access: 'read', personal: true, errors: [400, 409],
      summary: 'Confirm the second factor with a code of the app: it is on, and ten recovery codes are shown once',
      schema: { body: Type.Object({ code: Type.String({ pattern: '^\\d{6}$' }) }, { additionalProperties: false }), responses: { 200: Type.Object({ recoveryCodes: Type.Array(Type.String()) }) } },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        const totp = totpOf(user);
        if (!totp || user.totp_enabled_at) throw conflict('Set up the second factor first (POST /v1/auth/two-factor/setup)');
        if (totp.validate({ token: body.code, window: 1 }) === null) throw badRequest('body.code is not the code the app shows now', { errors: [{ field: 'body.code', rule: 'code', message: 'is not the code the app shows now' }] });
        const codes = Array.from({ length: 10 }, () => randomBytes(5).toString('hex').replace(/(.{5})/, '$1-'));
        await transaction(sql, (tx) => enableTotp(tx, user.id, codes.map(hashCode)));
        return { status: 200, body: { recoveryCodes: codes } };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/auth/two-factor/disable', operationId: 'disableTwoFactor', tag, access: 'read', personal: true, errors: [401, 409],
      summary: 'Turn the second factor off (your password, or a code, proves it is you)',
      schema: { body: Type.Object({ password: Type.Optional(Password), code: Type.Optional(Code) }, { additionalProperties: false }), responses: { 204: null } },
      handler: async ({ principal, body }) => {
        const user = await personOf(principal);
        const proved = (body.password && (await passwordMatches(user.password_hash, body.password))) || (body.code && (await secondFactorHolds(sql, user, body.code)));
        if (!proved) throw new HttpError(401, 'Your password or a code is needed to turn the second factor off', { reason: 'credentials' });
        const requiring = (await accountsOf(sql, principal)).filter((a) => a.requireTwoFactor);
        if (requiring.length) throw conflict(`${requiring.map((a) => a.name).join(', ')} requires a second factor: it stays on while you are a member`);
        await disableTotp(sql, user.id);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/auth/sign-in/options', operationId: 'getSignInOptions', tag, access: 'public', errors: [400],
      summary: "How people sign in here: a password, and the OpenID Connect provider of the default account (or of `account`) when it has one",
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
      method: 'GET', path: '/v1/auth/oidc/{accountId}/start', operationId: 'startOidcSignIn', tag, access: 'public', errors: [400, 404, 502],
      summary: "Sign in with the account's OpenID Connect provider: redirects there (authorization code, PKCE, state, nonce)",
      schema: {
        params: Type.Object({ accountId: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        query: Type.Object({ redirect: Type.String({ pattern: '^/(?!/)', maxLength: 1024, default: '/' }) }, { additionalProperties: false }),
        responses: { 302: null },
      },
      handler: async ({ params, query }) => {
        const settings = await oidcOf(params.accountId.toLowerCase());
        if (!settings) throw notFound();
        const config = await reachProvider(settings);
        const state = { accountId: params.accountId.toLowerCase(), state: oidcClient.randomState(), nonce: oidcClient.randomNonce(), verifier: oidcClient.randomPKCECodeVerifier(), redirect: query.redirect, at: Date.now() };
        const url = oidcClient.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri(),
          scope: 'openid email profile',
          response_type: 'code',
          code_challenge: await oidcClient.calculatePKCECodeChallenge(state.verifier),
          code_challenge_method: 'S256',
          state: state.state,
          nonce: state.nonce,
        });
        return { status: 302, headers: { Location: url.href }, cookies: [{ name: OIDC_COOKIE, value: sealState(await stateSecret(), state), maxAgeMs: 600_000 }] };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/auth/oidc/callback', operationId: 'finishOidcSignIn', tag, access: 'public', errors: [400, 401, 403, 502],
      summary: 'Where the provider sends the person back: the ID token is checked, the person made a member (their role from the claims) and signed in',
      description: 'The role comes from the account\'s roleMap (the first entry whose value the roleClaim holds), else its defaultRole; no role is a 403 and no membership. An Owner keeps being one.',
      schema: { query: Type.Object({}, { additionalProperties: true }), responses: { 303: null } },
      handler: async ({ context, query }) => {
        const state = openState(await stateSecret(), context.cookie(OIDC_COOKIE));
        if (!state) throw new HttpError(401, 'The sign-in took too long or did not start here: start it again', { reason: 'state' });
        const settings = await oidcOf(state.accountId);
        if (!settings) throw notFound();
        const config = await reachProvider(settings);
        const current = new URL(redirectUri());
        for (const [k, v] of Object.entries(query as Record<string, unknown>)) if (typeof v === 'string') current.searchParams.set(k, v);
        let claims: Record<string, unknown>;
        try {
          const tokens = await oidcClient.authorizationCodeGrant(config, current, { pkceCodeVerifier: state.verifier, expectedState: state.state, expectedNonce: state.nonce, idTokenExpected: true });
          claims = (tokens.claims() ?? {}) as Record<string, unknown>;
          // Providers that keep profile claims to userinfo (the ID token holds only sub): ask it, for the same subject.
          if ((typeof claims.email !== 'string' || !(settings.roleClaim in claims)) && tokens.access_token) {
            const info = await oidcClient.fetchUserInfo(config, tokens.access_token, String(claims.sub));
            claims = { ...(info as Record<string, unknown>), ...claims };
          }
        } catch (err) {
          await audit(state.accountId, 'signInFailed', context, null, 401);
          throw new HttpError(401, `The provider's answer did not hold: ${(err as Error).message}`, { reason: 'oidc' });
        }
        const email = typeof claims.email === 'string' ? claims.email : '';
        if (!email || claims.email_verified === false) throw new HttpError(401, 'The provider gave no verified email for this person', { reason: 'oidc' });
        const role = roleFromClaims(settings, claims);
        const user = await transaction(sql, async (tx) => {
          const person = await ensureUser(tx, email, typeof claims.name === 'string' ? claims.name : '');
          const member = await findMember(tx, state.accountId, person.id, true);
          if (member?.role === 'OWNER') return person;
          if (!role) return undefined;
          await addMember(tx, state.accountId, person.id, role);
          return person;
        });
        if (!user) {
          await audit(state.accountId, 'signInFailed', context, { id: null, email }, 403);
          throw new HttpError(403, `Your groups (${settings.roleClaim}) give you no role in this account`);
        }
        const signedIn = await signIn(user, context, 'signInWithOidc');
        return { status: 303, headers: { Location: state.redirect }, cookies: [...signedIn.cookies, { name: OIDC_COOKIE, value: null }] };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/account/oidc', operationId: 'getAccountOidc', tag: 'Account', access: 'admin', errors: [404],
      summary: "The account's OpenID Connect sign-in (its client secret is never shown)",
      schema: { responses: { 200: OidcView } },
      handler: async ({ principal }) => {
        const s = await oidcOf(principal.account.id);
        if (!s) throw notFound();
        return { status: 200, body: { issuer: s.issuer, clientId: s.clientId, roleClaim: s.roleClaim, roleMap: s.roleMap, defaultRole: s.defaultRole, startUrl: `${publicUrl()}/v1/auth/oidc/${principal.account.id}/start` } };
      },
    }),
    defineRoute({
      method: 'PUT', path: '/v1/account/oidc', operationId: 'setAccountOidc', tag: 'Account', access: 'admin', errors: [400],
      summary: "Sign people of this account in with an OpenID Connect provider; their groups give their role (just-in-time membership)",
      description: 'The issuer is reached through the outbound policy (docs/outbound.md). Register the redirect URI `<PUBLIC_URL>/v1/auth/oidc/callback` at the provider.',
      schema: { body: OidcBody, responses: { 200: OidcView } },
      handler: async ({ principal, body }) => {
        const why = deps.outbound.urlRefusal(body.issuer);
        if (why) throw badRequest(`body.issuer: blocked by outbound policy: ${why}`, { errors: [{ field: 'body.issuer', rule: 'outbound', message: `blocked by outbound policy: ${why}` }] });
        await saveAccountOidc(sql, principal.account.id, { ...body, defaultRole: body.defaultRole ?? null });
        return { status: 200, body: { issuer: body.issuer, clientId: body.clientId, roleClaim: body.roleClaim, roleMap: body.roleMap, defaultRole: body.defaultRole ?? null, startUrl: `${publicUrl()}/v1/auth/oidc/${principal.account.id}/start` } };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/account/oidc', operationId: 'deleteAccountOidc', tag: 'Account', access: 'admin', errors: [404],
      summary: "Stop signing this account's people in with its OpenID Connect provider",
      schema: { responses: { 204: null } },
      handler: async ({ principal }) => {
        if (!(await deleteAccountOidc(sql, principal.account.id))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}

/** A one-time sign-in link for `userId` (the CLI's create-user): valid a day. */
export async function signInLink(sql: Sql, publicUrl: string, userId: string): Promise<string> {
  return `${publicUrl}/v1/auth/sign-in/link?token=${await createUserToken(sql, userId, 'sign-in', 86_400_000)}`;
}

