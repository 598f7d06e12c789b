import { Type } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { notFound } from '../../http/errors.js';
import { listReply, pageOffset, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { StringEnum } from '../../http/schemas.js';
import { ROLES } from '../../model/secrets.js';
import { anchorAccount, entitlementsOf } from '../../accounts/entitlements.js';
import { accountsOfKey, createApiKey, findApiKey, findOwnApiKey, keyName, listApiKeys, revokeApiKey, type ApiKeyRow, type Principal } from '../../accounts/repository.js';
import type { Sql } from '../../storage/postgres.js';

const Role = StringEnum(ROLES);

const AccountBody = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: Role,
  rateLimit: Type.Object({ points: Type.Integer(), windowSeconds: Type.Integer() }),
});

const ApiKeyBody = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  role: Role,
  maskedKey: Type.String({ description: 'The last characters of the key' }),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const CreatedApiKeyBody = Type.Intersect([
  ApiKeyBody,
  Type.Object({ key: Type.String({ description: 'The key itself; shown only in this response' }) }),
]);

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
  const account = (await accountsOfKey(sql, principal.keyId)).find((a) => a.id === accountId.toLowerCase());
  if (!account) throw notFound();
  return account;
}

function maskKey(suffix: string): string {
  return `mk_****${suffix}`;
}

/** The caller's account and the API keys that act for it. Managing keys needs an admin key. */
export function accountRoutes({ sql, config }: Deps): AnyRoute[] {
  const keyBody = (r: ApiKeyRow) => ({
    id: r.id,
    name: r.name,
    role: r.role,
    maskedKey: maskKey(r.key_suffix),
    created_at: r.created_at.toISOString(),
    revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null,
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
      handler: ({ principal }) => ({
        status: 200,
        body: {
          id: principal.account.id,
          name: principal.account.name,
          role: principal.role,
          rateLimit: {
            points: principal.account.rateLimitPoints ?? config.rateLimit.points,
            windowSeconds: principal.account.rateLimitWindowSeconds ?? config.rateLimit.windowSeconds,
          },
        },
      }),
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
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }), role: Type.Optional(Role) },
          { additionalProperties: false },
        ),
        responses: { 201: CreatedApiKeyBody },
      },
      handler: async ({ principal, body }) => {
        const role = body.role ?? 'read-write';
        const created = await createApiKey(sql, { accountId: principal.account.id, role, name: body.name });
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
        summary: 'The accounts the calling key is a member of',
        tag: 'Account',
        access: 'read',
        schema: { responses: { 200: Type.Array(AnchorAccount) } },
        handler: async ({ principal }) => ({ status: 200, body: (await accountsOfKey(sql, principal.keyId)).map(anchorAccount) }),
      }),
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/accounts/me',
      operationId: 'getCurrentAccount',
      summary: 'The account this request acts for, in the anchor API\'s shape',
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
      summary: 'Who is calling: this service authenticates API keys, so the caller is the key (its id and name)',
      tag: 'Account',
      access: 'read',
      schema: { responses: { 200: Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }, { additionalProperties: false }) } },
      handler: async ({ principal }) => ({ status: 200, body: { id: principal.keyId, name: (await keyName(sql, principal.keyId)) ?? 'api key' } }),
    }),
  ];
}
