import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../storage/deps.js';
import { hashSecret, keySuffix } from '../../model/secrets.js';
import { conflict, notFound } from '../../http/errors.js';
import { UUID } from '../../http/ids.js';
import { listReply, PageQuery } from '../../http/pagination.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { Nullable } from '../../http/schemas.js';
import { transaction, type Sql } from '../../storage/postgres.js';
import { listAccountRows, uniqueViolation } from '../common.js';
import { iso } from '../../model/time.js';

/** The anchor's rule: 1-30 letters, digits and dashes, and never the name of a public location. */
const SLUG_PATTERN = '^((?!((us(-gov)?|ap|ca|cn|eu|sa|af|me)-(central|(north|south)?(east|west)?)-\\d+))[a-zA-Z0-9-]{1,30})$';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Icon = Type.String({ minLength: 1, maxLength: 64 });
const ProxyUrl = Nullable(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'Proxy the location runs checks through' }));

const CreateBody = Type.Object(
  {
    name: Name,
    slugName: Type.String({ pattern: SLUG_PATTERN, title: '1 to 30 letters, digits or dashes, not a public location name' }),
    icon: Type.String({ minLength: 1, maxLength: 64, default: 'location' }),
    proxyUrl: Type.Optional(ProxyUrl),
  },
  { additionalProperties: false },
);

const UpdateBody = Type.Object(
  { name: Name, icon: Type.Optional(Icon), proxyUrl: Type.Optional(ProxyUrl), slugName: Type.Optional(Type.Unknown({ description: 'Read-only: the slug cannot change; ignored' })) },
  { additionalProperties: false },
);

const LocationKey = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    rawKey: Type.Optional(Type.String({ description: 'The key itself; only in the response that creates it' })),
    maskedKey: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const PrivateLocation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slugName: Type.String({ description: 'What checks name in privateLocations and runners report as runLocation' }),
    icon: Type.String(),
    proxyUrl: Nullable(Type.String()),
    keys: Type.Array(LocationKey),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

interface LocationRow {
  id: string;
  name: string;
  slug_name: string;
  icon: string;
  proxy_url: string | null;
  created_at: Date;
  updated_at: Date | null;
}

interface KeyRow {
  id: string;
  private_location_id: string;
  key_suffix: string;
  created_at: Date;
  updated_at: Date | null;
}

const toKey = (k: KeyRow, raw?: string) => ({
  id: k.id,
  ...(raw ? { rawKey: raw } : {}),
  maskedKey: `...${k.key_suffix}`,
  created_at: iso(k.created_at),
  updated_at: iso(k.updated_at),
});

async function keysOf(db: Sql, ids: string[]): Promise<Map<string, KeyRow[]>> {
  const out = new Map(ids.map((id) => [id, [] as KeyRow[]]));
  if (!ids.length) return out;
  const rows = await db<KeyRow[]>`select id, private_location_id, key_suffix, created_at, updated_at from private_location_keys
    where private_location_id = any(${ids}::uuid[]) order by created_at, id`;
  for (const k of rows) out.get(k.private_location_id)!.push(k);
  return out;
}

