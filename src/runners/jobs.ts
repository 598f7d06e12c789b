import type { JobsOptions } from 'bullmq';
import type { Queues } from '../storage/queues.js';

/** Why a run happens: the anchor's runSource values. */
export type RunSource = 'SCHEDULER' | 'SCHEDULE_NOW' | 'TRIGGER_API' | 'LEGACY_TRIGGER' | 'DEPLOYMENT' | 'CLI_DEPLOY' | 'TEST_RECORD' | 'TEST_NO_RECORD';

/** One run of one check in one location, as a runner takes it from its location's queue. */
export interface RunJob {
  v: 1;
  accountId: string;
  checkId: string;
  location: string;
  /** The slot (epoch ms) a scheduled run belongs to, or when an on-demand run was asked for. */
  slot: number;
  /** 1 for the first try; each retry one more. */
  attempt: number;
  /** When the first try started (retries keep it, for maxDurationSeconds). */
  firstStartedAt?: number;
  /** The check session it reports to, for on-demand runs. */
  sessionId?: string;
  source: RunSource;
  /** The check's period (ms), for scheduled runs: a run later than this past its slot is too late to be worth running. */
  periodMs?: number;
  /** An ad-hoc run (`checkly test`, `trigger`): its row in adhoc_runs holds what to run (runners/adhoc.ts). */
  adhocId?: string;
  /** A retry made in another location: the location the slot's run started in (its result id is that location's). */
  origin?: string;
}

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
  const byQueue = new Map<string, { name: string; data: RunJob; opts: JobsOptions }[]>();
  for (const { job, queue, startAt } of runs) {
    const list = byQueue.get(queue) ?? [];
    list.push({ name: 'run', data: job, opts: { ...RUN_JOB_OPTIONS, jobId: runJobId(job), delay: Math.max(0, startAt - now) } });
    byQueue.set(queue, list);
  }
  await Promise.all([...byQueue].map(([name, jobs]) => queues.queue<RunJob>(name).addBulk(jobs)));
}
