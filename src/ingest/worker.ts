import { type Job, UnrecoverableError } from 'bullmq';
import { Redis } from 'ioredis';
import { JsonRows, type WrittenRows, writtenRow } from '../model/json-bytes.js';
import { type DirectSink, type HeldBatch, INGEST_QUEUE, type IngestJob, type QueuedBatch, readableLayout } from '../model/results.js';
import { type Run, runsOf } from '../model/runs.js';
import { randomUuid } from '../model/uuid.js';
import type { Logger } from '../platform/logger.js';
import type { Store } from '../storage/clickhouse/store.js';
import { Generations } from '../storage/generations.js';
import { type Queues, WORKER_CLOSE_GRACE_MS } from '../storage/queues.js';
import { landedIds, ResultDedup } from './dedup.js';
import { GroupCommit, tokenOf } from './group-commit.js';
import { IngestJournal } from './journal.js';
import { batchOfEntry, DIRECT_LEASE_MS, jobOptions, PAYLOAD_SECONDS } from './queue.js';

/** How often a worker renews the leases of the batches it took from its process, and sweeps the journal. */
const RENEW_EVERY_MS = DIRECT_LEASE_MS / 4;
const SWEEP_EVERY_MS = 10_000;
/** How long a sweeper has to queue the entries it took before another may take them again. */
const RETAKE_AFTER_MS = 5 * 60_000;
/** What a worker holds at most of batches taken from its process, in flight at once; more go through the queue. */
const DIRECT_MAX_ROWS = 50_000;
const DIRECT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * What the process assembly wires around the insert, so ingest knows nothing of check state or alerts.
 * Without hooks the worker only lands results.
 */
export interface IngestHooks {
  /** Before the insert: the ids of runs a maintenance window paused (they land flagged `in_maintenance`). */
  pausedRuns?(accountId: string, runs: readonly Run[]): Promise<ReadonlySet<string>>;
  /**
   * After the insert: one account's landed runs (batches landing together are handed over together). A
   * rejection fails the batches, which retry; applying a run twice must change nothing.
   */
  landed?(accountId: string, runs: readonly Run[]): Promise<void>;
}

export interface IngestWorkerOptions {
  redisPrefix: string;
  store: Store;
  hooks?: IngestHooks;
  logger: Logger;
  concurrency?: number;
  /** The most rows one ClickHouse insert takes when batches wait for it together. */
  insertMaxRows?: number;
  /** Told how many rows each insert stored (the service's metrics). */
  onLanded?: (rows: number) => void;
  /** Runs after ClickHouse accepted a batch and before its job or journal entry ends (fault-injection point for tests). */
  afterInsert?: (batchId: string) => Promise<void> | void;
  /** Whether landed batches mark their days for the report cache (REPORT_CACHE; asked per batch). Default: yes. */
  markDays?: () => boolean;
  /** Told each batch's rows this worker stored (not the repeats it dropped): run spans are made from them. Must not throw or wait. */
  onStored?: (accountId: string, columns: readonly string[], rows: readonly unknown[][]) => void;
  /** Batches this process enqueued, taken from memory instead of read back from Redis (ResultQueue.handOff). */
  held?: (batchId: string) => HeldBatch | undefined;
  /** Attaches a sink taking the batches this process enqueues with no queued job (ResultQueue.direct). */
  direct?: (sink: DirectSink) => () => void;
  /** The journal's lease and sweep, for tests of a worker that died (default: DIRECT_LEASE_MS, every 10 s). */
  leaseMs?: number;
  sweepEveryMs?: number;
}

/** A job of the ingest queue: the batch named (QueuedBatch), or carried whole by an older producer. */
export type QueuedJob = QueuedBatch | IngestJob;

/** Where a job's rows wait in Redis; undefined for a job that carries them (an older producer's). */
function payloadKeyOf(data: QueuedJob): string | undefined {
  return 'payloadKey' in data && typeof data.payloadKey === 'string' ? data.payloadKey : undefined;
}

/** A batch on its way into ClickHouse: its runs this worker holds the claims of, and the paused ones. */
interface Pending {
  batchId: string;
  accountId: string;
  /** Its rows as values: read from Redis (or a job's own), or undefined when its producer handed over their bytes. */
  rows?: readonly unknown[][];
  /** The JSON its rows were written in by its producer (a batch of this process), which the insert copies. */
  json?: WrittenRows;
  columns: readonly string[];
  /** Every run of the batch, in row order. */
  runs: readonly Run[];
  /** Its runs' ids are the service's own and this is its first try: nothing to look for in ClickHouse. */
  fresh: boolean;
  claimed: readonly Run[];
  paused: ReadonlySet<string>;
  /** Set by the insert: how many rows the batch wrote. */
  written: number;
  /** Its journal entry, for a batch taken from this process (direct): confirmed held before its rows go in. */
  entry?: string;
  /** Set by the insert: a sweeper took the batch from this worker (it let its lease pass); its job lands it. */
  lost?: boolean;
}

