import { Type } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { notFound } from '../../http/errors.js';
import { NumericIdParams } from '../../http/ids.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Nullable } from '../../http/schemas.js';
import { listAccountRows } from '../common.js';
import { iso } from '../../model/time.js';

const SnippetBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    script: Type.String({ minLength: 1, maxLength: 1_000_000, description: 'Node.js code; checks run it in their setup or teardown phase' }),
  },
  { additionalProperties: false },
);

const Snippet = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    script: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

interface SnippetRow {
  id: number;
  name: string;
  script: string;
  created_at: Date;
  updated_at: Date | null;
}

const toSnippet = (r: SnippetRow) => ({ id: r.id, name: r.name, script: r.script, created_at: iso(r.created_at), updated_at: iso(r.updated_at) });

/** Snippets: scripts API checks and groups name as setupSnippetId / tearDownSnippetId. */
export function snippetRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Snippets';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/snippets',
      operationId: 'listSnippets',
      summary: 'List snippets',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(Snippet) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<SnippetRow>(sql, 'snippets', principal.account.id, query);
        return listReply(rows.map(toSnippet), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/snippets',
      operationId: 'createSnippet',
      summary: 'Create a snippet',
      tag,
      access: 'write',
      schema: { body: SnippetBody, responses: { 201: Snippet } },
      handler: async ({ principal, body }) => {
        const [row] = await sql<SnippetRow[]>`insert into snippets (account_id, name, script)
          values (${principal.account.id}, ${body.name}, ${body.script}) returning *`;
        return { status: 201, body: toSnippet(row) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/snippets/{id}',
      operationId: 'getSnippet',
      summary: 'Retrieve a snippet',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 200: Snippet } },
      handler: async ({ principal, params }) => {
        const [row] = await sql<SnippetRow[]>`select * from snippets where id = ${params.id} and account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        return { status: 200, body: toSnippet(row) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/snippets/{id}',
      operationId: 'updateSnippet',
      summary: 'Update a snippet',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, body: SnippetBody, responses: { 200: Snippet } },
      handler: async ({ principal, params, body }) => {
        const [row] = await sql<SnippetRow[]>`update snippets set name = ${body.name}, script = ${body.script}, updated_at = now()
          where id = ${params.id} and account_id = ${principal.account.id} returning *`;
        if (!row) throw notFound();
        return { status: 200, body: toSnippet(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/snippets/{id}',
      operationId: 'deleteSnippet',
      summary: 'Delete a snippet',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const rows = await sql`delete from snippets where id = ${params.id} and account_id = ${principal.account.id} returning id`;
        if (!rows.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
