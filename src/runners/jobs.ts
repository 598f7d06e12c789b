import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import type { RunJob } from '../run-kernel/index.js';
import type { Queues } from '../storage/queues.js';

/**
 * The scheduled first tries of one public location's slot second, carried as one job (`enqueueRuns`): a runner
 * takes, reads and completes them together, so a run costs no queue operation and no definition read of its
 * own (docs/performance.md). Retries, on-demand, ad-hoc runs and private locations' runs (an agent leases one
 * run at a time) stay one job each.
 */
export interface RunBatch {
  v: 1;
  runs: RunJob[];
}

/** What a run queue's job carries: one run, or a slot second's batch of scheduled runs. */
export type RunQueueJob = RunJob | RunBatch;

export function isRunBatch(data: RunQueueJob): data is RunBatch {
  return Array.isArray((data as RunBatch).runs);
}

/** The most runs one batch job carries (a batch a dead runner left is taken again: local-port.ts MadeMarks). */
export const RUN_BATCH_MAX = 500;

/** The queue of one run location. Public locations by their name; private locations by their id. */
export function runQueueName(location: string): string {
  return `runs-${location}`;
}

/** The queue name of a private location's runs. */
export function privateRunQueueName(privateLocationId: string): string {
  return runQueueName(`private-${privateLocationId}`);
}

/** The job id of a run: one job per check, slot, location and attempt (a second enqueue is a no-op). */
export function runJobId(job: RunJob): string {
  if (job.adhocId) return `a-${job.adhocId}-${job.attempt}`;
  return job.sessionId ? `s-${job.sessionId}-${job.location}-${job.attempt}` : `${job.checkId}-${job.slot}-${job.location}-${job.attempt}`;
}

/** A batch's job id: made from its runs, so the same runs enqueued again (a scheduler that crashed before its commit) are a no-op. */
export function runBatchId(runs: readonly RunJob[]): string {
  const digest = createHash('sha256');
  for (const key of runs.map(runJobId).sort()) digest.update(key).update('\n');
  return `b-${runs[0].location}-${runs[0].slot}-${digest.digest('hex').slice(0, 32)}`;
}

/** A scheduled first try on a public location's queue: the runs a batch may carry. */
function batchable(job: RunJob, queue: string): boolean {
  return job.source === 'SCHEDULER' && job.attempt === 1 && !job.adhocId && !job.sessionId && queue === runQueueName(job.location);
}

const RUN_JOB_OPTIONS: JobsOptions = {
  // A run is not retried by BullMQ: the runner records every failure as a result and retries per retryStrategy.
  attempts: 1,
  removeOnComplete: { age: 3600, count: 20_000 },
  removeOnFail: { age: 86_400 },
};

/**
 * Enqueues runs on their locations' queues, each to start at its `startAt` (BullMQ delays it until then).
 * `queueOf` maps a run's location to its queue (private locations by id).
 */
export async function enqueueRuns(queues: Queues, runs: readonly { job: RunJob; queue: string; startAt: number }[], now = Date.now()): Promise<void> {
  const byQueue = new Map<string, { name: string; data: RunQueueJob; opts: JobsOptions }[]>();
  const add = (queue: string, name: string, data: RunQueueJob, jobId: string, startAt: number) => {
    const list = byQueue.get(queue) ?? [];
    list.push({ name, data, opts: { ...RUN_JOB_OPTIONS, jobId, delay: Math.max(0, startAt - now) } });
    byQueue.set(queue, list);
  };
  // Scheduled first tries of one queue starting together go as batches; a lone one stays a run job.
  const batches = new Map<string, { queue: string; startAt: number; runs: RunJob[] }>();
  for (const { job, queue, startAt } of runs) {
    if (!batchable(job, queue)) {
      add(queue, 'run', job, runJobId(job), startAt);
      continue;
    }
    const key = `${queue}\n${startAt}`;
    const batch = batches.get(key);
    if (batch) batch.runs.push(job);
    else batches.set(key, { queue, startAt, runs: [job] });
  }
  for (const { queue, startAt, runs: all } of batches.values()) {
    // In a fixed order, so the same runs claimed again (rows tied on their slot come back in any order) make the
    // same batches and the same job ids.
    all.sort((a, b) => (a.checkId < b.checkId ? -1 : a.checkId > b.checkId ? 1 : 0));
    for (let i = 0; i < all.length; i += RUN_BATCH_MAX) {
      const part = all.slice(i, i + RUN_BATCH_MAX);
      if (part.length === 1) add(queue, 'run', part[0], runJobId(part[0]), startAt);
      else add(queue, 'runs', { v: 1, runs: part }, runBatchId(part), startAt);
    }
  }
  await Promise.all([...byQueue].map(([name, jobs]) => queues.queue<RunQueueJob>(name).addBulk(jobs)));
}
