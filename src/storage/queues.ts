import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import { FAIL_FAST } from './redis.js';

/** A task run every so often by one process of many (`Queues.every`); `close` stops it after the run under way. */
export interface Ticker {
  readonly name: string;
  close(): Promise<void>;
}

/** BullMQ wants its own connection, with no per-command retry limit (it blocks on Redis). */
export function bullConnection(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  redis.on('error', () => {
    // Reconnects by itself; failures surface through the queue calls and /ready.
  });
  return redis;
}

export function bullPrefix(redisPrefix: string): string {
  return `${redisPrefix}bull`;
}

/** How long a closing worker may take to finish the job it holds before its connections are cut. */
export const WORKER_CLOSE_GRACE_MS = 5000;

export type Processor<T, R = unknown> = (job: Job<T>) => Promise<R>;

/** What a feature adds when one of its jobs fails: `final` when it will not be tried again (it stays in the failed set). */
export type FailureHook<T> = (job: Job<T>, err: Error, final: boolean) => void;

export interface WorkerSettings<T> extends Omit<WorkerOptions, 'connection' | 'prefix'> {
  /** How the worker is named in logs (default: the queue's name). */
  label?: string;
  /** What the job's data says in a failure's log line (ids, never secrets). */
  describe?: (data: T) => Record<string, unknown>;
  onFailed?: FailureHook<T>;
}

/**
 * Every BullMQ queue and worker of a process comes from here: one Redis connection and key prefix for the
 * producers, a connection of its own per worker (a worker blocks on Redis), and one `close()` that stops
 * the workers first (each finishes the job it holds), then the schedulers and queues, then the connections.
 */
export class Queues {
  readonly prefix: string;
  /** The producers' connection; features may use it for counters beside their queue. */
  readonly connection: Redis;
  private readonly queues = new Map<string, Queue>();
  private readonly workers: { worker: Worker; connection: Redis }[] = [];
  private closing?: Promise<void>;
  private metrics?: Metrics;

  constructor(
    private readonly redisUrl: string,
    redisPrefix: string,
    private readonly logger?: Logger,
  ) {
    this.prefix = bullPrefix(redisPrefix);
    // Producers are called from requests: fail fast while Redis is away (the request answers 503), never queue.
    this.connection = new Redis(redisUrl, FAIL_FAST);
    this.connection.on('error', () => {});
  }

