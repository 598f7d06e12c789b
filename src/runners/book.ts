import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { GroupCommit, toRow } from '../ingest/index.js';
import { LivePublisher } from '../live/index.js';
import { groupBy } from '../model/collections.js';
import { type IngestJob, ingestJob, type ResultQueue, type ResultRow, slotSpan } from '../model/results.js';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { bounded, messageOf, nameUuid, type RunJob, type RunnableCheck, type RunOutcome, scheduledResultId, type TakenRun } from '../run-kernel/index.js';
import type { Sql } from '../storage/postgres.js';
import type { Queues } from '../storage/queues.js';
import { isRedisUnavailable } from '../storage/redis.js';
import { type AdhocRecorder, adhocDetail, adhocResult, adhocRunnable, adhocTopic, findAdhocRun, finishAdhocRun, startAdhocAttempt } from './adhoc.js';
import { isTerminal, recordSessionResult, sessionStatus } from './check-sessions.js';
import type { DefinitionCache } from './definition-cache.js';
import { loadRunnable, locationQueues } from './definitions.js';
import { enqueueRuns } from './jobs.js';
import { nextRetry, resultItem } from './results.js';

export interface RunBookOptions {
  sql: Sql;
  queues: Queues;
  /** Live messages (run starts and results of `checkly test`) go out through this connection. */
  redis: Redis;
  redisPrefix: string;
  ingest: ResultQueue;
  logger: Logger;
  metrics?: Metrics;
  /** How long finished runs wait for others to go to ingest with them (RESULT_LINGER_MS; the agents' book: 0). */
  resultLingerMs: number;
  /**
   * How long results wait, retried, for ingest's queue while Redis is away (default 30 s; 0: the first failure is
   * the run's). The agents' book passes 0: an agent's report fails at once and the agent sends it again.
   */
  handOffPatienceMs?: number;
  /** Records an ad-hoc run's final result in its test session (wired by the process assembly). */
  recordAdhoc?: AdhocRecorder;
  /** Definitions kept between scheduled runs (definition-cache.ts); without it every run reads its check. */
  definitions?: DefinitionCache;
}

/** Why a run is not made: it came too late, its session ended, its check went away or was deactivated. */
export interface Skipped {
  skipped: string;
}

/**
 * The service's side of every run, wherever it executes: `prepare` reads what a run needs (the check as it is
 * now, with its secrets; the ad-hoc run's definition) and says when it is not to be made; `finish` takes what
 * the run found: a retry per the retryStrategy, else the result to ingest (grouped with the results ending
 * together), its check session, its test session and live messages.
 */
export class RunBook {
  private readonly sink: GroupCommit<Sunk>;
  private readonly live: LivePublisher;
  private readonly tooLate: SkipLog;
  /** Since when ingest's queue has failed to take results (undefined while it takes them). */
  private unavailableSince?: number;
  /** Aborted by `close`: a hand-off waiting to try again gives up. */
  private readonly closing = new AbortController();

  constructor(private readonly opts: RunBookOptions) {
    this.tooLate = new SkipLog(opts.logger);
    this.sink = new GroupCommit<Sunk>(
      async (group) => {
        for (const [accountId, items] of groupBy(group, (item) => item.accountId)) {
          const spans = Object.fromEntries(items.flatMap((i) => (i.span ? [[i.resultId, i.span]] : [])));
          await this.handOff(
            ingestJob(
              randomUUID(),
              accountId,
              items.map((i) => i.row),
              spans,
            ),
          );
        }
      },
      () => 1,
      1000,
      // Results ending within 5 s (or the first 1,000 of them) go to ingest as one batch: ingest's cost is mostly per
      // batch (a queue job, an insert whose parts the embedded engine merges later, a state transaction, and each of
      // them wakes threads, which on a quiet machine costs more than the work: docs/performance.md), so a small
      // installation pays a fifth of it, for up to 5 s more before a result is stored. A busy one fills a batch sooner;
      // a check session's result, waited for, goes at once (`soon`).
      opts.resultLingerMs,
    );
    this.live = new LivePublisher(opts.redis, opts.redisPrefix);
  }