/** A landed batch's runs, waiting for its checks' state to follow them. */
interface Evaluation {
  accountId: string;
  runs: readonly Run[];
}

/**
 * Consumer of the ingest queue: each batch's rows go into ClickHouse, then its checks' statuses. Batches that
 * wait for the insert together share it (GroupCommit: one query for the rows already stored, one insert), and
 * batches waiting for their state share one transaction the same way.
 * Rows whose run id already landed, or is held by another batch in flight, are dropped first (ResultDedup);
 * the insert's deduplication token comes from its batch ids, so an insert repeated whole is dropped by the
 * engine and by the rollup views (ROLLUPS=views), or rolls its late runs under the same token (ROLLUPS=ticks).
 */
export function startIngestWorker(queues: Queues, redisUrl: string, opts: IngestWorkerOptions) {
  const claims = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  claims.on('error', () => {});
  const dedup = new ResultDedup(claims, `${opts.redisPrefix}ingest:`);
  const generations = new Generations(claims, opts.redisPrefix);
  const journal = new IngestJournal(claims, opts.redisPrefix);
  const leaseMs = opts.leaseMs ?? DIRECT_LEASE_MS;

  async function insertGroup(all: Pending[]) {
    // Batches taken from this process go in only while their lease holds: one a sweeper took (this worker stalled
    // past it) is left to the job the sweeper queued, which looks for what was stored before it writes.
    const entries = all.flatMap((p) => (p.entry === undefined ? [] : [p.entry]));
    const lost = await journal.renew(entries, leaseMs);
    for (const p of all) if (p.entry !== undefined && lost.has(p.entry)) p.lost = true;
    const group = lost.size ? all.filter((p) => !p.lost) : all;
    if (!group.length) return;
    const landed = new Set<string>();
    for (const accountId of new Set(group.filter((p) => !p.fresh).map((p) => p.accountId))) {
      const runs = group.filter((p) => !p.fresh && p.accountId === accountId).flatMap((p) => p.claimed);
      for (const id of await landedIds(opts.store, accountId, runs)) landed.add(id);
    }
    // Each row as the JSON its batch was written in (its copy in Redis, when this process wrote it), with
    // `in_maintenance` after it: the insert copies the bytes instead of encoding the rows again.
    const collect = JsonRows.collect();
    const paused: boolean[] = [];
    for (const p of group) {
      const writable = new Set(p.claimed.map((r) => r.resultId).filter((id) => !landed.has(id)));
      const before = paused.length;
      // The runs are the rows' own, in row order (runsOf): a row's id is its run's.
      const keep = (i: number) => {
        const id = p.runs[i]!.resultId;
        if (!writable.has(id)) return false;
        paused.push(p.paused.has(id));
        return true;
      };
      collect.take({ rows: p.rows, written: p.json, runs: p.runs }, keep);
      p.written = paused.length - before;
    }
    const rows = collect.done().withColumn((i) => paused[i]);
    // Reports cache closed buckets by the versions of the days they cover (storage/generations.ts): every day the
    // group's runs fall on is marked changed once the insert has landed, even runs that had landed before (a
    // retry after a crash between the insert and the mark).
    const touched = group.flatMap((p) => p.runs.map((r) => ({ checkId: r.checkId, at: r.startedAt })));
    // Runs stored before (a batch repeated after a crash) are left out of the insert: with ROLLUPS=ticks, their
    // roll-up is made sure of here, as the insert does for the rest.
    if (landed.size && opts.store.settleLateRuns) {
      await opts.store.settleLateRuns(group.flatMap((p) => p.claimed.filter((r) => landed.has(r.resultId))));
    }
    const mark = opts.markDays?.() ?? true;
    if (!rows.length) {
      if (mark) await generations.bump(touched);
      return;
    }
    const started = performance.now();
    await opts.store.insert('check_results', [...group[0].columns, 'in_maintenance'], rows, {
      purpose: 'ingest',
      settings: {
        insert_deduplication_token: tokenOf(group.map((p) => p.batchId)),
        // An insert the table drops as a repeat is dropped by the rollup views too (not counted twice); with
        // ROLLUPS=ticks there are no views, and its late runs are rolled under a token made of the same one.
        deduplicate_blocks_in_dependent_materialized_views: 1,
      },
    });
    if (mark) await generations.bump(touched);
    opts.onLanded?.(rows.length);
    opts.logger.debug({ batches: group.length, rows: rows.length, ms: Math.round(performance.now() - started) }, 'ingest insert');
  }

  /**
   * Check state follows landed batches through a group commit too: batches whose insert ended while a state
   * transaction ran are applied together in the next one, one transaction per account. Applied one batch at
   * a time, transactions of batches naming the same checks queued on those checks' row locks, each holding
   * a pooled connection the API's own queries then waited for (bench/README.md, alerts).
   */
  const landed = opts.hooks?.landed?.bind(opts.hooks);
  const pausedRuns = opts.hooks?.pausedRuns?.bind(opts.hooks);
  async function applyGroup(group: Evaluation[]) {
    const byAccount = new Map<string, Run[]>();
    for (const { accountId, runs } of group) {
      const list = byAccount.get(accountId);
      if (list) list.push(...runs);
      else byAccount.set(accountId, [...runs]);
    }
    for (const [accountId, runs] of byAccount) await landed!(accountId, runs);
  }
  const evaluations = new GroupCommit<Evaluation>(applyGroup, (e) => e.runs.length, opts.insertMaxRows ?? 20_000);

  // Batches share an insert only with batches of the same column layout (one per producer version).
  const commits = new Map<string, GroupCommit<Pending>>();
  const commitFor = (columns: readonly string[]) => {
    const key = columns.join(',');
    let commit = commits.get(key);
    if (!commit) {
      commit = new GroupCommit<Pending>(insertGroup, (p) => p.claimed.length, opts.insertMaxRows ?? 20_000);
      commits.set(key, commit);
    }
    return commit;
  };

  /** The batch a job names, read from Redis (or inline, older jobs). */
  async function storedBatchOf(data: QueuedJob): Promise<Partial<IngestJob>> {
    const key = payloadKeyOf(data);
    if (key === undefined) return data as IngestJob;
    const raw = await claims.getBuffer(key);
    if (!raw) {
      throw new UnrecoverableError(
        `the batch's rows are no longer in Redis (${key}): removed once its job completed, or after ${PAYLOAD_SECONDS / 86_400} days`,
      );
    }
    let batch: Partial<IngestJob>;
    try {
      batch = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new UnrecoverableError(`the batch's rows in Redis (${key}) are not JSON`);
    }
    if (batch?.batchId !== data.batchId) throw new UnrecoverableError(`the rows in Redis under ${key} are another batch's`);
    return batch;
  }

  /**
   * The batch a job names as the worker takes it: from this process's memory when it enqueued it (its runs and the
   * bytes of its rows), else its rows from Redis, their layout checked, and the runs read from them.
   */
  async function batchOf(
    data: QueuedJob,
  ): Promise<Omit<Pending, 'fresh' | 'claimed' | 'paused' | 'written'> & { idsMinted: boolean; spans?: Record<string, [number, number]> }> {
    const held = payloadKeyOf(data) === undefined ? undefined : opts.held?.(data.batchId);
    if (held) {
      const { job } = held;
      return { ...job, idsMinted: job.idsMinted === true, runs: held.runs, json: held.written, rows: held.rows };
    }
    const batch = await storedBatchOf(data);
    const layout = readableLayout(batch);
    if ('problem' in layout) throw new UnrecoverableError(layout.problem);
    const job = batch as IngestJob;
    return { ...job, columns: layout.columns, idsMinted: job.idsMinted === true, runs: runsOf(layout.columns, job.rows) };
  }

  type Batch = Awaited<ReturnType<typeof batchOf>>;

  async function process(job: Job<QueuedJob>) {
    const batch = await batchOf(job.data);
    // Ids the service made for this batch cannot be held by another batch, nor stored before its first try.
    const fresh = batch.idsMinted && job.attemptsStarted <= 1 && !('retried' in job.data && job.data.retried);
    return land(batch, fresh);
  }

  /** A batch into ClickHouse, then its checks' state; `entry`: it was taken from this process (direct). */
  async function land({ batchId, accountId, columns, rows, json, runs, spans }: Batch, fresh: boolean, entry?: string) {
    if (spans) for (const r of runs) if (Array.isArray(spans[r.resultId])) r.span = spans[r.resultId];
    const claimed = fresh ? runs : await dedup.claim(batchId, runs);
    const paused = pausedRuns ? await pausedRuns(accountId, claimed) : new Set<string>();
    const pending: Pending = { batchId, accountId, rows, json, columns, runs, fresh, claimed, paused, written: 0, entry };
    await commitFor(columns).add(pending);
    if (pending.lost) return undefined;
    if (opts.onStored && claimed.length) {
      const kept = new Set(claimed.map((r) => r.resultId));
      const stored: unknown[][] = [];
      // Rows handed over as bytes are read back here, only for those who asked (spans exported).
      runs.forEach((r, i) => {
        if (kept.has(r.resultId)) stored.push(rows ? rows[i]! : writtenRow(json!, i));
      });
      opts.onStored(accountId, columns, stored);
    }
    // Landed: from now on a repeat of these ids is found in ClickHouse (landedIds), so the claims can go. Live
    // claim keys are the results between claim and insert, not every result of the last claim window.
    if (!fresh)
      await dedup.release(
        batchId,
        claimed.map((r) => r.resultId),
      );
    await opts.afterInsert?.(batchId);
    // Every row of the batch, not only the ones written now: a retry after a crash between the insert and
    // this line finds its rows landed, and applying a run twice changes nothing.
    if (landed) await evaluations.add({ accountId, runs });
    return { rows: pending.written, duplicates: runs.length - pending.written };
  }

  const worker = queues.worker<QueuedJob>(INGEST_QUEUE, process, {
    concurrency: opts.concurrency ?? 2,
    label: 'ingest batch',
    describe: (data) => ({ batchId: data.batchId, rows: 'results' in data ? data.results : data.rows?.length }),
    // A batch that failed for good gives its run ids back: posting them again lands them. Its rows stay in Redis,
    // without the payload's TTL, as long as the failed job.
    onFailed: (job, _err, final) => {
      if (!final) return;
      // Kept with the failed job for as long as it is (inspection, a retry by hand), not only for the payload's TTL.
      const key = payloadKeyOf(job.data);
      if (key !== undefined) void claims.persist(key).catch(() => {});
      void storedBatchOf(job.data)
        .then((batch) => {
          if (!Array.isArray(batch.rows) || !Array.isArray(batch.columns) || !batch.batchId) return;
          const idAt = batch.columns.indexOf('result_id');
          if (idAt >= 0)
            return dedup.release(
              batch.batchId,
              batch.rows.map((r) => String(r[idAt])),
            );
        })
        .catch(() => {});
    },
  });
  // A completed batch's rows are in ClickHouse: its copy in Redis goes.
  worker.on('completed', (job) => {
    const key = payloadKeyOf(job.data);
    if (key !== undefined) void claims.del(key).catch(() => {});
  });

  const direct = opts.direct ? takeDirect(opts.direct) : undefined;
  return {
    worker,
    async close() {
      await direct?.close();
      await queues.closeWorker(worker);
      claims.disconnect();
    },
  };

  /**
   * Batches this process enqueues, taken with no queued job (ResultQueue.direct), while those in flight stay under
   * DIRECT_MAX_ROWS and DIRECT_MAX_BYTES. Each is held by its journal entry's lease, renewed every RENEW_EVERY_MS and
   * before its insert; once landed, its entry and rows go together (one round trip for the batches ending in a turn
   * of the event loop). One that fails is queued to be tried again; one whose worker died is queued by a sweeper.
   */
  function takeDirect(attach: (sink: DirectSink) => () => void) {
    /** The batches in flight, by entry, with what they count against the room. */
    const held = new Map<string, { rows: number; bytes: number }>();
    /** Entries this worker has taken and not yet seen out of the journal: a batch handed over again is not taken twice. */
    const owned = new Set<string>();
    const inFlight = new Set<Promise<void>>();
    let rows = 0;
    let bytes = 0;
    let closed = false;
    let ending: { entry: string; batchId: string }[] = [];
    const log = opts.logger;
    const ingestQueue = () => queues.queue<QueuedBatch>(INGEST_QUEUE);
    // On the producers' connection, as the job is: a batch handed back after this worker closed its own.
    const handedBack = new IngestJournal(queues.connection, opts.redisPrefix);

    const release = (entry: string) => {
      const size = held.get(entry);
      if (!size) return;
      held.delete(entry);
      rows -= size.rows;
      bytes -= size.bytes;
    };
    let leaving = Promise.resolve();
    const endLanded = () => {
      const batches = ending;
      ending = [];
      const left = journal
        .landed(batches)
        .catch((err: Error) => {
          // Their leases run out and a sweeper queues them: the retry finds their rows stored and writes nothing.
          log.warn({ err: err.message, batches: batches.length }, 'ingest: landed batches could not leave the journal; they will be swept');
        })
        .finally(() => {
          for (const b of batches) owned.delete(b.entry);
        });
      leaving = leaving.then(() => left);
    };
    /** A batch this worker will not land itself, queued as tried before; if that fails, a sweeper queues it later. */
    const handBack = async (entry: string, batchId: string, why: string, err?: Error) => {
      const queued = batchOfEntry(opts.redisPrefix, entry);
      try {
        if (!queued) throw new Error('its journal entry is malformed');
        await ingestQueue().add('batch', queued, jobOptions(batchId));
        await handedBack.queued([entry]);
        log.warn({ batchId, err: err?.message }, why);
      } catch (queueErr) {
        log.warn({ batchId, err: err?.message, queueErr: (queueErr as Error).message }, 'ingest batch could not be queued; it will be swept');
      } finally {
        owned.delete(entry);
      }
    };
    const sink: DirectSink = {
      leaseMs,
      owner: randomUuid(),
      room: (r, b) => !closed && rows + r <= DIRECT_MAX_ROWS && bytes + b <= DIRECT_MAX_BYTES,
      take(batch, entry, again) {
        const { job } = batch;
        if (owned.has(entry)) return;
        owned.add(entry);
        // Recorded as this worker closed (its producer had it attached a moment before): queued instead.
        if (closed) {
          void handBack(entry, job.batchId, 'ingest batch reached a closing worker; queued');
          return;
        }
        const takenAt = Date.now();
        const size = { rows: batch.runs.length, bytes: batch.written.bytes.length };
        held.set(entry, size);
        rows += size.rows;
        bytes += size.bytes;
        const taken: Batch = { ...job, idsMinted: job.idsMinted === true, runs: batch.runs, json: batch.written, rows: batch.rows };
        const run = land(taken, taken.idsMinted && !again, entry).then(
          (outcome) => {
            release(entry);
            queues.observeUnqueued(INGEST_QUEUE, 0, Date.now() - takenAt, 'completed');
            // Taken by a sweeper while this worker stalled: its job lands it.
            if (!outcome) return void owned.delete(entry);
            if (!ending.length) setImmediate(endLanded);
            ending.push({ entry, batchId: job.batchId });
          },
          async (err: Error) => {
            release(entry);
            queues.observeUnqueued(INGEST_QUEUE, 0, Date.now() - takenAt, 'retry');
            await handBack(entry, job.batchId, 'ingest batch failed; queued, will retry', err);
          },
        );
        inFlight.add(run);
        void run.finally(() => inFlight.delete(run));
      },
    };
    const renewing = setInterval(
      () => {
        if (!held.size) return;
        journal.renew([...held.keys()], leaseMs).catch(() => {});
      },
      Math.min(RENEW_EVERY_MS, leaseMs / 4),
    );
    renewing.unref();
    let sweeping: Promise<void> | undefined;
    const sweep = async () => {
      const entries = await journal.sweep(RETAKE_AFTER_MS);
      const queued: string[] = [];
      for (const entry of entries) {
        const batch = batchOfEntry(opts.redisPrefix, entry);
        // A malformed entry is nobody's batch: it leaves the journal.
        if (batch) await ingestQueue().add('batch', batch, jobOptions(batch.batchId));
        queued.push(entry);
      }
      await journal.recoveredQueued(queued);
      if (queued.length) log.warn({ batches: queued.length }, 'ingest: batches of a worker that is gone were queued to be tried again');
    };
    const sweeper = setInterval(() => {
      sweeping ??= sweep()
        .catch((err: Error) => log.warn({ err: err.message }, 'ingest: the journal could not be swept'))
        .finally(() => (sweeping = undefined));
    }, opts.sweepEveryMs ?? SWEEP_EVERY_MS);
    sweeper.unref();
    const detach = attach(sink);
    return {
      async close() {
        detach();
        closed = true;
        clearInterval(sweeper);
        for (const commit of commits.values()) commit.hurry();
        evaluations.hurry();
        // As long as a queue worker is given to finish its job; a batch still landing past that keeps its entry,
        // whose lease lapses: a sweeper queues it and the retry finds what was stored.
        let timer: NodeJS.Timeout | undefined;
        const inTime = await Promise.race([
          Promise.allSettled([...inFlight]).then(() => true),
          new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), WORKER_CLOSE_GRACE_MS))),
        ]);
        clearTimeout(timer);
        if (!inTime)
          log.warn({ batches: inFlight.size, graceMs: WORKER_CLOSE_GRACE_MS }, 'ingest: batches still landing as the worker closed; they will be swept');
        clearInterval(renewing);
        await sweeping;
        if (ending.length) endLanded();
        await leaving;
      },
    };
  }
}
