import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import type { RunJob } from '../run-kernel/index.js';
import type { Queues } from '../storage/queues.js';

/**
 * The scheduled first tries of one public location's window (`SCHEDULER_WINDOW_MS`, a few seconds of slots),
 * carried as one job (`enqueueRuns`): a runner takes it at its first run's slot, reads the runs' definitions
 * together, starts each run at its own slot and completes the job once all are made, so a run costs no queue
 * operation and no definition read of its own (docs/performance.md). Retries, on-demand, ad-hoc runs and private
 * locations' runs (an agent leases one run at a time) stay one job each.
 */
export interface RunBatch {
  v: 1;
  runs: RunJob[];
}

/** What a run queue's job carries: one run, or a window's batch of scheduled runs. */
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

/** A scheduled first try on a public location's queue, to start at its slot: the runs a batch may carry. */
function batchable(job: RunJob, queue: string, startAt: number): boolean {
  return job.source === 'SCHEDULER' && job.attempt === 1 && !job.adhocId && !job.sessionId && queue === runQueueName(job.location) && startAt === job.slot;
}

const RUN_JOB_OPTIONS: JobsOptions = {
  // A run is not retried by BullMQ: the runner records every failure as a result and retries per retryStrategy.
  attempts: 1,
  removeOnComplete: { age: 3600, count: 20_000 },
  removeOnFail: { age: 86_400 },
};

/** The default `SCHEDULER_WINDOW_MS`: how many milliseconds of a location's scheduled slots one batch job carries. */
export const RUN_WINDOW_MS = 5000;

/** The start of the window `t` falls in (windows are epoch-aligned, so every scheduler makes the same ones). */
export function windowStart(t: number, windowMs: number): number {
  return Math.floor(t / windowMs) * windowMs;
}

/** One run's job, delayed to `startAt`. */
function runJob(job: RunJob, startAt: number, now: number): { name: string; data: RunJob; opts: JobsOptions } {
  return { name: 'run', data: job, opts: { ...RUN_JOB_OPTIONS, jobId: runJobId(job), delay: Math.max(0, startAt - now) } };
}

/**
 * A batch's job: its runs (in slot order) delayed to the first one's slot; the runner starts each at its own.
 */
function batchJob(runs: RunJob[], jobId: string, now: number): { name: string; data: RunBatch; opts: JobsOptions } {
  const startAt = Math.min(...runs.map((r) => r.slot));
  return { name: 'runs', data: { v: 1, runs }, opts: { ...RUN_JOB_OPTIONS, jobId, delay: Math.max(0, startAt - now) } };
}

/**
 * Enqueues runs on their locations' queues, each to start at its `startAt` (BullMQ delays it until then). Scheduled
 * first tries of one queue whose slots fall in the same `windowMs` go as batches (batchJob).
 */
export async function enqueueRuns(
  queues: Queues,
  runs: readonly { job: RunJob; queue: string; startAt: number }[],
  now = Date.now(),
  windowMs = 1000,
): Promise<void> {
  const byQueue = new Map<string, { name: string; data: RunQueueJob; opts: JobsOptions }[]>();
  const add = (queue: string, job: { name: string; data: RunQueueJob; opts: JobsOptions }) => {
    const list = byQueue.get(queue) ?? [];
    list.push(job);
    byQueue.set(queue, list);
  };
  // Scheduled first tries of one queue and window go as batches; a lone one stays a run job.
  const batches = new Map<string, { queue: string; runs: RunJob[] }>();
  for (const { job, queue, startAt } of runs) {
    if (!batchable(job, queue, startAt)) {
      add(queue, runJob(job, startAt, now));
      continue;
    }
    const key = `${queue}\n${windowStart(job.slot, windowMs)}`;
    const batch = batches.get(key);
    if (batch) batch.runs.push(job);
    else batches.set(key, { queue, runs: [job] });
  }
  for (const { queue, runs: all } of batches.values()) {
    // In a fixed order (by slot, then check), so the same runs claimed again (rows tied on their slot come back in
    // any order) make the same batches and the same job ids, and a window split in parts splits by time.
    all.sort((a, b) => a.slot - b.slot || (a.checkId < b.checkId ? -1 : a.checkId > b.checkId ? 1 : 0));
    for (let i = 0; i < all.length; i += RUN_BATCH_MAX) {
      const part = all.slice(i, i + RUN_BATCH_MAX);
      add(queue, part.length === 1 ? runJob(part[0], part[0].slot, now) : batchJob(part, runBatchId(part), now));
    }
  }
  await Promise.all([...byQueue].map(([name, jobs]) => queues.queue<RunQueueJob>(name).addBulk(jobs)));
}

/**
 * The runs of a batch whose runner stopped before their slots, queued again as one batch (batchJob). Its job id is
 * the batch's with `-back`: the batch taken again by another runner hands back the same runs as a no-op. Tried three
 * times, half a second apart (a stop during a short Redis outage).
 */
export async function handBackRuns(queues: Queues, queue: string, fromJobId: string, runs: readonly RunJob[], now = Date.now()): Promise<void> {
  const { name, data, opts } = batchJob([...runs], `${fromJobId}-back`, now);
  for (let attempt = 1; ; attempt++) {
    try {
      await queues.queue<RunQueueJob>(queue).add(name, data, opts);
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