  /** Stops trying to hand results to ingest again (the process is stopping); call before closing the run workers. */
  close(): void {
    // Results lingering for others go to ingest now, before the runner's jobs are given their grace to end.
    this.sink.hurry();
    this.closing.abort();
  }

  /**
   * Hands a batch of results to ingest; while Redis is away (a command timed out, the connection is down), again
   * (250 ms, doubling up to 4 s) until `handOffPatienceMs` has passed since ingest's queue first failed: one clock
   * for every batch, so batches behind a long outage fail at once instead of waiting their own 30 s each. Safe to
   * repeat: the batch keeps its id, so a second enqueue of a batch still kept in the queue is a no-op, and ingest
   * drops results already stored (by id; a scheduled run also by its slot).
   */
  private async handOff(job: IngestJob): Promise<void> {
    const patienceMs = this.opts.handOffPatienceMs ?? HANDOFF_PATIENCE_MS;
    for (let tries = 1, waitMs = 250; ; tries++, waitMs = Math.min(4000, waitMs * 2)) {
      try {
        await this.opts.ingest.enqueue(job);
        this.unavailableSince = undefined;
        if (tries > 1) this.opts.logger.info({ results: job.rows.length, tries }, 'results handed to ingest after a retry');
        return;
      } catch (err) {
        // A connection this process closed (it is stopping) is not coming back; nor is an error other than Redis's absence.
        if (!isRedisUnavailable(err) || messageOf(err) === CONNECTION_CLOSED || this.closing.signal.aborted) throw err;
        const now = Date.now();
        this.unavailableSince ??= now;
        if (now + waitMs > this.unavailableSince + patienceMs) throw err;
        if (tries === 1)
          this.opts.logger.warn(
            { err: messageOf(err), results: job.rows.length },
            `results could not be handed to ingest yet; trying again while Redis is away, up to ${patienceMs / 1000} s`,
          );
        await sleep(waitMs, undefined, { signal: this.closing.signal }).catch(() => {
          throw err;
        });
      }
    }
  }

  /** Counts a run's outcome on `runner_runs_total`. */
  count(location: string, outcome: string): void {
    this.opts.metrics?.runs.inc({ location, outcome });
  }

  /** Live messages are a view of what is also kept: one that cannot go out is logged, never retried. */
  private publish(topic: string, payload: unknown): Promise<void> {
    return this.live.publish(topic, payload).catch((err: unknown) => this.opts.logger.warn({ err: messageOf(err), topic }, 'could not publish a live message'));
  }

  /**
   * What a run needs to execute, or why it is not made. An ad-hoc run's start is announced here. A run given
   * a `lease` (an agent's) takes a result id made from it, so that `reload` finds the same one later.
   */
  async prepare(run: RunJob, lease?: string, now = Date.now()): Promise<TakenRun | Skipped> {
    const { sql } = this.opts;
    if (run.adhocId) {
      const row = await findAdhocRun(sql, run.adhocId);
      if (!row || !(await startAdhocAttempt(sql, row.id))) return this.skip(run, row ? row.status : 'gone');
      const check = await adhocRunnable(sql, row);
      await this.publish(adhocTopic(row, 'run-start'), {});
      return {
        run,
        check,
        resultId: this.resultIdOf(run, lease, row.test_result_id),
        ...(row.test_session_id ? { assetBase: `/v1/test-sessions/${row.test_session_id}/results/${row.test_result_id}/assets` } : {}),
      };
    }
    const expired = this.expired(run, now);
    if (expired) return expired;
    if (run.sessionId) {
      const status = await sessionStatus(sql, run.sessionId);
      if (!status || isTerminal(status)) return this.skip(run, status ?? 'gone');
    }
    const check = (await this.definitions(run, [run.checkId])).get(run.checkId);
    return this.taken(run, check, lease);
  }

