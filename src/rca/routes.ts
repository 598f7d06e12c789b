import { Type } from '@sinclair/typebox';
import { notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute, type Reply } from '../http/route.js';
import type { Deps } from '../storage/deps.js';
import { CLASSIFICATIONS } from './explain.js';
import { checkGroupOf, testSessionGroupOf } from './gather.js';
import { findRca, insertRca, type RcaRow, rcasOfGroups } from './repository.js';
import { enqueueRca, RCA_MODEL, RCA_PROVIDER } from './worker.js';

/**
 * The anchor's root-cause analyses (docs/rca.md): asked for an error group (a check's or a test session's), made
 * by a queue job from the service's own evidence, read back by id (202 while it is made). The anchor CLI's
 * `checkly rca run --error-group <id> --watch` and `rca get` use these.
 */

const Pending = Type.Object({ id: Type.String({ format: 'uuid' }), status: Type.Literal('PENDING') });

const Analysis = Type.Object({
  classification: Type.String({ description: `One of ${CLASSIFICATIONS.join(', ')}` }),
  userImpact: Type.String(),
  rootCause: Type.String(),
  codeFix: Type.Union([Type.String(), Type.Null()], { description: 'What to change, where the evidence supports a fix' }),
  evidence: Type.Union([
    Type.Array(
      Type.Object({
        artifacts: Type.Array(Type.Object({ name: Type.String(), type: Type.String() })),
        description: Type.String(),
      }),
    ),
    Type.Null(),
  ]),
  referenceLinks: Type.Union([Type.Array(Type.Object({ url: Type.String(), title: Type.String() })), Type.Null()]),
});

const GetRca = Type.Object({
  id: Type.String({ format: 'uuid' }),
  checkId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  errorGroupId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  checkType: Type.String(),
  provider: Type.String({ description: 'What made it: `local` (this service, from its evidence)' }),
  model: Type.String({ description: 'The rules that made it (their version)' }),
  durationMs: Type.Integer(),
  status: Type.Literal('COMPLETED'),
  analysis: Analysis,
  created_at: Type.String({ format: 'date-time' }),
});

// The anchor's body is optional (and nullable; a JSON null body is refused by the parser, as for every route).
const Body = Type.Optional(
  Type.Object(
    { userContext: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description: 'What you know that the evidence may not show' })) },
    { additionalProperties: false },
  ),
);

export function toGetRca(row: RcaRow) {
  return {
    id: row.id,
    checkId: row.check_id,
    errorGroupId: row.error_group_id ?? row.test_session_error_group_id,
    checkType: row.check_type,
    provider: row.provider,
    model: row.model,
    durationMs: row.duration_ms,
    status: 'COMPLETED' as const,
    analysis: row.analysis!,
    created_at: row.created_at.toISOString(),
  };
}

const pending = (row: RcaRow): Reply => ({ status: 202, body: { id: row.id, status: 'PENDING' } });

