import { Queue, Worker, type Job, type WorkerOptions } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from '../platform/logger.js';
import { FAIL_FAST } from './redis.js';

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

  /** A consumer of queue `name`; errors of the worker itself are logged under `label`. */
  worker<T, R = unknown>(name: string, processor: Processor<T, R>, opts: Omit<WorkerOptions, 'connection' | 'prefix'> & { label?: string } = {}): Worker<T, R> {
    const connection = bullConnection(this.redisUrl);
    const { label = name, ...options } = opts;
    const worker = new Worker<T, R>(name, processor, { ...options, connection, prefix: this.prefix });
    worker.on('error', (err) => this.logger?.error({ err: err.message, queue: name }, `${label} worker error`));
    this.workers.push({ worker: worker as Worker, connection });
    return worker;
  }

  /**
   * Runs `task` every `intervalMs`, once per tick however many processes call this (one BullMQ job
   * scheduler per name); a failed tick is logged and the next one runs as usual.
   */
  async every(name: string, intervalMs: number, task: (now: number) => Promise<unknown>): Promise<Worker> {
    const queue = this.queue(name);
    await queue.upsertJobScheduler(name, { every: intervalMs }, { name, opts: { removeOnComplete: true, removeOnFail: 100 } });
    const worker = this.worker(name, () => task(Date.now()), { concurrency: 1 });
    worker.on('failed', (_job, err) => this.logger?.warn({ err: err.message, queue: name }, `${name} tick failed`));
    return worker;
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
    const graceful = worker.close().then(() => true, () => true);
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
