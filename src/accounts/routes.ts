import { Type } from '@sinclair/typebox';
import type { Deps } from '../deps.js';
import { notFound } from '../http/errors.js';
import { listReply, pageOffset, PageQuery } from '../http/pagination.js';
import { defineRoute, type AnyRoute } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import { ROLES } from './keys.js';
import { createApiKey, findApiKey, findOwnApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from './repository.js';

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
  ];
}
