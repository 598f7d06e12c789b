import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { GroupCommit } from '../ingest/group-commit.js';
import { toRow } from '../ingest/rows.js';
import type { ResultItem } from '../ingest/schemas.js';
import { ingestJob, type ResultQueue, type ResultRow } from '../model/results.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import type { Sql } from '../storage/postgres.js';
import type { BlobStore } from '../storage/blobs.js';
import type { Queues } from '../storage/queues.js';
import { loadRunnable, locationQueues, type RunnableCheck } from './definitions.js';
import { enqueueRuns, type RunJob } from './jobs.js';
import { isTerminal, recordSessionResult, sessionStatus } from './sessions.js';
import { CHECK_RUNNERS } from './types/index.js';
import { configureBrowserRuns, type BrowserSettings } from './types/browser.js';
import { messageOf, type RunOutcome } from './types/common.js';
import { maskSecretValues } from './interpolate.js';
import { CHECK_TYPE_FACTS } from '../model/checks.js';
import { registerRunner } from './health.js';
import { LivePublisher } from '../live/publisher.js';
import { adhocResult, adhocRunnable, adhocTopic, findAdhocRun, finishAdhocRun, startAdhocAttempt, type AdhocRecorder } from './adhoc.js';

export interface RunnerOptions {
  sql: Sql;
  queues: Queues;
  redisUrl: string;
  redisPrefix: string;
  ingest: ResultQueue;
  policy: OutboundPolicy;
  logger: Logger;
  metrics?: Metrics;
  /** The queues this runner takes runs from: public location names, `private-<id>` for private locations. */
  locations: readonly string[];
  /** Runs in flight at once per location. */
  concurrency: number;
  /** Records an ad-hoc run's final result in its test session (wired by the process assembly). */
  recordAdhoc?: AdhocRecorder;
  /** Browser and multi-step runs: how many at once in this process, and the memory of each. */
  browser?: BrowserSettings;
  /** Where runs keep their files (screenshots, traces). */
  blobs?: BlobStore;
}

interface RetryStrategy {
  type?: 'FIXED' | 'LINEAR' | 'EXPONENTIAL' | 'SINGLE_RETRY' | 'NO_RETRIES';
  baseBackoffSeconds?: number;
  maxRetries?: number;
  maxDurationSeconds?: number;
  sameRegion?: boolean;
  onlyOn?: string[];
}

/**
 * Whether a failed attempt runs again, when and where: per the check's retryStrategy (the anchor's: FIXED waits
 * the base each time, LINEAR base × n, EXPONENTIAL base^n, SINGLE_RETRY once after the base; at most maxRetries,
 * all within maxDurationSeconds of the first try; `sameRegion: false` retries in another of the check's locations;
 * `onlyOn: NETWORK_ERROR` retries only runs that reached nothing). Without a strategy the deprecated `doubleCheck`
 * (the anchor's default) retries once at once in another location.
 */
export function nextRetry(check: RunnableCheck, job: RunJob, outcome: RunOutcome, now = Date.now()): { delayMs: number; location: string } | undefined {
  if (!outcome.hasFailures || outcome.hasErrors) return undefined;
  const raw = check.data.retryStrategy as RetryStrategy | null | undefined;
  const strategy: RetryStrategy | undefined =
    raw && raw.type && raw.type !== 'NO_RETRIES'
      ? raw
      : !raw && check.data.doubleCheck !== false
        ? { type: 'SINGLE_RETRY', baseBackoffSeconds: 0, sameRegion: false }
        : undefined;
  if (!strategy) return undefined;
  if (strategy.onlyOn?.includes('NETWORK_ERROR') && !outcome.networkError) return undefined;
  const retryNumber = job.attempt; // the retry this would be: 1 after the first try
  const maxRetries = strategy.type === 'SINGLE_RETRY' ? 1 : Math.min(10, strategy.maxRetries ?? 2);
  if (retryNumber > maxRetries) return undefined;
  const base = strategy.baseBackoffSeconds ?? 60;
  const seconds = strategy.type === 'LINEAR' ? base * retryNumber : strategy.type === 'EXPONENTIAL' ? base ** retryNumber : base;
  const delayMs = Math.max(0, seconds * 1000);
  const maxDurationMs = (strategy.type === 'SINGLE_RETRY' ? 600 : Math.min(600, strategy.maxDurationSeconds ?? 600)) * 1000;
  if (now + delayMs - (job.firstStartedAt ?? now) > maxDurationMs) return undefined;
  const others = check.locations.filter((l) => l !== job.location);
  const location = strategy.sameRegion === false && others.length ? others[Math.floor(Math.random() * others.length)] : job.location;
  return { delayMs, location };
}

