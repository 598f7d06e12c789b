/**
 * Rows of the account-scoped tables: the unique-violation test, and the statements every plain resource shares
 * (a page of an account's rows, one row, its deletion). Tables, their id column, order and the columns read come
 * from ACCOUNT_TABLES, fixed text: a request never names an identifier.
 */
import type { Sql } from './postgres.js';

/** Postgres reports a unique violation as 23505; `constraint` names the index. */
export function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: string; constraint_name?: string };
  return e.code === '23505' ? (e.constraint_name ?? '') : undefined;
}

/**
 * Account-scoped tables with plain routes: the column a row is named by, the order lists go in, and what is read
 * (never a column that holds a secret the API does not show, such as a client certificate's key).
 */
export const ACCOUNT_TABLES = {
  alert_channels: { id: 'id', order: 'id', columns: '*' },
  check_groups: { id: 'id', order: 'id', columns: '*' },
  dashboards: { id: 'id', order: 'id', columns: '*' },
  maintenance_windows: { id: 'id', order: 'id', columns: '*' },
  variables: { id: 'key', order: 'key', columns: '*' },
  snippets: { id: 'id', order: 'id', columns: '*' },
  private_locations: { id: 'id', order: 'created_at, id', columns: '*' },
  client_certificates: { id: 'id', order: 'created_at, id', columns: 'id, host, cert, ca, created_at' },
} as const;
export type AccountTable = keyof typeof ACCOUNT_TABLES;

/** One page of an account's rows of `table` and the account's total, queried together. */
export async function listAccountRows<Row extends object>(
  db: Sql,
  table: AccountTable,
  accountId: string,
  page: { limit: number; page: number },
): Promise<{ rows: Row[]; total: number }> {
  const t = ACCOUNT_TABLES[table];
  const [rows, [{ n }]] = await Promise.all([
    db<Row[]>`select ${db.unsafe(t.columns)} from ${db(table)} where account_id = ${accountId}
      order by ${db.unsafe(t.order)} limit ${page.limit} offset ${(page.page - 1) * page.limit}`,
    db<{ n: number }[]>`select count(*)::int as n from ${db(table)} where account_id = ${accountId}`,
  ]);
  return { rows, total: n };
}

/** The account's row of `table` named `id` (in the table's id column), or undefined. */
export async function getAccountRow<Row extends object>(
  db: Sql,
  table: AccountTable,
  accountId: string,
  id: string | number,
  lock = false,
): Promise<Row | undefined> {
  const t = ACCOUNT_TABLES[table];
  const [row] = await db<Row[]>`select ${db.unsafe(t.columns)} from ${db(table)} where account_id = ${accountId} and ${db(t.id)} = ${id}
    ${lock ? db`for update` : db``}`;
  return row;
}

/** Deletes the account's row of `table` named `id`; false when there was none. */
export async function deleteAccountRow(db: Sql, table: AccountTable, accountId: string, id: string | number): Promise<boolean> {
  const t = ACCOUNT_TABLES[table];
  const rows = await db`delete from ${db(table)} where account_id = ${accountId} and ${db(t.id)} = ${id} returning 1`;
  return rows.length > 0;
}
