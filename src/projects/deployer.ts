import { createHash } from 'node:crypto';
import type { Principal } from '../accounts/index.js';
import { deleteSubscription } from '../alerts/index.js';
import { checkTypesOf } from '../checks/index.js';
import { HttpError } from '../http/errors.js';
import type { RouteCaller } from '../http/invoke.js';
import { groupBy } from '../model/collections.js';
import type { Sql } from '../storage/postgres.js';
import { type ApplyContext, type Desired, KINDS, type Kind, resourceError } from './kinds.js';
import type { Change, DeployResponse, ProjectSync, Resource, ResourceType } from './model.js';
import {
  deleteMapping,
  existingIds,
  existingSubscriptions,
  type IdTableType,
  locationSlugs,
  type MappingRow,
  mappingsOf,
  type ProjectRow,
  saveMapping,
  toProject,
  upsertProject,
} from './repository.js';

const key = (type: string, logicalId: string) => `${type}\u0000${logicalId}`;
const isRef = (v: unknown): v is { ref: string } =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { ref?: unknown }).ref === 'string' && Object.keys(v).length === 1;

const ID_TYPES = new Set<ResourceType>([
  'check',
  'check-group',
  'alert-channel',
  'maintenance-window',
  'private-location',
  'dashboard',
  'status-page-service',
  'status-page',
]);

/** A deploy body checked as a whole: what is in it, what it names outside itself, nothing written yet. */
export interface Prepared {
  project: ProjectSync['project'];
  members: Desired[];
  /** Resources of the account the body names (`member: false`): type+logicalId → physical id. */
  friends: Map<string, string>;
  sharedFiles: ProjectSync['sharedFiles'];
}

/**
 * Checks the body before anything changes: known and supported types, one resource per (type, logicalId), every
 * `{ref}` naming a resource of the body, and every friend (`member: false`) naming a resource of the account.
 */
export async function prepare(sql: Sql, accountId: string, sync: ProjectSync): Promise<Prepared> {
  const seen = new Map<string, number>();
  const members: Desired[] = [];
  const friendsWanted: { resource: Resource; index: number }[] = [];
  sync.resources.forEach((resource, index) => {
    const at = { index, logicalId: resource.logicalId };
    const kind: Kind = KINDS[resource.type];
    if (kind.unsupported) throw resourceError(at, kind.unsupported);
    const k = key(resource.type, resource.logicalId);
    if (seen.has(k)) throw resourceError(at, `another ${resource.type} (resources[${seen.get(k)}]) has the same logicalId`);
    seen.set(k, index);
    if (resource.member) {
      if (!resource.payload) throw resourceError(at, 'payload is required for a member resource');
      members.push({ index, type: resource.type, logicalId: resource.logicalId, payload: resource.payload });
    } else {
      if (resource.physicalId === undefined || resource.physicalId === null)
        throw resourceError(at, 'physicalId is required for a resource that is not a member');
      if (!ID_TYPES.has(resource.type)) throw resourceError(at, `a ${resource.type} cannot be referenced by its physicalId`);
      friendsWanted.push({ resource, index });
    }
  });
  // Every reference names a resource of the body, of the type its field implies.
  const byLogicalId = groupBy(
    sync.resources,
    (r) => r.logicalId,
    (r) => r.type,
  );
  for (const m of members) {
    const refs = KINDS[m.type].references as Record<string, ResourceType>;
    walkRefs(m.payload, '', (field, ref) => {
      const types = byLogicalId.get(ref) ?? [];
      const wanted = refs[field];
      if (!types.length || (wanted && !types.includes(wanted))) {
        throw resourceError(
          m,
          `${field} refers to ${wanted ?? 'resource'} "${ref}", which is not in the project (neither made by it nor referenced with fromId)`,
        );
      }
    });
  }
  const friends = new Map<string, string>();
  for (const type of ID_TYPES) {
    const wanted = friendsWanted.filter((f) => f.resource.type === type);
    if (!wanted.length) continue;
    const found = await existingIds(
      sql,
      accountId,
      type as IdTableType,
      wanted.map((f) => String(f.resource.physicalId)),
    );
    for (const { resource, index } of wanted) {
      const physicalId = String(resource.physicalId);
      if (!found.has(physicalId))
        throw resourceError({ index, logicalId: resource.logicalId }, `physicalId ${JSON.stringify(resource.physicalId)} names no ${type} of this account`);
      friends.set(key(type, resource.logicalId), physicalId);
    }
  }
  return { project: sync.project, members, friends, sharedFiles: sync.sharedFiles };
}

