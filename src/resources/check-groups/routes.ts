import { Type, type Static } from '@sinclair/typebox';
import type { Deps } from '../../app.js';
import { conflict, notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Nullable, NumberEnum } from '../../http/schemas.js';
import { FREQUENCIES } from '../checks/catalog.js';
import { maskSecrets, keepStoredSecrets } from '../checks/secrets.js';
import { AlertSettings, ApiRequest, EnvironmentVariables, KeyValue, Location, RetryStrategy, RuntimeId, Tags } from '../checks/schemas.js';
import { iso, listAccountRows, NumericIdParams } from '../common.js';

/** What a group applies to the API checks in it: a base URL, headers, query parameters, assertions, auth. */
const ApiCheckDefaults = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    headers: Type.Optional(Type.Array(KeyValue, { maxItems: 100 })),
    queryParameters: Type.Optional(Type.Array(KeyValue, { maxItems: 100 })),
    assertions: Type.Optional(ApiRequest.properties.assertions),
    basicAuth: Type.Optional(Nullable(Type.Object({ username: Type.String(), password: Type.String() }, { additionalProperties: false }))),
  },
  { additionalProperties: false },
);

export const GroupBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    activated: Type.Boolean({ default: true }),
    muted: Type.Boolean({ default: false }),
    tags: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100, default: [] }),
    locations: Type.Array(Location, { uniqueItems: true, default: [] }),
    privateLocations: Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 }))),
    concurrency: Type.Integer({ minimum: 1, maximum: 100, default: 3 }),
    frequency: Type.Optional(Nullable(NumberEnum(FREQUENCIES))),
    alertSettings: Type.Optional(Nullable(AlertSettings)),
    useGlobalAlertSettings: Type.Boolean({ default: true }),
    environmentVariables: Type.Optional(Nullable(EnvironmentVariables)),
    retryStrategy: Type.Optional(Nullable(RetryStrategy)),
    doubleCheck: Type.Boolean({ default: true }),
    runtimeId: Type.Optional(Nullable(RuntimeId)),
    apiCheckDefaults: Type.Optional(Nullable(ApiCheckDefaults)),
    setupSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    tearDownSnippetId: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    localSetupScript: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
    localTearDownScript: Type.Optional(Nullable(Type.String({ maxLength: 1_000_000 }))),
  },
  { additionalProperties: false },
);
export type GroupData = Static<typeof GroupBody>;

const Group = Type.Object({
  id: Type.Integer(),
  ...GroupBody.properties,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Nullable(Type.String({ format: 'date-time' })),
});

export function toGroup(row: Record<string, unknown>) {
  const data = row.data as GroupData;
  return {
    id: row.id as number,
    ...data,
    ...(data.environmentVariables ? { environmentVariables: maskSecrets(data.environmentVariables) } : {}),
    created_at: iso(row.created_at as Date),
    updated_at: iso(row.updated_at as Date | null),
  };
}

export function checkGroupRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Check groups';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/check-groups',
      operationId: 'listCheckGroups',
      summary: 'List check groups',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(Group) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows(sql, 'check_groups', principal.account.id, query);
        return listReply(rows.map(toGroup), total);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/check-groups',
      operationId: 'createCheckGroup',
      summary: 'Create a check group',
      tag,
      access: 'write',
      schema: { body: GroupBody, responses: { 201: Group } },
      handler: async ({ principal, body }) => {
        const [row] = await sql`insert into check_groups (account_id, name, data)
          values (${principal.account.id}, ${body.name}, ${sql.json(body as never)}) returning *`;
        return { status: 201, body: toGroup(row) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-groups/{id}',
      operationId: 'getCheckGroup',
      summary: 'Retrieve a check group',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 200: Group } },
      handler: async ({ principal, params }) => {
        const [row] = await sql`select * from check_groups where id = ${params.id} and account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        return { status: 200, body: toGroup(row) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/check-groups/{id}',
      operationId: 'updateCheckGroup',
      summary: 'Update a check group',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, body: GroupBody, responses: { 200: Group } },
      handler: async ({ principal, params, body }) => {
        const result = await sql.begin(async (tx) => {
          const [current] = await tx`select data from check_groups
            where id = ${params.id} and account_id = ${principal.account.id} for update`;
          if (!current) throw notFound();
          const data = {
            ...body,
            environmentVariables: keepStoredSecrets(body.environmentVariables, (current.data as GroupData).environmentVariables),
          };
          const [row] = await tx`update check_groups set name = ${body.name}, data = ${sql.json(data as never)}, updated_at = now()
            where id = ${params.id} returning *`;
          return toGroup(row);
        });
        return { status: 200, body: result };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/check-groups/{id}',
      operationId: 'deleteCheckGroup',
      summary: 'Delete a check group; a group that still has checks answers 409',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: NumericIdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        return sql.begin(async (tx) => {
          const [group] = await tx`select id from check_groups where id = ${params.id}
            and account_id = ${principal.account.id} for update`;
          if (!group) throw notFound();
          const [{ n }] = await tx`select count(*)::int as n from checks where group_id = ${params.id}`;
          if (n > 0) throw conflict(`The group still has ${n} check(s); move or delete them first`, { checks: n });
          await tx`delete from check_groups where id = ${params.id}`;
          return { status: 204 };
        }) as Promise<{ status: number }>;
      },
    }),
  ];
}
