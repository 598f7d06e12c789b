import { Type } from '@sinclair/typebox';
import { findCheckRow } from '../checks/index.js';
import { type Coverage, coverageNow, type RunState } from '../coverage/index.js';
import { HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { Config } from '../platform/config.js';
import type { Deps } from '../storage/deps.js';
import type { Sql } from '../storage/postgres.js';
import { readStatuses, type StatusRow, toCheckStatus } from './statuses.js';

export const RUN_STATES = ['RUNNING', 'NO_DATA', 'PAUSED', 'MAINTENANCE'] as const satisfies readonly RunState[];

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
    runState: StringEnum(RUN_STATES, {
      description:
        'Ours (docs/analytics.md, "No data"): RUNNING; NO_DATA when the check made no run for NO_DATA_AFTER_PERIODS (2) of its periods ' +
        'plus the grace, so its other fields are as old as lastRunAt; PAUSED when it or its group is deactivated; MAINTENANCE while a window pauses it',
    }),
    lastRunAt: Nullable(Type.String({ format: 'date-time', description: 'Ours: when the latest run started' })),
    noDataSince: Nullable(
      Type.String({
        format: 'date-time',
        description: 'Ours: when the check, or the locations in noDataLocations, last ran (or were activated) before they stopped',
      }),
    ),
    noDataLocations: Type.Array(Type.String(), {
      description: 'Ours: the locations past their turns without a run (all of them when runState is NO_DATA)',
    }),
  },
  { additionalProperties: false },
);

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** What the status says of the check's runs: its coverage (runnable checks), or running/paused (heartbeats). */
function runFields(coverage: Coverage | undefined, activated: boolean) {
  if (!coverage) return { runState: (activated ? 'RUNNING' : 'PAUSED') as RunState, noDataSince: null, noDataLocations: [] };
  return { runState: coverage.state, noDataSince: iso(coverage.since), noDataLocations: coverage.silentLocations };
}

/**
 * The statuses of an account's checks (or some) with what their runs are doing: a check with results as its row
 * says, and an activated check that never ran and is past its periods as NO_DATA (listed after the others).
 */
export async function statusesWithCoverage(sql: Sql, config: Config, accountId: string, checkIds?: string[], now = Date.now()) {
  const settings = { afterPeriods: config.alerts.noDataAfterPeriods, graceMs: config.alerts.noDataGraceMs };
  const [rows, coverage] = await Promise.all([readStatuses(sql, accountId, checkIds), coverageNow(sql, accountId, settings, { checkIds, now })]);
  const seen = new Set(rows.map((r) => r.check_id));
  const withRuns = rows.map((row: StatusRow) => ({
    ...toCheckStatus(row),
    ...runFields(coverage.get(row.check_id), row.activated),
    lastRunAt: row.last_run_at.toISOString(),
  }));
  const never = [...coverage.values()]
    .filter((c) => c.state === 'NO_DATA' && !seen.has(c.plan.checkId))
    .map((c) => ({
      name: c.plan.name,
      checkId: c.plan.checkId,
      hasFailures: false,
      hasErrors: false,
      isDegraded: false,
      longestRun: null,
      shortestRun: null,
      lastRunLocation: null,
      lastCheckRunId: null,
      sslDaysRemaining: null,
      created_at: new Date(c.since ?? now).toISOString(),
      updated_at: null,
      ...runFields(c, true),
      lastRunAt: null,
    }));
  return [...withRuns, ...never];
}

/** Check statuses: kept current by the ingest worker as results land, read here as they are. */
export function checkStatusRoutes({ sql, config }: Deps): AnyRoute[] {
  const tag = 'Check statuses';
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/check-statuses',
      operationId: 'listCheckStatuses',
      summary: 'The current status of every check of the account that has results',
      description:
        'One entry per check with at least one landed run, in check creation order, then one per activated check that never ran ' +
        'past its periods (runState NO_DATA, its other fields empty); not paged (as the anchor API).',
      tag,
      access: 'read',
      schema: { responses: { 200: Type.Array(CheckStatus) } },
      handler: async ({ principal }) => ({ status: 200, body: await statusesWithCoverage(sql, config, principal.account.id) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-statuses/{checkId}',
      operationId: 'getCheckStatus',
      summary: 'The current status of one check',
      description:
        'A check of the account that has no landed run yet answers 404 with a message saying so, unless it is activated and past its ' +
        'periods: then it is NO_DATA.',
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
        const [status] = await statusesWithCoverage(sql, config, principal.account.id, [check.id]);
        if (!status) throw new HttpError(404, 'This check has no results yet');
        return { status: 200, body: status };
      },
    }),
  ];
}
