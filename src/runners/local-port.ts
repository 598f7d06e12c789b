import { randomUUID } from 'node:crypto';
import type { Job, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { BlobStore } from '../storage/blobs.js';
import type { Queues } from '../storage/queues.js';
import { RunBook, type RunBookOptions } from './book.js';
import { registerRunner } from './health.js';
import { stampPrivateLocations } from './repository.js';
import type { RunJob } from './jobs.js';
import type { ExecuteRun, RunnerPort } from './port.js';

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
 * come from its locations' queues; each is prepared and finished by the run book in this process. A run job
 * completes only once its result is queued for ingest, so a runner that dies mid-run leaves the run to
 * BullMQ's stalled-job recovery, never to silence.
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
  let workers: Worker<RunJob>[] = [];
  return {
    runnerId,
    files: opts.blobs,
    serve(execute: ExecuteRun) {
      const process = async (job: Job<RunJob>) => {
        const taken = await book.prepare(job.data);
        if ('skipped' in taken) return taken;
        return book.finish(taken, await execute(taken));
      };
      workers = opts.locations.map((location) =>
        opts.queues.worker<RunJob>(`runs-${location}`, process, { concurrency: opts.concurrency, label: `run in ${location}`, describe: (data) => ({ checkId: data.checkId, location: data.location }) }),
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
