import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { jsonWithRowsBytes, type RowPlaces, type WrittenRows } from '../model/json-bytes.js';
import {
  type DirectSink,
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

/** Redis's own clock in ms, in a script (`now`): every process's leases are read against one clock, whatever the hosts' skew. */
export const REDIS_NOW_MS = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * The rows of a batch to be queued, unless it was counted before: a hand-off tried again after every step of the
 * first went through (a batch a worker of this process may already have landed and removed) changes nothing.
 * KEYS: the rows, the batch's count marker, the ingest journal. ARGV: the rows, their TTL, the batch's journal entry as
 * this process's worker would have it, its lease (ms). 1 when written; 2 when a first try recorded it for that worker
 * (RECORD_DIRECT_SCRIPT) and it may not have got it: its lease starts again.
 */
const ROWS_UNLESS_COUNTED_SCRIPT = `if redis.call('EXISTS', KEYS[2]) == 1 then
  if redis.call('ZSCORE', KEYS[3], ARGV[3]) then
    ${REDIS_NOW_MS}
    redis.call('ZADD', KEYS[3], 'XX', now + ARGV[4], ARGV[3])
    return 2
  end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) return 1`;

/**
 * A batch taken by a worker of its producer's process, recorded in one round trip: its rows, its count (once),
 * and its entry in the ingest journal, which the worker renews while it holds the batch and removes with the rows
 * once they landed. A batch counted before is not recorded again (0), unless this worker's entry for it is still in
 * the journal: a first try whose reply was lost (a Redis stall) recorded it, and the worker may not have got it (2;
 * its lease starts again). One whose job a first try queued is only counted (0). The deadline is on Redis's clock.
 * KEYS: the rows, the accepted count, the batch's count marker, the journal, the batch's job.
 * ARGV: the rows, their TTL, the batch's results, the marker's TTL, the lease (ms), the entry.
 */
const RECORD_DIRECT_SCRIPT = `${REDIS_NOW_MS}
if redis.call('EXISTS', KEYS[3]) == 1 then
  if redis.call('ZSCORE', KEYS[4], ARGV[6]) then
    redis.call('ZADD', KEYS[4], 'XX', now + ARGV[5], ARGV[6])
    return 2
  end
  return 0
end
redis.call('SET', KEYS[3], '1', 'EX', ARGV[4])
redis.call('INCRBY', KEYS[2], ARGV[3])
if redis.call('EXISTS', KEYS[5]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('ZADD', KEYS[4], now + ARGV[5], ARGV[6])
return 1`;

/** How long a worker holds a batch it took from its process (the journal entry's deadline), unless it renews it. */
export const DIRECT_LEASE_MS = 60_000;

/** The ingest journal: batches taken by a worker of their producer's process and not landed yet (ResultQueue.direct). */
export function journalKey(redisPrefix: string): string {
  return `${redisPrefix}ingest:journal`;
}

/**
 * A batch's entry in the journal: what a sweeper needs to queue it when its worker is gone, without reading its
 * rows, and the worker that holds it (DirectSink.owner: a batch handed over again is given back only to its own).
 * Batch ids, account ids and owners are UUIDs: none holds the separator.
 */
export function journalEntry(batch: { batchId: string; accountId: string; results: number }, owner: string): string {
  return [batch.batchId, batch.accountId, batch.results, owner].join('|');
}

/**
 * The queued job of a journal entry (journalEntry), for a batch tried before; undefined for a malformed entry. A
 * worker of this version reads `retried` and looks for what was stored before it writes. One older than the journal
 * knows nothing of `retried` and takes `idsMinted` from the rows in Redis (written with the batch): during an upgrade,
 * a swept batch of minted ids that such a worker takes is trusted as new (the insert's token still drops a repeat
 * that lands alone). Upgrade workers before the processes that take batches directly.
 */
export function batchOfEntry(redisPrefix: string, entry: string): QueuedBatch | undefined {
  const [batchId, accountId, results] = entry.split('|');
  if (!batchId || !accountId || !/^\d+$/.test(results ?? '')) return undefined;
  return { batchId, accountId, results: Number(results), payloadKey: payloadKey(redisPrefix, batchId), retried: true };
}

/** How many times a queued batch is tried before it stays in the failed set. */
export const INGEST_ATTEMPTS = 8;

/** Journal entries a sweeper took from a worker that is gone, until their jobs are queued (a sweeper dying meanwhile leaves them to the next). */
export function recoveringKey(redisPrefix: string): string {
  return `${redisPrefix}ingest:journal-recovering`;
}

/** The options every ingest job is queued with. */
export function jobOptions(batchId: string, attempts = INGEST_ATTEMPTS) {
  return {
    // The batch id is the job id: enqueueing the same batch twice is a no-op.
    jobId: batchId,
    attempts,
    backoff: { type: 'exponential', delay: 500 },
    // Completed jobs are a few hundred bytes each (their rows are removed): keep some, briefly, for inspection.
    removeOnComplete: { age: 600, count: 1000 },
    // Batches that keep failing stay in the failed set for inspection.
    removeOnFail: false,
  };
}

type ScriptedRedis = Redis & {
  ingestRowsUnlessCounted(rows: string, marker: string, journal: string, bytes: Buffer, ttl: number, entry: string, leaseMs: number): Promise<number>;
  ingestRecordDirect(
    rows: string,
    accepted: string,
    marker: string,
    journal: string,
    job: string,
    bytes: Buffer,
    ttl: number,
    results: number,
    markerTtl: number,
    leaseMs: number,
    entry: string,
  ): Promise<number>;
};

/** The producer's connection with the scripts above defined (sent by hash; their text only when Redis lacks it). */
function scripted(connection: Redis): ScriptedRedis {
  const redis = connection as ScriptedRedis;
  if (typeof redis.ingestRecordDirect !== 'function') {
    redis.defineCommand('ingestRowsUnlessCounted', { numberOfKeys: 3, lua: ROWS_UNLESS_COUNTED_SCRIPT });
    redis.defineCommand('ingestRecordDirect', { numberOfKeys: 5, lua: RECORD_DIRECT_SCRIPT });
  }
  return redis;
}

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
  /** A worker of this process taking batches itself (direct), and whether it wants their rows as values. */
  private sink: { sink: DirectSink; withRows: boolean } | undefined;
  private readonly redis: ScriptedRedis;

  constructor(
    private readonly queues: Queues,
    private readonly redisPrefix: string,
    private readonly attempts = INGEST_ATTEMPTS,
  ) {
    this.queue = queues.queue<QueuedBatch>(INGEST_QUEUE);
    this.acceptedKey = `${redisPrefix}ingest:accepted-results`;
    this.redis = scripted(queues.connection);
  }

  direct(sink: DirectSink, options: HandOffOptions = {}): () => void {
    const attached = { sink, withRows: options.withRows === true };
    this.sink = attached;
    return () => {
      if (this.sink === attached) this.sink = undefined;
    };
  }

  /**
   * The batch's rows are written to Redis first, as one buffer (a string argument costs ioredis a UTF-8 length
   * pass of its own: jsonWithRowsBytes), then its job, which names them; a job is never queued without its rows.
   * A batch a worker of this process takes (direct) has its rows, count and journal entry written in one script
   * instead, and no job.
   */
  async enqueue(job: IngestJob): Promise<void> {
    const key = payloadKey(this.redisPrefix, job.batchId);
    const marker = `${this.acceptedKey}:${job.batchId}`;
    const results = Array.isArray(job.rows) ? job.rows.length : 0;
    const attached = this.sink;
    // A batch a worker of this process would take (its layout is this version's) goes to it with no job.
    const direct = attached && !('problem' in readableLayout(job)) ? attached : undefined;
    // Where each row is in the copy, when a worker of this process will take the batch: its insert copies them.
    const where: RowPlaces | undefined = this.held || direct ? { starts: [], ends: [] } : undefined;
    const bytes = jsonWithRowsBytes(job, where);
    const entry = journalEntry({ ...job, results }, direct?.sink.owner ?? '');
    const journal = journalKey(this.redisPrefix);
    // `where` is there whenever `direct` is.
    const toSink = (sink: NonNullable<typeof direct>, again: boolean) => {
      const { rows, ...meta } = job;
      sink.sink.take({ job: meta, runs: runsOf(job.columns, rows), written: { bytes, ...where! }, rows: sink.withRows ? rows : undefined }, entry, again);
    };
    if (direct?.sink.room(results, bytes.length)) {
      const recorded = await this.redis.ingestRecordDirect(
        key,
        this.acceptedKey,
        marker,
        journal,
        this.queue.toKey(job.batchId),
        bytes,
        PAYLOAD_SECONDS,
        results,
        COUNTED_BATCH_SECONDS,
        direct.sink.leaseMs,
        entry,
      );
      if (recorded !== 0) toSink(direct, recorded === 2);
      return;
    }
    const written = await this.redis.ingestRowsUnlessCounted(key, marker, journal, bytes, PAYLOAD_SECONDS, entry, direct?.sink.leaseMs ?? DIRECT_LEASE_MS);
    // Recorded for this process's worker by a first try whose reply was lost: it takes it now, whatever its room.
    if (written === 2 && direct) toSink(direct, true);
    if (written !== 1) return;
    if (this.held && where) this.hold(job, { bytes, ...where });
    const queued: QueuedBatch = {
      batchId: job.batchId,
      accountId: job.accountId,
      results,
      payloadKey: key,
      ...(job.idsMinted ? { idsMinted: true as const } : {}),
    };
    try {
      await this.queue.add('batch', queued, jobOptions(job.batchId, this.attempts));
    } catch (err) {
      this.release(job.batchId);
      throw err;
    }
    await this.queues.connection.eval(COUNT_ONCE_SCRIPT, 2, this.acceptedKey, marker, results, COUNTED_BATCH_SECONDS);
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
    const [[oldest], accepted, direct, recovering] = await Promise.all([
      this.queue.getJobs(['wait', 'delayed'], 0, 0, true),
      this.queues.connection.get(this.acceptedKey),
      this.queues.connection.zcard(journalKey(this.redisPrefix)),
      this.queues.connection.zcard(recoveringKey(this.redisPrefix)),
    ]);
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      // Batches a worker took from its own process are being landed too (the journal's entries).
      active: (counts.active ?? 0) + direct + recovering,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      oldestWaitingSeconds: oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0,
      acceptedResults: Number(accepted ?? 0),
    };
  }
}
