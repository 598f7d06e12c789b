import { Type } from '@sinclair/typebox';
import { conflict, HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { may } from '../model/accounts.js';
import { useDomain } from '../resources/index.js';
import { uniqueViolation } from '../storage/account-rows.js';
import type { Deps } from '../storage/deps.js';
import { type Sql, transaction } from '../storage/postgres.js';
import {
  addUpdate,
  changeIncident,
  createIncident,
  deleteIncident,
  deleteUpdate,
  editUpdate,
  incidentsById,
  insertService,
  listIncidents,
  renameService,
  type ServiceRow,
  type Severity,
  servicesOf,
  toService,
} from './incident-repository.js';
import {
  createPage,
  cursorPage,
  deletePage,
  deleteService,
  deleteSubscription,
  findPage,
  type PageRow,
  pageViews,
  replacePage,
  subscribe,
  subscriptionsOf,
  toSubscription,
  unknownServices,
  verifiedSubscribersLocked,
} from './repository.js';
import {
  BulkSubscriptions,
  CursorPage,
  CursorQuery,
  Incident,
  IncidentCreateBody,
  IncidentPatchBody,
  IncidentReplaceBody,
  IncidentUpdate,
  IncidentUpdateBody,
  ServiceBody,
  ServiceSchema,
  StatusPage,
  StatusPageBody,
  Subscription,
} from './schemas.js';

const Uuid = Type.String({ format: 'uuid' });
const PageParams = Type.Object({ statusPageId: Uuid }, { additionalProperties: false });
const ServiceParams = Type.Object({ serviceId: Uuid }, { additionalProperties: false });
const IncidentParams = Type.Object({ incidentId: Uuid }, { additionalProperties: false });
const UpdateParams = Type.Object({ incidentId: Uuid, incidentUpdateId: Uuid }, { additionalProperties: false });
const SubscriptionParams = Type.Object({ statusPageId: Uuid, subscriptionId: Uuid }, { additionalProperties: false });

function taken(err: unknown): never {
  const constraint = uniqueViolation(err);
  if (constraint === 'status_pages_url') throw conflict('url is already taken by another status page', { field: 'url' });
  if (constraint === 'status_pages_custom_domain')
    throw conflict("customDomain is already used by another of this account's status pages", { field: 'customDomain' });
  throw err;
}

/** Cards may name only the account's services. */
async function checkServices(sql: Sql, accountId: string, field: string, ids: string[]): Promise<void> {
  const missing = await unknownServices(sql, accountId, ids);
  const rules = new Rules();
  rules.check(!missing.length, field, 'exists', `names no service of this account: ${missing.join(', ')}`);
  rules.throwIfAny();
}

/**
 * The anchor's status-page API (docs/status-pages.md): pages with cards of services, services, incidents on
 * services with their updates, and a page's email subscribers. The rendered pages are in src/status-pages/.
 */
export function statusPageRoutes({ sql, config }: Deps): AnyRoute[] {
  const tag = 'Status pages';
  const one = async (accountId: string, id: string) => {
    const row = await findPage(sql, accountId, id);
    if (!row) throw notFound();
    return (await pageViews(sql, [row]))[0]!;
  };
  const incident = async (accountId: string, id: string) => {
    const [found] = await incidentsById(sql, accountId, [id]);
    if (!found) throw notFound();
    return found;
  };
  const incidentServices = async (accountId: string, services: { id: string }[]) => {
    const ids = [...new Set(services.map((s) => s.id.toLowerCase()))];
    await checkServices(sql, accountId, 'body.services', ids);
    return ids;
  };

  return [
    // Services and incidents first: their paths would otherwise be read as a status page id.
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/services',
      operationId: 'listStatusPageServices',
      summary: 'List services',
      tag,
      access: 'read',
      schema: {
        query: Type.Object({ ...CursorQuery.properties, paginated: Type.Boolean({ default: true }) }, { additionalProperties: false }),
        responses: { 200: CursorPage(ServiceSchema) },
      },
      handler: async ({ principal, query }) => {
        const limit = query.paginated ? query.limit : 100;
        const page = await cursorPage<ServiceRow>(sql, 'status_page_services', principal.account.id, limit, query.nextId);
        return { status: 200, body: { length: page.rows.length, entries: page.rows.map(toService), nextId: page.nextId } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/status-pages/services',
      operationId: 'createStatusPageService',
      summary: 'Create a service',
      tag,
      access: 'write',
      schema: { body: ServiceBody, responses: { 200: ServiceSchema } },
      handler: async ({ principal, body }) => {
        return { status: 200, body: toService(await insertService(sql, principal.account.id, body.name)) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/services/{serviceId}',
      operationId: 'getStatusPageService',
      summary: 'Retrieve a service',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: ServiceParams, responses: { 200: ServiceSchema } },
      handler: async ({ principal, params }) => {
        const [row] = await servicesOf(sql, principal.account.id, [params.serviceId.toLowerCase()]);
        if (!row) throw notFound();
        return { status: 200, body: toService(row) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/status-pages/services/{serviceId}',
      operationId: 'updateStatusPageService',
      summary: 'Rename a service',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: ServiceParams, body: ServiceBody, responses: { 200: ServiceSchema } },
      handler: async ({ principal, params, body }) => {
        const row = await renameService(sql, principal.account.id, params.serviceId, body.name);
        if (!row) throw notFound();
        return { status: 200, body: toService(row) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/status-pages/services/{serviceId}',
      operationId: 'deleteStatusPageService',
      summary: 'Delete a service (its cards stop showing it)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: ServiceParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await transaction(sql, (tx) => deleteService(tx, principal.account.id, params.serviceId)))) throw notFound();
        return { status: 204 };
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/incidents',
      operationId: 'listStatusPageIncidents',
      summary: 'List incidents, newest first',
      tag,
      access: 'read',
      schema: { query: CursorQuery, responses: { 200: CursorPage(Incident) } },
      handler: async ({ principal, query }) => {
        const page = await listIncidents(sql, principal.account.id, query.limit, query.nextId);
        return { status: 200, body: { length: page.entries.length, entries: page.entries, nextId: page.nextId } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/status-pages/incidents',
      operationId: 'createStatusPageIncident',
      summary: 'Declare an incident on services',
      tag,
      access: 'write',
      description:
        'With its first update (INVESTIGATING unless it says otherwise); notifySubscribers mails the verified subscribers of every page showing one of its services.',
      schema: { body: IncidentCreateBody, responses: { 201: Incident } },
      handler: async ({ principal, body }) => {
        const serviceIds = await incidentServices(principal.account.id, body.services);
        const id = await transaction(sql, (tx) =>
          createIncident(tx, principal.account.id, { name: body.name, severity: body.severity as Severity, serviceIds, update: body.incidentUpdates[0]! }),
        );
        return { status: 201, body: await incident(principal.account.id, id) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/incidents/{incidentId}',
      operationId: 'getStatusPageIncident',
      summary: 'Retrieve an incident with its updates and services',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: IncidentParams, responses: { 200: Incident } },
      handler: async ({ principal, params }) => ({ status: 200, body: await incident(principal.account.id, params.incidentId.toLowerCase()) }),
    }),
    ...(['PUT', 'PATCH'] as const).map((method) =>
      defineRoute({
        method,
        path: '/v1/status-pages/incidents/{incidentId}',
        operationId: method === 'PUT' ? 'updateStatusPageIncident' : 'patchStatusPageIncident',
        summary: method === 'PUT' ? 'Update an incident (name, severity, services)' : "Change some of an incident's name, severity and services",
        tag,
        access: 'write',
        errors: [404],
        schema: { params: IncidentParams, body: method === 'PUT' ? IncidentReplaceBody : IncidentPatchBody, responses: { 200: Incident } },
        handler: async ({ principal, params, body }) => {
          const id = params.incidentId.toLowerCase();
          await incident(principal.account.id, id);
          const serviceIds = body.services ? await incidentServices(principal.account.id, body.services) : undefined;
          await transaction(sql, (tx) => changeIncident(tx, principal.account.id, id, { name: body.name, severity: body.severity, serviceIds }));
          return { status: 200, body: await incident(principal.account.id, id) };
        },
      }),
    ),
    defineRoute({
      method: 'DELETE',
      path: '/v1/status-pages/incidents/{incidentId}',
      operationId: 'deleteStatusPageIncident',
      summary: 'Delete an incident and its updates',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IncidentParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await deleteIncident(sql, principal.account.id, params.incidentId))) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/incidents/{incidentId}/incident-updates',
      operationId: 'listStatusPageIncidentUpdates',
      summary: "An incident's latest 100 updates, newest first",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: IncidentParams, responses: { 200: Type.Array(IncidentUpdate) } },
      handler: async ({ principal, params }) => {
        const found = await incident(principal.account.id, params.incidentId.toLowerCase());
        return { status: 200, body: [...found.incidentUpdates].reverse().slice(0, 100) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/status-pages/incidents/{incidentId}/incident-updates',
      operationId: 'createStatusPageIncidentUpdate',
      summary: 'Post an update (RESOLVED resolves the incident)',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: IncidentParams, body: IncidentUpdateBody, responses: { 200: IncidentUpdate } },
      handler: async ({ principal, params, body }) => {
        const update = await transaction(sql, (tx) => addUpdate(tx, principal.account.id, params.incidentId.toLowerCase(), body));
        if (!update) throw notFound();
        return { status: 200, body: update };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}',
      operationId: 'getStatusPageIncidentUpdate',
      summary: 'Retrieve an incident update',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: UpdateParams, responses: { 200: IncidentUpdate } },
      handler: async ({ principal, params }) => {
        const found = await incident(principal.account.id, params.incidentId.toLowerCase());
        const update = found.incidentUpdates.find((u) => u.id === params.incidentUpdateId.toLowerCase());
        if (!update) throw notFound();
        return { status: 200, body: update };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}',
      operationId: 'updateStatusPageIncidentUpdate',
      summary: 'Correct an incident update',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: UpdateParams, body: IncidentUpdateBody, responses: { 200: IncidentUpdate } },
      handler: async ({ principal, params, body }) => {
        const update = await transaction(sql, (tx) =>
          editUpdate(tx, principal.account.id, params.incidentId.toLowerCase(), params.incidentUpdateId.toLowerCase(), body),
        );
        if (!update) throw notFound();
        return { status: 200, body: update };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}',
      operationId: 'deleteStatusPageIncidentUpdate',
      summary: 'Delete an incident update',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: UpdateParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await transaction(sql, (tx) => deleteUpdate(tx, principal.account.id, params.incidentId.toLowerCase(), params.incidentUpdateId.toLowerCase()))))
          throw notFound();
        return { status: 204 };
      },
    }),

    defineRoute({
      method: 'GET',
      path: '/v1/status-pages',
      operationId: 'listStatusPages',
      summary: 'List status pages',
      tag,
      access: 'read',
      schema: { query: CursorQuery, responses: { 200: CursorPage(StatusPage) } },
      handler: async ({ principal, query }) => {
        const page = await cursorPage<PageRow>(sql, 'status_pages', principal.account.id, query.limit, query.nextId);
        return { status: 200, body: { length: page.rows.length, entries: await pageViews(sql, page.rows), nextId: page.nextId } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/status-pages',
      operationId: 'createStatusPage',
      summary: 'Create a status page with its cards of services',
      tag,
      access: 'write',
      errors: [409],
      description: 'Published at /status/{url} and, with customDomain, at that host (docs/status-pages.md).',
      schema: { body: StatusPageBody, responses: { 201: StatusPage } },
      handler: async ({ principal, body }) => {
        await checkServices(
          sql,
          principal.account.id,
          'body.cards',
          body.cards.flatMap((c) => (c.services ?? []).map((s) => s.id)),
        );
        const id = await transaction(sql, async (tx) => {
          const created = await createPage(tx, principal.account.id, body);
          await useDomain(tx, principal.account.id, body.customDomain, { type: 'status-page', id: created });
          return created;
        }).catch(taken);
        return { status: 201, body: await one(principal.account.id, id) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/{statusPageId}',
      operationId: 'getStatusPage',
      summary: 'Retrieve a status page',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: PageParams, responses: { 200: StatusPage } },
      handler: async ({ principal, params }) => ({ status: 200, body: await one(principal.account.id, params.statusPageId.toLowerCase()) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/status-pages/{statusPageId}',
      operationId: 'updateStatusPage',
      summary: 'Update a status page (its cards are replaced)',
      tag,
      access: 'write',
      errors: [404, 409],
      schema: { params: PageParams, body: StatusPageBody, responses: { 200: StatusPage } },
      handler: async ({ principal, params, body }) => {
        const id = params.statusPageId.toLowerCase();
        await one(principal.account.id, id);
        await checkServices(
          sql,
          principal.account.id,
          'body.cards',
          body.cards.flatMap((c) => (c.services ?? []).map((s) => s.id)),
        );
        const replaced = await transaction(sql, async (tx) => {
          if (!(await replacePage(tx, principal.account.id, id, body))) return false;
          await useDomain(tx, principal.account.id, body.customDomain, { type: 'status-page', id });
          return true;
        }).catch(taken);
        if (!replaced) throw notFound();
        return { status: 200, body: await one(principal.account.id, id) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/status-pages/{statusPageId}',
      operationId: 'deleteStatusPage',
      summary: 'Delete a status page and its subscribers',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: PageParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await deletePage(sql, principal.account.id, params.statusPageId))) throw notFound();
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/status-pages/{statusPageId}/subscriptions',
      operationId: 'listStatusPageSubscriptions',
      summary: "A status page's subscribers",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: PageParams, responses: { 200: Type.Array(Subscription) } },
      handler: async ({ principal, params }) => {
        const page = await findPage(sql, principal.account.id, params.statusPageId.toLowerCase());
        if (!page) throw notFound();
        return { status: 200, body: (await subscriptionsOf(sql, page.id)).map(toSubscription) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/status-pages/{statusPageId}/subscriptions/bulk',
      operationId: 'importStatusPageSubscriptions',
      summary: 'Subscribe up to 100 email addresses',
      tag,
      access: 'write',
      errors: [402, 404],
      description:
        'Addresses already subscribed are skipped. Without autoVerify each new subscriber gets a confirm mail and hears nothing more until they confirm. autoVerify (an already opted-in list) needs an admin key (403 otherwise) and leaves at most STATUS_PAGE_AUTOVERIFY_LIMIT (default 1000) verified subscribers in the account (402 past it).',
      schema: {
        params: PageParams,
        body: BulkSubscriptions,
        responses: { 201: Type.Object({ created: Type.Integer(), skipped: Type.Integer(), status: Type.String({ enum: ['PENDING', 'VERIFIED'] }) }) },
      },
      handler: async ({ principal, params, body }) => {
        const page = await findPage(sql, principal.account.id, params.statusPageId.toLowerCase());
        if (!page) throw notFound();
        if (body.autoVerify && !may(principal.role, 'admin')) {
          throw new HttpError(
            403,
            'autoVerify subscribes people without asking them: only an admin key may use it; without it each address gets a confirm mail',
          );
        }
        const limit = config.statusPageAutoVerifyLimit;
        const result = await transaction(sql, async (tx) => {
          if (body.autoVerify && (await verifiedSubscribersLocked(tx, principal.account.id)) + body.subscriptions.length > limit) {
            throw new HttpError(
              402,
              `autoVerify may leave at most ${limit} verified subscribers in an account (STATUS_PAGE_AUTOVERIFY_LIMIT); import the rest without it, so each confirms`,
            );
          }
          return subscribe(
            tx,
            page.id,
            body.subscriptions.map((s) => s.config),
            body.autoVerify,
          );
        });
        return { status: 201, body: { created: result.created, skipped: result.skipped, status: body.autoVerify ? 'VERIFIED' : 'PENDING' } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/status-pages/{statusPageId}/subscriptions/{subscriptionId}',
      operationId: 'deleteStatusPageSubscription',
      summary: 'Remove a subscriber',
      tag,
      access: 'write',
      errors: [404],
      schema: { params: SubscriptionParams, responses: { 204: null } },
      handler: async ({ principal, params }) => {
        if (!(await deleteSubscription(sql, principal.account.id, params.statusPageId, params.subscriptionId))) throw notFound();
        return { status: 204 };
      },
    }),
  ];
}
