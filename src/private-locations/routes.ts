import { Type } from '@sinclair/typebox';
import { conflict, notFound } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import { listReply, PageQuery } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable } from '../http/schemas.js';
import { iso } from '../model/time.js';
import { listAccountRows, uniqueViolation } from '../storage/account-rows.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import { type Fleet, fleetsOf } from './agents.js';
import {
  addKey,
  deleteLocation,
  deleteLocationKey,
  findLocation,
  insertLocation,
  type KeyRow,
  keysOf,
  type LocationRow,
  locationUsers,
  updateLocation,
} from './repository.js';

/** The anchor's rule: 1-30 letters, digits and dashes, and never the name of a public location. */
const SLUG_PATTERN = '^((?!((us(-gov)?|ap|ca|cn|eu|sa|af|me)-(central|(north|south)?(east|west)?)-\\d+))[a-zA-Z0-9-]{1,30})$';

/** Live keys a location may have at once (rotation: the new beside the old). */
const MAX_KEYS = 2;

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
  {
    name: Name,
    icon: Type.Optional(Icon),
    proxyUrl: Type.Optional(ProxyUrl),
    slugName: Type.Optional(Type.Unknown({ description: 'Read-only: the slug cannot change; ignored' })),
  },
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
    lastSeen: Nullable(Type.String({ format: 'date-time', description: 'When an agent of the location last called the service' })),
    agentCount: Type.Integer({ description: 'Agents running (seen within AGENT_SEEN_SECONDS)' }),
    minAgentVersion: Nullable(Type.String({ description: 'The lowest version among the agents running' })),
    runningAgents: Type.Array(
      Type.Object({
        version: Type.String(),
        isOutdated: Type.Boolean({ description: "Below the service's AGENT_MIN_VERSION" }),
        count: Type.Integer(),
        agents: Type.Array(Type.Object({ id: Type.String(), lastSeenAt: Type.String({ format: 'date-time' }) })),
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

const toKey = (k: KeyRow, raw?: string) => ({
  id: k.id,
  ...(raw ? { rawKey: raw } : {}),
  maskedKey: `...${k.key_suffix}`,
  created_at: iso(k.created_at),
  updated_at: iso(k.updated_at),
});

const NO_FLEET: Fleet = { lastSeen: null, agentCount: 0, minAgentVersion: null, runningAgents: [] };

function toLocation(row: LocationRow, keys: KeyRow[], fleet: Fleet | undefined, raw = new Map<string, string>()) {
  return {
    id: row.id,
    name: row.name,
    slugName: row.slug_name,
    icon: row.icon,
    proxyUrl: row.proxy_url,
    keys: keys.map((k) => toKey(k, raw.get(k.id))),
    ...(fleet ?? NO_FLEET),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The slug names of the account's private locations: valid run locations beside the public ones. */
export function privateLocationRoutes({ sql, config }: Deps): AnyRoute[] {
  const tag = 'Private locations';
  const fleets = (ids: string[]) => fleetsOf(sql, ids, config.agents);

  async function find(db: Sql, accountId: string, id: string, lock = false): Promise<LocationRow> {
    if (!UUID.test(id)) throw notFound();
    const row = await findLocation(db, accountId, id, lock);
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
        const ids = rows.map((r) => r.id);
        const [keys, fleet] = await Promise.all([keysOf(sql, ids), fleets(ids)]);
        return listReply(
          rows.map((r) => toLocation(r, keys.get(r.id)!, fleet.get(r.id))),
          total,
          query,
        );
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
            const row = await insertLocation(db, principal.account.id, {
              name: body.name,
              slugName: body.slugName,
              icon: body.icon,
              proxyUrl: body.proxyUrl ?? null,
            });
            const key = await addKey(db, row.id);
            return { status: 201, body: toLocation(row, [key.row], undefined, new Map([[key.row.id, key.raw]])) };
          });
        } catch (err) {
          if (uniqueViolation(err) === 'private_locations_slug')
            throw conflict('This account has a private location with this slugName', { field: 'body.slugName' });
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
        const [keys, fleet] = await Promise.all([keysOf(sql, [row.id]), fleets([row.id])]);
        return { status: 200, body: toLocation(row, keys.get(row.id)!, fleet.get(row.id)) };
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
        const row = await updateLocation(sql, current.id, {
          name: body.name,
          icon: body.icon ?? current.icon,
          proxyUrl: body.proxyUrl === undefined ? current.proxy_url : body.proxyUrl,
        });
        const [keys, fleet] = await Promise.all([keysOf(sql, [row.id]), fleets([row.id])]);
        return { status: 200, body: toLocation(row, keys.get(row.id)!, fleet.get(row.id)) };
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
          const n = await locationUsers(db, principal.account.id, row.slug_name);
          if (n > 0) throw conflict(`${n} checks or groups run in this location; remove it from them first`, { inUse: n });
          await deleteLocation(db, row.id);
          return { status: 204 };
        }),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/private-locations/{id}/keys',
      operationId: 'createPrivateLocationKey',
      summary: 'Generate another key for a private location (the key is in this response only); at most two at once',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: IdParams, responses: { 201: LocationKey } },
      handler: async ({ principal, params }) => {
        return transaction(sql, async (db) => {
          const row = await find(db, principal.account.id, params.id, true);
          // Two live keys, as the anchor has: a new one beside the old while agents move over, then the old one goes.
          if ((await keysOf(db, [row.id])).get(row.id)!.length >= MAX_KEYS) {
            throw conflict(`A private location has at most ${MAX_KEYS} keys: remove the old one once its agents use the new one`, { limit: MAX_KEYS });
          }
          const key = await addKey(db, row.id);
          return { status: 201, body: toKey(key.row, key.raw) };
        });
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
        params: Type.Object(
          { id: Type.String({ minLength: 1, maxLength: 64 }), keyId: Type.String({ minLength: 1, maxLength: 64 }) },
          { additionalProperties: false },
        ),
        responses: { 204: null },
      },
      handler: async ({ principal, params }) => {
        const row = await find(sql, principal.account.id, params.id);
        if (!UUID.test(params.keyId)) throw notFound();
        if (!(await deleteLocationKey(sql, row.id, params.keyId))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
