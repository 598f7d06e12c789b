import { type Static, Type } from '@sinclair/typebox';
import { conflict, notFound } from '../http/errors.js';
import { NumericIdParams, PositiveId } from '../http/ids.js';
import { listReply, PageQuery, pageOffset } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { may } from '../model/accounts.js';
import { iso } from '../model/time.js';
import { keepStoredSecrets, maskSecrets } from '../model/variables.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  countGroupChecks,
  deleteGroup,
  findGroupRow,
  type GroupRow,
  groupExists,
  groupSubscriptions,
  insertGroup,
  listGroupRows,
  lockGroup,
  lockGroupData,
  updateGroup,
} from './group-repository.js';
import { Group, GroupBody, GroupBodyV2, type GroupData } from './group-schemas.js';
import { checkReferences, type References } from './references.js';
import { findCheckRow, listCheckRows, readChecks } from './repository.js';
import { CheckResponse } from './schemas.js';
import { autoAssignQuery, type ChannelSubscription, checkChannelsExist, saveSubscriptions } from './subscriptions.js';

type Subscription = ChannelSubscription;

/** Checks what the body names (channels, private locations, snippets) is the account's, then saves the subscriptions. */
type AnyGroupBody = Static<typeof GroupBody> | Static<typeof GroupBodyV2>;

async function saveGroupRelations(db: Sql, accountId: string, groupId: number, body: AnyGroupBody, autoAssign: boolean) {
  const rules = new Rules();
  await checkChannelsExist(db, accountId, body.alertChannelSubscriptions, rules);
  await checkReferences(db, accountId, body as References, rules);
  rules.throwIfAny();
  await saveSubscriptions(db, accountId, { groupId }, body.alertChannelSubscriptions, autoAssign);
}

/** What a body stores in the row: without the subscriptions (rows of their own) and the ignored fields. */
function storedGroup(body: AnyGroupBody): GroupData {
  const { alertChannelSubscriptions: _subs, browserCheckDefaults: _ignored, retryStrategy, ...data } = body;
  // "FALLBACK" (v2): the group sets no retry strategy, each check keeps its own.
  return retryStrategy === 'FALLBACK' || retryStrategy === undefined ? data : { ...data, retryStrategy };
}

const AutoAssignQuery = autoAssignQuery('group');

const ListQuery = Type.Object(
  {
    ...PageQuery.properties,
    tag: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 100, description: 'Groups with at least one of these tags' }),
    ),
    name: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, maxItems: 100, description: 'Groups with exactly one of these names' }),
    ),
  },
  { additionalProperties: false },
);

/** What a group without API check defaults reads as (the anchor always shows the object). */
const NO_API_DEFAULTS = { url: '', headers: [], queryParameters: [], assertions: [] };

