import { type CheckType, RESULT_DETAIL_KEYS } from '../model/checks.js';
import { type KeptAsset, keptAssetsOf } from '../model/results.js';
import type { EnvVar } from '../model/variables.js';
import type { RunJob, RunnableCheck, RunOutcome, RunSource } from '../run-kernel/index.js';
import type { Sql } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { openVariables, resealVariables, sealVariables } from '../storage/secret-box.js';
import { DEFAULT_LOCATION, locationQueues } from './definitions.js';
import { enqueueRuns } from './jobs.js';

/**
 * Ad-hoc runs: checks the anchor's CLI sends (`checkly test`, `pw-test`) or names (`checkly trigger`), run once
 * in one location and followed live (docs/live-runs.md). They are not the account's scheduled runs: their results
 * go to the client over MQTT and, when it records, to a test session, never into the check's history.
 */

export interface AdhocDefinition {
  /** The check's effective settings (request, assertions, scripts, thresholds, group settings applied). */
  data: Record<string, unknown>;
  /** The variables the client sent for this run (on top of the account's and the check's). */
  variables: EnvVar[];
  /** The retry strategy of this run (the CLI's `--retries`), or null: no retries. */
  retryStrategy: Record<string, unknown> | null;
  /** API checks: setup and teardown scripts. */
  setupScript?: string;
  teardownScript?: string;
}

export interface AdhocRunRow {
  id: string;
  account_id: string;
  scheduling_id: string;
  check_run_suite_id: string;
  check_run_id: string;
  topic_account: string;
  logical_id: string;
  check_id: string | null;
  test_session_id: string | null;
  test_result_id: string;
  name: string;
  check_type: CheckType;
  definition: AdhocDefinition;
  location: string;
  status: 'QUEUED' | 'RUNNING' | 'DONE' | 'CANCELLED';
  result: AdhocResult | null;
  /** The final result's whole detail: the type's result object (`apiCheckResult`, …) and the run's error line. */
  detail: AdhocDetail | null;
  created_at: Date;
  finished_at: Date | null;
}

/** What a run saw, kept with its ad-hoc row for the console and the test-session result (the CLI gets `result`). */
export type AdhocDetail = Record<string, unknown> & { error?: string | null };

export interface SchedulingRow {
  id: string;
  account_id: string;
  test_session_id: string | null;
  status: 'PENDING' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';
  checks_total: number;
  error: { code: string; message: string } | null;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
}

/** One check to run ad hoc, as a route prepared it. */
export interface AdhocCheck {
  logicalId: string;
  checkRunId: string;
  checkId?: string;
  testResultId: string;
  name: string;
  checkType: CheckType;
  definition: AdhocDefinition;
}

/** A definition as stored: its secret variables sealed (opened again by adhocRunnable). */
function sealedDefinition(def: AdhocDefinition): AdhocDefinition {
  const vars = def.data.environmentVariables as EnvVar[] | null | undefined;
  return { ...def, data: vars ? { ...def.data, environmentVariables: sealVariables(vars) } : def.data, variables: sealVariables(def.variables) };
}

/** The MQTT topic of an ad-hoc run's messages (the CLI matches on the 5th segment, the run's id). */
export function adhocTopic(
  run: Pick<AdhocRunRow, 'topic_account' | 'check_run_suite_id' | 'id' | 'check_run_id'>,
  subtopic: 'run-start' | 'result' | 'error',
): string {
  return `account/${run.topic_account}/ad-hoc-check-results/${run.check_run_suite_id}/${run.id}/${run.check_run_id}/${subtopic}`;
}

/** A scheduling and its runs as recorded, with the runner queue of their location (none: the scheduling failed). */
export interface RecordedAdhoc {
  scheduling: SchedulingRow;
  runs: AdhocRunRow[];
  queue: string | undefined;
}

/**
 * Records a scheduling and its runs in `location` (a public location or a private one's slug). A location without
 * a queue (an unknown private location) fails the scheduling, visibly. Nothing is queued yet: `queueAdhoc` does
 * that once the caller's transaction has committed, so a runner never picks up a run it cannot read yet.
 */
