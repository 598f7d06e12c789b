import type { Queue } from 'bullmq';
import { jsonWithRowsBytes, type RowPlaces, type WrittenRows } from '../model/json-bytes.js';
import {
  type HandOffOptions,
  type HeldBatch,
  INGEST_QUEUE,
  type IngestJob,
  type QueuedBatch,
  type ResultQueue,
  type ResultQueueStats,
  readableLayout,
} from '../model/results.js';
import { runsOf } from '../model/runs.js';
import type { Queues } from '../storage/queues.js';

/**
 * Counts a batch's results once per batch id: a hand-off tried again after its answer was lost (the add and the
 * count were carried out, the reply timed out) must not count the same results twice. The marker outlives a
 * hand-off's retries (`RunBook`'s patience is 30 s) by far, and is short enough that markers stay few at any rate.
 */
const COUNT_ONCE_SCRIPT = `if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then return redis.call('INCRBY', KEYS[1], ARGV[1]) end return 0`;
const COUNTED_BATCH_SECONDS = 600;

/**
 * How long a batch's rows stay in Redis when nothing removes them: the worker removes them once the batch's job
 * completed; a batch that failed for good keeps them (its job is kept in the failed set for inspection, and can be
 * retried) until then. A job waiting longer than this finds its rows gone and fails for good, saying so.
 */
export const PAYLOAD_SECONDS = 7 * 86_400;

/** What this process keeps in memory for an ingest worker of its own: batches younger than this, up to so many rows. */
const HELD_MS = 60_000;
const HELD_MAX_ROWS = 50_000;
/** And up to so many bytes of their rows' JSON (kept with them for the insert; about as large as the rows themselves). */
const HELD_MAX_BYTES = 64 * 1024 * 1024;

/** The memory a held batch's bytes keep (pooled small buffers counted by their own length). */
function heldBytesOf({ bytes }: WrittenRows): number {
  return bytes.length < 4096 ? bytes.length : Math.max(bytes.length, bytes.buffer.byteLength);
}

/** Where a batch's rows wait in Redis while its job is queued. */
export function payloadKey(redisPrefix: string, batchId: string): string {
  return `${redisPrefix}ingest:payload:${batchId}`;
}

/** Producer side of the ingest queue: enqueue batches and report depth and lag. */
export class IngestQueue implements ResultQueue {
  readonly queue: Queue<QueuedBatch>;

  /** Results accepted since the queue's Redis namespace was created: with ClickHouse's count, shows loss. */
  private readonly acceptedKey: string;

  /** Batches enqueued here, for a worker of this process (handOff), oldest first; undefined until one asks. */
  private held: Map<string, HeldBatch & { at: number }> | undefined;
  /** Whether held batches keep their rows as values too (HandOffOptions.withRows). */
  private heldWithRows = false;
  private heldRows = 0;
  private heldBytes = 0;

  constructor(
    private readonly queues: Queues,
    private readonly redisPrefix: string,
    private readonly attempts = 8,
  ) {
    this.queue = queues.queue<QueuedBatch>(INGEST_QUEUE);
    this.acceptedKey = `${redisPrefix}ingest:accepted-results`;
  }

  /**
   * The batch's rows are written to Redis first, as one buffer (a string argument costs ioredis a UTF-8 length
   * pass of its own: jsonWithRowsBytes), then its job, which names them; a job is never queued without its rows.
   */
  async enqueue(job: IngestJob): Promise<void> {
    const key = payloadKey(this.redisPrefix, job.batchId);
    // Where each row is in the copy, when a worker of this process will take the batch: its insert copies them.
    const where: RowPlaces | undefined = this.held ? { starts: [], ends: [] } : undefined;
    const bytes = jsonWithRowsBytes(job, where);
    await this.queues.connection.set(key, bytes, 'EX', PAYLOAD_SECONDS);
    if (where) this.hold(job, { bytes, ...where });
    const queued: QueuedBatch = {
      batchId: job.batchId,
      accountId: job.accountId,
      results: Array.isArray(job.rows) ? job.rows.length : 0,
      payloadKey: key,
      ...(job.idsMinted ? { idsMinted: true as const } : {}),
    };
    try {
      await this.queue.add('batch', queued, {
        // The batch id is the job id: enqueueing the same batch twice is a no-op.
        jobId: job.batchId,
        attempts: this.attempts,
        backoff: { type: 'exponential', delay: 500 },
        // Completed jobs are a few hundred bytes each (their rows are removed): keep some, briefly, for inspection.
        removeOnComplete: { age: 600, count: 1000 },
        // Batches that keep failing stay in the failed set for inspection.
        removeOnFail: false,
      });
    } catch (err) {
      this.release(job.batchId);
      throw err;
    }
    await this.queues.connection.eval(COUNT_ONCE_SCRIPT, 2, this.acceptedKey, `${this.acceptedKey}:${job.batchId}`, queued.results, COUNTED_BATCH_SECONDS);
  }

  handOff(options: HandOffOptions = {}): (batchId: string) => HeldBatch | undefined {
    this.held ??= new Map();
    this.heldWithRows = options.withRows === true;
    return (batchId) => {
      const entry = this.held?.get(batchId);
      this.evict(Date.now(), 0);
      if (!entry) return undefined;
      this.release(batchId);
      const { at: _, ...batch } = entry;
      return batch;
    };
  }

  /** Keeps the batch for a worker of this process: its runs and the bytes its rows were written in, not the rows. */
  private hold(job: IngestJob, written: WrittenRows) {
    const held = this.held;
    if (!held) return;
    // Whatever was held under this id goes first: a batch enqueued again is taken as it is now or read back.
    this.release(job.batchId);
    // A job this version's worker would refuse is not held: the worker reads it from Redis and refuses it there.
    if ('problem' in readableLayout(job)) return;
    const { rows, ...meta } = job;
    // What the bytes keep alive: a copy a few kilobytes long may be a view into a larger allocation it holds whole.
    const bytes = heldBytesOf(written);
    if (rows.length > HELD_MAX_ROWS || bytes > HELD_MAX_BYTES) return;
    const now = Date.now();
    this.evict(now, rows.length, bytes);
    if (this.heldRows + rows.length > HELD_MAX_ROWS || this.heldBytes + bytes > HELD_MAX_BYTES) return;
    // The worker's runs, read here (where the rows are still at hand) instead of by the worker.
    held.set(job.batchId, { job: meta, runs: runsOf(job.columns, rows), written, rows: this.heldWithRows ? rows : undefined, at: now });
    this.heldRows += rows.length;
    this.heldBytes += bytes;
  }

  /** Lets go of the batches held too long (their worker is another process's, or gone), and the oldest beyond room for `rows` and `bytes` more. */
  private evict(now: number, rows: number, bytes = 0) {
    for (const [batchId, { at }] of this.held ?? []) {
      if (now - at < HELD_MS && this.heldRows + rows <= HELD_MAX_ROWS && this.heldBytes + bytes <= HELD_MAX_BYTES) break;
      this.release(batchId);
    }
  }

  private release(batchId: string) {
    const entry = this.held?.get(batchId);
    if (!entry) return;
    this.held!.delete(batchId);
    this.heldRows -= entry.runs.length;
    this.heldBytes -= heldBytesOf(entry.written);
  }

  async stats(): Promise<ResultQueueStats> {
    const counts = await this.queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
    const [[oldest], accepted] = await Promise.all([this.queue.getJobs(['wait', 'delayed'], 0, 0, true), this.queues.connection.get(this.acceptedKey)]);
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      oldestWaitingSeconds: oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0,
      acceptedResults: Number(accepted ?? 0),
    };
  }
}
