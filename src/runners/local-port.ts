import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { ExecuteRun, RunnerPort, RunOutcome, TakenRun } from '../run-kernel/index.js';
import type { BlobStore } from '../storage/blobs.js';
import type { Queues } from '../storage/queues.js';
import { RunBook, type RunBookOptions } from './book.js';
import { DefinitionCache } from './definition-cache.js';
import { registerRunner } from './health.js';
import { isRunBatch, type RunQueueJob } from './jobs.js';
import { stampPrivateLocations } from './repository.js';

export interface LocalPortOptions extends Omit<RunBookOptions, 'redis'> {
  queues: Queues;
  redisUrl: string;
  /** The queues runs are taken from: public location names, `private-<id>` for private locations. */
  locations: readonly string[];
  /** Runs in flight at once per location. */
  concurrency: number;
  /** Where runs keep their files (screenshots, traces) and read code bundles. */
  blobs?: BlobStore;
  /** How much of check definitions is kept between scheduled runs, in estimated bytes (DEFINITION_CACHE_MB; 0: every run reads its check). */
  definitionCacheBytes?: number;
}

/**
 * The runner port of a runner that holds the service's stores (the in-process runner, `npm run runner`): runs
 * come from its locations' queues, one job each or a slot second's scheduled runs in one job (a RunBatch); each
 * is prepared and finished by the run book in this process, at most `concurrency` at once per location. A job
 * completes only once its results are queued for ingest, so a runner that dies mid-run leaves the job to
 * BullMQ's stalled-job recovery, never to silence (a batch is then taken again and makes the runs not marked made,
 * MadeMarks; its runs' result ids are made from check, slot and location, so a result stored before is not stored
 * twice).
 */
export function localPort(opts: LocalPortOptions): RunnerPort & { runnerId: string } {
  const runnerId = randomUUID();
  const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => {});
  const stopBeat = registerRunner(redis, opts.redisPrefix, runnerId, opts.locations);
  // Private locations this runner serves have a runner: stamped as an agent's calls stamp them.
  const privateIds = opts.locations.filter((l) => /^private-[0-9a-f-]{36}$/.test(l)).map((l) => l.slice('private-'.length));
  const stamp = () => void stampPrivateLocations(opts.sql, privateIds).catch(() => undefined);
  const stamper = privateIds.length ? setInterval(stamp, 10_000) : undefined;
  stamper?.unref();
  if (privateIds.length) stamp();
  const definitions = opts.definitionCacheBytes
    ? new DefinitionCache({ sql: opts.sql, logger: opts.logger, metrics: opts.metrics, maxBytes: opts.definitionCacheBytes })
    : undefined;
  const book = new RunBook({ ...opts, redis, definitions });
  let workers: Worker<RunQueueJob>[] = [];
  return {
    runnerId,
    files: opts.blobs,
    serve(execute: ExecuteRun) {
      // A run holds one of its location's places while it executes, not while its result waits for ingest. A lone
      // run (on-demand, ad-hoc, a retry) goes before the waiting runs of batches; a batch's run is judged too late
      // or not, and its lateness recorded, when it gets its place.
      const one = async (taken: TakenRun, slots: Slots, batched: boolean) => {
        await slots.take(!batched);
        let outcome: RunOutcome;
        try {
          const late = batched ? book.starting(taken) : undefined;
          if (late) return late;
          outcome = await execute(taken);
        } finally {
          slots.give();
        }
        return book.finish(taken, outcome);
      };
      // Each queue (location) has its own runs in flight.
      const process = (location: Slots) => async (job: Job<RunQueueJob>) => {
        if (!isRunBatch(job.data)) {
          const taken = await book.prepare(job.data);
          return 'skipped' in taken ? taken : one(taken, location, false);
        }
        // A slot second's runs: read together, each run as its own (one failing never stops the others); the
        // batch completes once every result is queued for ingest, and fails, to the failed set, if one was not.
        // A batch taken again (its runner died or stalled) makes only the runs not marked made before.
        const marks = new MadeMarks(job);
        const todo = job.data.runs.map((run, i) => ({ run, i })).filter(({ i }) => !marks.made.has(i));
        const prepared = await book.prepareMany(todo.map((t) => t.run));
        const ended = await Promise.allSettled(
          prepared.map(async (taken, k) => {
            const ran = 'skipped' in taken ? taken : await one(taken, location, true);
            marks.mark(todo[k].i);
            return ran;
          }),
        );
        marks.stop();
        const lost = ended.filter((e) => e.status === 'rejected');
        if (lost.length)
          throw new Error(`${lost.length} of ${ended.length} runs could not be handed to ingest: ${String((lost[0] as PromiseRejectedResult).reason)}`);
        return {
          runs: job.data.runs.length,
          skipped: ended.filter((e) => e.status === 'fulfilled' && 'skipped' in e.value).length,
          madeBefore: job.data.runs.length - todo.length,
        };
      };
      workers = opts.locations.map((location) =>
        opts.queues.worker<RunQueueJob>(`runs-${location}`, process(new Slots(opts.concurrency)), {
          concurrency: opts.concurrency,
          label: `run in ${location}`,
          describe: (data) =>
            isRunBatch(data) ? { runs: data.runs.length, location: data.runs[0]?.location } : { checkId: data.checkId, location: data.location },
        }),
      );
      opts.logger.info({ runnerId, locations: opts.locations.length }, 'runner started');
    },
    async close() {
      book.close();
      definitions?.stop();
      if (stamper) clearInterval(stamper);
      await Promise.all(workers.map((w) => opts.queues.closeWorker(w)));
      await stopBeat();
      redis.disconnect();
    },
  };
}

/** How often a batch's job records which of its runs are made (at most: a write only follows a run made). */
const MARK_EVERY_MS = 500;

/**
 * Which runs of a batch are made (their result handed to ingest, their retry enqueued, or skipped), kept in the
 * job's progress (`{ made: [index, …] }`) at most every MARK_EVERY_MS: a runner that takes the batch again after
 * this one died makes only the others, so a target is hit again only for the runs whose results were still waiting
 * to be handed to ingest (RESULT_LINGER_MS) or whose mark was not yet written (half a second): a mark before the
 * hand-off would lose the result of a runner that died in between. A
 * write that fails is not retried (the result ids still keep a run made twice from being stored twice).
 */
class MadeMarks {
  readonly made: Set<number>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly job: Job<RunQueueJob>) {
    const before = (job.progress as { made?: unknown } | undefined)?.made;
    this.made = new Set(Array.isArray(before) ? before.filter((i): i is number => Number.isInteger(i)) : []);
  }

  mark(index: number): void {
    this.made.add(index);
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) void this.job.updateProgress({ made: [...this.made] }).catch(() => undefined);
    }, MARK_EVERY_MS);
  }

  /** The batch is done: its job completes (or fails) now, and needs no more marks. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** Runs in flight at once in one location: a batch's runs and lone runs share them. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = size;
  }
  /** `first`: ahead of every run waiting (a lone run before the runs of batches). */
  take(first = false): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => (first ? this.waiting.unshift(resolve) : this.waiting.push(resolve)));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
