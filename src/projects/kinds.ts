import type { TObject } from '@sinclair/typebox';
import type { Principal } from '../accounts/index.js';
import { cliCheckBody, createBodySchema } from '../checks/index.js';
import { DashboardBody } from '../dashboards/index.js';
import { HttpError } from '../http/errors.js';
import type { CallInput } from '../http/invoke.js';
import type { Method } from '../http/route.js';
import { IGNORED_PREFIX } from '../http/schemas.js';
import { CHANNEL_TYPES } from '../model/alerts.js';
import { CHECK_TYPES, type CheckType, SEGMENT_OF } from '../model/checks.js';
import type { ResourceType } from './model.js';

/** A member resource as the deploy applies it: its payload, where it was in the body, its references resolved. */
export interface Desired {
  index: number;
  type: ResourceType;
  logicalId: string;
  payload: Record<string, unknown>;
}

/** What a kind needs while a deploy applies it. */
export interface ApplyContext {
  principal: Principal;
  /** A resource route, called in-process as the deploying key. */
  call(method: Method, path: string, input?: CallInput): Promise<{ status: number; body?: unknown }>;
  /** The physical id a `{ref}` (or a plain id) in `field` of the resource names. */
  resolve(desired: Desired, field: string, value: unknown, type: ResourceType): string | number;
  /** Slug names of the private locations assigned to a check or group (by its logicalId). */
  assignedLocations(type: 'check' | 'check-group', logicalId: string): string[] | undefined;
  sharedFiles: { path: string; content: string }[];
  /** The check type stored under a check id (undefined when it is gone). */
  checkTypeOf(id: string): Promise<CheckType | undefined>;
}

/** An error in one resource of the body: the CLI prints the message as it is. */
export function resourceError(desired: Pick<Desired, 'index' | 'logicalId'>, message: string, status = 400): HttpError {
  return new HttpError(status, `resources[${desired.index}] (logicalId "${desired.logicalId}"): ${message}`);
}

export interface Kind {
  /** Applied in this order (lowest first); removed the other way. */
  order: number;
  /** Why the service cannot take resources of this type (a 400 naming it), when it cannot. */
  unsupported?: string;
  /** Whether physical ids are numbers (diff and references show them as numbers). */
  numeric: boolean;
  /** Fields that reference other resources, and the type each names. */
  references: Record<string, ResourceType>;
  /** The body written for the resource, references resolved; what its hash is taken of. */
  body(ctx: ApplyContext, desired: Desired): unknown;
  /** Writes the resource (a new one when `physicalId` is undefined or gone); returns its physical id. */
  write(ctx: ApplyContext, desired: Desired, body: unknown, physicalId: string | undefined): Promise<string>;
  /** Removes the resource (gone already is fine). */
  remove(ctx: ApplyContext, physicalId: string): Promise<void>;
}

const idOf = (reply: { body?: unknown }) => String((reply.body as { id: string | number }).id);

/** Calls a route and treats 404 as "not there". */
async function orMissing<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof HttpError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * A PUT that merges the body onto the stored resource would keep fields the code no longer sets: each top-level
 * field of `schema` the body leaves out is sent as `undefined` (in-process calls keep it), which the route's
 * merge and validation turn into the field's default, so a deploy states the whole resource.
 */
function replacing(schema: TObject, body: Record<string, unknown>, keep: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  for (const [name, field] of Object.entries(schema.properties)) {
    if (name in out || keep.includes(name)) continue;
    if ((field as { description?: string }).description?.startsWith(IGNORED_PREFIX)) continue;
    out[name] = undefined;
  }
  return out;
}

/** Resolves the reference fields of a payload (top level only, as the CLI sends them). */
function withReferences(ctx: ApplyContext, desired: Desired, refs: Record<string, ResourceType>): Record<string, unknown> {
  const out = { ...desired.payload };
  for (const [field, type] of Object.entries(refs)) {
    const value = out[field];
    if (value !== undefined && value !== null) out[field] = ctx.resolve(desired, field, value, type);
  }
  return out;
}

