import type { Sql } from '../storage/postgres.js';

/** The slugs of an account's private locations: where its checks may run besides the public locations. */
export async function privateLocationSlugs(db: Sql, accountId: string): Promise<Set<string>> {
  const rows = await db<{ slug_name: string }[]>`select slug_name from private_locations where account_id = ${accountId}`;
  return new Set(rows.map((r) => r.slug_name));
}