function toLocation(row: LocationRow, keys: KeyRow[], raw = new Map<string, string>()) {
  return {
    id: row.id,
    name: row.name,
    slugName: row.slug_name,
    icon: row.icon,
    proxyUrl: row.proxy_url,
    keys: keys.map((k) => toKey(k, raw.get(k.id))),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** A new key for a location: random, shown once, stored as a hash. */
async function addKey(db: Sql, locationId: string): Promise<{ row: KeyRow; raw: string }> {
  const raw = `pl_${randomBytes(24).toString('hex')}`;
  const [row] = await db<KeyRow[]>`insert into private_location_keys (private_location_id, key_hash, key_suffix)
    values (${locationId}, ${hashSecret(raw)}, ${keySuffix(raw)}) returning id, private_location_id, key_suffix, created_at, updated_at`;
  return { row, raw };
}

/** The slug names of the account's private locations: valid run locations beside the public ones. */
export function privateLocationRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Private locations';

  async function find(db: Sql, accountId: string, id: string, lock = false): Promise<LocationRow> {
    if (!UUID.test(id)) throw notFound();
    const [row] = lock
      ? await db<LocationRow[]>`select * from private_locations where id = ${id} and account_id = ${accountId} for update`
      : await db<LocationRow[]>`select * from private_locations where id = ${id} and account_id = ${accountId}`;
    if (!row) throw notFound();
    return row;
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/private-locations',
      operationId: 'listPrivateLocations',
      summary: 'List private locations',
      tag,
      access: 'read',
      schema: { query: PageQuery, responses: { 200: Type.Array(PrivateLocation) } },
      handler: async ({ principal, query }) => {
        const { rows, total } = await listAccountRows<LocationRow>(sql, 'private_locations', principal.account.id, query);
        const keys = await keysOf(sql, rows.map((r) => r.id));
        return listReply(rows.map((r) => toLocation(r, keys.get(r.id)!)), total, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/private-locations',
      operationId: 'createPrivateLocation',
      summary: 'Create a private location and its first key (the key is in this response only)',
      tag,
      access: 'write',
      errors: [409],
      schema: { body: CreateBody, responses: { 201: PrivateLocation } },
      handler: async ({ principal, body }) => {
        try {
          return await transaction(sql, async (db) => {
            const [row] = await db<LocationRow[]>`insert into private_locations (account_id, name, slug_name, icon, proxy_url)
              values (${principal.account.id}, ${body.name}, ${body.slugName}, ${body.icon}, ${body.proxyUrl ?? null}) returning *`;
            const key = await addKey(db, row.id);
            return { status: 201, body: toLocation(row, [key.row], new Map([[key.row.id, key.raw]])) };
          });
        } catch (err) {
          if (uniqueViolation(err) === 'private_locations_slug') throw conflict('This account has a private location with this slugName', { field: 'body.slugName' });
          throw err;
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/private-locations/{id}',
      operationId: 'getPrivateLocation',
      summary: 'Retrieve a private location',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: IdParams, responses: { 200: PrivateLocation } },
      handler: async ({ principal, params }) => {
        const row = await find(sql, principal.account.id, params.id);
        return { status: 200, body: toLocation(row, (await keysOf(sql, [row.id])).get(row.id)!) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/private-locations/{id}',
      operationId: 'updatePrivateLocation',
      summary: 'Update the name, icon and proxy of a private location (its slugName stays)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IdParams, body: UpdateBody, responses: { 200: PrivateLocation } },
      handler: async ({ principal, params, body }) => {
        const current = await find(sql, principal.account.id, params.id);
        const [row] = await sql<LocationRow[]>`update private_locations set name = ${body.name}, icon = ${body.icon ?? current.icon},
            proxy_url = ${body.proxyUrl === undefined ? current.proxy_url : body.proxyUrl}, updated_at = now()
          where id = ${current.id} returning *`;
        return { status: 200, body: toLocation(row, (await keysOf(sql, [row.id])).get(row.id)!) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/private-locations/{id}',
      operationId: 'deletePrivateLocation',
      summary: 'Remove a private location no check or group runs in',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: IdParams, responses: { 204: null } },
      handler: async ({ principal, params }) =>
        transaction(sql, async (db) => {
          const row = await find(db, principal.account.id, params.id, true);
          const [{ n }] = await db<{ n: number }[]>`select
              (select count(*) from checks where account_id = ${principal.account.id} and data->'privateLocations' ? ${row.slug_name})
            + (select count(*) from check_groups where account_id = ${principal.account.id} and data->'privateLocations' ? ${row.slug_name}) as n`;
          if (Number(n) > 0) throw conflict(`${n} checks or groups run in this location; remove it from them first`, { inUse: Number(n) });
          await db`delete from private_locations where id = ${row.id}`;
          return { status: 204 };
        }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/private-locations/{id}/keys',
      operationId: 'createPrivateLocationKey',
      summary: 'Generate another key for a private location (the key is in this response only)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IdParams, responses: { 201: LocationKey } },
      handler: async ({ principal, params }) => {
        const row = await find(sql, principal.account.id, params.id);
        const key = await addKey(sql, row.id);
        return { status: 201, body: toKey(key.row, key.raw) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/private-locations/{id}/keys/{keyId}',
      operationId: 'deletePrivateLocationKey',
      summary: 'Remove a key of a private location',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), keyId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        responses: { 204: null },
      },
      handler: async ({ principal, params }) => {
        const row = await find(sql, principal.account.id, params.id);
        if (!UUID.test(params.keyId)) throw notFound();
        const gone = await sql`delete from private_location_keys where id = ${params.keyId} and private_location_id = ${row.id} returning id`;
        if (!gone.length) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
