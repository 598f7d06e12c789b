import { Type, type Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { conflict, notFound } from '../../http/errors.js';
import { listReply, pageOffset, PageQuery } from '../../http/pagination.js';
import { Rules } from '../../http/rules.js';
import { NumericIdParams } from '../../http/ids.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { maskSecrets, keepStoredSecrets } from '../checks/secrets.js';
import { transaction, type Sql } from '../../storage/postgres.js';
import { autoAssignQuery, iso } from '../common.js';
import { checkChannelsExist, saveSubscriptions, type ChannelSubscription } from '../alert-channels/subscriptions.js';
import { checkReferences, type References } from '../references.js';
import { Group, GroupBody, type GroupData } from './schemas.js';

interface GroupRow {
  id: number;
  data: GroupData;
  created_at: Date;
  updated_at: Date | null;
}

type Subscription = ChannelSubscription;

/** Each group's alert channel subscriptions, by group id. */
async function groupSubscriptions(db: Sql, groupIds: number[]): Promise<Map<number, Subscription[]>> {
  const out = new Map(groupIds.map((id) => [id, [] as Subscription[]]));
  if (!groupIds.length) return out;
  const rows = await db<{ group_id: number; alert_channel_id: number; activated: boolean }[]>`select group_id, alert_channel_id, activated
    from alert_subscriptions where group_id = any(${groupIds}::bigint[]) order by alert_channel_id`;
  for (const r of rows) out.get(r.group_id)!.push({ alertChannelId: r.alert_channel_id, activated: r.activated });
  return out;
}

/** Checks what the body names (channels, private locations, snippets) is the account's, then saves the subscriptions. */
async function saveGroupRelations(db: Sql, accountId: string, groupId: number, body: Static<typeof GroupBody>, autoAssign: boolean) {
  const rules = new Rules();
  await checkChannelsExist(db, accountId, body.alertChannelSubscriptions, rules);
  await checkReferences(db, accountId, body as References, rules);
  rules.throwIfAny();
  await saveSubscriptions(db, accountId, { groupId }, body.alertChannelSubscriptions, autoAssign);
}

/** What a body stores in the row: without the subscriptions (rows of their own) and the ignored fields. */
function storedGroup(body: Static<typeof GroupBody>): GroupData {
  const { alertChannelSubscriptions: _subs, browserCheckDefaults: _ignored, ...data } = body;
  return data;
}

const AutoAssignQuery = autoAssignQuery('group');

const ListQuery = Type.Object(
  {
    ...PageQuery.properties,
    tag: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 100, description: 'Groups with at least one of these tags' })),
    name: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 100, description: 'Groups with exactly one of these names' })),
  },
  { additionalProperties: false },
);

function toGroup(row: GroupRow, subscriptions: Subscription[]) {
  const { data } = row;
  return {
    id: row.id,
    ...data,
    alertChannelSubscriptions: subscriptions,
    ...(data.environmentVariables ? { environmentVariables: maskSecrets(data.environmentVariables) } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function checkGroupRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Check groups';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/check-groups',
      operationId: 'listCheckGroups',
      summary: 'List check groups',
      tag,
      access: 'read',
      schema: { query: ListQuery, responses: { 200: Type.Array(Group) } },
      handler: async ({ principal, query }) => {
        const where = sql`account_id = ${principal.account.id}
          ${query.tag ? sql`and data->'tags' ?| ${query.tag}::text[]` : sql``}
          ${query.name ? sql`and name = any(${query.name}::text[])` : sql``}`;
        const [rows, [{ n }]] = await Promise.all([
          sql<GroupRow[]>`select * from check_groups where ${where} order by id limit ${query.limit} offset ${pageOffset(query)}`,
          sql<{ n: number }[]>`select count(*)::int as n from check_groups where ${where}`,
        ]);
        const subs = await groupSubscriptions(sql, rows.map((r) => r.id));
        return listReply(rows.map((r) => toGroup(r, subs.get(r.id)!)), n, query);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/check-groups',
      operationId: 'createCheckGroup',
      summary: 'Create a check group',
      tag,
      access: 'write',
      schema: { query: AutoAssignQuery, body: GroupBody, responses: { 201: Group } },
      handler: async ({ principal, query, body }) => {
        const group = await transaction(sql, async (tx) => {
          const [row] = await tx<GroupRow[]>`insert into check_groups (account_id, name, data)
            values (${principal.account.id}, ${body.name}, ${sql.json(storedGroup(body) as never)}) returning *`;
          await saveGroupRelations(tx, principal.account.id, row.id, body, query.autoAssignAlerts);
          return toGroup(row, (await groupSubscriptions(tx, [row.id])).get(row.id)!);
        });
        return { status: 201, body: group };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-groups/{id}',
      operationId: 'getCheckGroup',
      summary: 'Retrieve a check group',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: NumericIdParams, responses: { 200: Group } },
      handler: async ({ principal, params }) => {
        const [row] = await sql<GroupRow[]>`select * from check_groups where id = ${params.id} and account_id = ${principal.account.id}`;
        if (!row) throw notFound();
        return { status: 200, body: toGroup(row, (await groupSubscriptions(sql, [row.id])).get(row.id)!) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/check-groups/{id}',
      operationId: 'updateCheckGroup',
      summary: 'Update a check group',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, query: AutoAssignQuery, body: GroupBody, responses: { 200: Group } },
      handler: async ({ principal, params, query, body }) => {
        const result = await transaction(sql, async (tx) => {
          const [current] = await tx<GroupRow[]>`select data from check_groups
            where id = ${params.id} and account_id = ${principal.account.id} for update`;
          if (!current) throw notFound();
          const data = {
            ...storedGroup(body),
            environmentVariables: keepStoredSecrets(body.environmentVariables, current.data.environmentVariables),
          };
          const [row] = await tx<GroupRow[]>`update check_groups set name = ${body.name}, data = ${sql.json(data as never)}, updated_at = now()
            where id = ${params.id} returning *`;
          await saveGroupRelations(tx, principal.account.id, row.id, body, query.autoAssignAlerts);
          return toGroup(row, (await groupSubscriptions(tx, [row.id])).get(row.id)!);
        });
        return { status: 200, body: result };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/check-groups/{id}',
      operationId: 'deleteCheckGroup',
      summary: 'Delete a check group; a group that still has checks answers 409',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: NumericIdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        return transaction(sql, async (tx) => {
          const [group] = await tx`select id from check_groups where id = ${params.id}
            and account_id = ${principal.account.id} for update`;
          if (!group) throw notFound();
          const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from checks where group_id = ${params.id}`;
          if (n > 0) throw conflict(`The group still has ${n} check(s); move or delete them first`, { checks: n });
          await tx`delete from check_groups where id = ${params.id}`;
          return { status: 204 };
        });
      },
    }),
  ];
}
