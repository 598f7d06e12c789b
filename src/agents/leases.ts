import { createHash, randomUUID } from 'node:crypto';
import { Job, type Worker } from 'bullmq';
import type { Logger } from '../platform/logger.js';
import type { Metrics } from '../platform/metrics.js';
import type { AgentLocation } from '../private-locations/index.js';
import type { RunJob, TakenRun } from '../run-kernel/index.js';
import { privateRunQueueName, type RunBook, SkipLog } from '../runners/index.js';
import type { Queues } from '../storage/queues.js';

export interface LeaseSettings {
  /** How long a lease holds without renewal: a run on an agent that stopped renewing runs again after it. */
  leaseMs: number;
  /** How long a run may wait for an agent: past it, it is dropped and counted (`outcome="expired"`). */
  maxWaitMs: number;
}

/** A run leased to an agent: what it executes, and the lease it renews and reports under. */
export interface Lease extends TakenRun {
  leaseId: string;
  /** When the lease lapses unless renewed (epoch ms). */
  expiresAt: number;
  /** Scheduled runs: the agents that leased the check lately (docs/agent.md, "Two agents cut off together"). */
  holders?: string[];
}

/** What became of an agent's report. */
export type Completion = { state: 'done'; answer: Record<string, unknown> } | { state: 'duplicate' } | { state: 'lost' } | { state: 'gone' };

const digest = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A lease id carries the job and the lock token; it is only good while that token holds the job's lock. */
function encodeLease(jobId: string, token: string): string {
  return Buffer.from(`${jobId}\n${token}`).toString('base64url');
}