function toGroup(row: GroupRow, subscriptions: Subscription[]) {
  const { data } = row;
  return {
    id: row.id,
    ...data,
    apiCheckDefaults: data.apiCheckDefaults ?? NO_API_DEFAULTS,
    alertChannelSubscriptions: subscriptions,
    ...(data.environmentVariables ? { environmentVariables: maskSecrets(data.environmentVariables) } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function checkGroupRoutes({ sql, config }: Deps): AnyRoute[] {
  const tag = 'Check groups';
  async function findGroup(accountId: string, id: number): Promise<void> {
    if (!(await groupExists(sql, accountId, id))) throw notFound();
  }

  const bodyOf = (version: 'v1' | 'v2') => (version === 'v1' ? GroupBody : GroupBodyV2);

  const createRoute = (version: 'v1' | 'v2') =>
    defineRoute({
      method: 'POST',
      path: `/${version}/check-groups`,
      operationId: version === 'v1' ? 'createCheckGroup' : 'createCheckGroupV2',
      summary: version === 'v1' ? 'Create a check group' : 'Create a check group (v2 body: null or FALLBACK leaves a setting to each check)',
      tag,
      access: 'write',
      schema: { query: AutoAssignQuery, body: bodyOf(version), responses: { 201: Group } },
      handler: async ({ principal, query, body }) => {
        const group = await transaction(sql, async (tx) => {
          const row = await insertGroup(tx, principal.account.id, body.name, storedGroup(body));
          await saveGroupRelations(tx, principal.account.id, row.id, body, query.autoAssignAlerts);
          return toGroup(row, (await groupSubscriptions(tx, [row.id])).get(row.id)!);
        });
        return { status: 201, body: group };
      },
    });

  const updateRoute = (version: 'v1' | 'v2') =>
    defineRoute({
      method: 'PUT',
      path: `/${version}/check-groups/{id}`,
      operationId: version === 'v1' ? 'updateCheckGroup' : 'updateCheckGroupV2',
      summary: version === 'v1' ? 'Update a check group' : 'Update a check group (v2 body)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: NumericIdParams, query: AutoAssignQuery, body: bodyOf(version), responses: { 200: Group } },
      handler: async ({ principal, params, query, body }) => {
        const result = await transaction(sql, async (tx) => {
          const current = await lockGroupData(tx, principal.account.id, params.id);
          if (!current) throw notFound();
          const data = {
            ...storedGroup(body),
            environmentVariables: keepStoredSecrets(body.environmentVariables, current.environmentVariables),
          };
          const row = await updateGroup(tx, params.id, body.name, data);
          await saveGroupRelations(tx, principal.account.id, row.id, body, query.autoAssignAlerts);
          return toGroup(row, (await groupSubscriptions(tx, [row.id])).get(row.id)!);
        });
        return { status: 200, body: result };
      },
    });

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
        const { rows, total } = await listGroupRows(sql, principal.account.id, query, query.limit, pageOffset(query));
        const subs = await groupSubscriptions(
          sql,
          rows.map((r) => r.id),
        );
        return listReply(
          rows.map((r) => toGroup(r, subs.get(r.id)!)),
          total,
          query,
        );
      },
    }),
    ...(['v1', 'v2'] as const).map(createRoute),
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
        const row = await findGroupRow(sql, principal.account.id, params.id);
        if (!row) throw notFound();
        return { status: 200, body: toGroup(row, (await groupSubscriptions(sql, [row.id])).get(row.id)!) };
      },
    }),
    ...(['v1', 'v2'] as const).map(updateRoute),
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
          if (!(await lockGroup(tx, principal.account.id, params.id))) throw notFound();
          const n = await countGroupChecks(tx, params.id);
          if (n > 0) throw conflict(`The group still has ${n} check(s); move or delete them first`, { checks: n });
          await deleteGroup(tx, params.id);
          return { status: 204 };
        });
      },
    }),
    ...(['v1', 'v2'] as const).flatMap((version) => [
      defineRoute({
        method: 'GET',
        path: `/${version}/check-groups/{id}/checks`,
        operationId: version === 'v1' ? 'listCheckGroupChecks' : 'listCheckGroupChecksV2',
        summary: "The checks of a group, with the group's settings applied",
        tag,
        access: 'read',
        errors: [404],
        schema: { params: NumericIdParams, query: PageQuery, responses: { 200: Type.Array(CheckResponse) } },
        handler: async ({ principal, params, query }) => {
          const accountId = principal.account.id;
          await findGroup(accountId, params.id);
          const { rows, total } = await listCheckRows(sql, accountId, { groupId: params.id }, query.limit, pageOffset(query));
          return listReply(
            await readChecks(sql, accountId, rows, { applyGroupSettings: true, publicUrl: config.publicUrl, revealHeaders: may(principal.role, 'write') }),
            total,
            query,
          );
        },
      }),
      defineRoute({
        method: 'GET',
        path: `/${version}/check-groups/{groupId}/checks/{checkId}`,
        operationId: version === 'v1' ? 'getCheckGroupCheck' : 'getCheckGroupCheckV2',
        summary: "One check of a group, with the group's settings applied",
        tag,
        access: 'read',
        errors: [404],
        schema: {
          params: Type.Object({ groupId: PositiveId, checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
          responses: { 200: CheckResponse },
        },
        handler: async ({ principal, params }) => {
          const accountId = principal.account.id;
          const row = await findCheckRow(sql, accountId, params.checkId);
          if (!row || row.group_id !== params.groupId) throw notFound();
          const [check] = await readChecks(sql, accountId, [row], {
            applyGroupSettings: true,
            publicUrl: config.publicUrl,
            revealHeaders: may(principal.role, 'write'),
          });
          return { status: 200, body: check };
        },
      }),
    ]),
  ];
}
