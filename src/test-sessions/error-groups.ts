import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { archiveErrorGroup, cleanErrorMessage, errorGroupStates } from '../analytics/index.js';
import { notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { iso } from '../model/time.js';
import type { Deps } from '../storage/deps.js';
import type { Sql } from '../storage/postgres.js';
import { projectExists, resultsWithErrors } from './repository.js';

/**
 * The anchor's test-session error groups: failed results of the account's test sessions (`checkly test`,
 * `trigger`, `pw-test` and the Playwright reporter) grouped by their error, cleaned as check error groups are
 * (docs/analytics.md), over the latest 20,000 failed results. A group's id derives from the account and the
 * message's hash; archiving is kept with the check groups' (error_group_states, no check).
 */

const SCAN_LIMIT = 20_000;

const Group = Type.Object({
  id: Type.String({ format: 'uuid' }),
  projectId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  environments: Type.Union([Type.Array(Type.String()), Type.Null()]),
  errorHash: Type.String(),
  rawErrorMessage: Type.Union([Type.String(), Type.Null()]),
  cleanedErrorMessage: Type.String(),
  firstSeen: Type.String({ format: 'date-time' }),
  lastSeen: Type.String({ format: 'date-time' }),
  archivedUntilNextEvent: Type.Boolean(),
  pwtMetadata: Type.Union([
    Type.Array(Type.Object({ projectName: Type.String(), testFile: Type.String(), testTitle: Type.String(), suitePath: Type.Array(Type.String()) })),
    Type.Null(),
  ]),
  occurrences: Type.Integer(),
  rootCauseAnalyses: Type.Array(Type.Object({}, { additionalProperties: true }), {
    description: 'The root-cause analyses asked for this group, newest first (POST /v1/root-cause-analyses/test-session-error-groups/{id})',
  }),
});

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
/** A UUID-shaped id from a digest (stable: the same group always has the same id). */
function idOf(accountId: string, hash: string): string {
  const h = createHash('sha256').update(`${accountId}:test-session:${hash}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export type TestSessionErrorGroup = typeof Group.static;

/**
 * One test-session error group of the account with its failed results, newest first (what a root-cause analysis
 * reads): undefined when the account has no such group.
 */
export async function testSessionErrorGroup(
  sql: Sql,
  accountId: string,
  id: string,
): Promise<{ group: TestSessionErrorGroup; results: { data: Record<string, unknown>; created_at: Date }[] } | undefined> {
  const group = (await groupsOf(sql, accountId)).find((g) => g.id === id.toLowerCase());
  if (!group) return undefined;
  const results = (await resultsWithErrors(sql, accountId, SCAN_LIMIT)).filter((r) => {
    const errors = Array.isArray(r.data.errors) ? r.data.errors : [];
    const raw = typeof errors[0] === 'string' ? errors[0] : typeof r.data.runError === 'string' ? r.data.runError : '';
    return raw && hashOf(cleanErrorMessage(raw)) === group.errorHash;
  });
  return { group, results: results.slice(0, 50) as { data: Record<string, unknown>; created_at: Date }[] };
}

async function groupsOf(sql: Sql, accountId: string): Promise<(typeof Group.static)[]> {
  const found = await resultsWithErrors(sql, accountId, SCAN_LIMIT);
  const rows = found.map((r) => {
    // A session keeps its environment in its metadata (the reporter's one level down).
    const stored = (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) as {
      environment?: unknown;
      metadata?: { environment?: unknown };
    } | null;
    const environment = stored?.environment ?? stored?.metadata?.environment;
    return { ...r, environment: typeof environment === 'string' ? environment : null };
  });
  const groups = new Map<string, { raw: string; cleaned: string; first: Date; last: Date; count: number; environments: Set<string> }>();
  for (const r of rows) {
    if (!r.data.hasFailures && !r.data.hasErrors) continue;
    const errors = Array.isArray(r.data.errors) ? r.data.errors : [];
    const raw = typeof errors[0] === 'string' ? errors[0] : typeof r.data.runError === 'string' ? r.data.runError : '';
    if (!raw) continue;
    const cleaned = cleanErrorMessage(raw);
    const hash = hashOf(cleaned);
    const g = groups.get(hash);
    if (!g) groups.set(hash, { raw, cleaned, first: r.created_at, last: r.created_at, count: 1, environments: new Set(r.environment ? [r.environment] : []) });
    else {
      g.count++;
      if (r.created_at < g.first) g.first = r.created_at;
      if (r.created_at > g.last) {
        g.last = r.created_at;
        g.raw = raw;
      }
      if (r.environment) g.environments.add(r.environment);
    }
  }
  const ids = [...groups.keys()].map((h) => idOf(accountId, h));
  const states = await errorGroupStates(sql, accountId, ids);
  const stateOf = new Map(states.map((s) => [s.id, s]));
  return [...groups.entries()]
    .map(([hash, g]) => {
      const id = idOf(accountId, hash);
      const s = stateOf.get(id);
      return {
        id,
        projectId: null,
        environments: g.environments.size ? [...g.environments].sort() : null,
        errorHash: hash,
        rawErrorMessage: g.raw,
        cleanedErrorMessage: g.cleaned,
        firstSeen: iso(g.first)!,
        lastSeen: iso(g.last)!,
        archivedUntilNextEvent: s ? s.archived_forever || (s.archived_until_next_event && s.archived_at !== null && g.last <= s.archived_at) : false,
        pwtMetadata: null,
        occurrences: g.count,
        rootCauseAnalyses: [],
      };
    })
    .sort((a, b) => (a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.id.localeCompare(b.id)));
}

export function testSessionErrorGroupRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Error groups';
  const Page = Type.Object(
    { limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }), page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }) },
    { additionalProperties: false },
  );
  const Id = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });
  const one = async (accountId: string, id: string) => {
    const found = (await groupsOf(sql, accountId)).find((g) => g.id === id.toLowerCase());
    if (!found) throw notFound();
    return found;
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/test-session-error-groups',
      operationId: 'listTestSessionErrorGroups',
      summary: "The account's test-session error groups, the latest failure first",
      tag,
      access: 'read',
      schema: { query: Page, responses: { 200: Type.Array(Group) } },
      handler: async ({ principal, query }) => ({
        status: 200,
        body: (await groupsOf(sql, principal.account.id)).slice((query.page - 1) * query.limit, query.page * query.limit),
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/test-session-error-groups/projects/{projectId}',
      operationId: 'listProjectTestSessionErrorGroups',
      summary: "A project's test-session error groups",
      tag,
      access: 'read',
      errors: [404],
      description: 'Test sessions here are not tied to a project: a project of the account has none.',
      schema: { params: Type.Object({ projectId: Type.String({ format: 'uuid' }) }, { additionalProperties: false }), responses: { 200: Type.Array(Group) } },
      handler: async ({ principal, params }) => {
        if (!(await projectExists(sql, principal.account.id, params.projectId))) throw notFound();
        return { status: 200, body: [] };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/test-session-error-groups/{id}',
      operationId: 'getTestSessionErrorGroup',
      summary: 'A test-session error group',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: Id, responses: { 200: Group } },
      handler: async ({ principal, params }) => ({ status: 200, body: await one(principal.account.id, params.id) }),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/v1/test-session-error-groups/{id}',
      operationId: 'archiveTestSessionErrorGroup',
      summary: 'Archive a test-session error group for good or until it happens again',
      tag,
      access: 'write',
      errors: [404],
      schema: {
        params: Id,
        body: Type.Object(
          { archiveForEver: Type.Optional(Type.Boolean()), archivedUntilNextEvent: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        responses: { 200: Group },
      },
      handler: async ({ principal, params, body }) => {
        const group = await one(principal.account.id, params.id);
        await archiveErrorGroup(sql, principal.account.id, { id: group.id, checkId: null, errorHash: group.errorHash }, body);
        return { status: 200, body: await one(principal.account.id, params.id) };
      },
    }),
  ];
}
