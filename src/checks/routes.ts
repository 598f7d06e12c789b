import { Type } from '@sinclair/typebox';
import { notFound } from '../http/errors.js';
import { listReply, PageQuery, pageOffset } from '../http/pagination.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { StringEnum, TaggedUnion } from '../http/schemas.js';
import { compileValidator } from '../http/validation.js';
import { may } from '../model/accounts.js';
import { CHECK_TYPES, type CheckType, CREATABLE_TYPES, SEGMENT_OF, type TypeSegment } from '../model/checks.js';
import type { HeartbeatSettings } from '../model/heartbeats.js';
import { keepStoredSecrets } from '../model/variables.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  type CheckInput,
  checkRules,
  deleteCheck,
  enforceBrowserLimit,
  expectPing,
  findCheckRow,
  insertCheck,
  listCheckRows,
  readCheck,
  readChecks,
  updateCheck,
} from './repository.js';
import { CheckResponse, createBodySchema, fieldsOf, genericUpdateSchema, ignoredFieldsOf, updateBodySchema } from './schemas.js';
import { autoAssignQuery, saveSubscriptions, subscribeToChannels } from './subscriptions.js';
import { checkTargetRules } from './targets.js';

const SEGMENTS = Object.keys(CREATABLE_TYPES) as TypeSegment[];
const IGNORED = Object.fromEntries(SEGMENTS.map((s) => [s, ignoredFieldsOf(s)])) as Record<TypeSegment, string[][]>;

/** The body without the fields accepted only for compatibility, which are never stored. */
function withoutIgnored(segment: TypeSegment, data: CheckInput): CheckInput {
  const copy = structuredClone(data);
  for (const path of IGNORED[segment]) {
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], copy);
    if (parent && typeof parent === 'object') delete (parent as Record<string, unknown>)[path[path.length - 1]];
  }
  return copy;
}

const AutoAssignQuery = autoAssignQuery('check');

const ReadQuery = Type.Object(
  {
    includeDependencies: Type.Boolean({ default: false, description: 'Add the dependency files to the result' }),
    applyGroupSettings: Type.Boolean({ default: false, description: "Return a grouped check with its group's settings applied" }),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    ...PageQuery.properties,
    checkType: Type.Optional(StringEnum(CHECK_TYPES)),
    tag: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 100, description: 'Checks with at least one of these tags' }),
    ),
    search: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Part of the name, any case' })),
    status: Type.Optional(
      StringEnum(['passing', 'failing', 'degraded'] as const, {
        description: 'By the current status (GET /v1/check-statuses); checks without results match none',
      }),
    ),
    apiCheckUrlFilterPattern: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'Part of the request URL; only API checks match' })),
    ...ReadQuery.properties,
  },
  { additionalProperties: false },
);

/**
 * The anchor reads checks at /v1, /v2 and /v3: the same checks; /v3 shows intent's required outcomes and
 * must-preserve items as one typed `constraints` list.
 */
const READ_VERSIONS = ['v1', 'v2', 'v3'] as const;
type ReadVersion = (typeof READ_VERSIONS)[number];

function inVersion<T extends Record<string, unknown>>(version: ReadVersion, checks: T[]): T[] {
  if (version !== 'v3') return checks;
  return checks.map((check) => {
    const intent = check.intent as { goal?: string; requiredOutcomes?: string[]; mustPreserve?: string[] } | null | undefined;
    if (!intent) return check;
    const { requiredOutcomes = [], mustPreserve = [], ...rest } = intent;
    const constraints = [
      ...requiredOutcomes.map((statement) => ({ type: 'REQUIRED_OUTCOME', statement })),
      ...mustPreserve.map((statement) => ({ type: 'MUST_PRESERVE', statement })),
    ];
    return { ...check, intent: { ...rest, constraints } };
  });
}

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

const TYPE_NAMES: Record<TypeSegment, string> = {
  browser: 'browser check',
  api: 'API check',
  multistep: 'multi-step check',
  icmp: 'ICMP monitor',
  url: 'URL monitor',
  tcp: 'TCP monitor',
  dns: 'DNS monitor',
  heartbeat: 'heartbeat monitor',
  playwright: 'Playwright check',
  agentic: 'agentic check',
  traceroute: 'traceroute monitor',
  ssl: 'SSL monitor',
  grpc: 'gRPC monitor',
};

