/** Messages between the bench (bench/run.ts) and the service under test (bench/service.ts). */
export type FloorRequest =
  | { kind: 'report'; segment: string; accountId: string; checkId: string; query: string }
  | { kind: 'summary'; accountId: string; checkIds: string[]; quickRange: string }
  /** A page of error groups (100) of the account or one check: from the view, or grouped from the runs by its query. */
  | { kind: 'errorGroups'; accountId: string; checkId?: string; source: 'view' | 'runs' };

export type ServiceMessage =
  | { type: 'floor'; request: FloorRequest; runs: number }
  | { type: 'saturate'; request: FloorRequest; concurrency: number; seconds: number }
  /** Stored rows, of one check when named (heartbeat misses and other checks' runs land meanwhile). */
  | { type: 'state'; checkId?: string }
  /**
   * What a sampler reads every second or two while the service is measured: the queue, the memory and the runners'
   * figures, without the two statements `state` asks the embedded engine (the rows stored, its memory tracker): each
   * costs the engine about 2 ms of CPU however small, which a 3,000-check minute would count as its own.
   */
  | { type: 'sample' }
  /** The service's memory; with `gc`, after a full garbage collection (what live objects hold, not garbage not yet collected). */
  | { type: 'memory'; gc?: boolean }
  | { type: 'settle' }
  /** Answers once the service has given back its start-up memory (one full collection, START_SETTLE_MS after it listens). */
  | { type: 'startSettled' }
  /** The report cache's figures; `markDays` turns ingest's marking of days on or off first (the cache stays on). */
  | { type: 'reportCache'; markDays?: boolean }
  /** Every stored run of the account started in [from, to) (epoch ms): for the runner bench's slot accounting. */
  | { type: 'runs'; accountId: string; from: number; to: number }
  /**
   * Starts a CPU profile of the service's process, or stops it and writes it (a .cpuprofile) to `file`. With
   * `allocations`, V8's allocation sampler runs beside it, counting garbage collected meanwhile too (what was
   * allocated, not what is held), and stopping writes it to `file` with `.heapprofile` for `.cpuprofile`.
   */
  | { type: 'profile'; action: 'start'; allocations?: boolean }
  | { type: 'profile'; action: 'stop'; file: string };

export interface Memory {
  rssBytes: number;
  peakRssBytes: number;
  /** RSS of anonymous memory (heaps, stacks) and of mapped files (the engine's library code, parts read by mmap). */
  rssAnonBytes: number;
  rssFileBytes: number;
  /** V8's heap in use and reserved, and memory of JavaScript objects held outside it (buffers). */
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
}

export interface QueueState {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldestWaitingSeconds: number;
  acceptedResults: number;
}

/** What the service tells of itself without asking the engine. */
export interface Sample {
  queue: QueueState;
  /** The end of the range an hourly rollup tick is rolling now. */
  rollingTo?: number;
  /** Inserts ingest made since the service started. */
  ingestInserts?: number;
  /** Scheduled runs' check definitions since the start, by where they came from (kept, read). */
  definitions?: Record<string, number>;
}

export type ServiceReply =
  | { type: 'floor'; sql: string; wallMs: number[]; engineMs: number[]; rowsRead: number }
  | { type: 'saturate'; queries: number; seconds: number }
  /** `engineBytes`: the embedded engine's own memory tracker (system.metrics MemoryTracking). */
  | ({
      type: 'state';
      rows: number;
      engineBytes: number;
    } & Sample &
      Memory)
  | ({ type: 'sample' } & Sample & Memory)
  | ({ type: 'memory' } & Memory)
  | { type: 'settle' }
  | { type: 'startSettled' }
  | { type: 'reportCache'; markDays: boolean; stats: ReportCacheStats }
  | { type: 'runs'; runs: { checkId: string; startedAt: number; failed: boolean }[] }
  | { type: 'profile' };

export interface ReportCacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
}