  /**
   * The definitions of a run's checks: kept ones for a scheduled run (its retries included), read now for a run
   * someone waits for (a check session's, an on-demand one), which must see a change committed a moment before.
   */
  private definitions(run: RunJob, ids: string[]): Promise<Map<string, RunnableCheck>> {
    const { definitions, sql } = this.opts;
    return definitions && run.source === 'SCHEDULER' && !run.sessionId ? definitions.runnable(run.accountId, ids) : loadRunnable(sql, run.accountId, ids);
  }

  /**
   * `prepare` for a batch of scheduled runs (runners/jobs.ts RunBatch: scheduled first tries only, never a session's
   * or an ad-hoc run): the definitions of each account's checks are read in one query, not one per run. Answers in
   * the order of `runs`; too late is judged again when each run gets its place (`starting`).
   */
  async prepareMany(runs: readonly RunJob[], now = Date.now()): Promise<(TakenRun | Skipped)[]> {
    const late = runs.map((run) => this.expired(run, now, false));
    const wanted = new Map<string, { run: RunJob; ids: Set<string> }>();
    runs.forEach((run, i) => {
      if (!late[i]) {
        const entry = wanted.get(run.accountId) ?? { run, ids: new Set<string>() };
        wanted.set(run.accountId, entry);
        entry.ids.add(run.checkId);
      }
    });
    const checks = new Map<string, Map<string, RunnableCheck>>();
    await Promise.all([...wanted].map(async ([accountId, { run, ids }]) => checks.set(accountId, await this.definitions(run, [...ids]))));
    return runs.map((run, i) => late[i] ?? this.taken(run, checks.get(run.accountId)?.get(run.checkId)));
  }

  /**
   * A prepared run of a batch as it gets its place to execute, which may be a while after the batch was read: too
   * late now is skipped, else its lateness is recorded.
   */
  starting(taken: TakenRun, now = Date.now()): Skipped | undefined {
    return this.expired(taken.run, now);
  }

  /**
   * A scheduled run far past its slot is not worth making (the next slot is as close): counted on
   * `runner_runs_total{outcome="expired"}` and logged as a count per location (SkipLog), never silent.
   */
  private expired(run: RunJob, now: number, observe = true): Skipped | undefined {
    if (run.source !== 'SCHEDULER' || run.attempt !== 1) return undefined;
    const lateMs = now - run.slot;
    if (lateMs > Math.max(60_000, run.periodMs ?? 60_000)) {
      this.tooLate.add(run.location, lateMs, run.checkId);
      this.count(run.location, 'expired');
      return { skipped: 'expired' };
    }
    if (observe) this.opts.metrics?.runLateness.observe({ location: run.location }, Math.max(0, lateMs) / 1000);
    return undefined;
  }

  private taken(run: RunJob, check: RunnableCheck | undefined, lease?: string): TakenRun | Skipped {
    if (!check || (run.source === 'SCHEDULER' && !check.activated)) return this.skip(run, check ? 'deactivated' : 'deleted');
    return { run, check, resultId: this.resultIdOf(run, lease) };
  }

  private resultIdOf(run: RunJob, lease: string | undefined, announced?: string): string {
    if (announced && run.attempt === 1) return announced;
    if (run.source === 'SCHEDULER' && !run.adhocId) return scheduledResultId(run.checkId, run.slot, run.origin ?? run.location);
    return lease ? nameUuid(`lease|${lease}`) : randomUUID();
  }

  /**
   * A leased run again, when its agent reports what it found (maybe to another process of the service): the
   * check as it is now and the result id `prepare` gave it. Undefined when the check or ad-hoc run is gone.
   */
  async reload(run: RunJob, lease: string): Promise<TakenRun | undefined> {
    const { sql } = this.opts;
    if (run.adhocId) {
      const row = await findAdhocRun(sql, run.adhocId);
      if (!row) return undefined;
      return { run, check: await adhocRunnable(sql, row), resultId: this.resultIdOf(run, lease, row.test_result_id) };
    }
    const check = (await loadRunnable(sql, run.accountId, [run.checkId])).get(run.checkId);
    return check ? { run, check, resultId: this.resultIdOf(run, lease) } : undefined;
  }

