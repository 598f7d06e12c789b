import { type Static, Type } from '@sinclair/typebox';
import { badRequest, conflict } from '../../http/errors.js';
import type { AnyRoute } from '../../http/route.js';
import { iso } from '../../model/time.js';
import { getAccountRow, uniqueViolation } from '../../storage/account-rows.js';
import type { Deps } from '../../storage/deps.js';
import { transaction } from '../../storage/postgres.js';
import { crudRoutes, operationsOf } from '../crud.js';
import { insertVariable, updateVariable, type VariableRow } from './repository.js';

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
  return crudRoutes(sql, {
    tag: 'Environment variables',
    path: '/v1/variables',
    table: 'variables',
    param: 'key',
    params: KeyParams,
    id: (raw) => raw as string,
    operations: operationsOf(
      { id: 'Variable', ids: 'Variables', one: 'an environment variable', many: 'environment variables' },
      { update: 'Update an environment variable (the key cannot change; a secret stays secret)' },
    ),
    view: Variable,
    toView: toVariable,
    create: {
      body: CreateVariable,
      errors: [409],
      run: async (db, principal, body) => {
        try {
          return await insertVariable(db, principal.account.id, body);
        } catch (err) {
          if (uniqueViolation(err) !== undefined) throw conflict(`A variable with key ${body.key} already exists`);
          throw err;
        }
      },
    },
    update: {
      body: UpdateVariable,
      description:
        'A `key` in the body, when given, must equal the key in the path (400 otherwise). `locked` and `secret` keep ' +
        'their stored values when left out; `secret: false` on a secret variable is a 400.',
      run: async (db, principal, key, body) => {
        if (body.key !== undefined && body.key !== key) {
          throw badRequest('body.key cannot be changed', { errors: [{ field: 'body.key', rule: 'immutable', message: 'cannot be changed' }] });
        }
        return transaction(db, async (tx) => {
          const current = await getAccountRow<VariableRow>(tx, 'variables', principal.account.id, key, true);
          if (!current) return undefined;
          if (current.secret && body.secret === false) {
            throw badRequest('body.secret cannot be cleared once set', {
              errors: [{ field: 'body.secret', rule: 'immutable', message: 'cannot be cleared once set' }],
            });
          }
          return updateVariable(tx, principal.account.id, key, {
            value: body.value,
            locked: body.locked ?? current.locked,
            secret: body.secret ?? current.secret,
          });
        });
      },
    },
  });
}
