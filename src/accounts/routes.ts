import { Type } from '@sinclair/typebox';
import { HttpError, notFound } from '../http/errors.js';
import { listReply, PageQuery, pageOffset } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import { ACCOUNT_ROLES } from '../model/accounts.js';
import { ROLES } from '../model/secrets.js';
import type { Deps } from '../storage/deps.js';
import type { Sql } from '../storage/postgres.js';
import { anchorAccount, entitlementsOf } from './entitlements.js';
import {
  type Account,
  type ApiKeyRow,
  accountsOf,
  createApiKey,
  findApiKey,
  findOwnApiKey,
  keyName,
  listApiKeys,
  type Principal,
  revokeApiKey,
  setBadgesEnabled,
  setRequireTwoFactor,
} from './repository.js';

const Role = StringEnum(ROLES);

const AccountBody = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: StringEnum(ACCOUNT_ROLES, {
    description: "The caller's role here: a person's, or a service key's as one of the five (read-only → READ_ONLY, read-write → READ_WRITE, admin → ADMIN)",
  }),
  requireTwoFactor: Type.Boolean({ description: 'Members act for the account only with a second factor on' }),
  rateLimit: Type.Object({ points: Type.Integer(), windowSeconds: Type.Integer() }),
  badgesEnabled: Type.Boolean({ description: "Whether the account's check and group status badges (/v1/badges/…) are served" }),
});

const AccountPatch = Type.Object(
  {
    badgesEnabled: Type.Optional(Type.Boolean({ description: "Serve the account's status badges (public SVGs); off by default" })),
    requireTwoFactor: Type.Optional(Type.Boolean({ description: 'Members must turn a second factor on to act for the account (an Owner only)' })),
  },
  { additionalProperties: false },
);

