import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { BlobStore } from '../storage/blobs.js';
import type { Queues } from '../storage/queues.js';
import { RunBook, type RunBookOptions } from './book.js';
import { registerRunner } from './health.js';
import { stampPrivateLocations } from './repository.js';
import { isRunBatch, type RunQueueJob } from './jobs.js';
import type { ExecuteRun, RunnerPort, TakenRun } from './port.js';

export interface LocalPortOptions extends Omit<RunBookOptions, 'redis'> {
  queues: Queues;
  redisUrl: string;
  /** The queues runs are taken from: public location names, `private-<id>` for private locations. */
  locations: readonly string[];
  /** Runs in flight at once per location. */
  concurrency: number;
  /** Where runs keep their files (screenshots, traces) and read code bundles. */
  blobs?: BlobStore;
}

/**
 * The runner port of a runner that holds the service's stores (the in-process runner, `npm run runner`): runs
 * come from its locations' queues, one job each or a slot second's scheduled runs in one job (a RunBatch); each
 * is prepared and finished by the run book in this process, at most `concurrency` at once per location. A job
 * completes only once its results are queued for ingest, so a runner that dies mid-run leaves the job to
 * BullMQ's stalled-job recovery, never to silence (a batch is then run again whole: its runs' result ids are
 * made from check, slot and location, so a result stored before is not stored twice).
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
  const book = new RunBook({ ...opts, redis });
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
        let outcome;
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
        const prepared = await book.prepareMany(job.data.runs);
        const ended = await Promise.allSettled(prepared.map((taken) => ('skipped' in taken ? taken : one(taken, location, true))));
        const lost = ended.filter((e) => e.status === 'rejected');
        if (lost.length) throw new Error(`${lost.length} of ${ended.length} runs could not be handed to ingest: ${String((lost[0] as PromiseRejectedResult).reason)}`);
        return { runs: ended.length, skipped: ended.filter((e) => e.status === 'fulfilled' && 'skipped' in e.value).length };
      };
      workers = opts.locations.map((location) =>
        opts.queues.worker<RunQueueJob>(`runs-${location}`, process(new Slots(opts.concurrency)), {
          concurrency: opts.concurrency,
          label: `run in ${location}`,
          describe: (data) => (isRunBatch(data) ? { runs: data.runs.length, location: data.runs[0]?.location } : { checkId: data.checkId, location: data.location }),
        }),
      );
      opts.logger.info({ runnerId, locations: opts.locations.length }, 'runner started');
    },
    async close() {
      if (stamper) clearInterval(stamper);
      await Promise.all(workers.map((w) => opts.queues.closeWorker(w)));
      await stopBeat();
      redis.disconnect();
    },
  };
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
