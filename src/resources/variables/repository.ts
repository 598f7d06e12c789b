import type { Sql } from '../../storage/postgres.js';
import { sealSecret } from '../../storage/secret-box.js';

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
    values (${accountId}, ${v.key}, ${v.secret ? sealSecret(v.value) : v.value}, ${v.locked}, ${v.secret}) returning *`;
  return row!;
}

export async function updateVariable(db: Sql, accountId: string, key: string, v: { value: string; locked: boolean; secret: boolean }): Promise<VariableRow> {
  const [row] = await db<
    VariableRow[]
  >`update variables set value = ${v.secret ? sealSecret(v.value) : v.value}, locked = ${v.locked}, secret = ${v.secret}, updated_at = now()
    where account_id = ${accountId} and key = ${key} returning *`;
  return row!;
}

/** Passes every secret variable's value through `f` (sealing begins, or a key rotation); answers how many changed. */
export async function resealSecretVariables(db: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  for (const row of await db<{ account_id: string; key: string; value: string }[]>`select account_id, key, value from variables where secret and value <> ''`) {
    const next = f(row.value);
    if (next === row.value) continue;
    await db`update variables set value = ${next} where account_id = ${row.account_id} and key = ${row.key} and value = ${row.value}`;
    changed++;
  }
  return changed;
}