/** A run's outcome as the result item ingest stores. */
export function resultItem(check: RunnableCheck, location: string, outcome: RunOutcome, attempts: number): ResultItem {
  return {
    ...withError(check, outcome),
    checkId: check.id,
    checkType: check.checkType,
    runLocation: location,
    startedAt: new Date(outcome.startedAt).toISOString(),
    stoppedAt: new Date(Math.max(outcome.stoppedAt, outcome.startedAt)).toISOString(),
    hasFailures: outcome.hasFailures,
    hasErrors: outcome.hasErrors,
    isDegraded: outcome.isDegraded,
    aborted: false,
    attempts: Math.min(255, attempts),
    ...cleanMetrics(outcome.metrics),
  } as ResultItem;
}

/**
 * The run's detail, with why it failed kept as its result object's first error (`errors[0].message`) when the
 * object does not say already: error groups (docs/analytics.md) group failed runs by it.
 */
function withError(check: RunnableCheck, outcome: RunOutcome): Record<string, unknown> {
  const key = CHECK_TYPE_FACTS[check.checkType].resultKey;
  if (!outcome.hasFailures || !outcome.error || !key) return outcome.detail;
  const current = (outcome.detail[key] ?? {}) as { errors?: unknown };
  if (Array.isArray(current.errors) && current.errors.length) return outcome.detail;
  return { ...outcome.detail, [key]: { ...current, errors: [{ message: maskSecretValues(outcome.error, check.secrets) }] } };
}

/** Metrics within what a result item holds (no NaN, no negative, ms within a day). */
function cleanMetrics(m: RunOutcome['metrics']): Partial<ResultItem> {
  const ms = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? undefined : Math.min(86_400_000, Math.max(0, v)));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined || v === null) continue;
    if (k === 'timings') {
      const t = Object.fromEntries(Object.entries(v as Record<string, number>).flatMap(([tk, tv]) => (ms(tv) === undefined ? [] : [[tk, ms(tv)]])));
      if (Object.keys(t).length) out.timings = t;
    } else if (k === 'daysUntilExpiry') out[k] = Math.max(-36500, Math.min(36500, v as number));
    else if (k === 'statusCode') {
      if ((v as number) >= 100 && (v as number) <= 599) out[k] = v;
    } else if (k === 'grpcStatusCode' || k === 'hopCount') out[k] = Math.max(0, Math.min(k === 'hopCount' ? 255 : 16, Math.round(v as number)));
    else if (k === 'packetLoss') out[k] = Math.max(0, Math.min(100, v as number));
    else if (typeof v === 'number' && ms(v) !== undefined) out[k] = ms(v);
  }
  return out as Partial<ResultItem>;
}

/**
 * A runner: takes runs from the queues of its locations, executes each by its check's type, retries per the
 * retryStrategy, and hands each final result to ingest (a runner's result is one a client could have posted:
 * same validation path, dedup, state, alerts, rollups). A run job completes only once its result is queued for
 * ingest, so a runner that dies mid-run leaves the run to BullMQ's stalled-job recovery, never to silence.
 */