  /** The producer side of queue `name` (one per name and process). */
  queue<T>(name: string): Queue<T> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      queue.on('error', (err) => this.logger?.debug({ err: err.message, queue: name }, 'queue connection error'));
      this.queues.set(name, queue);
    }
    return queue as Queue<T>;
  }

  /**
   * Every queue's time and outcomes go to `metrics` (queue_job_wait_seconds, queue_job_processing_seconds,
   * queue_jobs_total, and the queue_jobs gauge read at scrape time).
   */
  instrument(metrics: Metrics): void {
    this.metrics = metrics;
    metrics.countJobs(async () =>
      Promise.all(
        [...new Set([...this.queues.keys(), ...this.workers.map((w) => w.worker.name)])].map(async (queue) => ({
          queue,
          counts: await this.queue(queue).getJobCounts('waiting', 'active', 'delayed', 'failed'),
        })),
      ),
    );
  }

  /**
   * Work of queue `name` done with no job (ingest's batches taken by a worker of their own process), counted as its
   * jobs are: the wait before it started, how long it took, and how it ended ('retry': queued to be tried again).
   */
  observeUnqueued(name: string, waitedMs: number, processingMs: number, outcome: 'completed' | 'retry'): void {
    this.metrics?.jobWait.observe({ queue: name }, Math.max(0, waitedMs) / 1000);
    this.metrics?.jobProcessing.observe({ queue: name }, Math.max(0, processingMs) / 1000);
    this.metrics?.jobsEnded.inc({ queue: name, outcome });
  }

  /**
   * A consumer of queue `name`. Its failures are handled alike for every queue: one log line (a warning while it
   * will be tried again, an error once it stays in the failed set), the outcome counted, then the feature's
   * `onFailed`. Errors of the worker itself are logged under `label`.
   */
  worker<T, R = unknown>(name: string, processor: Processor<T, R>, opts: WorkerSettings<T> = {}): Worker<T, R> {
    const connection = bullConnection(this.redisUrl);
    const { label = name, describe, onFailed, ...options } = opts;
    // drainDelay: how long an idle worker's blocking wait lasts before it asks again. A job added (or a delayed one
    // coming due) wakes it at once whatever this is, so a long wait costs no latency; the default 5 s made each of
    // some thirty idle workers ask every few seconds (issue 57: an idle service's fixed cost).
    const worker = new Worker<T, R>(name, processor, { drainDelay: 60, ...options, connection, prefix: this.prefix });
    worker.on('error', (err) => this.logger?.error({ err: err.message, queue: name }, `${label} worker error`));
    worker.on('active', (job) => {
      const due = job.timestamp + (job.opts.delay ?? 0);
      this.metrics?.jobWait.observe({ queue: name }, Math.max(0, Date.now() - due) / 1000);
    });
    worker.on('completed', (job) => {
      if (job.processedOn) this.metrics?.jobProcessing.observe({ queue: name }, Math.max(0, Date.now() - job.processedOn) / 1000);
      this.metrics?.jobsEnded.inc({ queue: name, outcome: 'completed' });
    });
    worker.on('failed', (job, err) => {
      if (!job) return;
      if (job.processedOn) this.metrics?.jobProcessing.observe({ queue: name }, Math.max(0, Date.now() - job.processedOn) / 1000);
      const final = err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
      this.metrics?.jobsEnded.inc({ queue: name, outcome: final ? 'failed' : 'retry' });
      const details = { queue: name, jobId: job.id, attempt: job.attemptsMade, err: err.message, ...(describe ? describe(job.data) : {}) };
      if (final) this.logger?.error(details, `${label} job failed for good; kept in the failed set`);
      else this.logger?.warn(details, `${label} job failed; will retry`);
      onFailed?.(job, err, final);
    });
    this.workers.push({ worker: worker as Worker, connection });
    return worker;
  }

  /**
   * A consumer of queue `name` that takes jobs by hand (`getNextJob` with a token of the caller's) instead of
   * running a processor: for jobs leased to processes that hold no Redis connection (agents). Each job's lock
   * lasts `lockDuration` unless extended with its token; the stalled-job check runs here, so a job whose lock
   * lapses goes back to waiting (at most `maxStalledCount` times, then to the failed set, logged).
   */
  leaseWorker<T>(name: string, opts: { lockDuration: number; stalledInterval: number; maxStalledCount: number; label: string }): Worker<T> {
    const connection = bullConnection(this.redisUrl);
    const worker = new Worker<T>(name, null, { ...opts, autorun: false, connection, prefix: this.prefix });
    worker.on('error', (err) => this.logger?.error({ err: err.message, queue: name }, `${opts.label} worker error`));
    worker.on('failed', (job, err) => {
      if (job) this.logger?.error({ queue: name, jobId: job.id, err: err.message }, `${opts.label} job failed for good; kept in the failed set`);
    });
    this.workers.push({ worker: worker as Worker, connection });
    void worker.startStalledCheckTimer().catch((err: Error) => this.logger?.error({ err: err.message, queue: name }, `${opts.label} stalled check stopped`));
    return worker;
  }

  /**
   * Runs `task` every `intervalMs`, once per tick however many processes call this; a failed tick is logged and the
   * next one runs as usual. Ticks are aligned to the clock (tick k starts at k × intervalMs) and each process's timer
   * claims a tick with one Redis command (`SET … NX`) before it runs it: the process that claims it runs it, the
   * others skip it. A tick a process could not finish (killed) is not run again; the next one is. This costs one
   * command per tick and process, where a BullMQ job scheduler per sweep cost a worker's connection, its blocking
   * polls, its stalled checks and some 65 commands a tick (issue 57: most of an idle service's CPU).
   */
  async every(name: string, intervalMs: number, task: (now: number) => Promise<unknown>): Promise<Ticker> {
    // A job scheduler an earlier version left in Redis would go on adding jobs nobody takes.
    await this.queue(name)
      .removeJobScheduler(name)
      .catch(() => undefined);
    const key = (tick: number) => `${this.prefix}:every:${name}:${tick}`;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let running: Promise<void> | undefined;
    const run = async (tick: number) => {
      try {
        const claimed = await this.connection.set(key(tick), process.pid.toString(), 'PX', Math.max(2 * intervalMs, 10_000), 'NX');
        if (claimed === 'OK') await task(Date.now());
      } catch (err) {
        this.logger?.error({ tick: name, err: (err as Error).message }, `${name} tick failed; the next one runs as usual`);
      }
    };
    const schedule = () => {
      if (stopped) return;
      const now = Date.now();
      const tick = Math.floor(now / intervalMs) + 1;
      timer = setTimeout(
        () => {
          // A tick still running when the next one is due: that one is skipped here (another process may take it).
          if (!running) running = run(tick).finally(() => (running = undefined));
          schedule();
        },
        tick * intervalMs - now,
      );
    };
    schedule();
    return {
      name,
      async close() {
        stopped = true;
        clearTimeout(timer);
        await running;
      },
    };
  }

  /**
   * Stops a worker of this process: it takes no new job and finishes the one it holds, for up to `graceMs`;
   * past that (a Redis that went away and came back can leave BullMQ waiting on a command that never
   * returns) its connections are cut, which ends the wait. A job cut off this way is not lost: its lock
   * lapses and BullMQ hands it to a worker again as stalled.
   */
  async closeWorker(worker: Worker, graceMs = WORKER_CLOSE_GRACE_MS): Promise<void> {
    const entry = this.workers.find((w) => w.worker === worker);
    if (!entry) return; // closed already
    this.workers.splice(this.workers.indexOf(entry), 1);
    let timer: NodeJS.Timeout | undefined;
    const graceful = worker.close().then(
      () => true,
      () => true,
    );
    const inTime = await Promise.race([graceful, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)))]);
    clearTimeout(timer);
    if (inTime) {
      entry.connection.disconnect();
      return;
    }
    this.logger?.warn({ queue: worker.name, graceMs }, 'worker did not stop in time; cutting its connections');
    entry.connection.disconnect();
    await Promise.race([worker.disconnect().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 1000))]);
    await Promise.race([graceful, new Promise((resolve) => setTimeout(resolve, 1000))]);
  }

  /** Stops every worker (letting each finish its job), then the queues and connections. Safe to call twice. */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      await Promise.allSettled([...this.workers].map(({ worker }) => this.closeWorker(worker)));
      await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
      this.connection.disconnect();
    })());
  }
}
