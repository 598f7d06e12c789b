import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { conflict, notFound } from '../../http/errors.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { NumericIdParams } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { maskSecrets, keepStoredSecrets } from '../checks/secrets.js';
import { transaction } from '../../storage/postgres.js';
import { iso, listAccountRows } from '../common.js';
import { Group, GroupBody, type GroupData } from './schemas.js';

interface GroupRow {
  id: number;
  data: GroupData;
  created_at: Date;
  updated_at: Date | null;
}

function toGroup(row: GroupRow) {
  const { data } = row;
  return {
    id: row.id,
    ...data,
    ...(data.environmentVariables ? { environmentVariables: maskSecrets(data.environmentVariables) } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
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
        const { rows, total } = await listAccountRows<GroupRow>(sql, 'check_groups', principal.account.id, query);
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
        const [row] = await sql<GroupRow[]>`insert into check_groups (account_id, name, data)
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
        const [row] = await sql<GroupRow[]>`select * from check_groups where id = ${params.id} and account_id = ${principal.account.id}`;
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
        const result = await transaction(sql, async (tx) => {
          const [current] = await tx<GroupRow[]>`select data from check_groups
            where id = ${params.id} and account_id = ${principal.account.id} for update`;
          if (!current) throw notFound();
          const data = {
            ...body,
            environmentVariables: keepStoredSecrets(body.environmentVariables, current.data.environmentVariables),
          };
          const [row] = await tx<GroupRow[]>`update check_groups set name = ${body.name}, data = ${sql.json(data as never)}, updated_at = now()
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
        return transaction(sql, async (tx) => {
          const [group] = await tx`select id from check_groups where id = ${params.id}
            and account_id = ${principal.account.id} for update`;
          if (!group) throw notFound();
          const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from checks where group_id = ${params.id}`;
          if (n > 0) throw conflict(`The group still has ${n} check(s); move or delete them first`, { checks: n });
          await tx`delete from check_groups where id = ${params.id}`;
          return { status: 204 };
        });
      },
    }),
  ];
}