export function decodeLease(leaseId: string): { jobId: string; token: string } | undefined {
  if (!/^[A-Za-z0-9_-]{8,600}$/.test(leaseId)) return undefined;
  const [jobId, token, extra] = Buffer.from(leaseId, 'base64url').toString('utf8').split('\n');
  if (extra !== undefined || !jobId || !token || !/^[\w:.-]{1,300}$/.test(jobId) || !/^[\w.-]{1,100}$/.test(token)) return undefined;
  return { jobId, token };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs leased to agents. A private location's runs wait in its queue as they do for any runner; an agent takes
 * them over HTTPS, each under a lease that is the job's BullMQ lock with a token of the lease's own. Renewing
 * extends the lock; a lease not renewed lapses and BullMQ's stalled-job check puts the run back for another
 * agent. A report is taken only while its lease still holds the lock, and only once: a late report of a run
 * that was given to another agent is refused (`lost`), a repeated one answered as already done.
 */
export class AgentLeases {
  /** One worker per location queue agents lease from, with when it was last used (take, renew, report). */
  private readonly workers = new Map<string, { worker: Worker<RunJob>; usedAt: number; busy: number }>();
  private readonly evictTimer: NodeJS.Timeout;
  /**
   * What this process prepared for each lease it gave, until the report (or the lease's end): the report then
   * needs no second read of the check. A report reaching another process of the service reads it again.
   */
  private readonly prepared = new Map<string, { taken: TakenRun; until: number }>();
  /** The type of each check this process prepared a run of (a check's type never changes). */
  private readonly types = new Map<string, string>();
  /** Runs dropped as having waited too long, logged as a count per location (an agent back after an hour finds many). */
  private readonly dropped: SkipLog;

  constructor(
    private readonly queues: Queues,
    private readonly book: RunBook,
    private readonly settings: LeaseSettings,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {
    this.dropped = new SkipLog(logger, { message: 'runs waited too long for an agent; dropped', seconds: 'waitedSeconds' });
    this.evictTimer = setInterval(() => void this.evictIdle(), Math.max(1000, Math.min(60_000, settings.leaseMs))).unref();
  }

  /**
   * Closes the workers of locations no agent has used for three leases (an agent gone, a location deleted): a process
   * serving many locations over months keeps only those in use. No lease of theirs is open by then (it would have been
   * renewed); the next lease call of the location opens a worker again.
   */
  private async evictIdle(now = Date.now()): Promise<void> {
    for (const [name, w] of this.workers) {
      if (w.busy > 0 || now - w.usedAt <= 3 * this.settings.leaseMs) continue;
      this.workers.delete(name);
      await this.queues.closeWorker(w.worker).catch((err: Error) => this.logger.warn({ queue: name, err: err.message }, 'closing an idle lease worker failed'));
    }
    this.metrics?.agentLeaseWorkers.set(this.workers.size);
  }

  /** Marks a location's worker used now (renewals and reports keep it, not only lease calls). */
  private touch(location: AgentLocation): void {
    const w = this.workers.get(this.queueName(location));
    if (w) w.usedAt = Date.now();
  }

  private queueName(location: AgentLocation): string {
    return privateRunQueueName(location.id);
  }

  private worker(location: AgentLocation): { worker: Worker<RunJob>; usedAt: number; busy: number } {
    const name = this.queueName(location);
    let entry = this.workers.get(name);
    if (!entry) {
      const worker = this.queues.leaseWorker<RunJob>(name, {
        lockDuration: this.settings.leaseMs,
        stalledInterval: Math.max(500, Math.min(30_000, Math.floor(this.settings.leaseMs / 2))),
        maxStalledCount: 3,
        label: `agent runs of ${location.slugName}`,
      });
      entry = { worker, usedAt: Date.now(), busy: 0 };
      this.workers.set(name, entry);
      this.metrics?.agentLeaseWorkers.set(this.workers.size);
    }
    entry.usedAt = Date.now();
    return entry;
  }

  /**
   * Up to `max` runs for an agent of the location, waiting up to `waitMs` for the first. Runs it cannot make
   * (a type it lacks) go back for another agent; runs too late, deleted or cancelled are settled here.
   */
  async take(location: AgentLocation, agentId: string, capabilities: ReadonlySet<string>, max: number, waitMs: number, signal?: AbortSignal): Promise<Lease[]> {
    const entry = this.worker(location);
    const { worker } = entry;
    entry.busy++;
    const deadline = Date.now() + waitMs;
    const out: Lease[] = [];
    try {
      await this.takeInto(out, location, worker, agentId, capabilities, max, deadline, signal);
    } finally {
      entry.busy--;
      entry.usedAt = Date.now();
    }
    this.metrics?.agentLeases.inc({ location: location.slugName }, out.length);
    if (out.some((l) => l.run.periodMs)) await this.noteHolders(agentId, out);
    const now = Date.now();
    for (const [token, p] of this.prepared) if (p.until < now) this.prepared.delete(token);
    return out;
  }

  private async takeInto(
    out: Lease[],
    location: AgentLocation,
    worker: Worker<RunJob>,
    agentId: string,
    capabilities: ReadonlySet<string>,
    max: number,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<void> {
    while (!out.length && !signal?.aborted) {
      // Every run due now (up to max), then each prepared at once.
      const jobs: { job: Job<RunJob>; token: string }[] = [];
      while (jobs.length < max) {
        const token = `${agentId}.${randomUUID()}`;
        const job = (await worker.getNextJob(token, { block: false })) as Job<RunJob> | undefined;
        if (!job) break;
        jobs.push({ job, token });
      }
      const leases = await Promise.all(jobs.map(({ job, token }) => this.lease(location, job, token, capabilities)));
      for (const l of leases) if (l) out.push(l);
      if (out.length || Date.now() >= deadline) break;
      if (!jobs.length) await sleep(Math.min(200, Math.max(0, deadline - Date.now())));
    }
  }

  /** One taken job as a lease, or settled here: too late, deleted, cancelled, or of a type the agent lacks. */
  private async lease(location: AgentLocation, job: Job<RunJob>, token: string, capabilities: ReadonlySet<string>): Promise<Lease | undefined> {
    const run = job.data;
    const dueAt = job.timestamp + (job.opts.delay ?? 0);
    if (Date.now() - dueAt > this.settings.maxWaitMs) {
      this.book.count(run.location, 'expired');
      this.dropped.add(location.id, Date.now() - dueAt, run.checkId, {
        location: location.slugName,
        privateLocationId: location.id,
        accountId: location.accountId,
      });
      await job.moveToCompleted({ expired: true }, token, false);
      return undefined;
    }
    // A type the agent lacks goes back before anything is read or started (an ad-hoc run is not marked running). Another
    // agent of the location may make it; none will before it waits too long: then it is dropped.
    const type = run.checkType ?? this.types.get(run.checkId);
    if (type && !capabilities.has(type)) {
      await job.moveToDelayed(Date.now() + 1000, token);
      return undefined;
    }
    const taken = await this.book.prepare(run, token);
    if ('skipped' in taken) {
      await job.moveToCompleted(taken, token, false);
      return undefined;
    }
    // Jobs queued before runs carried their type: known after one read.
    if (this.types.size >= 10_000) this.types.clear();
    this.types.set(run.checkId, taken.check.checkType);
    if (!capabilities.has(taken.check.checkType)) {
      await job.moveToDelayed(Date.now() + 1000, token);
      return undefined;
    }
    const expiresAt = Date.now() + this.settings.leaseMs;
    this.prepared.set(token, { taken, until: expiresAt + this.settings.leaseMs });
    return { ...taken, leaseId: encodeLease(job.id!, token), expiresAt };
  }

  /**
   * Keeps who leased each scheduled check lately (a Redis hash per check: agent → when) and tells each lease the agents
   * that hold the check's definition now, so that agents cut off together share the check out instead of each
   * running it (the agent's ScheduleMemory picks one by hashing).
   */
  private async noteHolders(agentId: string, leases: Lease[]): Promise<void> {
    const redis = this.queues.connection;
    const scheduled = leases.filter((l) => l.run.periodMs);
    const key = (checkId: string) => `${this.queues.prefix}:agent-holders:${checkId}`;
    const now = Date.now();
    try {
      const pipeline = redis.pipeline();
      for (const l of scheduled) {
        const k = key(l.run.checkId);
        pipeline.hset(k, agentId, String(now));
        pipeline.pexpire(k, 3 * l.run.periodMs! + 60_000);
        pipeline.hgetall(k);
      }
      const replies = (await pipeline.exec()) ?? [];
      scheduled.forEach((l, i) => {
        const all = (replies[i * 3 + 2]?.[1] ?? {}) as Record<string, string>;
        const since = now - 3 * l.run.periodMs! - 60_000;
        const holders = Object.entries(all)
          .filter(([, at]) => Number(at) >= since)
          .map(([id]) => id)
          .sort();
        if (holders.length) l.holders = holders.slice(0, 50);
        const stale = Object.entries(all)
          .filter(([, at]) => Number(at) < since)
          .map(([id]) => id);
        if (stale.length) void redis.hdel(key(l.run.checkId), ...stale).catch(() => undefined);
      });
    } catch (err) {
      // Without holders an agent cut off runs every check it remembers (as before): never less monitoring.
      this.logger.debug({ err: (err as Error).message }, 'could not note the agents holding leased checks');
    }
  }

  private async jobOf(location: AgentLocation, jobId: string): Promise<Job<RunJob> | undefined> {
    return (await Job.fromId<RunJob>(this.queues.queue<RunJob>(this.queueName(location)), jobId)) ?? undefined;
  }

  /** Whether the lease's token still holds the run (its lock). */
  holding(location: AgentLocation, jobId: string, token: string): Promise<boolean> {
    return this.holds(location, jobId, token);
  }

  /** The run of a job of the location's queue. */
  async runOf(location: AgentLocation, jobId: string): Promise<RunJob | undefined> {
    return (await this.jobOf(location, jobId))?.data;
  }

  private async holds(location: AgentLocation, jobId: string, token: string): Promise<boolean> {
    const lockKey = `${this.queues.queue(this.queueName(location)).toKey(jobId)}:lock`;
    return (await this.queues.connection.get(lockKey)) === token;
  }

  /** Extends each lease that still holds its run; the others are lost (their runs went to another agent). */
  async renew(location: AgentLocation, leaseIds: readonly string[]): Promise<{ renewed: string[]; lost: string[] }> {
    this.touch(location);
    const renewed: string[] = [];
    const lost: string[] = [];
    await Promise.all(
      leaseIds.map(async (leaseId) => {
        const lease = decodeLease(leaseId);
        const job = lease && (await this.jobOf(location, lease.jobId));
        const ok =
          !!job && !!lease && (await this.holds(location, lease.jobId, lease.token)) && (await job.extendLock(lease.token, this.settings.leaseMs)) === 1;
        (ok ? renewed : lost).push(leaseId);
      }),
    );
    return { renewed, lost };
  }

  /** Takes an agent's report of a leased run: finished through the run book exactly once. */
  async complete(location: AgentLocation, leaseId: string, found: Parameters<RunBook['finish']>[1]): Promise<Completion> {
    const lease = decodeLease(leaseId);
    if (!lease) return { state: 'gone' };
    this.touch(location);
    const job = await this.jobOf(location, lease.jobId);
    if (!job) return { state: 'gone' };
    const mark = digest(lease.token);
    if ((await job.getState()) === 'completed')
      return (job.returnvalue as { lease?: string } | null)?.lease === mark ? { state: 'duplicate' } : { state: 'lost' };
    if (!(await this.holds(location, lease.jobId, lease.token))) return { state: 'lost' };
    const taken = this.prepared.get(lease.token)?.taken ?? (await this.book.reload(job.data, lease.token));
    this.prepared.delete(lease.token);
    const answer = taken ? await this.book.finish(taken, found) : { skipped: 'deleted' };
    try {
      await job.moveToCompleted({ ...answer, lease: mark }, lease.token, false);
    } catch (err) {
      // A second report of the same lease racing this one: the first to finish the job wins; the result is stored once.
      this.logger.debug({ jobId: job.id, err: (err as Error).message }, 'agent report raced another');
      return { state: 'duplicate' };
    }
    return { state: 'done', answer };
  }

  async close(): Promise<void> {
    clearInterval(this.evictTimer);
    await Promise.all([...this.workers.values()].map((w) => this.queues.closeWorker(w.worker)));
    this.workers.clear();
  }
}
