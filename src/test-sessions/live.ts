import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import type { Principal } from '../accounts/index.js';
import {
  applyGroupSettings,
  checkTargetRules,
  cliCheckBody,
  GroupBody,
  GroupBodyV2,
  type GroupData,
  runnableCheckIds,
  type SharedFile,
} from '../checks/index.js';
import { AssetManifest, AssetManifestQuery, assetDownload, assetManifest, linkOrigin } from '../http/asset-manifest.js';
import { HttpError, notFound } from '../http/errors.js';
import { type AnyRoute, defineRoute } from '../http/route.js';
import { Rules } from '../http/rules.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import { compileValidator } from '../http/validation.js';
import type { LivePublisher } from '../live/index.js';
import { CHECK_TYPES, type CheckType } from '../model/checks.js';
import { iso } from '../model/time.js';
import type { EnvVar } from '../model/variables.js';
import type { RunSource } from '../run-kernel/index.js';
import {
  type AdhocCheck,
  type AdhocRecorder,
  type AdhocResult,
  type AdhocRunRow,
  adhocTopic,
  cancelAdhocRuns,
  cancelledResult,
  findAdhocRunOfResult,
  findScheduling,
  loadRunnable,
  matchChecks,
  matchesTags,
  queueAdhoc,
  recordAdhoc,
  type SchedulingRow,
  sessionRuns,
} from '../runners/index.js';
import type { Deps } from '../storage/deps.js';
import { inTransaction, type Sql, transaction } from '../storage/postgres.js';
import type { TestSessions } from './lifecycle.js';
import { endSession, findResult, findSession, insertSession, type SessionProvider, type StoredResult, upsertResult } from './repository.js';
import { RunBody, TestSession } from './schemas.js';
import { validatorOf } from './validators.js';

/**
 * Live runs (docs/live-runs.md): `checkly test` and `pw-test` send checks to run (`POST /v1/test-sessions/run`),
 * `checkly trigger` names the account's checks by tag (`POST /next/test-sessions/trigger`); each check runs once
 * on the runners of the requested location and its results are published over MQTT as they come, and recorded in
 * a test session when the client records.
 */

const tag = 'Test sessions';
const Uuid = Type.String({ format: 'uuid' });

const RunLocation = Type.Union([
  Type.String({ minLength: 1, maxLength: 255 }),
  Type.Object({ type: Type.Literal('PUBLIC'), region: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal('PRIVATE'), slugName: Type.String({ minLength: 1, maxLength: 255 }), id: Type.Optional(Type.String({ maxLength: 64 })) },
    { additionalProperties: false },
  ),
]);

/** `checkly trigger`'s body. */
const CliTriggerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048, default: 'Triggered Session' }),
    shouldRecord: Type.Boolean({ default: true }),
    runLocation: Type.Optional(RunLocation),
    checkRunSuiteId: Uuid,
    targetTags: Type.Array(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 }), { maxItems: 50, default: [] }),
    checkId: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
    environmentVariables: Type.Array(
      Type.Object(
        {
          key: Type.String({ minLength: 1, maxLength: 255 }),
          value: Type.String({ maxLength: 10_000 }),
          locked: Type.Optional(Type.Boolean()),
          secret: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      { maxItems: 50, default: [] },
    ),
    repoInfo: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    environment: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
    testRetryStrategy: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    refreshCache: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** The anchor's `POST /v1/test-sessions/trigger` body (TriggerTestSessionRequest). */
const TriggerBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 2048 }),
    runLocation: Type.String({ minLength: 1, maxLength: 255, description: 'A public region or a private location slug' }),
    target: Type.Optional(
      Type.Object(
        {
          matchTags: Type.Optional(Type.Array(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 50 }), { maxItems: 50 })),
          checkId: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
          allowDeactivated: Type.Boolean({ default: false }),
        },
        { additionalProperties: false },
      ),
    ),
    environmentVariables: Type.Array(
      Type.Object(
        {
          key: Type.String({ minLength: 1, maxLength: 255 }),
          value: Nullable(Type.String({ maxLength: 10_000 })),
          locked: Type.Optional(Type.Boolean()),
          secret: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
      { maxItems: 50, default: [] },
    ),
    retryStrategy: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    refreshCache: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: false },
);

const RunResponse = Type.Object(
  {
    schedulingId: Uuid,
    testSessionId: Type.Optional(Uuid),
    testResultIds: Type.Record(Type.String(), Type.String()),
    sequenceIds: Type.Record(Type.String(), Type.String(), { description: "logicalId → sequenceId: the 5th segment of the run's MQTT topics" }),
  },
  { additionalProperties: false },
);