  private skip(run: RunJob, why: string): Skipped {
    this.count(run.location, 'skipped');
    return { skipped: why };
  }

  /** Takes what a run found: a retry, or its final result (ingest, check session, test session, live). */
  async finish(taken: TakenRun, found: RunOutcome): Promise<Record<string, unknown>> {
    const outcome = bounded(found);
    return taken.run.adhocId ? this.finishAdhoc(taken, outcome) : this.finishRun(taken, outcome);
  }

  private async retry(taken: TakenRun, outcome: RunOutcome, sameLocationOnly: boolean): Promise<Record<string, unknown> | undefined> {
    const { run, check } = taken;
    const firstStartedAt = run.firstStartedAt ?? outcome.startedAt;
    const retry = nextRetry(check, { ...run, firstStartedAt }, outcome);
    if (!retry) return undefined;
    const location = sameLocationOnly ? run.location : retry.location;
    const queue = (await locationQueues(this.opts.sql, run.accountId, [location])).get(location);
    if (!queue) return undefined;
    const next: RunJob = {
      ...run,
      location,
      attempt: run.attempt + 1,
      firstStartedAt,
      ...(location !== run.location || run.origin ? { origin: run.origin ?? run.location } : {}),
    };
    await enqueueRuns(this.opts.queues, [{ job: next, queue, startAt: Date.now() + retry.delayMs }]);
    this.count(run.location, 'retry');
    return { retry: location, inMs: retry.delayMs };
  }

