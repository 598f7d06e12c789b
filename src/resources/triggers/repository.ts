import type { Sql } from '../../storage/postgres.js';

export interface TriggerRow {
  id: number;
  account_id: string;
  check_id: string | null;
  group_id: number | null;
  token: string;
  created_at: Date;
  called_at: Date | null;
  updated_at: Date | null;
}

/** What a trigger runs: a check, or a group's activated checks. */
export type Subject = { kind: 'check'; id: string } | { kind: 'group'; id: number };

const whereSubject = (db: Sql, s: Subject) => (s.kind === 'check' ? db`check_id = ${s.id}` : db`group_id = ${s.id}`);

export async function findTrigger(db: Sql, accountId: string, s: Subject): Promise<TriggerRow | undefined> {
  const [row] = await db<TriggerRow[]>`select * from triggers where account_id = ${accountId} and ${whereSubject(db, s)}`;
  return row;
}

/** The subject's trigger: made with `token` when it has none, else the one it has. */
export async function createTrigger(db: Sql, accountId: string, s: Subject, token: string): Promise<TriggerRow> {
  const [row] = await db<TriggerRow[]>`insert into triggers (account_id, check_id, group_id, token)
    values (${accountId}, ${s.kind === 'check' ? s.id : null}, ${s.kind === 'group' ? s.id : null}, ${token})
    on conflict do nothing returning *`;
  if (row) return row;
  const [existing] = await db<TriggerRow[]>`select * from triggers where ${whereSubject(db, s)}`;
  return existing!;
}

export async function deleteTrigger(db: Sql, id: number): Promise<void> {
  await db`delete from triggers where id = ${id}`;
}

/** Stamps a call of the subject's trigger whose token this is; undefined when the token is not its current one. */
export async function markCalled(db: Sql, s: Subject, token: string): Promise<TriggerRow | undefined> {
  const [row] = await db<TriggerRow[]>`update triggers set called_at = now() where token = ${token} and ${whereSubject(db, s)} returning *`;
  return row;
}

/** The run request a call records. */
export async function recordRunRequest(db: Sql, row: TriggerRow): Promise<{ id: number; requested_at: Date }> {
  const [req] = await db<{ id: number; requested_at: Date }[]>`insert into run_requests (account_id, check_id, group_id, source)
    values (${row.account_id}, ${row.check_id}, ${row.group_id}, 'TRIGGER') returning id, requested_at`;
  return req!;
}
