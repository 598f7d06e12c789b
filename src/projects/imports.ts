import { Type } from '@sinclair/typebox';
import type { Principal } from '../accounts/index.js';
import { HttpError } from '../http/errors.js';
import type { RouteCaller } from '../http/invoke.js';
import { type AnyRoute, defineRoute, type Method } from '../http/route.js';
import { StringEnum } from '../http/schemas.js';
import type { Deps } from '../storage/deps.js';
import { inTransaction, transaction } from '../storage/postgres.js';
import type { ResourceType } from './model.js';
import {
  deleteImport,
  deleteMapping,
  existingIds,
  existingSubscriptions,
  findProject,
  type IdTableType,
  type ImportRow,
  insertImport,
  listImports,
  lockImport,
  managedElsewhere,
  mappingsOf,
  markImport,
  saveMapping,
  toImportPlan,
} from './repository.js';

/** What `checkly import` can bring into a project, and the list route each is read from (its public GET shape). */
const IMPORTABLE = {
  'private-location': '/v1/private-locations',
  'check-group': '/v1/check-groups',
  'alert-channel': '/v1/alert-channels',
  check: '/v1/checks',
  'maintenance-window': '/v1/maintenance-windows',
  dashboard: '/v1/dashboards',
} as const satisfies Partial<Record<ResourceType, string>>;
type Importable = keyof typeof IMPORTABLE;
const NUMERIC = new Set<string>(['check-group', 'alert-channel', 'maintenance-window', 'dashboard']);

export const IMPORT_ROUTES: ReadonlyArray<readonly [Method, string]> = Object.values(IMPORTABLE).map((path) => ['GET', path] as const);

/** Fields of the GET shapes that are not settings (read-only, or written through other resources). */
const NOT_SETTINGS = ['created_at', 'updated_at', 'alertChannels', 'alertChannelSubscriptions', 'subscriptions', 'health', 'keys', 'autoSubscribe'];