  private async finishRun(taken: TakenRun, outcome: RunOutcome): Promise<Record<string, unknown>> {
    const { run, check, resultId } = taken;
    const retried = await this.retry(taken, outcome, false);
    if (retried) return retried;
    const item = resultItem(check, run.location, outcome, run.attempt);
    const span = run.source === 'SCHEDULER' ? slotSpan(run.slot, run.periodMs) : undefined;
    // A check session's result is waited for (`checkly trigger`, a run from the console): it does not linger.
    await this.sink.add({ accountId: run.accountId, resultId, row: toRow(run.accountId, resultId, item), span }, Boolean(run.sessionId));
    this.count(run.location, verdict(outcome));
    if (run.sessionId) {
      await recordSessionResult(this.opts.sql, run.sessionId, {
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

  private async finishAdhoc(taken: TakenRun, outcome: RunOutcome): Promise<Record<string, unknown>> {
    const { run, resultId } = taken;
    const row = await findAdhocRun(this.opts.sql, run.adhocId!);
    if (!row) return this.skip(run, 'gone') as unknown as Record<string, unknown>;
    const attemptResult = adhocResult(row, resultId, outcome, run.attempt);
    const retried = await this.retry(taken, outcome, true);
    if (retried) {
      await this.publish(adhocTopic(row, 'result'), { result: attemptResult, resultType: 'ATTEMPT' });
      return retried;
    }
    // The final result keeps the id the session announced for this check.
    const result = { ...adhocResult(row, row.test_result_id, outcome, run.attempt) };
    if (!(await finishAdhocRun(this.opts.sql, row.id, result, adhocDetail(outcome)))) return this.skip(run, 'cancelled') as unknown as Record<string, unknown>;
    this.count(run.location, verdict(outcome));
    await this.opts.recordAdhoc?.(row, result);
    await this.publish(adhocTopic(row, 'result'), { result, resultType: 'FINAL', ...(row.test_session_id ? { testResultId: row.test_result_id } : {}) });
    return { resultId: row.test_result_id, failed: outcome.hasFailures };
  }

  /** Results of runs made while their agent was cut off: ingested as they are, one per check, slot and location. */
  async ingestMade(accountId: string, made: { resultId: string; row: ResultRow; slot: number; periodMs: number | undefined }[]): Promise<void> {
    await Promise.all(made.map((m) => this.sink.add({ accountId, resultId: m.resultId, row: m.row, span: slotSpan(m.slot, m.periodMs) })));
  }
}

/**
 * How long made runs' results wait for ingest's queue to take them before their batch fails to the failed set. A
 * Redis command fails after 1.5 s (redis.ts), and a main thread or a Redis held up a little longer than that (a
 * busy machine during the hourly rollup, a Redis fork) failed the jobs of 128 made runs of a 50,000-check bench.
 */
const HANDOFF_PATIENCE_MS = 30_000;
/** What ioredis says of a command on a connection closed on purpose. */
const CONNECTION_CLOSED = 'Connection is closed.';

/** What a SkipLog's lines say: their message, and the field their lateness (seconds) goes in. */
export interface SkipWording {
  message: string;
  seconds: string;
}

/** A runner's runs more than a period past their slot. */
export const TOO_LATE: SkipWording = { message: 'runs too late to make; skipped', seconds: 'lateSeconds' };

/**
 * Runs skipped or dropped as too late, logged as a count per location: the first of a quiet spell at once, then one
 * line per location every `everyMs` while more come. A line per run was a flood when a runner fell behind (254,782
 * lines in a quarter hour at 50,000 one-minute checks in a slow hour), or when an agent came back to a queue of runs
 * that had waited too long for it. `runner_runs_total{outcome="expired"}` counts every run.
 */
export class SkipLog {
  private pending = new Map<string, Pending>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly logger: Logger,
    private readonly wording: SkipWording = TOO_LATE,
    private readonly everyMs = 10_000,
  ) {}

  /**
   * `location` keys the count and is logged as `location`, unless `fields` (kept from the first run of a count, and
   * logged with it) say otherwise: a private location's slug is its account's only, so its key is its id.
   */
  add(location: string, lateMs: number, checkId: string, fields?: Record<string, string>): void {
    const p = this.pending.get(location);
    if (p) {
      p.runs++;
      p.minLateMs = Math.min(p.minLateMs, lateMs);
      p.maxLateMs = Math.max(p.maxLateMs, lateMs);
      return;
    }
    const first = { runs: 1, minLateMs: lateMs, maxLateMs: lateMs, checkId, fields };
    if (this.timer) this.pending.set(location, first);
    else {
      this.write(location, first);
      this.arm();
    }
  }

  /** Writes what is pending now (the timer does it every `everyMs`). */
  flush(): void {
    const pending = this.pending;
    this.pending = new Map();
    for (const [location, p] of pending) this.write(location, p);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (pending.size) this.arm();
  }

  private arm(): void {
    this.timer = setTimeout(() => this.flush(), this.everyMs);
    this.timer.unref();
  }

  private write(location: string, p: Pending): void {
    const s = (ms: number) => Math.round(ms / 1000);
    const { message, seconds } = this.wording;
    const which = p.runs === 1 ? { checkId: p.checkId, [seconds]: s(p.maxLateMs) } : { [seconds]: [s(p.minLateMs), s(p.maxLateMs)] };
    this.logger.warn({ location, ...p.fields, runs: p.runs, ...which }, message);
  }
}

/** Skipped runs of a location not yet logged: how many, how late (least and most), the first one's check. */
interface Pending {
  runs: number;
  minLateMs: number;
  maxLateMs: number;
  checkId: string;
  fields?: Record<string, string>;
}

/** A result on its way to ingest, with the span its scheduled slot's other runs may have started in. */
interface Sunk {
  accountId: string;
  resultId: string;
  row: ResultRow;
  span?: [number, number];
}

/** The outcome a run is counted as. */
export function verdict(outcome: RunOutcome): 'error' | 'failed' | 'degraded' | 'passed' {
  return outcome.hasErrors ? 'error' : outcome.hasFailures ? 'failed' : outcome.isDegraded ? 'degraded' : 'passed';
}