export function checkRoutes({ sql, config, outbound, blobs }: Deps): AnyRoute[] {
  const tag = 'Checks';
  const typeValidators = Object.fromEntries(SEGMENTS.map((s) => [s, compileValidator('body', createBodySchema(s))])) as Record<
    TypeSegment,
    (v: unknown) => unknown
  >;

  /** A check as its writer reads it back (a key that may write sees its channels' header values). */
  async function readOne(db: Sql, accountId: string, id: string) {
    const check = await readCheck(db, accountId, id, { publicUrl: config.publicUrl, revealHeaders: true });
    if (!check) throw notFound();
    return check;
  }

  /** A Playwright suite has a script or a code bundle; bundles and snapshots it names are blobs this account uploaded. */
  async function blobRules(accountId: string, type: CheckType, data: CheckInput, rules: Rules) {
    const bundle = data.codeBundlePath as string | null | undefined;
    if (type === 'PLAYWRIGHT')
      rules.check(Boolean(data.script) || Boolean(bundle), 'body.script', 'required', 'is required unless codeBundlePath names a code bundle');
    if (bundle) rules.check(await blobs.has(accountId, bundle), 'body.codeBundlePath', 'exists', 'names no code bundle this account uploaded');
    const snapshots = (data.snapshots as { key: string }[] | null | undefined) ?? [];
    for (const [i, snapshot] of snapshots.entries()) {
      rules.check(await blobs.has(accountId, snapshot.key), `body.snapshots[${i}].key`, 'exists', 'names no file this account uploaded');
    }
  }

  /** Saves a validated body as a new check or over an existing one, in one transaction. */
  async function save(accountId: string, type: CheckType, body: CheckInput, autoAssign: boolean, existingId?: string) {
    let data = withoutIgnored(SEGMENT_OF[type]!, body);
    const targets = new Rules();
    checkTargetRules(type, data, outbound, targets);
    await blobRules(accountId, type, data, targets);
    targets.throwIfAny();
    return transaction(sql, async (db) => {
      let id = existingId;
      if (id) {
        const current = await findCheckRow(db, accountId, id, true);
        if (!current) throw notFound();
        new Rules().check(current.check_type === type, 'body.checkType', 'immutable', `cannot change from ${current.check_type}`).throwIfAny();
        data = { ...data, environmentVariables: keepStoredSecrets(data.environmentVariables, current.data.environmentVariables) };
        await checkRules(db, accountId, data);
        await updateCheck(db, id, data);
      } else {
        if (type === 'BROWSER') await enforceBrowserLimit(db, accountId);
        await checkRules(db, accountId, data);
        id = await insertCheck(db, accountId, type, data);
      }
      await saveSubscriptions(db, accountId, { checkId: id }, data.alertChannelSubscriptions, autoAssign);
      // A saved heartbeat check expects its next ping a full period (and grace) from now.
      if (type === 'HEARTBEAT') await expectPing(db, accountId, id, data.heartbeat as HeartbeatSettings, Date.now());
      if (!existingId) await subscribeToChannels(db, accountId, { checkId: id }, true);
      return readOne(db, accountId, id);
    });
  }

  /**
   * An update: the body's fields replace the stored ones, the rest stay, and the result is validated as a
   * whole check of its type. `routeType` is the type a typed route names; it must be the stored type.
   */
  async function mergeAndSave(accountId: string, id: string, body: Record<string, unknown>, autoAssign: boolean, routeType?: CheckType) {
    const current = await findCheckRow(sql, accountId, id);
    if (!current) throw notFound();
    const type = current.check_type;
    const segment = SEGMENT_OF[type];
    const rules = new Rules();
    const named = body.checkType ?? routeType;
    rules.check(named === undefined || named === type, 'body.checkType', 'immutable', `cannot change from ${type}`);
    rules.check(segment !== undefined, 'path.id', 'checkType', `checks of type ${type} cannot be updated here`);
    rules.throwIfAny();
    const merged: Record<string, unknown> = { ...current.data };
    for (const field of fieldsOf(segment!)) {
      if (field in body) merged[field] = body[field];
    }
    if (!('alertChannelSubscriptions' in body)) delete merged.alertChannelSubscriptions;
    const data = typeValidators[segment!](merged) as CheckInput;
    return save(accountId, type, data, autoAssign, id);
  }

  const typedRoutes = SEGMENTS.flatMap((segment) => {
    const type = CREATABLE_TYPES[segment];
    const body = createBodySchema(segment);
    const opName = type === 'MULTI_STEP' ? 'MultiStep' : type.charAt(0) + type.slice(1).toLowerCase();
    return [
      defineRoute({
        method: 'POST',
        path: `/v1/checks/${segment}`,
        operationId: `create${opName}Check`,
        summary: `Create a ${TYPE_NAMES[segment]}`,
        tag,
        access: 'write',
        errors: type === 'BROWSER' ? [402] : [],
        schema: { query: AutoAssignQuery, body, responses: { 201: CheckResponse } },
        handler: async ({ principal, query, body: data }) => ({
          status: 201,
          body: await save(principal.account.id, type, data as CheckInput, query.autoAssignAlerts),
        }),
      }),
      defineRoute({
        method: 'PUT',
        path: `/v1/checks/${segment}/{id}`,
        operationId: `update${opName}Check`,
        summary: `Update a ${TYPE_NAMES[segment]}: the body merges onto the stored check, fields left out keep their values`,
        tag,
        access: 'write',
        errors: [404],
        schema: { params: IdParams, query: AutoAssignQuery, body: updateBodySchema(segment), responses: { 200: CheckResponse } },
        handler: async ({ principal, params, query, body: data }) => ({
          status: 200,
          body: await mergeAndSave(principal.account.id, params.id, data as Record<string, unknown>, query.autoAssignAlerts, type),
        }),
      }),
    ];
  });

  const listRoute = (version: ReadVersion) =>
    defineRoute({
      method: 'GET',
      path: `/${version}/checks`,
      operationId: version === 'v1' ? 'listChecks' : `listChecks${version.toUpperCase()}`,
      summary: 'List checks, optionally of one type, with some tags, by name or API URL',
      tag,
      access: 'read',
      schema: { query: ListQuery, responses: { 200: Type.Array(CheckResponse) } },
      handler: async ({ principal, query }) => {
        const accountId = principal.account.id;
        const filter = {
          checkType: query.checkType,
          tags: query.tag,
          search: query.search,
          apiUrlContains: query.apiCheckUrlFilterPattern,
          status: query.status,
        };
        const { rows, total } = await listCheckRows(sql, accountId, filter, query.limit, pageOffset(query));
        return listReply(
          inVersion(version, await readChecks(sql, accountId, rows, { ...query, publicUrl: config.publicUrl, revealHeaders: may(principal.role, 'write') })),
          total,
          query,
        );
      },
    });

  const getRoute = (version: ReadVersion) =>
    defineRoute({
      method: 'GET',
      path: `/${version}/checks/{id}`,
      operationId: version === 'v1' ? 'getCheck' : `getCheck${version.toUpperCase()}`,
      summary: 'Retrieve a check',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: IdParams, query: ReadQuery, responses: { 200: CheckResponse } },
      handler: async ({ principal, params, query }) => {
        const check = await readCheck(sql, principal.account.id, params.id, {
          ...query,
          publicUrl: config.publicUrl,
          revealHeaders: may(principal.role, 'write'),
        });
        if (!check) throw notFound();
        return { status: 200, body: inVersion(version, [check])[0] };
      },
    });

  const anyTypeBody = TaggedUnion(
    'checkType',
    SEGMENTS.map((segment) =>
      Type.Object({ ...createBodySchema(segment).properties, checkType: Type.Literal(CREATABLE_TYPES[segment]) }, { additionalProperties: false }),
    ),
    { description: 'The create body of the type `checkType` names (as POST /v1/checks/{type})' },
  );

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/checks',
      operationId: 'createCheck',
      summary: 'Create a check of the type its checkType names',
      tag,
      access: 'write',
      errors: [402],
      schema: { query: AutoAssignQuery, body: anyTypeBody, responses: { 201: CheckResponse } },
      handler: async ({ principal, query, body }) => ({
        status: 201,
        body: await save(principal.account.id, (body as { checkType: CheckType }).checkType, body as unknown as CheckInput, query.autoAssignAlerts),
      }),
    }),
    ...READ_VERSIONS.map(listRoute),
    ...typedRoutes,
    ...READ_VERSIONS.map(getRoute),
    defineRoute({
      method: 'PUT',
      path: '/v1/checks/{id}',
      operationId: 'updateCheck',
      summary: 'Update a check of any type',
      description:
        'The body merges onto the stored check. As the contract states, `heartbeat` and `script` are required; ' +
        "fields that do not apply to the check's type are ignored. `checkType` cannot change.",
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IdParams, query: AutoAssignQuery, body: genericUpdateSchema(), responses: { 200: CheckResponse } },
      handler: async ({ principal, params, query, body }) => ({
        status: 200,
        body: await mergeAndSave(principal.account.id, params.id, body as Record<string, unknown>, query.autoAssignAlerts),
      }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/checks/{id}',
      operationId: 'deleteCheck',
      summary: 'Delete a check',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IdParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        const row = await findCheckRow(sql, principal.account.id, params.id);
        if (!row) throw notFound();
        await deleteCheck(sql, principal.account.id, row.id);
        return { status: 204 };
      },
    }),
  ];
}
