import { Type } from '@sinclair/typebox';
import { pageOffset, type PageQuery } from '../http/pagination.js';
import type { Sql } from '../storage/postgres.js';

/** Postgres reports a unique violation as 23505; `constraint` names the index. */
export function uniqueViolation(err: unknown): string | undefined {
  const e = err as { code?: string; constraint_name?: string };
  return e.code === '23505' ? (e.constraint_name ?? '') : undefined;
}

/** Account-scoped tables with a plain list route, and the order each lists in (fixed text, never from a request). */
const LIST_ORDER = {
  alert_channels: 'id',
  check_groups: 'id',
  dashboards: 'id',
  maintenance_windows: 'id',
  variables: 'key',
  snippets: 'id',
  private_locations: 'created_at, id',
  client_certificates: 'created_at, id',
} as const;

/** One page of an account's rows of `table` and the account's total, queried together. */
export async function listAccountRows<Row extends object>(
  db: Sql,
  table: keyof typeof LIST_ORDER,
  accountId: string,
  page: PageQuery,
): Promise<{ rows: Row[]; total: number }> {
  const [rows, [{ n }]] = await Promise.all([
    db<Row[]>`select * from ${db(table)} where account_id = ${accountId}
      order by ${db.unsafe(LIST_ORDER[table])} limit ${page.limit} offset ${pageOffset(page)}`,
    db<{ n: number }[]>`select count(*)::int as n from ${db(table)} where account_id = ${accountId}`,
  ]);
  return { rows, total: n };
}

/** `?autoAssignAlerts` on check and group writes (default true, as the anchor has it). */
export function autoAssignQuery(subject: 'check' | 'group') {
  return Type.Object(
    {
      autoAssignAlerts: Type.Boolean({
        default: true,
        description: `Subscribe the ${subject} to every alert channel of the account it is not subscribed to yet`,
      }),
    },
    { additionalProperties: false },
  );
}
