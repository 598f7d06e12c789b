import { randomBytes } from 'node:crypto';
import { hashSecret, keySuffix } from '../model/secrets.js';
import type { Sql } from '../storage/postgres.js';

/** The slugs of an account's private locations: where its checks may run besides the public locations. */
export async function privateLocationSlugs(db: Sql, accountId: string): Promise<Set<string>> {
  const rows = await db<{ slug_name: string }[]>`select slug_name from private_locations where account_id = ${accountId}`;
  return new Set(rows.map((r) => r.slug_name));
}

export interface LocationRow {
  id: string;
  name: string;
  slug_name: string;
  icon: string;
  proxy_url: string | null;
  created_at: Date;
  updated_at: Date | null;
}

export interface KeyRow {
  id: string;
  private_location_id: string;
  key_suffix: string;
  created_at: Date;
  updated_at: Date | null;
}

export async function keysOf(db: Sql, ids: string[]): Promise<Map<string, KeyRow[]>> {
  const out = new Map(ids.map((id) => [id, [] as KeyRow[]]));
  if (!ids.length) return out;
  const rows = await db<KeyRow[]>`select id, private_location_id, key_suffix, created_at, updated_at from private_location_keys
    where private_location_id = any(${ids}::uuid[]) order by created_at, id`;
  for (const k of rows) out.get(k.private_location_id)!.push(k);
  return out;
}

/** A new key for a location: random, shown once, stored as a hash. */
export async function addKey(db: Sql, locationId: string): Promise<{ row: KeyRow; raw: string }> {
  const raw = `pl_${randomBytes(24).toString('hex')}`;
  const [row] = await db<KeyRow[]>`insert into private_location_keys (private_location_id, key_hash, key_suffix)
    values (${locationId}, ${hashSecret(raw)}, ${keySuffix(raw)}) returning id, private_location_id, key_suffix, created_at, updated_at`;
  return { row, raw };
}

export async function findLocation(db: Sql, accountId: string, id: string, lock = false): Promise<LocationRow | undefined> {
  const [row] = lock
    ? await db<LocationRow[]>`select * from private_locations where id = ${id} and account_id = ${accountId} for update`
    : await db<LocationRow[]>`select * from private_locations where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function insertLocation(
  db: Sql,
  accountId: string,
  l: { name: string; slugName: string; icon: string; proxyUrl: string | null },
): Promise<LocationRow> {
  const [row] = await db<LocationRow[]>`insert into private_locations (account_id, name, slug_name, icon, proxy_url)
    values (${accountId}, ${l.name}, ${l.slugName}, ${l.icon}, ${l.proxyUrl}) returning *`;
  return row!;
}

export async function updateLocation(db: Sql, id: string, l: { name: string; icon: string; proxyUrl: string | null }): Promise<LocationRow> {
  const [row] = await db<LocationRow[]>`update private_locations set name = ${l.name}, icon = ${l.icon}, proxy_url = ${l.proxyUrl}, updated_at = now()
    where id = ${id} returning *`;
  return row!;
}

/** The account's checks and groups that run in the location (by its slug). */
export async function locationUsers(db: Sql, accountId: string, slug: string): Promise<number> {
  const [{ n }] = await db<{ n: number }[]>`select
      (select count(*) from checks where account_id = ${accountId} and data->'privateLocations' ? ${slug})
    + (select count(*) from check_groups where account_id = ${accountId} and data->'privateLocations' ? ${slug}) as n`;
  return Number(n);
}

export async function deleteLocation(db: Sql, id: string): Promise<void> {
  await db`delete from private_locations where id = ${id}`;
}

/** Removes a key of the location; false when it has no such key. */
export async function deleteLocationKey(db: Sql, locationId: string, keyId: string): Promise<boolean> {
  const gone = await db`delete from private_location_keys where id = ${keyId} and private_location_id = ${locationId} returning id`;
  return gone.length > 0;
}