const Scheduling = Type.Object({
  schedulingId: Uuid,
  testSessionId: Nullable(Uuid),
  status: StringEnum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED'] as const),
  checksTotal: Type.Integer(),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  createdAt: Type.String({ format: 'date-time' }),
  startedAt: Nullable(Type.String({ format: 'date-time' })),
  endedAt: Nullable(Type.String({ format: 'date-time' })),
});

const WaitQuery = Type.Object({ maxWaitSeconds: Type.Integer({ minimum: 1, maximum: 30, default: 30 }) }, { additionalProperties: false });

function locationOf(runLocation: Static<typeof RunLocation> | undefined): string {
  if (runLocation === undefined) return 'eu-central-1';
  if (typeof runLocation === 'string') return runLocation;
  return runLocation.type === 'PUBLIC' ? runLocation.region : runLocation.slugName;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const groupValidators = { v1: compileValidator('body', GroupBody), v2: compileValidator('body', GroupBodyV2) };

/** A CLI job refused: the message names the job, its logicalId and the field, as the CLI prints it. */
function jobError(i: number, logicalId: unknown, message: string): HttpError {
  return new HttpError(400, `checkRunJobs[${i}]${typeof logicalId === 'string' ? ` (logicalId "${logicalId}")` : ''}: ${message}`);
}

function describe(err: unknown): string {
  if (!(err instanceof HttpError)) throw err;
  const errors = (err.attributes?.errors as { field: string; message: string }[] | undefined) ?? [];
  return errors.length ? errors.map((e) => `${e.field.replace(/^body\./, '')} ${e.message}`).join('; ') : err.message;
}

/** A job of `checkly test` as a check this service runs (validated as a check of its type would be). */
function adhocFromJob(job: Record<string, unknown>, i: number, sharedFiles: SharedFile[], deps: Deps): AdhocCheck {
  const { testRetryStrategy, sourceInfo, logicalId, filePath: _file, group, groupId: _groupId, ...payload } = job;
  const info = (sourceInfo ?? {}) as { checkRunId?: unknown };
  if (typeof logicalId !== 'string' || !logicalId) throw jobError(i, logicalId, 'logicalId is required');
  const type = payload.checkType as CheckType;
  if (!CHECK_TYPES.includes(type)) throw jobError(i, logicalId, `checkType must be one of: ${CHECK_TYPES.join(', ')}`);
  if (type === 'HEARTBEAT') throw jobError(i, logicalId, 'heartbeat monitors have nothing to run');
  const converted = cliCheckBody(payload, sharedFiles);
  if ('problem' in converted) throw jobError(i, logicalId, converted.problem);
  let data: Record<string, unknown>;
  try {
    data = validatorOf(type)(converted.body) as Record<string, unknown>;
  } catch (err) {
    throw jobError(i, logicalId, describe(err));
  }
  const rules = new Rules();
  checkTargetRules(type, data, deps.outbound, rules);
  try {
    rules.throwIfAny();
  } catch (err) {
    throw jobError(i, logicalId, describe(err));
  }
  if (group && typeof group === 'object') {
    const { v, ...groupPayload } = group as Record<string, unknown>;
    let groupData: GroupData;
    try {
      groupData = (v === 2 ? groupValidators.v2 : groupValidators.v1)(groupPayload) as GroupData;
    } catch (err) {
      throw jobError(i, logicalId, `group: ${describe(err)}`);
    }
    if ((groupData as { retryStrategy?: unknown }).retryStrategy === 'FALLBACK') delete (groupData as { retryStrategy?: unknown }).retryStrategy;
    data = applyGroupSettings({ ...data, checkType: type }, groupData);
  }
  return {
    logicalId,
    checkRunId: typeof info.checkRunId === 'string' && /^[0-9a-f-]{36}$/i.test(info.checkRunId) ? info.checkRunId : randomUUID(),
    testResultId: randomUUID(),
    name: String(data.name),
    checkType: type,
    definition: {
      data,
      variables: [],
      retryStrategy: (testRetryStrategy as Record<string, unknown> | null | undefined) ?? null,
      setupScript: typeof data.localSetupScript === 'string' && data.localSetupScript.trim() ? data.localSetupScript : undefined,
      teardownScript: typeof data.localTearDownScript === 'string' && data.localTearDownScript.trim() ? data.localTearDownScript : undefined,
    },
  };
}

/** A final ad-hoc result as a test session keeps it. */
function stored(run: AdhocRunRow, result: AdhocResult): StoredResult {
  return {
    checkId: run.check_id ?? run.id,
    checkType: run.check_type,
    name: run.name,
    runLocation: run.location,
    errorGroupIds: [],
    hasErrors: result.hasErrors,
    hasFailures: result.hasFailures,
    isDegraded: result.isDegraded,
    aborted: result.aborted,
    responseTime: result.responseTime,
    startedAt: result.startedAt,
    stoppedAt: result.stoppedAt,
  };
}

/**
 * Records a final ad-hoc result in its run's test session, and ends the session (PASSED or FAILED) once every run
 * of it has ended. The session row is locked, so runners finishing together end it once.
 */
export function adhocRecorder(sql: Sql): AdhocRecorder {
  return async (run, result) => {
    if (!run.test_session_id) return;
    await transaction(sql, async (tx) => {
      const session = await findSession(tx, run.account_id, run.test_session_id!, true).catch(() => undefined);
      if (!session) return;
      await upsertResult(tx, session.id, run.test_result_id, stored(run, result));
      if (session.status !== 'RUNNING') return;
      const runs = await sessionRuns(tx, session.id);
      if (runs.some((r) => r.status === 'QUEUED' || r.status === 'RUNNING')) return;
      const failed = runs.some((r) => r.result && (r.result.hasFailures || r.result.hasErrors));
      await endSession(tx, session.id, failed ? 'FAILED' : 'PASSED');
    });
  };
}

export function liveRoutes(deps: Deps, sessions: TestSessions): AnyRoute[] {
  const { sql, queues, config } = deps;
  const link = (id: string) => `${config.publicUrl ?? ''}/v1/test-sessions/${id}`;

  async function openSession(
    principal: Principal,
    name: string,
    repo: Record<string, unknown> | null | undefined,
    environment: string | null | undefined,
    provider: SessionProvider,
  ) {
    const text = (v: unknown) => (typeof v === 'string' ? v : null);
    return insertSession(
      sql,
      principal.account.id,
      name,
      {
        metadata: {
          ...(environment ? { environment } : {}),
          repoUrl: text(repo?.repoUrl),
          commitId: text(repo?.commitId),
          commitOwner: text(repo?.commitOwner),
          commitMessage: text(repo?.commitMessage),
          branchName: text(repo?.branchName),
        },
      },
      provider,
    );
  }

  /**
   * Records the runs in one transaction with the session they report to, then queues them: after the commit, so a
   * runner never picks up a run it cannot read yet. A run that cannot be queued or placed ends its session at once.
   */
  async function start(
    principal: Principal,
    s: {
      name: string;
      record: boolean;
      repo?: Record<string, unknown> | null;
      environment?: string | null;
      provider: SessionProvider;
      checkRunSuiteId: string;
      location: string;
      source: RunSource;
      checks: AdhocCheck[];
    },
  ) {
    const recorded = await transaction(sql, (tx) =>
      inTransaction(tx, async () => {
        const testSessionId = s.record ? await openSession(principal, s.name, s.repo, s.environment, s.provider) : null;
        const adhoc = await recordAdhoc(sql, {
          accountId: principal.account.id,
          topicAccount: principal.account.id,
          checkRunSuiteId: s.checkRunSuiteId,
          testSessionId,
          location: s.location,
          checks: s.checks,
        });
        if (testSessionId && adhoc.scheduling.status === 'FAILED') await endSession(sql, testSessionId, 'FAILED');
        return { testSessionId, ...adhoc };
      }),
    );
    try {
      await queueAdhoc(sql, queues, recorded, s.source);
    } catch (err) {
      if (recorded.testSessionId) await endSession(sql, recorded.testSessionId, 'FAILED');
      throw err;
    }
    return recorded;
  }

  /** The account's runnable checks a trigger names: tags (OR of AND lists) and ids narrow each other. */
  async function triggered(
    principal: Principal,
    tags: string[][],
    ids: string[] | undefined,
    allowDeactivated: boolean,
    variables: EnvVar[],
    retry: Record<string, unknown> | null,
  ) {
    const accountId = principal.account.id;
    const candidates = allowDeactivated ? await runnableCheckIds(sql, accountId) : await matchChecks(sql, accountId, {});
    const runnable = await loadRunnable(sql, accountId, candidates);
    const wanted = ids ? new Set(ids.map((id) => id.toLowerCase())) : undefined;
    const picked = candidates.map((id) => runnable.get(id)!).filter((c) => c && (!wanted || wanted.has(c.id)) && (!tags.length || matchesTags(c.tags, tags)));
    return picked.map(
      (c): AdhocCheck => ({
        logicalId: c.id,
        checkId: c.id,
        checkRunId: randomUUID(),
        testResultId: randomUUID(),
        name: c.name,
        checkType: c.checkType,
        definition: { data: c.data, variables, retryStrategy: retry, setupScript: c.setupScript, teardownScript: c.teardownScript },
      }),
    );
  }

  const toScheduling = (row: SchedulingRow) => ({
    schedulingId: row.id,
    testSessionId: row.test_session_id,
    status: row.status,
    checksTotal: row.checks_total,
    error: row.error,
    createdAt: iso(row.created_at)!,
    startedAt: iso(row.started_at),
    endedAt: iso(row.ended_at),
  });

  const runRoute = (path: string, operationId: string) =>
    defineRoute({
      method: 'POST',
      path,
      operationId,
      summary: "Run the checks a client sends (the anchor CLI's `checkly test` and `pw-test`), once each, in one location",
      description:
        'Each job runs on the runners of `runLocation`; its results are published over MQTT on ' +
        '`account/<id>/ad-hoc-check-results/<checkRunSuiteId>/<sequenceId>/<checkRunId>/{run-start,result,error}` ' +
        '(sequenceIds in the answer, by logicalId) and, with shouldRecord, kept in a test session. The checks are not ' +
        "stored as the account's. The body may be gzip-encoded.",
      tag,
      access: 'run',
      bodyLimitBytes: config.projects.deployBodyLimitBytes,
      schema: { body: RunBody, responses: { 202: RunResponse } },
      handler: async ({ principal, body }) => {
        const sharedFiles = (body.sharedFiles ?? []) as unknown as SharedFile[];
        const jobs = body.checkRunJobs.map((job, i) => adhocFromJob(job, i, sharedFiles, deps));
        const suites = new Set(body.checkRunJobs.map((j) => (j as { sourceInfo?: { checkRunSuiteId?: unknown } }).sourceInfo?.checkRunSuiteId));
        const suite = [...suites][0];
        if (suites.size !== 1 || typeof suite !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(suite)) {
          throw new HttpError(400, 'checkRunJobs[].sourceInfo.checkRunSuiteId must be one uuid shared by every job');
        }
        const started = await start(principal, {
          name: body.name,
          record: body.shouldRecord,
          repo: body.repoInfo as Record<string, unknown> | null | undefined,
          environment: body.environment,
          provider: 'API',
          checkRunSuiteId: suite,
          location: locationOf(body.runLocation),
          source: body.shouldRecord ? 'TEST_RECORD' : 'TEST_NO_RECORD',
          checks: jobs,
        });
        return {
          status: 202,
          body: {
            schedulingId: started.scheduling.id,
            ...(started.testSessionId ? { testSessionId: started.testSessionId } : {}),
            testResultIds: started.testSessionId ? Object.fromEntries(started.runs.map((r) => [r.logical_id, r.test_result_id])) : {},
            sequenceIds: Object.fromEntries(started.runs.map((r) => [r.logical_id, r.id])),
          },
        };
      },
    });

  /**
   * A test-session result's kept files (its ad-hoc browser or multi-step run's; none for a result recorded by a
   * client), after the result is found: 404 only when the session has no such result.
   */
  async function sessionResultAssets(accountId: string, testSessionId: string, testResultId: string) {
    const result = await findResult(sql, accountId, testSessionId, testResultId);
    if (!result) throw notFound();
    const run = await findAdhocRunOfResult(sql, accountId, testSessionId, testResultId);
    const data = result.data as { name?: string; checkType?: string; checkId?: string };
    return {
      source: {
        type: 'test-session-result' as const,
        ...(run?.check_id ? { checkId: run.check_id } : {}),
        checkName: run?.name ?? data.name ?? '',
        checkType: run?.check_type ?? data.checkType ?? '',
        resultId: testResultId.toLowerCase(),
        testSessionId: testSessionId.toLowerCase(),
      },
      assets: run?.result?.keptAssets ?? [],
    };
  }
  const SessionResultParams = Type.Object({ testSessionId: Uuid, testSessionResultId: Uuid }, { additionalProperties: false });

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions/{testSessionId}/results/{testSessionResultId}/assets',
      operationId: 'getTestSessionResultAssets',
      summary: "The files a test-session result kept (a browser run's screenshots, traces, videos), each with its download URL",
      description: "`type` (repeatable) and `name` (a glob) narrow the list; the anchor CLI's `checkly assets list|download --test-session-id` read it.",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: SessionResultParams, query: AssetManifestQuery, responses: { 200: AssetManifest } },
      handler: async ({ principal, params, query, context }) => {
        const { source, assets } = await sessionResultAssets(principal.account.id, params.testSessionId, params.testSessionResultId);
        const base = `${linkOrigin(config, context.client)}/v1/test-sessions/${source.testSessionId}/results/${source.resultId}/assets`;
        const body = assetManifest(assets, query, { url: (name) => `${base}/${encodeURIComponent(name)}`, source });
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions/{testSessionId}/results/{testSessionResultId}/assets/{assetName}',
      operationId: 'downloadTestSessionResultAsset',
      summary: 'One file a test-session result kept, by its name in the asset list',
      tag,
      access: 'read',
      errors: [404],
      contentType: 'application/octet-stream',
      schema: {
        params: Type.Object({ ...SessionResultParams.properties, assetName: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
        responses: { 200: Type.String({ format: 'binary' }) },
      },
      handler: async ({ principal, params }) => {
        const { assets } = await sessionResultAssets(principal.account.id, params.testSessionId, params.testSessionResultId);
        return assetDownload(deps.blobs, principal.account.id, assets, params.assetName);
      },
    }),
    runRoute('/v1/test-sessions/run', 'runTestSession'),
    runRoute('/next/test-sessions/run', 'runTestSessionNext'),
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions/scheduling/{schedulingId}/completion',
      operationId: 'awaitTestSessionScheduling',
      summary: 'Waits up to maxWaitSeconds for a run to be dispatched to its runners: 200 once it is (or failed), 408 before',
      tag,
      access: 'read',
      errors: [404, 408],
      schema: {
        params: Type.Object({ schedulingId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        query: WaitQuery,
        responses: { 200: Scheduling },
      },
      handler: async ({ principal, params }) => {
        const row = await findScheduling(sql, principal.account.id, params.schedulingId);
        if (!row) throw notFound();
        return { status: 200, body: toScheduling(row) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/next/test-sessions/trigger',
      operationId: 'triggerTestSessionNext',
      summary: "Run the account's checks by tag or id now, followed live (the anchor CLI's `checkly trigger`)",
      description:
        '`targetTags` is OR of AND lists; `checkId` narrows further. No check matches: 403 with errorCode ERR_NO_MATCHING_CHECKS, as the CLI reads it.',
      tag,
      access: 'run',
      errors: [403],
      schema: {
        body: CliTriggerBody,
        responses: {
          200: Type.Object({
            checks: Type.Array(Type.Object({ id: Uuid, name: Type.String(), checkType: StringEnum(CHECK_TYPES) })),
            testSessionId: Nullable(Uuid),
            testResultIds: Type.Record(Type.String(), Type.String()),
            sequenceIds: Type.Record(Type.String(), Type.String()),
          }),
        },
      },
      handler: async ({ principal, body }) => {
        const checks = await triggered(principal, body.targetTags, body.checkId, false, body.environmentVariables as EnvVar[], body.testRetryStrategy ?? null);
        if (!checks.length) throw new HttpError(403, 'No matching checks were found.').withFields({ errorCode: 'ERR_NO_MATCHING_CHECKS' });
        const started = await start(principal, {
          name: body.name,
          record: body.shouldRecord,
          repo: body.repoInfo,
          environment: body.environment,
          provider: 'TRIGGER',
          checkRunSuiteId: body.checkRunSuiteId,
          location: locationOf(body.runLocation),
          source: 'TRIGGER_API',
          checks,
        });
        return {
          status: 200,
          body: {
            checks: checks.map((c) => ({ id: c.checkId!, name: c.name, checkType: c.checkType })),
            testSessionId: started.testSessionId,
            testResultIds: started.testSessionId ? Object.fromEntries(started.runs.map((r) => [r.check_id!, r.test_result_id])) : {},
            sequenceIds: Object.fromEntries(started.runs.map((r) => [r.check_id!, r.id])),
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/test-sessions/trigger',
      operationId: 'triggerTestSession',
      summary: 'Start a test session of the checks matching the target (all eligible checks without one)',
      description: 'Does not wait: follow it with GET /v1/test-sessions/{id}/completion. Test sessions do not alert.',
      tag,
      access: 'run',
      errors: [402, 403],
      schema: { body: TriggerBody, responses: { 201: TestSession } },
      handler: async ({ principal, body }) => {
        const variables = body.environmentVariables.filter((v) => v.value !== null) as EnvVar[];
        const checks = await triggered(
          principal,
          body.target?.matchTags ?? [],
          body.target?.checkId,
          body.target?.allowDeactivated ?? false,
          variables,
          body.retryStrategy ?? null,
        );
        if (!checks.length) throw new HttpError(403, 'No matching checks were found.').withFields({ errorCode: 'ERR_NO_MATCHING_CHECKS' });
        const started = await start(principal, {
          name: body.name,
          record: true,
          repo: body.metadata,
          environment:
            typeof (body.metadata as { environment?: unknown } | undefined)?.environment === 'string'
              ? (body.metadata as { environment: string }).environment
              : null,
          provider: 'TRIGGER',
          checkRunSuiteId: randomUUID(),
          location: body.runLocation,
          source: 'TRIGGER_API',
          checks,
        });
        return { status: 201, body: await sessions.read(sql, principal.account.id, started.testSessionId!) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/test-sessions/{testSessionId}/completion',
      operationId: 'awaitTestSession',
      summary: 'Waits up to maxWaitSeconds for a test session to end: the session once it has, 408 while it runs',
      tag,
      access: 'read',
      errors: [404, 408],
      schema: { params: Type.Object({ testSessionId: Uuid }, { additionalProperties: false }), query: WaitQuery, responses: { 200: TestSession } },
      handler: async ({ principal, params, query, context }) => {
        const until = Date.now() + query.maxWaitSeconds * 1000;
        for (;;) {
          const row = await findSession(sql, principal.account.id, params.testSessionId);
          if (row.status !== 'RUNNING') return { status: 200, body: await sessions.read(sql, principal.account.id, row.id) };
          if (Date.now() >= until || context.signal.aborted) throw new HttpError(408, 'The test session is still running');
          await sleep(Math.min(250, until - Date.now()));
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/test-sessions/{testSessionId}/link',
      operationId: 'getTestSessionLink',
      summary: "A test session's link (the CLI prints it after a run)",
      tag,
      access: 'read',
      errors: [404],
      schema: { params: Type.Object({ testSessionId: Uuid }, { additionalProperties: false }), responses: { 200: Type.Object({ link: Type.String() }) } },
      handler: async ({ principal, params }) => {
        const row = await findSession(sql, principal.account.id, params.testSessionId);
        return { status: 200, body: { link: row.metadata?.link ?? link(row.id) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/next/test-sessions/{testSessionId}/results/{testResultId}/links',
      operationId: 'getTestSessionResultLinks',
      summary: "Links of a test session's result (its page; traces, videos and screenshots once results keep them)",
      tag,
      access: 'read',
      errors: [404],
      schema: {
        params: Type.Object({ testSessionId: Uuid, testResultId: Uuid }, { additionalProperties: false }),
        responses: {
          200: Type.Object({
            testResultLink: Type.String(),
            testTraceLinks: Type.Array(Type.String()),
            videoLinks: Type.Array(Type.String()),
            screenshotLinks: Type.Array(Type.String()),
          }),
        },
      },
      handler: async ({ principal, params }) => {
        const row = await findSession(sql, principal.account.id, params.testSessionId);
        return {
          status: 200,
          body: { testResultLink: `${link(row.id)}/results/${params.testResultId}`, testTraceLinks: [], videoLinks: [], screenshotLinks: [] },
        };
      },
    }),
  ];
}

/** Stops a cancelled session's unfinished runs and tells followers each ended cancelled (a FINAL with isCancelled). */
export async function cancelRuns(sql: Sql, live: LivePublisher, accountId: string, testSessionId: string): Promise<number> {
  const runs = await cancelAdhocRuns(sql, accountId, testSessionId);
  for (const run of runs) {
    const result = cancelledResult(run);
    await upsertResult(sql, testSessionId, run.test_result_id, stored(run, result));
    await live.publish(adhocTopic(run, 'result'), { result, resultType: 'FINAL', testResultId: run.test_result_id }).catch(() => undefined);
  }
  return runs.length;
}