export async function recordAdhoc(
  sql: Sql,
  s: { accountId: string; topicAccount: string; checkRunSuiteId: string; testSessionId: string | null; location: string; checks: AdhocCheck[] },
): Promise<RecordedAdhoc> {
  const queue = (await locationQueues(sql, s.accountId, [s.location])).get(s.location);
  // Ad-hoc runs of the account older than a week are of no more use to anyone.
  await sql`delete from adhoc_schedulings where account_id = ${s.accountId} and created_at < now() - interval '7 days'`;
  const [scheduling] = await sql<SchedulingRow[]>`insert into adhoc_schedulings (account_id, test_session_id, status, checks_total, error, started_at, ended_at)
    values (${s.accountId}, ${s.testSessionId}, ${queue ? 'SUCCEEDED' : 'FAILED'}, ${s.checks.length},
      ${queue ? null : sql.json({ code: 'SCHEDULING_ERROR', message: `No runner location "${s.location}" in this account` } as never)}, now(), now())
    returning *`;
  if (!s.checks.length) return { scheduling, runs: [], queue };
  const rows = s.checks.map((c) => ({
    account_id: s.accountId,
    scheduling_id: scheduling.id,
    check_run_suite_id: s.checkRunSuiteId,
    check_run_id: c.checkRunId,
    topic_account: s.topicAccount,
    logical_id: c.logicalId,
    check_id: c.checkId ?? null,
    test_session_id: s.testSessionId,
    test_result_id: c.testResultId,
    name: c.name,
    check_type: c.checkType,
    definition: sql.json(sealedDefinition(c.definition) as never),
    location: s.location,
    status: queue ? 'QUEUED' : 'CANCELLED',
  }));
  const runs = await sql<AdhocRunRow[]>`insert into adhoc_runs ${sql(rows)} returning *`;
  return { scheduling, runs, queue };
}

/**
 * Queues recorded runs on their location's runners (after the records committed). When the queue cannot take
 * them (Redis down), the scheduling is marked FAILED and its runs CANCELLED before the error goes on: a client
 * polling the scheduling sees the failure instead of waiting for runs that will never come.
 */
export async function queueAdhoc(sql: Sql, queues: Queues, recorded: RecordedAdhoc, source: RunSource): Promise<void> {
  const { scheduling, runs, queue } = recorded;
  if (!queue || !runs.length) return;
  const now = Date.now();
  const jobs = runs.map((r) => ({
    job: {
      v: 1,
      accountId: r.account_id,
      checkId: r.check_id ?? r.id,
      location: r.location,
      slot: now,
      attempt: 1,
      adhocId: r.id,
      source,
      checkType: r.check_type as CheckType,
    } satisfies RunJob,
    queue,
    startAt: now,
  }));
  try {
    await enqueueRuns(queues, jobs, now);
  } catch (err) {
    const message = `The runs could not be queued: ${err instanceof Error ? err.message : String(err)}`;
    await sql`update adhoc_schedulings set status = 'FAILED', error = ${sql.json({ code: 'SCHEDULING_ERROR', message } as never)}, ended_at = now() where id = ${scheduling.id}`;
    await sql`update adhoc_runs set status = 'CANCELLED', finished_at = now() where scheduling_id = ${scheduling.id} and status = 'QUEUED'`;
    scheduling.status = 'FAILED';
    throw err;
  }
}

