import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { applyGroupSettings, checkTargetRules, findCheckRow, findGroupRow } from '../checks/index.js';
import { assetDownload } from '../http/asset-manifest.js';
import { HttpError, notFound } from '../http/errors.js';
import { UUID } from '../http/ids.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { CHECK_TYPE_FACTS, CHECK_TYPES, type CheckType, CREATABLE_TYPES, RESULT_DETAIL_KEYS, SEGMENT_OF, type TypeSegment } from '../model/checks.js';
import { iso } from '../model/time.js';
import { type EnvVar, keepStoredSecrets } from '../model/variables.js';
import { type AdhocRunRow, DEFAULT_LOCATION, findAccountAdhocRun, locationQueues, queueAdhoc, recordAdhoc } from '../runners/index.js';
import type { Deps } from '../storage/deps.js';
import { validatorOf } from './validators.js';

/** The types a trial can run: every type the runners run (a heartbeat is pinged, not run). */
const RUNNABLE_SEGMENTS = CHECK_TYPES.filter((t) => CHECK_TYPE_FACTS[t].runsOn !== 'pings').map((t) => SEGMENT_OF[t]);

const TrialQuery = Type.Object(
  {
    location: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "Where it runs: a public location or a private location's slug; default the body's first location",
      }),
    ),
    checkId: Type.Optional(
      Type.String({
        format: 'uuid',
        description: "A saved check this body edits: its secret variables stand in for the ones sent without a value (the console's edit form)",
      }),
    ),
  },
  { additionalProperties: false },
);

const Asset = Type.Object({ type: Type.String(), name: Type.String(), contentType: Type.String(), url: Type.String() });

const Trial = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    checkType: StringEnum(CHECK_TYPES),
    name: Type.String(),
    location: Type.String(),
    status: StringEnum(['QUEUED', 'RUNNING', 'DONE', 'CANCELLED'] as const, { description: 'DONE and CANCELLED are final' }),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Nullable(Type.String({ format: 'date-time' })),
    result: Nullable(
      Type.Object({
        hasFailures: Type.Boolean(),
        hasErrors: Type.Boolean(),
        isDegraded: Type.Boolean(),
        responseTime: Nullable(Type.Number()),
        startedAt: Type.String({ format: 'date-time' }),
        stoppedAt: Type.String({ format: 'date-time' }),
        attempts: Type.Integer(),
        error: Nullable(Type.String({ description: 'Why it failed, in a line' })),
        detail: Type.Record(Type.String(), Type.Unknown(), {
          description:
            "The type's result object (`apiCheckResult`: request, response with timings, each assertion's actual value; `browserCheckResult`: steps, console, errors), as a saved check's run has it",
        }),
      }),
    ),
    assets: Type.Array(Asset, { description: "The run's files (screenshots, trace, video), each at its download URL" }),
  },
  { additionalProperties: false },
);

const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Trial runs (`/v1/check-runs`): a check's body run once, on one location, before it is saved, as the anchor's editor
 * runs one (run source EDITOR). It is an ad-hoc run: the runners run it like `checkly test` runs a check, its result
 * is kept with the run (a week, as ad-hoc runs are) and never becomes a check or a result in the account's history.
 */