export function startRunner(opts: RunnerOptions) {
  const runnerId = randomUUID();
  if (opts.browser) configureBrowserRuns(opts.browser);
  const heartbeat = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  heartbeat.on('error', () => {});
  const stopHeartbeat = registerRunner(heartbeat, opts.redisPrefix, runnerId, opts.locations);

  // Results of runs ending together go to ingest together, one batch per account.
  const sink = new GroupCommit<{ accountId: string; row: ResultRow }>(
    async (group) => {
      const byAccount = new Map<string, ResultRow[]>();
      for (const { accountId, row } of group) byAccount.set(accountId, [...(byAccount.get(accountId) ?? []), row]);
      for (const [accountId, rows] of byAccount) await opts.ingest.enqueue(ingestJob(randomUUID(), accountId, rows));
    },
    () => 1,
    1000,
  );

  const live = new LivePublisher(heartbeat, opts.redisPrefix);
  /** Live messages are a view of what is also kept: one that cannot go out is logged, never retried. */
  const publish = (topic: string, payload: unknown) =>
    live.publish(topic, payload).catch((err: unknown) => opts.logger.warn({ err: messageOf(err), topic }, 'could not publish a live message'));

  /** An ad-hoc run: from its stored definition; each attempt announced, each result published, the final one recorded. */
  async function processAdhoc(run: RunJob & { adhocId: string }) {
    const count = (outcome: string) => opts.metrics?.runs.inc({ location: run.location, outcome });
    const row = await findAdhocRun(opts.sql, run.adhocId);
    if (!row || !(await startAdhocAttempt(opts.sql, row.id))) {
      count('skipped');
      return { skipped: row ? row.status : 'gone' };
    }
    const check = await adhocRunnable(opts.sql, row);
    await publish(adhocTopic(row, 'run-start'), {});
    const started = Date.now();
    const resultId = run.attempt === 1 ? row.test_result_id : randomUUID();
    let outcome: RunOutcome;
    try {
      outcome = await CHECK_RUNNERS[check.checkType]({ check, location: run.location, resultId, attempt: run.attempt, policy: opts.policy, blobs: opts.blobs, assetBase: row.test_session_id ? `/v1/test-sessions/${row.test_session_id}/results/${row.test_result_id}/assets` : undefined });
    } catch (err) {
      outcome = { startedAt: started, stoppedAt: Date.now(), hasFailures: true, hasErrors: true, isDegraded: false, metrics: {}, detail: {}, error: `The runner failed: ${messageOf(err)}` };
      opts.logger.error({ adhocId: row.id, err: messageOf(err) }, 'runner failed on an ad-hoc run');
    }
    const firstStartedAt = run.firstStartedAt ?? outcome.startedAt;
    const retry = nextRetry(check, { ...run, firstStartedAt }, outcome);
    if (retry) {
      await publish(adhocTopic(row, 'result'), { result: adhocResult(row, resultId, outcome, run.attempt), resultType: 'ATTEMPT' });
      const next: RunJob = { ...run, attempt: run.attempt + 1, firstStartedAt };
      const queue = (await locationQueues(opts.sql, run.accountId, [run.location])).get(run.location);
      if (queue) {
        await enqueueRuns(opts.queues, [{ job: next, queue, startAt: Date.now() + retry.delayMs }]);
        count('retry');
        return { retry: run.location, inMs: retry.delayMs };
      }
    }
    // The final result keeps the id the session announced for this check.
    const result = { ...adhocResult(row, row.test_result_id, outcome, run.attempt) };
    if (!(await finishAdhocRun(opts.sql, row.id, result))) {
      count('skipped');
      return { skipped: 'cancelled' };
    }
    count(outcome.hasErrors ? 'error' : outcome.hasFailures ? 'failed' : outcome.isDegraded ? 'degraded' : 'passed');
    await opts.recordAdhoc?.(row, result);
    await publish(adhocTopic(row, 'result'), { result, resultType: 'FINAL', ...(row.test_session_id ? { testResultId: row.test_result_id } : {}) });
    return { resultId: row.test_result_id, failed: outcome.hasFailures };
  }

  async function process(job: Job<RunJob>) {
    const run = job.data;
    if (run.adhocId) return processAdhoc(run as RunJob & { adhocId: string });
    const started = Date.now();
    const count = (outcome: string) => opts.metrics?.runs.inc({ location: run.location, outcome });
    if (run.source === 'SCHEDULER') {
      const lateMs = started - run.slot;
      // A run far past its slot is not worth making: the next slot is as close. Counted, never silent.
      if (lateMs > Math.max(60_000, run.periodMs ?? 60_000) && run.attempt === 1) {
        count('expired');
        opts.logger.warn({ checkId: run.checkId, location: run.location, lateSeconds: Math.round(lateMs / 1000) }, 'run too late to make; skipped');
        return { expired: true };
      }
      if (run.attempt === 1) opts.metrics?.runLateness.observe({ location: run.location }, Math.max(0, lateMs) / 1000);
    }
    if (run.sessionId) {
      const status = await sessionStatus(opts.sql, run.sessionId);
      if (!status || isTerminal(status)) {
        count('skipped');
        return { skipped: status ?? 'gone' };
      }
    }
    const check = (await loadRunnable(opts.sql, run.accountId, [run.checkId])).get(run.checkId);
    if (!check || (run.source === 'SCHEDULER' && !check.activated)) {
      count('skipped');
      return { skipped: check ? 'deactivated' : 'deleted' };
    }
    const resultId = randomUUID();
    let outcome: RunOutcome;
    try {
      outcome = await CHECK_RUNNERS[check.checkType]({ check, location: run.location, resultId, attempt: run.attempt, policy: opts.policy, blobs: opts.blobs });
    } catch (err) {
      const now = Date.now();
      outcome = { startedAt: started, stoppedAt: now, hasFailures: true, hasErrors: true, isDegraded: false, metrics: {}, detail: {}, error: `The runner failed: ${messageOf(err)}` };
      opts.logger.error({ checkId: check.id, err: messageOf(err) }, 'runner failed on a run');
    }
    const retry = nextRetry(check, { ...run, firstStartedAt: run.firstStartedAt ?? outcome.startedAt }, outcome);
    if (retry) {
      const queue = (await locationQueues(opts.sql, run.accountId, [retry.location])).get(retry.location);
      if (queue) {
        const next: RunJob = { ...run, location: retry.location, attempt: run.attempt + 1, firstStartedAt: run.firstStartedAt ?? outcome.startedAt };
        await enqueueRuns(opts.queues, [{ job: next, queue, startAt: Date.now() + retry.delayMs }]);
        count('retry');
        return { retry: retry.location, inMs: retry.delayMs };
      }
    }
    const item = resultItem(check, run.location, outcome, run.attempt);
    await sink.add({ accountId: run.accountId, row: toRow(run.accountId, resultId, item) });
    count(outcome.hasErrors ? 'error' : outcome.hasFailures ? 'failed' : outcome.isDegraded ? 'degraded' : 'passed');
    if (run.sessionId) {
      await recordSessionResult(opts.sql, run.sessionId, {
        checkResultId: resultId,
        runLocation: run.location,
        resultType: 'FINAL',
        hasErrors: outcome.hasErrors,
        hasFailures: outcome.hasFailures,
        isDegraded: outcome.isDegraded,
        aborted: false,
        responseTime: item.responseTime ?? null,
        startedAt: item.startedAt,
        stoppedAt: item.stoppedAt,
        attempts: run.attempt,
        ...(outcome.error ? { error: outcome.error } : {}),
      });
    }
    return { resultId, failed: outcome.hasFailures };
  }

  const workers = opts.locations.map((location) => opts.queues.worker<RunJob>(`runs-${location}`, process, { concurrency: opts.concurrency, label: `runner ${location}` }));
  for (const worker of workers) {
    worker.on('failed', (job, err) => opts.logger.error({ checkId: job?.data.checkId, location: job?.data.location, err: err.message }, 'run failed; kept in the failed set'));
  }
  opts.logger.info({ runnerId, locations: opts.locations.length }, 'runner started');
  return {
    runnerId,
    async close() {
      await Promise.all(workers.map((w) => opts.queues.closeWorker(w)));
      await stopHeartbeat();
      heartbeat.disconnect();
    },
  };
}