export async function findScheduling(sql: Sql, accountId: string, id: string): Promise<SchedulingRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await sql<SchedulingRow[]>`select * from adhoc_schedulings where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function findAdhocRun(sql: Sql, id: string): Promise<AdhocRunRow | undefined> {
  const [row] = await sql<AdhocRunRow[]>`select * from adhoc_runs where id = ${id}`;
  return row;
}

/** Claims a queued (or retried) run for an attempt; false when it was cancelled or is done. */
export async function startAdhocAttempt(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`update adhoc_runs set status = 'RUNNING' where id = ${id} and status in ('QUEUED', 'RUNNING') returning id`;
  return rows.length > 0;
}

/** Stores a run's final result and what it saw; false when it had already ended (cancelled meanwhile). */
export async function finishAdhocRun(sql: Sql, id: string, result: AdhocResult, detail: AdhocDetail | null = null): Promise<boolean> {
  const rows = await sql`update adhoc_runs set status = 'DONE', result = ${sql.json(result as never)}, detail = ${detail ? sql.json(detail as never) : null},
    finished_at = now() where id = ${id} and status in ('QUEUED', 'RUNNING') returning id`;
  return rows.length > 0;
}

/** An ad-hoc run of the account, by its id (a trial run the console follows). */
export async function findAccountAdhocRun(sql: Sql, accountId: string, id: string): Promise<AdhocRunRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row] = await sql<AdhocRunRow[]>`select * from adhoc_runs where id = ${id} and account_id = ${accountId}`;
  return row;
}

/** What a run saw, as kept: each result object of its type, and its error line (kept files are listed in the result). */
export function adhocDetail(outcome: RunOutcome): AdhocDetail {
  const detail: AdhocDetail = { error: outcome.error ?? null };
  for (const key of RESULT_DETAIL_KEYS) if (outcome.detail[key]) detail[key] = outcome.detail[key];
  return detail;
}

/** Cancels the unfinished runs of a test session; returns them. */
export async function cancelAdhocRuns(sql: Sql, accountId: string, testSessionId: string): Promise<AdhocRunRow[]> {
  return sql<AdhocRunRow[]>`update adhoc_runs set status = 'CANCELLED', finished_at = now()
    where account_id = ${accountId} and test_session_id = ${testSessionId} and status in ('QUEUED', 'RUNNING') returning *`;
}

/** The runs of a test session (to end it once each has its final result). */
export async function sessionRuns(sql: Sql, testSessionId: string): Promise<AdhocRunRow[]> {
  return sql<AdhocRunRow[]>`select * from adhoc_runs where test_session_id = ${testSessionId} order by created_at, id`;
}

/** An ad-hoc run as a runner executes it: the stored definition, the account's variables under the run's own. */
export async function adhocRunnable(sql: Sql, run: AdhocRunRow): Promise<RunnableCheck> {
  const accountVars = await sql<
    { key: string; value: string; secret: boolean }[]
  >`select key, value, secret from variables where account_id = ${run.account_id}`;
  const variables: Record<string, string> = {};
  const secrets: string[] = [];
  const def = run.definition;
  for (const v of [
    ...openVariables(accountVars),
    ...(openVariables(def.data.environmentVariables as EnvVar[] | null | undefined) ?? []),
    ...openVariables(def.variables),
  ]) {
    if (v.value === null || v.value === undefined) continue;
    variables[v.key] = v.value;
    if (v.secret && v.value) secrets.push(v.value);
  }
  // The run's retry strategy replaces the check's (the CLI asks for retries per run); none means none.
  const data = { ...def.data, retryStrategy: def.retryStrategy ?? { type: 'NO_RETRIES' }, doubleCheck: false };
  return {
    id: run.check_id ?? run.id,
    accountId: run.account_id,
    name: run.name,
    checkType: run.check_type,
    activated: true,
    tags: (def.data.tags as string[] | undefined) ?? [],
    groupId: null,
    data,
    variables,
    secrets,
    locations: [run.location || DEFAULT_LOCATION],
    runParallel: false,
    setupScript: def.setupScript,
    teardownScript: def.teardownScript,
  };
}

/** A result as the CLI reads it from a `result` message (the anchor's check-result shape, details inline). */
export interface AdhocResult {
  id: string;
  name: string;
  checkType: CheckType;
  logicalId: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  overMaxResponseTime: boolean;
  aborted: boolean;
  isCancelled?: boolean;
  runLocation: string;
  startedAt: string;
  stoppedAt: string;
  responseTime: number | null;
  attempts: number;
  checkRunData?: Record<string, unknown>;
  runError?: string;
  /** A browser run's log lines, printed by the CLI under "Logs". */
  logs?: { time: number; msg: string; level: string }[];
  /** A browser or multi-step run's kept files (its test-session result's asset manifest). */
  keptAssets?: KeptAsset[];
}

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));

/**
 * An outcome as the CLI prints it. API and URL checks carry `checkRunData` (request, response, assertions, or the
 * request error) inline, in the shape the CLI renders; request body and response body are always strings.
 */
export function adhocResult(run: AdhocRunRow, resultId: string, outcome: RunOutcome, attempts: number): AdhocResult {
  const api = outcome.detail.apiCheckResult as
    | {
        request?: { method?: string; url?: string; headers?: Record<string, unknown>; data?: unknown };
        response?: { status: number; statusText?: string; headers?: Record<string, unknown>; body?: unknown } | null;
        assertions?: unknown[];
        requestError?: string | null;
      }
    | undefined;
  const kept = keptAssetsOf(outcome.detail);
  // A browser run's console, as the CLI prints a result's `logs` ({ time, msg, level }).
  const browser = (outcome.detail.browserCheckResult ?? outcome.detail.multiStepCheckResult ?? outcome.detail.playwrightCheckResult) as
    | { jobLog?: { level: string; msg: string }[] }
    | undefined;
  const logs = Array.isArray(browser?.jobLog) ? browser.jobLog.map((l) => ({ time: outcome.startedAt, msg: l.msg, level: l.level })) : undefined;
  const checkRunData = api
    ? {
        requestError: api.requestError ?? null,
        request: { method: api.request?.method ?? 'GET', url: api.request?.url ?? '', headers: api.request?.headers ?? {}, data: text(api.request?.data) },
        response: api.response
          ? { status: api.response.status, statusText: api.response.statusText ?? '', headers: api.response.headers ?? {}, body: text(api.response.body) }
          : undefined,
        assertions: api.assertions ?? [],
      }
    : undefined;
  return {
    id: resultId,
    name: run.name,
    checkType: run.check_type,
    logicalId: run.logical_id,
    hasFailures: outcome.hasFailures,
    hasErrors: outcome.hasErrors,
    isDegraded: outcome.isDegraded,
    overMaxResponseTime: /maxResponseTime/.test(outcome.error ?? ''),
    aborted: false,
    runLocation: run.location,
    startedAt: new Date(outcome.startedAt).toISOString(),
    stoppedAt: new Date(Math.max(outcome.stoppedAt, outcome.startedAt)).toISOString(),
    responseTime: outcome.metrics.responseTime ?? null,
    attempts,
    ...(checkRunData ? { checkRunData } : {}),
    // Types without details the CLI renders say in a line why they failed.
    ...(!checkRunData && (outcome.hasFailures || outcome.hasErrors) && outcome.error ? { runError: outcome.error } : {}),
    ...(kept.length ? { keptAssets: kept } : {}),
    ...(logs?.length ? { logs } : {}),
  };
}

/** The final result of a run that never ran: cancelled before it did. */
export function cancelledResult(run: AdhocRunRow): AdhocResult {
  const now = new Date().toISOString();
  return {
    id: run.test_result_id,
    name: run.name,
    checkType: run.check_type,
    logicalId: run.logical_id,
    hasFailures: false,
    hasErrors: false,
    isDegraded: false,
    overMaxResponseTime: false,
    aborted: true,
    isCancelled: true,
    runLocation: run.location,
    startedAt: now,
    stoppedAt: now,
    responseTime: null,
    attempts: 0,
  };
}

/** What the process assembly wires to record a final ad-hoc result (into the run's test session). */
export type AdhocRecorder = (run: AdhocRunRow, result: AdhocResult) => Promise<void>;

/** The ad-hoc run behind a test-session result of the account, if one ran it. */
export async function findAdhocRunOfResult(sql: Sql, accountId: string, testSessionId: string, testResultId: string): Promise<AdhocRunRow | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(testSessionId) || !/^[0-9a-f-]{36}$/i.test(testResultId)) return undefined;
  const [row] = await sql<AdhocRunRow[]>`select * from adhoc_runs
    where account_id = ${accountId} and test_session_id = ${testSessionId} and test_result_id = ${testResultId}`;
  return row;
}

/** Passes the secret variables of stored ad-hoc definitions through `f` (sealing begins, or a key rotation). */
export async function resealAdhocDefinitions(sql: Sql, f: (value: string) => string): Promise<number> {
  let changed = 0;
  const rows = await sql<{ id: string; definition: AdhocDefinition }[]>`select id, definition from adhoc_runs
    where definition->'data'->'environmentVariables' @> '[{"secret": true}]' or definition->'variables' @> '[{"secret": true}]'`;
  for (const row of rows) {
    const data = resealVariables(row.definition.data.environmentVariables as EnvVar[] | null | undefined, f);
    const variables = resealVariables(row.definition.variables, f);
    if (!data && !variables) continue;
    const definition = {
      ...row.definition,
      data: data ? { ...row.definition.data, environmentVariables: data } : row.definition.data,
      variables: variables ?? row.definition.variables,
    };
    await sql`update adhoc_runs set definition = ${sql.json(definition as never)} where id = ${row.id}`;
    changed++;
  }
  return changed;
}
