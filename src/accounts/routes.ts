import { Type } from '@sinclair/typebox';
import type { Deps } from '../app.js';
import { notFound } from '../http/errors.js';
import { listReply, pageOffset, PageQuery } from '../http/pagination.js';
import { defineRoute, type AnyRoute } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import { ROLES } from './keys.js';
import { createApiKey, revokeApiKey } from './repository.js';

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
  const keyRow = (r: Record<string, unknown>) => ({
    id: r.id as string,
    name: r.name as string,
    role: r.role as (typeof ROLES)[number],
    maskedKey: maskKey(r.key_suffix as string),
    created_at: (r.created_at as Date).toISOString(),
    revoked_at: r.revoked_at ? (r.revoked_at as Date).toISOString() : null,
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
        const [rows, [{ n }]] = await Promise.all([
          sql`select k.id, k.name, k.key_suffix, k.created_at, k.revoked_at, m.role
            from memberships m join api_keys k on k.id = m.api_key_id
            where m.account_id = ${principal.account.id}
            order by k.created_at, k.id limit ${query.limit} offset ${pageOffset(query)}`,
          sql`select count(*)::int as n from memberships where account_id = ${principal.account.id}`,
        ]);
        return listReply(rows.map(keyRow), n as number);
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
        const [row] = await sql`select k.*, m.role from api_keys k join memberships m on m.api_key_id = k.id
          where k.id = ${created.id} and m.account_id = ${principal.account.id}`;
        return { status: 201, body: { ...keyRow(row), key: created.key } };
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
        const [row] = await sql`select id from api_keys where id = ${params.id} and default_account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        await revokeApiKey(sql, params.id);
        return { status: 204 };
      },
    }),
  ];
}
