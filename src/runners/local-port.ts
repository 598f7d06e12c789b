import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { ExecuteRun, RunnerPort, RunOutcome, TakenRun } from '../run-kernel/index.js';
import type { BlobStore } from '../storage/blobs.js';
import type { Queues } from '../storage/queues.js';
import { RunBook, type RunBookOptions } from './book.js';
import { DefinitionCache } from './definition-cache.js';
import { registerRunner } from './health.js';
import { handBackRuns, isRunBatch, type RunQueueJob } from './jobs.js';
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
 * come from its locations' queues, one job each or a window's scheduled runs in one job (a RunBatch, each run started
 * at its slot; those still waiting when the runner stops are handed back to the queue); each
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
  const clock = new SlotClock();
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
        // A window's runs: read together, each run as its own at its slot (one failing never stops the others); the
        // batch completes once every result is queued for ingest, and fails, to the failed set, if one was not.
        // A batch taken again (its runner died or stalled) makes only the runs not marked made before.
        const marks = new MadeMarks(job);
        const todo = job.data.runs.map((run, i) => ({ run, i })).filter(({ i }) => !marks.made.has(i));
        const prepared = await book.prepareMany(todo.map((t) => t.run));
        // Each run starts at its slot. When the runner stops first, the runs still waiting go back to the queue at once,
        // before the runs under way end (a stop's grace is short), and are marked made here, so that another runner
        // makes them on time and one that takes this batch again (this runner outlived its grace) does not make them.
        const came = prepared.map((taken) => ('skipped' in taken ? Promise.resolve(true) : clock.until(taken.run.slot)));
        const handedBack = Promise.all(came)
          .then(async (all) => {
            const back = todo.filter((_, k) => !all[k]);
            if (!back.length) return 0;
            await handBackRuns(
              opts.queues,
              job.queueName,
              job.id!,
              back.map((t) => t.run),
            );
            for (const t of back) marks.made.add(t.i);
            await marks.flush();
            opts.logger.info({ location: back[0].run.location, runs: back.length }, 'runner stopping: runs waiting for their slot handed back to the queue');
            return back.length;
          })
          .then(
            (runs): { runs: number; err?: Error } => ({ runs }),
            (err: Error) => ({ runs: 0, err }),
          );
        const ended = await Promise.allSettled(
          prepared.map(async (taken, k) => {
            if (!(await came[k])) return HANDED_BACK;
            const ran = 'skipped' in taken ? taken : await one(taken, location, true);
            marks.mark(todo[k].i);
            return ran;
          }),
        );
        const back = await handedBack;
        marks.stop();
        if (back.err) {
          const waiting = ended.filter((e) => e.status === 'fulfilled' && e.value === HANDED_BACK).length;
          throw new Error(`${waiting} runs waiting for their slot could not be queued again as the runner stopped: ${back.err.message}`);
        }
        const lost = ended.filter((e) => e.status === 'rejected');
        if (lost.length)
          throw new Error(`${lost.length} of ${ended.length} runs could not be handed to ingest: ${String((lost[0] as PromiseRejectedResult).reason)}`);
        return {
          runs: job.data.runs.length,
          skipped: ended.filter((e) => e.status === 'fulfilled' && e.value !== HANDED_BACK && 'skipped' in e.value).length,
          madeBefore: job.data.runs.length - todo.length,
          ...(back.runs ? { handedBack: back.runs } : {}),
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
      clock.stop();
      book.close();
      definitions?.stop();
      if (stamper) clearInterval(stamper);
      await Promise.all(workers.map((w) => opts.queues.closeWorker(w)));
      await stopBeat();
      redis.disconnect();
    },
  };
}

/** A batch's run the runner did not make: it stopped before the run's slot, and queued the run again. */
const HANDED_BACK = Symbol('handed back');

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

  /** Writes the marks now (runs handed back: they count as made from this moment). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.job.updateProgress({ made: [...this.made] }).catch(() => undefined);
  }

  /** The batch is done: its job completes (or fails) now, and needs no more marks. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/**
 * Waits for the slots of batches' runs: one timer a slot second, however many runs share it. When the runner stops,
 * every wait ends at once with false (the run is handed back to the queue, not made early).
 */
class SlotClock {
  private readonly waits = new Map<number, { timer: NodeJS.Timeout; done: Promise<boolean>; end: (came: boolean) => void }>();
  private stopped = false;

  /** True once `slot` has come; false if the runner stops first. */
  until(slot: number): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    const wait = slot - Date.now();
    if (wait <= 0) return Promise.resolve(true);
    let entry = this.waits.get(slot);
    if (!entry) {
      let end!: (came: boolean) => void;
      const done = new Promise<boolean>((resolve) => (end = resolve));
      // A timer may fire a little early (it counts from the event loop's cached clock): it waits out the rest.
      const fire = () => {
        const left = slot - Date.now();
        if (left > 0) {
          entry!.timer = setTimeout(fire, left);
          return;
        }
        this.waits.delete(slot);
        end(true);
      };
      const timer = setTimeout(fire, wait);
      entry = { timer, done, end };
      this.waits.set(slot, entry);
    }
    return entry.done;
  }

  /** The runner stops: every run still waiting for its slot is told so. */
  stop(): void {
    this.stopped = true;
    for (const { timer, end } of this.waits.values()) {
      clearTimeout(timer);
      end(false);
    }
    this.waits.clear();
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