/** Calls `visit(field, logicalId)` for every `{ref}` in a payload; `field` is the top-level field it is under. */
function walkRefs(value: unknown, field: string, visit: (field: string, ref: string) => void): void {
  if (isRef(value)) {
    visit(field, value.ref);
    return;
  }
  if (Array.isArray(value)) for (const item of value) walkRefs(item, field, visit);
  else if (value !== null && typeof value === 'object') {
    for (const [name, item] of Object.entries(value)) walkRefs(item, field || name, visit);
  }
}

/** JSON with object keys sorted: equal bodies hash equally whatever order their keys came in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
const hashOf = (body: unknown) =>
  createHash('sha256')
    .update(canonical(body) ?? 'null')
    .digest('hex');

export interface ApplyOptions {
  preserveResources: boolean;
  /** Called with the share of the work done (0..1) after each resource. */
  onProgress?: (share: number) => Promise<void>;
  /** Asked between resources: true stops the deploy (it throws `Cancelled`). */
  cancelled?: () => Promise<boolean>;
}

export class Cancelled extends Error {
  constructor() {
    super('The deployment was cancelled');
    this.name = 'Cancelled';
  }
}

export interface Applied {
  response: DeployResponse;
  /** Checks the deploy created or changed (for scheduleOnDeploy). */
  changedChecks: string[];
}

/**
 * Makes the account hold what the body states, through the resources' own routes (their rules, defaults and
 * errors), in the caller's transaction: members are created or updated (an unchanged body writes nothing),
 * members gone from the body are deleted (or only left, DETACHED, with preserveResources), friends are never
 * written. `prepared` undefined destroys the project.
 */
export async function applyProject(
  sql: Sql,
  caller: RouteCaller,
  principal: Principal,
  target: { prepared: Prepared } | { destroy: ProjectRow },
  options: ApplyOptions,
): Promise<Applied> {
  const accountId = principal.account.id;
  const project = 'prepared' in target ? await upsertProject(sql, accountId, target.prepared.project) : target.destroy;
  const prepared: Prepared =
    'prepared' in target
      ? target.prepared
      : { project: { name: project.name, logicalId: project.logical_id }, members: [], friends: new Map(), sharedFiles: [] };
  const mappings = new Map((await mappingsOf(sql, project.id)).map((m) => [key(m.type, m.logical_id), m]));
  const resolved = new Map<string, string>(prepared.friends);
  const diff: Change[] = [];
  const changedChecks: string[] = [];
  const members = [...prepared.members].sort((a, b) => KINDS[a.type].order - KINDS[b.type].order || a.index - b.index);
  const wanted = new Set(members.map((m) => key(m.type, m.logicalId)));
  const removed = [...mappings.values()].filter((m) => !wanted.has(key(m.type, m.logical_id))).sort((a, b) => KINDS[b.type].order - KINDS[a.type].order);
  const present = await stillThere(sql, accountId, [...mappings.values()]);
  const assigned = await assignments(sql, accountId, members, prepared.friends);
  const total = members.length + removed.length;
  let done = 0;
  const step = async () => {
    done += 1;
    if (options.cancelled && done % 10 === 0 && (await options.cancelled())) throw new Cancelled();
    await options.onProgress?.(done / Math.max(total, 1));
  };

  const ctx: ApplyContext = {
    principal,
    call: (method, path, input) => caller.call(principal, method, path, input),
    sharedFiles: prepared.sharedFiles,
    checkTypeOf: async (id) => (await checkTypesOf(sql, accountId, [id])).get(id),
    assignedLocations: (type, logicalId) => assigned.get(key(type, logicalId)),
    resolve(desired, field, value, type) {
      if (!isRef(value)) return value as string | number;
      const physical = resolved.get(key(type, value.ref));
      if (physical === undefined) throw resourceError(desired, `${field} refers to ${type} "${value.ref}", which is not in the project`);
      return KINDS[type].numeric ? Number(physical) : physical;
    },
  };

  for (const desired of members) {
    const kind: Kind = KINDS[desired.type];
    const mapping = mappings.get(key(desired.type, desired.logicalId));
    const body = kind.body(ctx, desired);
    const hash = hashOf(body);
    const known = mapping && present.has(key(desired.type, mapping.physical_id)) ? mapping.physical_id : undefined;
    let physicalId = known;
    if (!known || mapping!.payload_hash !== hash) {
      try {
        physicalId = await kind.write(ctx, desired, body, known);
      } catch (err) {
        throw asResourceError(err, desired);
      }
      if (desired.type === 'check') changedChecks.push(physicalId);
      await saveMapping(sql, project.id, { type: desired.type, logical_id: desired.logicalId, physical_id: physicalId, payload_hash: hash });
    }
    resolved.set(key(desired.type, desired.logicalId), physicalId!);
    diff.push(change(desired.type, desired.logicalId, physicalId!, known ? 'UPDATE' : 'CREATE'));
    await step();
  }

  // What the body no longer has, dependents first; a physical resource another member now claims is only let go.
  const claimed = new Set([...resolved.entries()].map(([k, physical]) => key(k.split('\u0000')[0], physical)));
  for (const m of removed) {
    if (!options.preserveResources && !claimed.has(key(m.type, m.physical_id)) && present.has(key(m.type, m.physical_id))) {
      try {
        if (m.type === 'alert-channel-subscription') await removeSubscription(sql, accountId, m.physical_id);
        else await KINDS[m.type].remove(ctx, m.physical_id);
      } catch (err) {
        throw asRemovalError(err, m);
      }
    }
    await deleteMapping(sql, project.id, m.type, m.logical_id);
    diff.push(change(m.type, m.logical_id, m.physical_id, options.preserveResources ? 'DETACHED' : 'DELETE'));
    await step();
  }
  return { response: { project: toProject(project), diff }, changedChecks };
}

