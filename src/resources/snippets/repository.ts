import type { Sql } from '../../storage/postgres.js';

export interface SnippetRow {
  id: number;
  name: string;
  script: string;
  created_at: Date;
  updated_at: Date | null;
}

export async function insertSnippet(db: Sql, accountId: string, s: { name: string; script: string }): Promise<SnippetRow> {
  const [row] = await db<SnippetRow[]>`insert into snippets (account_id, name, script) values (${accountId}, ${s.name}, ${s.script}) returning *`;
  return row!;
}

export async function updateSnippet(db: Sql, accountId: string, id: number, s: { name: string; script: string }): Promise<SnippetRow | undefined> {
  const [row] = await db<SnippetRow[]>`update snippets set name = ${s.name}, script = ${s.script}, updated_at = now()
    where id = ${id} and account_id = ${accountId} returning *`;
  return row;
}