export function rcaRoutes(deps: Deps): AnyRoute[] {
  const tag = 'Root-cause analyses';
  const rateLimit = { points: 30, windowSeconds: 60 };
  /** Files an analysis of a group (a check's or a test session's) and queues the job that makes it: 202 at once. */
  const ask = async (
    accountId: string,
    group: { errorGroupId?: string; testSessionErrorGroupId?: string; checkId: string | null; checkType: string },
    userContext: string | null | undefined,
  ): Promise<Reply> => {
    const row = await insertRca(deps.sql, { accountId, ...group, userContext: userContext ?? '', provider: RCA_PROVIDER, model: RCA_MODEL });
    await enqueueRca(deps.queues, { id: row.id, accountId });
    return pending(row);
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/root-cause-analyses/error-groups/{errorGroupId}',
      operationId: 'postV1RootcauseanalysesErrorgroupsErrorgroupid',
      summary: "Explain a check's error group: a root-cause analysis made from the service's own evidence",
      description:
        'Answers 202 with the analysis id at once; the analysis is made by a queue job from the failing runs, the last passing run of the ' +
        'same check and location, where and since when it fails, other checks on the same host, the check’s recent changes and maintenance. ' +
        'Read it with GET /v1/root-cause-analyses/{id} (202 until it is made). Nothing leaves this machine unless RCA_MODEL_URL names a model to write its prose.',
      tag,
      access: 'run',
      errors: [404],
      rateLimit,
      schema: { params: Type.Object({ errorGroupId: Type.String({ format: 'uuid' }) }), body: Body, responses: { 202: Pending } },
      handler: async ({ principal, params, body }) => {
        const group = await checkGroupOf(deps, principal.account.id, params.errorGroupId);
        if (!group) throw notFound();
        return ask(principal.account.id, { errorGroupId: group.id, checkId: group.checkId, checkType: group.checkType }, body?.userContext);
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/root-cause-analyses/test-session-error-groups/{testSessionErrorGroupId}',
      operationId: 'postV1RootcauseanalysesTestsessionerrorgroupsTestsessionerrorgroupid',
      summary: "Explain a test session's error group: a root-cause analysis made from the service's own evidence",
      description: 'As for a check’s error group, from the group’s failed results (a test session has no history to compare with). Answers 202.',
      tag,
      access: 'run',
      errors: [404],
      rateLimit,
      schema: { params: Type.Object({ testSessionErrorGroupId: Type.String({ format: 'uuid' }) }), body: Body, responses: { 202: Pending } },
      handler: async ({ principal, params, body }) => {
        const group = await testSessionGroupOf(deps, principal.account.id, params.testSessionErrorGroupId);
        if (!group) throw notFound();
        return ask(principal.account.id, { testSessionErrorGroupId: group.id, checkId: null, checkType: group.checkType }, body?.userContext);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/root-cause-analyses/{id}',
      operationId: 'getV1RootcauseanalysesId',
      summary: 'A root-cause analysis: 202 while it is made, 200 with the analysis once it is',
      tag,
      access: 'read',
      errors: [404],
      schema: { params: Type.Object({ id: Type.String({ format: 'uuid' }) }), responses: { 200: GetRca, 202: Pending } },
      handler: async ({ principal, params }) => {
        const row = await findRca(deps.sql, principal.account.id, params.id.toLowerCase());
        if (!row) throw notFound();
        if (row.status !== 'COMPLETED' || !row.analysis) return pending(row);
        return { status: 200, body: toGetRca(row) };
      },
    }),
  ];
}

const GROUP_OPERATIONS = new Set([
  'archiveErrorGroup',
  'archiveTestSessionErrorGroup',
  'listErrorGroups',
  'listCheckErrorGroups',
  'getErrorGroup',
  'listTestSessionErrorGroups',
  'listProjectTestSessionErrorGroups',
  'getTestSessionErrorGroup',
]);

/**
 * The error-group routes (of analytics and test sessions) with their `rootCauseAnalyses` filled in: the completed
 * analyses of each group, newest first (the anchor CLI shows the first).
 */
export function withRootCauseAnalyses(deps: Deps, routes: AnyRoute[]): AnyRoute[] {
  return routes.map((route) => {
    if (!GROUP_OPERATIONS.has(route.operationId)) return route;
    const handler = route.handler;
    return {
      ...route,
      handler: async (req: Parameters<AnyRoute['handler']>[0]) => {
        const reply = await handler(req);
        if (reply.status !== 200) return reply;
        const groups = ((Array.isArray(reply.body) ? reply.body : [reply.body]) as { id?: unknown; rootCauseAnalyses?: unknown[] }[]).filter(
          (g): g is { id: string; rootCauseAnalyses: unknown[] } => typeof g?.id === 'string' && Array.isArray(g.rootCauseAnalyses),
        );
        if (!groups.length) return reply;
        const rows = await rcasOfGroups(
          deps.sql,
          req.principal.account.id,
          groups.map((g) => g.id),
        );
        for (const g of groups)
          g.rootCauseAnalyses = rows
            .filter((r) => r.status === 'COMPLETED' && r.analysis && (r.error_group_id === g.id || r.test_session_error_group_id === g.id))
            .map((r) => ({ ...toGetRca(r), userContext: r.user_context || null }));
        return reply;
      },
    };
  });
}