const ApiKeyBody = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: Role,
  maskedKey: Type.String({ description: 'The last characters of the key' }),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdBy: Type.Union([Type.String(), Type.Null()], { description: "Who made it: a person's email, or null (a key or the CLI)" }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Its latest use (stamped at most once a minute)' }),
  expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const CreatedApiKeyBody = Type.Intersect([ApiKeyBody, Type.Object({ key: Type.String({ description: 'The key itself; shown only in this response' }) })]);

const KeyParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

const AnchorAccount = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    runtimeId: Type.String({ description: 'Runtime of checks that name none' }),
    plan: Type.String(),
    planDisplayName: Type.String(),
    addons: Type.Object({}, { additionalProperties: true }),
    settings: Type.Object({}, { additionalProperties: true }),
    alertSettings: Type.Object({}, { additionalProperties: true, description: 'What checks with useGlobalAlertSettings alert by' }),
    features: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

const Entitlements = Type.Object(
  {
    plan: Type.String(),
    planDisplayName: Type.String(),
    addons: Type.Object({}, { additionalProperties: true }),
    locations: Type.Object({
      all: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), available: Type.Boolean() }, { additionalProperties: false })),
    }),
    entitlements: Type.Array(
      Type.Object(
        {
          key: Type.String(),
          name: Type.String(),
          description: Type.String(),
          type: StringEnum(['flag', 'metered'] as const),
          enabled: Type.Boolean(),
          quantity: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const AccountParams = Type.Object({ accountId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

/** An account the calling key is a member of; any other id names nothing this key can see. */
async function memberAccount(sql: Sql, principal: Principal, accountId: string) {
  if (accountId.toLowerCase() === principal.account.id) return principal.account;
  const account = (await accountsOf(sql, principal)).find((a) => a.id === accountId.toLowerCase());
  if (!account) throw notFound();
  return account;
}

function maskKey(suffix: string): string {
  return `mk_****${suffix}`;
}

/** The caller's account and the API keys that act for it. Managing keys needs an admin key. */
export function accountRoutes({ sql, config }: Deps): AnyRoute[] {
  const accountBody = (principal: Principal, account: Account) => ({
    id: account.id,
    name: account.name,
    role: principal.role,
    rateLimit: {
      points: account.rateLimitPoints ?? config.rateLimit.points,
      windowSeconds: account.rateLimitWindowSeconds ?? config.rateLimit.windowSeconds,
    },
    badgesEnabled: account.badgesEnabled,
    requireTwoFactor: account.requireTwoFactor,
  });
  const keyBody = (r: ApiKeyRow) => ({
    id: r.id,
    name: r.name,
    role: r.role,
    maskedKey: maskKey(r.key_suffix),
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null,
    createdBy: r.created_by ?? null,
    lastUsedAt: r.last_used_at ? r.last_used_at.toISOString() : null,
    expiresAt: r.expires_at ? r.expires_at.toISOString() : null,
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/account',
      operationId: 'getAccount',
      summary: 'The account this request acts for, and the caller role in it',
      tag: 'Account',
      access: 'read',
      schema: { responses: { 200: AccountBody } },
      handler: ({ principal }) => ({ status: 200, body: accountBody(principal, principal.account) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/account',
      operationId: 'updateAccount',
      summary: "Change the account's settings: whether its status badges are served, whether members need a second factor",
      tag: 'Account',
      access: 'admin',
      schema: { body: AccountPatch, responses: { 200: AccountBody } },
      errors: [403],
      handler: async ({ principal, body }) => {
        if (body.requireTwoFactor !== undefined && principal.role !== 'OWNER')
          throw new HttpError(403, 'Only an Owner decides whether members need a second factor');
        if (body.badgesEnabled !== undefined) await setBadgesEnabled(sql, principal.account.id, body.badgesEnabled);
        if (body.requireTwoFactor !== undefined) await setRequireTwoFactor(sql, principal.account.id, body.requireTwoFactor);
        return {
          status: 200,
          body: accountBody(principal, {
            ...principal.account,
            badgesEnabled: body.badgesEnabled ?? principal.account.badgesEnabled,
            requireTwoFactor: body.requireTwoFactor ?? principal.account.requireTwoFactor,
          }),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/api-keys',
      operationId: 'listApiKeys',
      summary: 'List the API keys that are members of this account',
      tag: 'Account',
      access: 'admin',
      schema: { query: PageQuery, responses: { 200: Type.Array(ApiKeyBody) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listApiKeys(sql, principal.account.id, query.limit, pageOffset(query));
        return listReply(rows.map(keyBody), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key for this account; the key is returned once',
      tag: 'Account',
      access: 'admin',
      schema: {
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), role: Type.Optional(Role) }, { additionalProperties: false }),
        responses: { 201: CreatedApiKeyBody },
      },
      handler: async ({ principal, body }) => {
        const role = body.role ?? 'read-write';
        const created = await createApiKey(sql, { accountId: principal.account.id, role, name: body.name, createdByUserId: principal.userId });
        const row = await findApiKey(sql, principal.account.id, created.id);
        return { status: 201, body: { ...keyBody(row!), key: created.key } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/api-keys/{id}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key of this account; it stops authenticating at once',
      tag: 'Account',
      access: 'admin',
      errors: [404],
      schema: { params: KeyParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        // Only a key whose home is this account; a key shared into it is revoked by its own account.
        const row = await findOwnApiKey(sql, principal.account.id, params.id);
        if (!row || row.revoked_at) throw notFound();
        await revokeApiKey(sql, params.id);
        return { status: 204 };
      },
    }),
    ...[
      { path: '/v1/accounts', operationId: 'listAccounts' },
      { path: '/next/accounts', operationId: 'listAccountsNext' },
    ].map(({ path, operationId }) =>
      defineRoute({
        method: 'GET',
        path,
        operationId,
        summary: 'The accounts the caller (a key, or a signed-in person) may act for',
        tag: 'Account',
        access: 'read',
        schema: { responses: { 200: Type.Array(AnchorAccount) } },
        handler: async ({ principal }) => ({ status: 200, body: (await accountsOf(sql, principal)).map(anchorAccount) }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/accounts/me',
      operationId: 'getCurrentAccount',
      summary: "The account this request acts for, in the anchor API's shape",
      tag: 'Account',
      access: 'read',
      schema: { responses: { 200: AnchorAccount } },
      handler: ({ principal }) => ({ status: 200, body: anchorAccount(principal.account) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/accounts/me/entitlements',
      operationId: 'getCurrentAccountEntitlements',
      summary: 'What this account may use: its plan, locations and the limits this service enforces for it',
      tag: 'Account',
      access: 'read',
      schema: { responses: { 200: Entitlements } },
      handler: ({ principal }) => ({ status: 200, body: entitlementsOf(principal.account, config) }),
    }),
    ...['/v1/accounts/{accountId}', '/next/accounts/{accountId}'].map((path, i) =>
      defineRoute({
        method: 'GET',
        path,
        operationId: i === 0 ? 'getAccountById' : 'getAccountByIdNext',
        summary: 'An account the calling key is a member of (404 for any other)',
        description: "The anchor's CLI calls the /next form before every authenticated command.",
        tag: 'Account',
        access: 'read',
        errors: [404],
        schema: { params: AccountParams, responses: { 200: AnchorAccount } },
        handler: async ({ principal, params }) => ({ status: 200, body: anchorAccount(await memberAccount(sql, principal, params.accountId)) }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/accounts/{accountId}/entitlements',
      operationId: 'getAccountEntitlements',
      summary: 'Entitlements of an account the calling key is a member of',
      tag: 'Account',
      access: 'read',
      errors: [404],
      schema: { params: AccountParams, responses: { 200: Entitlements } },
      handler: async ({ principal, params }) => ({ status: 200, body: entitlementsOf(await memberAccount(sql, principal, params.accountId), config) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/next/users/me',
      operationId: 'getCurrentUser',
      summary: "Who is calling: the signed-in person (or a user key's owner), else the service key (its id and name)",
      tag: 'Account',
      access: 'read',
      schema: { responses: { 200: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }, { additionalProperties: false }) } },
      handler: async ({ principal }) => ({
        status: 200,
        body: { id: principal.actor.id, name: principal.actor.name || ((principal.keyId && (await keyName(sql, principal.keyId))) ?? 'api key') },
      }),
    }),
  ];
}