function change(type: ResourceType, logicalId: string, physicalId: string, action: Change['action']): Change {
  const kind: Kind = KINDS[type];
  // Subscriptions and assignments have no id of their own to show.
  if (type === 'alert-channel-subscription' || (type.startsWith('private-location-') && type !== 'private-location')) return { type, logicalId, action };
  return { type, logicalId, physicalId: kind.numeric ? Number(physicalId) : physicalId, action };
}

/** A resource route's refusal, told as the deploy's: naming the resource and the field in its payload. */
function asResourceError(err: unknown, desired: Desired): unknown {
  if (!(err instanceof HttpError) || err.status >= 500 || err.message.startsWith('resources[')) return err;
  const errors = (err.attributes?.errors as { field: string; message: string }[] | undefined) ?? [];
  const detail = errors.length ? errors.map((e) => `${e.field.replace(/^body\./, '')} ${e.message}`).join('; ') : err.message;
  return resourceError(desired, detail, err.status === 402 ? 402 : 400);
}

function asRemovalError(err: unknown, m: MappingRow): unknown {
  if (!(err instanceof HttpError) || err.status >= 500) return err;
  return new HttpError(400, `${m.type} "${m.logical_id}" (removed from the project) cannot be deleted: ${err.message}`);
}

async function removeSubscription(sql: Sql, accountId: string, physicalId: string): Promise<void> {
  const [channel, kind, target] = physicalId.split(':');
  await deleteSubscription(sql, accountId, Number(channel), kind === 'check' ? { checkId: target } : { groupId: Number(target) });
}

/** Which mapped physical resources still exist (someone may have deleted one by hand): type+physicalId keys. */
async function stillThere(sql: Sql, accountId: string, mappings: MappingRow[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const type of ID_TYPES) {
    const ids = mappings.filter((m) => m.type === type).map((m) => m.physical_id);
    if (!ids.length) continue;
    for (const id of await existingIds(sql, accountId, type as IdTableType, ids)) out.add(key(type, id));
  }
  const subscriptions = mappings.filter((m) => m.type === 'alert-channel-subscription');
  if (subscriptions.length) {
    const existing = await existingSubscriptions(sql, accountId);
    for (const m of subscriptions) if (existing.has(m.physical_id)) out.add(key(m.type, m.physical_id));
  }
  for (const m of mappings) if (m.type.startsWith('private-location-')) out.add(key(m.type, m.physical_id));
  return out;
}

/** Slug names of the private locations each check and group of the body is assigned (type+logicalId keys). */
async function assignments(sql: Sql, accountId: string, members: Desired[], friends: Map<string, string>): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const links = members.filter((m) => m.type === 'private-location-check-assignment' || m.type === 'private-location-group-assignment');
  if (!links.length) return out;
  const memberSlugs = new Map(members.filter((m) => m.type === 'private-location').map((m) => [m.logicalId, m.payload.slugName as string]));
  const accountSlugs = await locationSlugs(sql, accountId);
  for (const link of links) {
    const location = link.payload.privateLocationId;
    const ref = isRef(location) ? location.ref : undefined;
    const friend = ref !== undefined ? friends.get(key('private-location', ref)) : typeof location === 'string' ? location : undefined;
    const slug = ref !== undefined && memberSlugs.has(ref) ? memberSlugs.get(ref) : friend !== undefined ? accountSlugs.get(friend) : undefined;
    if (slug === undefined) throw resourceError(link, 'privateLocationId names no private location of the project or the account');
    const isCheck = link.type === 'private-location-check-assignment';
    const target = link.payload[isCheck ? 'checkId' : 'groupId'];
    if (!isRef(target)) throw resourceError(link, `${isCheck ? 'checkId' : 'groupId'} must refer to a ${isCheck ? 'check' : 'check group'} of the project`);
    const k = key(isCheck ? 'check' : 'check-group', target.ref);
    out.set(k, [...new Set([...(out.get(k) ?? []), slug])].sort());
  }
  return out;
}