export function trialRoutes(deps: Deps): AnyRoute[] {
  const { sql, queues } = deps;
  const tag = 'Check runs';

  function toTrial(run: AdhocRunRow): Static<typeof Trial> {
    const r = run.result;
    const detail = run.detail ?? {};
    return {
      id: run.id,
      checkType: run.check_type,
      name: run.name,
      location: run.location,
      status: run.status,
      createdAt: iso(run.created_at)!,
      finishedAt: iso(run.finished_at),
      result: r
        ? {
            hasFailures: r.hasFailures,
            hasErrors: r.hasErrors,
            isDegraded: r.isDegraded,
            responseTime: r.responseTime,
            startedAt: r.startedAt,
            stoppedAt: r.stoppedAt,
            attempts: r.attempts,
            error: (typeof detail.error === 'string' ? detail.error : null) ?? r.runError ?? null,
            detail: Object.fromEntries(RESULT_DETAIL_KEYS.filter((k) => detail[k]).map((k) => [k, detail[k]])),
          }
        : null,
      assets: (r?.keptAssets ?? []).map((a) => ({
        type: a.type,
        name: a.name,
        contentType: a.contentType,
        url: `/v1/check-runs/${run.id}/assets/${encodeURIComponent(a.name)}`,
      })),
    };
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/check-runs/{checkType}',
      operationId: 'runCheckDraft',
      summary: "Run a check's body once, before saving it: its result comes back here, nothing is stored as the account's",
      description:
        'The body is what `POST /v1/checks/{checkType}` takes, checked the same way (a refusal names the field as it would). ' +
        'Answers 202 at once; follow the run with `GET /v1/check-runs/{id}?waitSeconds=…`. The run is kept a week, then forgotten.',
      tag,
      access: 'run',
      errors: [404],
      schema: {
        params: Type.Object({ checkType: StringEnum(RUNNABLE_SEGMENTS, { description: 'As in /v1/checks/{checkType}' }) }, { additionalProperties: false }),
        query: TrialQuery,
        body: Type.Object({}, { additionalProperties: true, description: 'The body `POST /v1/checks/{checkType}` takes' }),
        responses: { 202: Trial },
      },
      handler: async ({ principal, params, query, body }) => {
        const accountId = principal.account.id;
        const type = CREATABLE_TYPES[params.checkType as TypeSegment] as CheckType;
        let data = validatorOf(type)(body) as Record<string, unknown>;
        const rules = new Rules();
        checkTargetRules(type, data, deps.outbound, rules);
        rules.throwIfAny();
        if (query.checkId) {
          const stored = await findCheckRow(sql, accountId, query.checkId);
          if (!stored || stored.check_type !== type) throw new HttpError(404, 'No check of this type with this id in this account.');
          data = {
            ...data,
            environmentVariables: keepStoredSecrets(data.environmentVariables as EnvVar[] | null | undefined, stored.data.environmentVariables),
          };
        }
        if (typeof data.groupId === 'number') {
          const group = await findGroupRow(sql, accountId, data.groupId);
          if (!group)
            throw new HttpError(400, 'body.groupId is not a group of this account', {
              errors: [{ field: 'body.groupId', rule: 'exists', message: 'is not a group of this account' }],
            });
          data = applyGroupSettings({ ...data, checkType: type }, group.data);
        }
        const named = [...((data.privateLocations as string[] | null | undefined) ?? []), ...((data.locations as string[] | null | undefined) ?? [])];
        const location = query.location ?? named[0] ?? DEFAULT_LOCATION;
        if (!(await locationQueues(sql, accountId, [location])).has(location)) {
          throw new HttpError(400, `query.location "${location}" is no location of this account`, {
            errors: [{ field: 'query.location', rule: 'exists', message: 'is no public location and no private location of this account' }],
          });
        }
        const setup = typeof data.localSetupScript === 'string' && data.localSetupScript.trim() ? data.localSetupScript : undefined;
        const teardown = typeof data.localTearDownScript === 'string' && data.localTearDownScript.trim() ? data.localTearDownScript : undefined;
        const recorded = await recordAdhoc(sql, {
          accountId,
          topicAccount: accountId,
          checkRunSuiteId: randomUUID(),
          testSessionId: null,
          location,
          checks: [
            {
              logicalId: 'trial',
              checkRunId: randomUUID(),
              testResultId: randomUUID(),
              name: String(data.name),
              checkType: type,
              definition: { data, variables: [], retryStrategy: null, setupScript: setup, teardownScript: teardown },
            },
          ],
        });
        await queueAdhoc(sql, queues, recorded, 'EDITOR');
        return { status: 202, body: toTrial(recorded.runs[0]!) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-runs/{id}',
      operationId: 'getCheckRun',
      summary: 'A trial run: its status and, once it ran, its result',
      description: 'With `waitSeconds`, answers as soon as the run ends, or after that many seconds with its status then.',
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: IdParams,
        query: Type.Object({ waitSeconds: Type.Integer({ minimum: 0, maximum: 30, default: 0 }) }, { additionalProperties: false }),
        responses: { 200: Trial },
      },
      handler: async ({ principal, params, query, context }) => {
        const until = Date.now() + query.waitSeconds * 1000;
        for (;;) {
          const run = await findAccountAdhocRun(sql, principal.account.id, params.id);
          if (!run) throw notFound();
          const final = run.status === 'DONE' || run.status === 'CANCELLED';
          if (final || Date.now() >= until || context.signal.aborted) return { status: 200, body: toTrial(run) };
          await sleep(Math.min(250, until - Date.now()));
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/check-runs/{id}/assets/{assetName}',
      operationId: 'downloadCheckRunAsset',
      summary: 'One file a trial run kept (a screenshot, the trace), by its name in the run’s list',
      tag,
      access: 'read',
      errors: [404],
      contentType: 'application/octet-stream',
      schema: {
        params: Type.Object({ id: Type.String({ format: 'uuid' }), assetName: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
        responses: { 200: Type.String({ format: 'binary' }) },
      },
      handler: async ({ principal, params }) => {
        if (!UUID.test(params.id)) throw notFound();
        const run = await findAccountAdhocRun(sql, principal.account.id, params.id);
        if (!run) throw notFound();
        return assetDownload(deps.blobs, principal.account.id, run.result?.keptAssets ?? [], params.assetName);
      },
    }),
  ];
}