function checkBody(ctx: ApplyContext, desired: Desired): Record<string, unknown> {
  const payload = withReferences(ctx, desired, { groupId: 'check-group' });
  // triggerIncident names its status-page service by reference (`service.ref()`) or id.
  const trigger = payload.triggerIncident as { serviceId?: unknown } | null | undefined;
  if (trigger && trigger.serviceId !== undefined && trigger.serviceId !== null) {
    payload.triggerIncident = { ...trigger, serviceId: String(ctx.resolve(desired, 'triggerIncident', trigger.serviceId, 'status-page-service')) };
  }
  const converted = cliCheckBody(payload, ctx.sharedFiles);
  if ('problem' in converted) throw resourceError(desired, converted.problem);
  const body = converted.body;
  const type = body.checkType as CheckType;
  if (!CHECK_TYPES.includes(type)) throw resourceError(desired, `checkType must be one of: ${CHECK_TYPES.join(', ')}`);
  const locations = ctx.assignedLocations('check', desired.logicalId);
  if (locations || body.privateLocations === undefined) body.privateLocations = locations ?? [];
  return body;
}

function groupBody(ctx: ApplyContext, desired: Desired): Record<string, unknown> {
  const body = { ...desired.payload };
  const locations = ctx.assignedLocations('check-group', desired.logicalId);
  if (locations || body.privateLocations === undefined) body.privateLocations = locations ?? [];
  return body;
}

/** Types of the anchor's newer status pages this service does not have (a 400 naming them). */
const unsupported = (type: string, why: string): Kind => ({
  order: 0,
  numeric: false,
  references: {},
  unsupported: `this service cannot deploy resources of type ${type}: ${why}`,
  body: () => undefined,
  write: async () => {
    throw new Error('unsupported');
  },
  remove: async () => {},
});

/** A status page's body: its cards' services (`{ref}`s to status-page-services, or ids) resolved to ids. */
function statusPageBody(ctx: ApplyContext, desired: Desired): Record<string, unknown> {
  const p = desired.payload as { cards?: { name: string; services?: unknown[] }[] } & Record<string, unknown>;
  return {
    name: p.name,
    url: p.url,
    customDomain: p.customDomain ?? null,
    logo: p.logo ?? null,
    redirectTo: p.redirectTo ?? null,
    favicon: p.favicon ?? null,
    defaultTheme: p.defaultTheme ?? 'AUTO',
    cards: (p.cards ?? []).map((c) => ({
      name: c.name,
      services: (c.services ?? []).map((s) => ({ id: String(ctx.resolve(desired, 'cards', s, 'status-page-service')) })),
    })),
  };
}

/** Private-location assignments become the `privateLocations` of their check or group: nothing of their own to write. */
const assignment = (target: 'checkId' | 'groupId'): Kind => ({
  order: 5,
  numeric: false,
  references: { privateLocationId: 'private-location', [target]: target === 'checkId' ? 'check' : 'check-group' },
  body: (ctx, desired) => withReferences(ctx, desired, assignment(target).references),
  write: async (_ctx, _desired, body) => {
    const b = body as Record<string, string | number>;
    return `${b.privateLocationId}:${target === 'checkId' ? 'check' : 'group'}:${b[target]}`;
  },
  remove: async () => {},
});

