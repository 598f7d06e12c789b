import { randomBytes } from 'node:crypto';
import type { Sql } from './postgres.js';

/**
 * The service's own secret `name`: 32 random bytes made on first use and kept in service_secrets, so every
 * process and restart shares it. Concurrent first starts agree on one (insert … on conflict do nothing).
 */
export async function serviceSecret(sql: Sql, name: string): Promise<Buffer> {
  await sql`insert into service_secrets (name, value) values (${name}, ${randomBytes(32)}) on conflict (name) do nothing`;
  const [row] = await sql<{ value: Buffer }[]>`select value from service_secrets where name = ${name}`;
  return row.value;
}
