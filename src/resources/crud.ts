import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { notFound } from '../http/errors.js';
import { NumericIdParams } from '../http/ids.js';
import { listReply, PageQuery } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import type { Principal } from '../model/accounts.js';
import { type AccountTable, deleteAccountRow, getAccountRow, listAccountRows } from '../storage/account-rows.js';
import type { Sql } from '../storage/postgres.js';

/**
 * The plain resource (docs/architecture.md, the `resources/` row of the folder order): an account's rows of one table, listed a page at a
 * time, read, written and deleted by their id, each answered through one view. A resource names what differs: its
 * table (from the fixed ACCOUNT_TABLES), its id, its schemas and view, and how a row is written (its repository's
 * statements, and the rules a body must keep).
 */
export interface CrudSpec<Row extends object, Id extends string | number, Create extends TSchema, Update extends TSchema> {
  tag: string;
  /** The collection's path, `/v1/snippets`; a row is at `${path}/{${param}}`. */
  path: string;
  table: AccountTable;
  /** The path parameter naming a row and its schema. */
  param: 'id' | 'key';
  params: TObject;
  /** A well-formed id, or undefined for a value that can name no row (a 404 without a query). */
  id: (raw: unknown) => Id | undefined;
  /** The anchor's operation ids and one-line summaries. */
  operations: { list: [string, string]; create: [string, string]; get: [string, string]; update?: [string, string]; delete: [string, string] };
  view: TSchema;
  toView: (row: Row) => Static<TSchema>;
  create: {
    body: Create;
    /** Writes the row (rules first; a rule broken is a 4xx before anything is written). */
    run: (sql: Sql, principal: Principal, body: Static<Create>) => Promise<Row>;
    errors?: number[];
    description?: string;
  };
  update?: {
    body: Update;
    /** Writes the row; undefined when the account has no row of this id. */
    run: (sql: Sql, principal: Principal, id: Id, body: Static<Update>) => Promise<Row | undefined>;
    errors?: number[];
    description?: string;
  };
}

/** A row named by a positive integer id (the anchor's numeric ids). */
export const BY_NUMERIC_ID = { param: 'id', params: NumericIdParams, id: (raw: unknown) => raw as number } as const;

/**
 * The anchor's operation ids and summaries of a resource: `list<Ids>` "List <many>", `create<Id>` "Create <one>",
 * `get<Id>` "Retrieve <one>", `update<Id>` "Update <one>", `delete<Id>` "Delete <one>"; `summaries` overrides some.
 */
export function operationsOf(
  names: { id: string; ids: string; one: string; many: string },
  summaries: Partial<Record<'list' | 'create' | 'get' | 'update' | 'delete', string>> = {},
  update = true,
): CrudSpec<object, string | number, TSchema, TSchema>['operations'] {
  return {
    list: [`list${names.ids}`, summaries.list ?? `List ${names.many}`],
    create: [`create${names.id}`, summaries.create ?? `Create ${names.one}`],
    get: [`get${names.id}`, summaries.get ?? `Retrieve ${names.one}`],
    ...(update ? { update: [`update${names.id}`, summaries.update ?? `Update ${names.one}`] as [string, string] } : {}),
    delete: [`delete${names.id}`, summaries.delete ?? `Delete ${names.one}`],
  };
}

export function crudRoutes<Row extends object, Id extends string | number, Create extends TSchema, Update extends TSchema>(
  sql: Sql,
  spec: CrudSpec<Row, Id, Create, Update>,
): AnyRoute[] {
  const one = `${spec.path}/{${spec.param}}`;
  const idOf = (params: Record<string, unknown>) => {
    const id = spec.id(params[spec.param]);
    if (id === undefined) throw notFound();
    return id;
  };
  const { tag } = spec;
  const routes: AnyRoute[] = [
    defineRoute({
      method: 'GET',
      path: spec.path,
      operationId: spec.operations.list[0],
      summary: spec.operations.list[1],
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(spec.view) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<Row>(sql, spec.table, principal.account.id, query);
        return listReply(rows.map(spec.toView), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: spec.path,
      operationId: spec.operations.create[0],
      summary: spec.operations.create[1],
      tag,
      access: 'write',
      ...(spec.create.errors ? { errors: spec.create.errors } : {}),
      ...(spec.create.description ? { description: spec.create.description } : {}),
      schema: { body: spec.create.body, responses: { 201: spec.view } },
      handler: async ({ principal, body }) => ({ status: 201, body: spec.toView(await spec.create.run(sql, principal, body as Static<Create>)) }),
    }),
    defineRoute({
      method: 'GET',
      path: one,
      operationId: spec.operations.get[0],
      summary: spec.operations.get[1],
      tag,
      access: 'read',
      errors: [404],
      schema: { params: spec.params, responses: { 200: spec.view } },
      handler: async ({ principal, params }) => {
        const row = await getAccountRow<Row>(sql, spec.table, principal.account.id, idOf(params as Record<string, unknown>));
        if (!row) throw notFound();
        return { status: 200, body: spec.toView(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: one,
      operationId: spec.operations.delete[0],
      summary: spec.operations.delete[1],
      tag,
      access: 'write',
      errors: [404],
      schema: { params: spec.params, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await deleteAccountRow(sql, spec.table, principal.account.id, idOf(params as Record<string, unknown>)))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
  const { update } = spec;
  if (update && spec.operations.update) {
    routes.splice(
      3,
      0,
      defineRoute({
        method: 'PUT',
        path: one,
        operationId: spec.operations.update[0],
        summary: spec.operations.update[1],
        tag,
        access: 'write',
        errors: [404, ...(update.errors ?? [])],
        ...(update.description ? { description: update.description } : {}),
        schema: { params: spec.params, body: update.body, responses: { 200: spec.view } },
        handler: async ({ principal, params, body }) => {
          const row = await update.run(sql, principal, idOf(params as Record<string, unknown>), body as Static<Update>);
          if (!row) throw notFound();
          return { status: 200, body: spec.toView(row) };
        },
      }),
    );
  }
  return routes;
}