const Filter = Type.Object(
  {
    type: StringEnum(['include', 'exclude'] as const),
    resource: Type.Optional(
      Type.Object(
        { type: Type.String({ maxLength: 64 }), physicalId: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Integer()])) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const Friend = Type.Object(
  { type: Type.String({ maxLength: 64 }), logicalId: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
const PlanBody = Type.Optional(
  Type.Object(
    { filters: Type.Optional(Type.Array(Filter, { maxItems: 1000 })), friends: Type.Optional(Type.Array(Friend, { maxItems: 10_000 })) },
    { additionalProperties: false },
  ),
);

const ImportPlan = Type.Object({
  id: Type.String({ format: 'uuid' }),
  createdAt: Type.String({ format: 'date-time' }),
  appliedAt: Type.Optional(Type.String({ format: 'date-time' })),
  committedAt: Type.Optional(Type.String({ format: 'date-time' })),
  changes: Type.Unknown(),
});

interface PlanResource {
  type: ResourceType;
  logicalId: string;
  physicalId?: string | number;
  member: true;
  payload: Record<string, unknown>;
}

/** Whether a resource passes the filters: the last filter that matches it decides (the CLI puts its catch-all first). */
function passes(filters: { type: 'include' | 'exclude'; resource?: { type: string; physicalId?: string | number } }[], type: string, id: string): boolean {
  let verdict = true;
  for (const f of filters) {
    if (f.resource && f.resource.type !== type) continue;
    if (f.resource?.physicalId !== undefined && String(f.resource.physicalId) !== id) continue;
    verdict = f.type === 'include';
  }
  return verdict;
}

/** A construct id from a name: lower-case words joined by dashes, unique among `taken`. */
function logicalIdFor(name: unknown, fallback: string, taken: Set<string>): string {
  const base =
    String(name ?? '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60) || fallback;
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
  taken.add(id);
  return id;
}

export function importRoutes({ sql }: Deps, caller: RouteCaller): AnyRoute[] {
  const tag = 'Projects';

  async function readAll(principal: Principal, type: Importable): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (let page = 1; ; page++) {
      const reply = await caller.call(principal, 'GET', IMPORTABLE[type], { query: { limit: 100, page } });
      const items = reply.body as Record<string, unknown>[];
      out.push(...items);
      if (items.length < 100) return out;
    }
  }

  async function projectOf(principal: Principal, logicalId: string) {
    const project = await findProject(sql, principal.account.id, logicalId);
    if (!project) throw new HttpError(404, `Project "${logicalId}" does not exist`);
    return project;
  }

  /** Resources of the account no project manages, as the plan offers them (logicalIds made from their names). */
  async function plan(principal: Principal, projectId: string, filters: Parameters<typeof passes>[0], friends: { type: string; logicalId: string }[]) {
    const accountId = principal.account.id;
    const mappings = await mappingsOf(sql, projectId);
    const taken = new Set(mappings.map((m) => m.logical_id));
    const resources: PlanResource[] = [];
    const logicalOf = new Map<string, string>();
    const slugToLocation = new Map<string, string>();
    for (const type of Object.keys(IMPORTABLE) as Importable[]) {
      const managed = await managedElsewhere(sql, accountId, type);
      for (const item of await readAll(principal, type)) {
        const id = String(item.id);
        if (type === 'private-location') slugToLocation.set(item.slugName as string, id);
        if (managed.has(id) || !passes(filters, type, id)) continue;
        // Settings left unset read as null; the CLI's code generator takes them as absent.
        const payload = Object.fromEntries(Object.entries(item).filter(([k, v]) => !NOT_SETTINGS.includes(k) && v !== null));
        if (type === 'check') delete (payload.heartbeat as Record<string, unknown> | undefined)?.pingToken;
        const logicalId = logicalIdFor(item.name ?? item.header ?? item.customUrl, `${type}-${id}`, taken);
        logicalOf.set(`${type}:${id}`, logicalId);
        resources.push({ type, logicalId, physicalId: NUMERIC.has(type) ? Number(id) : id, member: true, payload });
      }
    }
    // A subscription or a private-location assignment comes with the plan when both its ends are in the project or the plan.
    const projectLogical = new Map(mappings.map((m) => [`${m.type}:${m.physical_id}`, m.logical_id]));
    const nameOf = (type: string, id: string) => logicalOf.get(`${type}:${id}`) ?? projectLogical.get(`${type}:${id}`);
    const inPlan = (type: string, id: string) => logicalOf.has(`${type}:${id}`);
    const subscriptions = await existingSubscriptions(sql, accountId);
    const managedSubs = await managedElsewhere(sql, accountId, 'alert-channel-subscription');
    for (const physical of subscriptions) {
      if (managedSubs.has(physical)) continue;
      const [channel, kind, target] = physical.split(':');
      const targetType = kind === 'check' ? 'check' : 'check-group';
      const channelName = nameOf('alert-channel', channel);
      const targetName = nameOf(targetType, target);
      if (!channelName || !targetName || (!inPlan('alert-channel', channel) && !inPlan(targetType, target))) continue;
      resources.push({
        type: 'alert-channel-subscription',
        logicalId: `${kind === 'check' ? 'check' : 'check-group'}-alert-channel-subscription#${targetName}#${channelName}`,
        physicalId: physical,
        member: true,
        payload: { alertChannelId: Number(channel), ...(kind === 'check' ? { checkId: target } : { groupId: Number(target) }), activated: true },
      });
    }
    for (const r of [...resources]) {
      if (r.type !== 'check' && r.type !== 'check-group') continue;
      for (const slug of (r.payload.privateLocations as string[] | null | undefined) ?? []) {
        const location = slugToLocation.get(slug);
        const locationName = location && nameOf('private-location', location);
        if (!location || !locationName) continue;
        const isCheck = r.type === 'check';
        resources.push({
          type: isCheck ? 'private-location-check-assignment' : 'private-location-group-assignment',
          logicalId: `private-location-${isCheck ? 'check' : 'group'}-assignment#${r.logicalId}#${locationName}`,
          physicalId: `${location}:${isCheck ? 'check' : 'group'}:${r.physicalId}`,
          member: true,
          payload: { privateLocationId: location, ...(isCheck ? { checkId: r.physicalId } : { groupId: r.physicalId }) },
        });
      }
    }
    // Constructs the project exports that imported code should use instead of new ones.
    const friendsOut = friends.flatMap((f) => {
      const m = mappings.find((x) => x.type === f.type && x.logical_id === f.logicalId);
      if (!m) return [];
      return [{ type: f.type, logicalId: f.logicalId, physicalId: NUMERIC.has(f.type) ? Number(m.physical_id) : m.physical_id }];
    });
    return { resources, friends: friendsOut, auxiliary: [] };
  }

  async function withPlan<T>(principal: Principal, planId: string, fn: (row: ImportRow) => Promise<T>): Promise<T> {
    return transaction(sql, (tx) =>
      inTransaction(tx, async () => {
        const row = await lockImport(sql, principal.account.id, planId);
        if (!row) throw new HttpError(404, 'Import plan does not exist');
        return fn(row);
      }),
    );
  }

  const invalidState = (why: string) => new HttpError(403, `Invalid state for import plan: ${why}`);
  const ListQuery = Type.Object(
    { onlyUnapplied: Type.Boolean({ default: false }), onlyUncommitted: Type.Boolean({ default: false }) },
    { additionalProperties: false },
  );
  const PlanParams = Type.Object({ planId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
  const LogicalIdParams = Type.Object({ logicalId: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });

  return [
    defineRoute({
      method: 'POST',
      path: '/next/projects/{logicalId}/imports',
      operationId: 'createImportPlan',
      summary: 'Plan an import (`checkly import plan`): resources of the account no project manages, in their public shape',
      description: '404 "No importable resources were found." when the filters leave none. A preview plan cannot be applied.',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: LogicalIdParams,
        query: Type.Object({ preview: Type.Boolean({ default: false }) }, { additionalProperties: false }),
        body: PlanBody,
        responses: { 201: ImportPlan },
      },
      handler: async ({ principal, params, query, body }) => {
        const project = await projectOf(principal, params.logicalId);
        const changes = await plan(principal, project.id, body?.filters ?? [], body?.friends ?? []);
        if (!changes.resources.length) throw new HttpError(404, 'No importable resources were found.');
        const row = await insertImport(sql, principal.account.id, project.id, query.preview, changes);
        return { status: 201, body: toImportPlan(row) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/projects/{logicalId}/imports',
      operationId: 'listProjectImportPlans',
      summary: "A project's import plans",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: LogicalIdParams, query: ListQuery, responses: { 200: Type.Array(ImportPlan) } },
      handler: async ({ principal, params, query }) => {
        const project = await projectOf(principal, params.logicalId);
        return { status: 200, body: (await listImports(sql, principal.account.id, project.id, query)).map(toImportPlan) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/projects/imports',
      operationId: 'listImportPlans',
      summary: "The account's import plans",
      tag,
      access: 'read',
      schema: { query: ListQuery, responses: { 200: Type.Array(ImportPlan) } },
      handler: async ({ principal, query }) => ({ status: 200, body: (await listImports(sql, principal.account.id, undefined, query)).map(toImportPlan) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/next/projects/imports/{planId}/apply',
      operationId: 'applyImportPlan',
      summary: "Apply an import plan: the project manages the plan's resources from now on (its next deploy updates them)",
      tag,
      access: 'write',
      errors: [403, 404],
      schema: { params: PlanParams, responses: { 200: ImportPlan } },
      handler: async ({ principal, params }) =>
        withPlan(principal, params.planId, async (row) => {
          if (row.preview) throw invalidState('a preview plan cannot be applied');
          if (row.applied_at) throw invalidState('it is applied already');
          const accountId = principal.account.id;
          const resources = (row.changes as { resources: PlanResource[] }).resources;
          // Each resource must still exist and be in no project.
          for (const type of Object.keys(IMPORTABLE) as IdTableType[]) {
            const ids = resources.filter((r) => r.type === type).map((r) => String(r.physicalId));
            if (!ids.length) continue;
            const existing = await existingIds(sql, accountId, type, ids);
            const managed = await managedElsewhere(sql, accountId, type);
            const gone = ids.find((id) => !existing.has(id) || managed.has(id));
            if (gone) throw invalidState(`${type} ${gone} was deleted or is managed by a project since the plan was made`);
          }
          for (const r of resources) {
            await saveMapping(sql, row.project_id, { type: r.type, logical_id: r.logicalId, physical_id: String(r.physicalId), payload_hash: null });
          }
          await markImport(sql, row.id, 'applied');
          return { status: 200, body: toImportPlan((await lockImport(sql, accountId, row.id))!) };
        }),
    }),
    defineRoute({
      method: 'POST',
      path: '/next/projects/imports/{planId}/commit',
      operationId: 'commitImportPlan',
      summary: 'Commit an applied import plan (it can no longer be cancelled)',
      tag,
      access: 'write',
      errors: [403, 404],
      schema: { params: PlanParams, responses: { 200: ImportPlan } },
      handler: async ({ principal, params }) =>
        withPlan(principal, params.planId, async (row) => {
          if (!row.applied_at) throw invalidState('it is not applied');
          if (row.committed_at) throw invalidState('it is committed already');
          await markImport(sql, row.id, 'committed');
          return { status: 200, body: toImportPlan((await lockImport(sql, principal.account.id, row.id))!) };
        }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/next/projects/imports/{planId}',
      operationId: 'cancelImportPlan',
      summary: 'Cancel an import plan; an applied one gives its resources back (they stay in the account, outside the project)',
      tag,
      access: 'write',
      errors: [403, 404],
      schema: { params: PlanParams, responses: { 204: null } },
      handler: async ({ principal, params }) =>
        withPlan(principal, params.planId, async (row) => {
          if (row.committed_at) throw invalidState('it is committed');
          if (row.applied_at) {
            for (const r of (row.changes as { resources: PlanResource[] }).resources) await deleteMapping(sql, row.project_id, r.type, r.logicalId);
          }
          await deleteImport(sql, row.id);
          return { status: 204 };
        }),
    }),
  ];
}