/** How a deploy applies each resource type (a new type does not compile until it is here). */
export const KINDS = {
  'status-page-service': {
    order: 0,
    numeric: false,
    references: {},
    body: (_ctx, desired) => ({ name: desired.payload.name }),
    async write(ctx, _desired, body, physicalId) {
      if (physicalId) {
        const updated = await orMissing(() => ctx.call('PUT', '/v1/status-pages/services/{serviceId}', { params: { serviceId: physicalId }, body }));
        if (updated) return physicalId;
      }
      return idOf(await ctx.call('POST', '/v1/status-pages/services', { body }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/status-pages/services/{serviceId}', { params: { serviceId: physicalId } }));
    },
  },
  'status-page': {
    order: 5,
    numeric: false,
    references: { cards: 'status-page-service' },
    body: statusPageBody,
    async write(ctx, _desired, body, physicalId) {
      if (physicalId) {
        const updated = await orMissing(() => ctx.call('PUT', '/v1/status-pages/{statusPageId}', { params: { statusPageId: physicalId }, body }));
        if (updated) return physicalId;
      }
      return idOf(await ctx.call('POST', '/v1/status-pages', { body }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/status-pages/{statusPageId}', { params: { statusPageId: physicalId } }));
    },
  },
  'status-page-component': unsupported('status-page-component', 'its status pages show services in cards (status-page-service), not components'),
  'status-page-automation-rule': unsupported('status-page-automation-rule', "incidents open from a check's triggerIncident instead"),
  'private-location': {
    order: 1,
    numeric: false,
    references: {},
    body: (_ctx, desired) => desired.payload,
    async write(ctx, desired, body, physicalId) {
      const b = body as { name: string; slugName?: string; icon?: string; proxyUrl?: string | null };
      if (physicalId) {
        const current = await orMissing(() => ctx.call('GET', '/v1/private-locations/{id}', { params: { id: physicalId } }));
        if (current) {
          const slug = (current.body as { slugName: string }).slugName;
          if (b.slugName !== undefined && b.slugName !== slug) throw resourceError(desired, `slugName cannot change (it is "${slug}")`);
          await ctx.call('PUT', '/v1/private-locations/{id}', {
            params: { id: physicalId },
            body: { name: b.name, icon: b.icon, proxyUrl: b.proxyUrl ?? null },
          });
          return physicalId;
        }
      }
      return idOf(await ctx.call('POST', '/v1/private-locations', { body: b }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/private-locations/{id}', { params: { id: physicalId } }));
    },
  },
  'check-group': {
    order: 2,
    numeric: true,
    references: {},
    body: groupBody,
    async write(ctx, _desired, body, physicalId) {
      const { v, ...rest } = body as Record<string, unknown>;
      const version = v === 2 ? 'v2' : 'v1';
      const query = { autoAssignAlerts: false };
      if (physicalId) {
        const updated = await orMissing(() => ctx.call('PUT', `/${version}/check-groups/{id}`, { params: { id: physicalId }, query, body: rest }));
        if (updated) return physicalId;
      }
      return idOf(await ctx.call('POST', `/${version}/check-groups`, { query, body: rest }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/check-groups/{id}', { params: { id: physicalId } }));
    },
  },
  'alert-channel': {
    order: 3,
    numeric: true,
    references: {},
    body(_ctx, desired) {
      const type = desired.payload.type as string;
      if (!(CHANNEL_TYPES as readonly string[]).includes(type)) {
        throw resourceError(desired, `alert channels of type ${JSON.stringify(type)} are not delivered by this service; it sends ${CHANNEL_TYPES.join(', ')}`);
      }
      return desired.payload;
    },
    async write(ctx, _desired, body, physicalId) {
      if (physicalId) {
        const updated = await orMissing(() => ctx.call('PUT', '/v1/alert-channels/{id}', { params: { id: physicalId }, body }));
        if (updated) return physicalId;
      }
      return idOf(await ctx.call('POST', '/v1/alert-channels', { body }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/alert-channels/{id}', { params: { id: physicalId } }));
    },
  },
  check: {
    order: 4,
    numeric: false,
    references: { groupId: 'check-group', triggerIncident: 'status-page-service' },
    body: checkBody,
    async write(ctx, _desired, body, physicalId) {
      const b = body as Record<string, unknown> & { checkType: CheckType };
      const query = { autoAssignAlerts: false };
      if (physicalId) {
        const stored = await ctx.checkTypeOf(physicalId);
        if (stored === b.checkType) {
          const segment = SEGMENT_OF[b.checkType];
          await ctx.call('PUT', `/v1/checks/${segment}/{id}`, {
            params: { id: physicalId },
            query,
            body: replacing(createBodySchema(segment), b, ['alertChannelSubscriptions']),
          });
          return physicalId;
        }
        // Another type under the same logicalId: the old check goes, a new one of the new type comes.
        if (stored) await ctx.call('DELETE', '/v1/checks/{id}', { params: { id: physicalId } });
      }
      return idOf(await ctx.call('POST', '/v1/checks', { query, body: b }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/checks/{id}', { params: { id: physicalId } }));
    },
  },
  'alert-channel-subscription': {
    order: 5,
    numeric: false,
    references: { alertChannelId: 'alert-channel', checkId: 'check', groupId: 'check-group' },
    body(ctx, desired) {
      const body = withReferences(ctx, desired, KINDS['alert-channel-subscription'].references);
      if ((body.checkId == null) === (body.groupId == null)) throw resourceError(desired, 'give exactly one of checkId and groupId');
      return {
        alertChannelId: body.alertChannelId,
        ...(body.checkId != null ? { checkId: body.checkId } : { groupId: body.groupId }),
        activated: body.activated ?? true,
      };
    },
    async write(ctx, _desired, body) {
      const { alertChannelId, ...target } = body as { alertChannelId: number; checkId?: string; groupId?: number; activated: boolean };
      await ctx.call('PUT', '/v1/alert-channels/{id}/subscriptions', { params: { id: alertChannelId }, body: target });
      return target.checkId !== undefined ? `${alertChannelId}:check:${target.checkId}` : `${alertChannelId}:group:${target.groupId}`;
    },
    async remove() {
      // Done by the deployer through the channel repository (there is no route that removes one subscription).
    },
  },
  'private-location-check-assignment': assignment('checkId'),
  'private-location-group-assignment': assignment('groupId'),
  'maintenance-window': {
    order: 6,
    numeric: true,
    references: {},
    body: (_ctx, desired) => desired.payload,
    async write(ctx, _desired, body, physicalId) {
      if (physicalId) {
        const updated = await orMissing(() => ctx.call('PUT', '/v1/maintenance-windows/{id}', { params: { id: physicalId }, body }));
        if (updated) return physicalId;
      }
      return idOf(await ctx.call('POST', '/v1/maintenance-windows', { body }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/maintenance-windows/{id}', { params: { id: physicalId } }));
    },
  },
  dashboard: {
    order: 7,
    numeric: true,
    references: {},
    body: (_ctx, desired) => desired.payload,
    async write(ctx, _desired, body, physicalId) {
      if (physicalId) {
        const params = { dashboardId: physicalId };
        const updated = await orMissing(() =>
          ctx.call('PUT', '/v1/dashboards/{dashboardId}', { params, body: replacing(DashboardBody, body as Record<string, unknown>, ['keys']) }),
        );
        if (updated) return physicalId;
      }
      return idOf(await ctx.call('POST', '/v1/dashboards', { body }));
    },
    async remove(ctx, physicalId) {
      await orMissing(() => ctx.call('DELETE', '/v1/dashboards/{dashboardId}', { params: { dashboardId: physicalId } }));
    },
  },
} satisfies Record<ResourceType, Kind>;

/** The routes a deploy calls in-process. */
export const DEPLOY_ROUTES: ReadonlyArray<readonly [Method, string]> = [
  ['GET', '/v1/private-locations/{id}'],
  ['POST', '/v1/private-locations'],
  ['PUT', '/v1/private-locations/{id}'],
  ['DELETE', '/v1/private-locations/{id}'],
  ['POST', '/v1/check-groups'],
  ['POST', '/v2/check-groups'],
  ['PUT', '/v1/check-groups/{id}'],
  ['PUT', '/v2/check-groups/{id}'],
  ['DELETE', '/v1/check-groups/{id}'],
  ['POST', '/v1/alert-channels'],
  ['PUT', '/v1/alert-channels/{id}'],
  ['DELETE', '/v1/alert-channels/{id}'],
  ['PUT', '/v1/alert-channels/{id}/subscriptions'],
  ['POST', '/v1/checks'],
  ...Object.values(SEGMENT_OF).map((segment) => ['PUT', `/v1/checks/${segment}/{id}`] as const),
  ['DELETE', '/v1/checks/{id}'],
  ['POST', '/v1/maintenance-windows'],
  ['PUT', '/v1/maintenance-windows/{id}'],
  ['DELETE', '/v1/maintenance-windows/{id}'],
  ['POST', '/v1/dashboards'],
  ['PUT', '/v1/dashboards/{dashboardId}'],
  ['DELETE', '/v1/dashboards/{dashboardId}'],
  ['POST', '/v1/status-pages/services'],
  ['PUT', '/v1/status-pages/services/{serviceId}'],
  ['DELETE', '/v1/status-pages/services/{serviceId}'],
  ['POST', '/v1/status-pages'],
  ['PUT', '/v1/status-pages/{statusPageId}'],
  ['DELETE', '/v1/status-pages/{statusPageId}'],
];
