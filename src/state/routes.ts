import { Type } from '@sinclair/typebox';
import { findCheckRow } from '../checks/index.js';
import { HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable } from '../http/schemas.js';
import type { Deps } from '../storage/deps.js';
import { readStatuses, toCheckStatus } from './statuses.js';

export const CheckStatus = Type.Object(
  {
    name: Type.String(),
    checkId: Type.String({ format: 'uuid' }),
    hasFailures: Type.Boolean({ description: 'The latest run failed' }),
    hasErrors: Type.Boolean(),
    isDegraded: Type.Boolean(),
    longestRun: Nullable(Type.Number({ description: 'Milliseconds: the longest of the latest run in each location' })),
    shortestRun: Nullable(Type.Number({ description: 'Milliseconds: the shortest of the latest run in each location' })),
    lastRunLocation: Nullable(Type.String()),
    lastCheckRunId: Nullable(Type.String({ format: 'uuid', description: 'Run id of the latest result' })),
    sslDaysRemaining: Nullable(Type.Number({ description: 'SSL monitors: days until the certificate expires, from the latest run that reported it' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

/** Check statuses: kept current by the ingest worker as results land, read here as they are. */
export function checkStatusRoutes({ sql }: Deps): AnyRoute[] {
  const tag = 'Check statuses';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/check-statuses',
      operationId: 'listCheckStatuses',
      summary: 'The current status of every check of the account that has results',
      description: 'One entry per check with at least one landed run, in check creation order; not paged (as the anchor API).',
      tag,
      access: 'read',
      schema: { responses: { 200: Type.Array(CheckStatus) } },
      handler: async ({ principal }) => ({ status: 200, body: (await readStatuses(sql, principal.account.id)).map(toCheckStatus) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-statuses/{checkId}',
      operationId: 'getCheckStatus',
      summary: 'The current status of one check',
      description: 'A check of the account that has no landed run yet answers 404 with a message saying so.',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ checkId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        responses: { 200: CheckStatus },
      },
      handler: async ({ principal, params }) => {
        const check = await findCheckRow(sql, principal.account.id, params.checkId);
        if (!check) throw notFound();
        const [row] = await readStatuses(sql, principal.account.id, [check.id]);
        if (!row) throw new HttpError(404, 'This check has no results yet');
        return { status: 200, body: toCheckStatus(row) };
      },
    }),
  ];
}
