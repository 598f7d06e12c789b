import { Type, type Static } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { transaction } from '../../storage/postgres.js';
import { listAccountRows, uniqueViolation } from '../common.js';
import { iso } from '../../model/time.js';

/** Names a script can read from its environment: letters, digits and underscores, not starting with a digit. */
const VariableKey = Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', minLength: 1, maxLength: 255 });
const VariableValue = Type.String({ maxLength: 65536 });

const Variable = Type.Object({
  key: Type.String(),
  value: Type.String({ description: 'Empty string for a secret variable' }),
  locked: Type.Boolean(),
  secret: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const CreateVariable = Type.Object(
  {
    key: VariableKey,
    value: VariableValue,
    locked: Type.Boolean({ default: false }),
    secret: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

const UpdateVariable = Type.Object(
  {
    key: Type.Optional(VariableKey),
    value: VariableValue,
    locked: Type.Optional(Type.Boolean()),
    secret: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

interface VariableRow {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
  created_at: Date;
  updated_at: Date | null;
}

function toVariable(row: VariableRow): Static<typeof Variable> {
  return {
    key: row.key,
    // The plaintext of a secret never leaves the service.
    value: row.secret ? '' : row.value,
    locked: row.locked,
    secret: row.secret,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function variableRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Environment variables';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/variables',
      operationId: 'listVariables',
      summary: 'List environment variables',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(Variable) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<VariableRow>(sql, 'variables', principal.account.id, query);
        return listReply(rows.map(toVariable), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/variables',
      operationId: 'createVariable',
      summary: 'Create an environment variable',
      tag,
      access: 'write',
      errors: [409],
      schema: { body: CreateVariable, responses: { 201: Variable } },
      handler: async ({ principal, body }) => {
        try {
          const [row] = await sql<VariableRow[]>`insert into variables (account_id, key, value, locked, secret)
            values (${principal.account.id}, ${body.key}, ${body.value}, ${body.locked}, ${body.secret}) returning *`;
          return { status: 201, body: toVariable(row) };
        } catch (err) {
          if (uniqueViolation(err) !== undefined) throw conflict(`A variable with key ${body.key} already exists`);
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/variables/{key}',
      operationId: 'getVariable',
      summary: 'Retrieve an environment variable',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: KeyParams, responses: { 200: Variable } },
      handler: async ({ principal, params }) => {
        const [row] = await sql<VariableRow[]>`select * from variables where account_id = ${principal.account.id} and key = ${params.key}`;
        if (!row) throw notFound();
        return { status: 200, body: toVariable(row) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/variables/{key}',
      operationId: 'updateVariable',
      summary: 'Update an environment variable (the key cannot change; a secret stays secret)',
      description:
        'A `key` in the body, when given, must equal the key in the path (400 otherwise). `locked` and `secret` keep ' +
        'their stored values when left out; `secret: false` on a secret variable is a 400.',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: KeyParams, body: UpdateVariable, responses: { 200: Variable } },
      handler: async ({ principal, params, body }) => {
        if (body.key !== undefined && body.key !== params.key) {
          throw badRequest('body.key cannot be changed', {
            errors: [{ field: 'body.key', rule: 'immutable', message: 'cannot be changed' }],
          });
        }
        return transaction(sql, async (tx) => {
          const [current] = await tx<VariableRow[]>`select * from variables
            where account_id = ${principal.account.id} and key = ${params.key} for update`;
          if (!current) throw notFound();
          if (current.secret && body.secret === false) {
            throw badRequest('body.secret cannot be cleared once set', {
              errors: [{ field: 'body.secret', rule: 'immutable', message: 'cannot be cleared once set' }],
            });
          }
          const [row] = await tx<VariableRow[]>`update variables set value = ${body.value},
              locked = ${body.locked ?? current.locked},
              secret = ${body.secret ?? current.secret}, updated_at = now()
            where account_id = ${principal.account.id} and key = ${params.key} returning *`;
          return { status: 200, body: toVariable(row) };
        });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/variables/{key}',
      operationId: 'deleteVariable',
      summary: 'Delete an environment variable',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: KeyParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const rows = await sql`delete from variables where account_id = ${principal.account.id} and key = ${params.key} returning key`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
