import type { Sql } from '../../storage/postgres.js';

export interface VariableRow {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
  created_at: Date;
  updated_at: Date | null;
}

export async function insertVariable(db: Sql, accountId: string, v: { key: string; value: string; locked: boolean; secret: boolean }): Promise<VariableRow> {
  const [row] = await db<VariableRow[]>`insert into variables (account_id, key, value, locked, secret)
    values (${accountId}, ${v.key}, ${v.value}, ${v.locked}, ${v.secret}) returning *`;
  return row!;
}

export async function updateVariable(db: Sql, accountId: string, key: string, v: { value: string; locked: boolean; secret: boolean }): Promise<VariableRow> {
  const [row] = await db<VariableRow[]>`update variables set value = ${v.value}, locked = ${v.locked}, secret = ${v.secret}, updated_at = now()
    where account_id = ${accountId} and key = ${key} returning *`;
  return row!;
}
