import { RESULT_DETAIL_KEYS } from './checks.js';
import type { WrittenRows } from './json-bytes.js';
import type { Run } from './runs.js';
/**
 * What a result is on its way into ClickHouse, shared by everything that makes or reads results (ingest, the
 * runners, heartbeats, seeding, analytics): the stored columns, the positional row, the queued batch.
 */

/** Every optional metric: where it sits in a result item, and its column. One table for both directions. */
export const METRIC_COLUMNS: ReadonlyArray<readonly [group: 'timings' | 'webVitals' | null, field: string, column: string]> = [
  [null, 'responseTime', 'response_time'],
  [null, 'statusCode', 'status_code'],
  ['timings', 'wait', 'timing_wait'],
  ['timings', 'dns', 'timing_dns'],
  ['timings', 'tcp', 'timing_tcp'],
  ['timings', 'firstByte', 'timing_first_byte'],
  ['timings', 'download', 'timing_download'],
  ['timings', 'total', 'timing_total'],
  ['timings', 'connection', 'timing_connection'],
  ['timings', 'data', 'timing_data'],
  ['webVitals', 'TTFB', 'ttfb'],
  ['webVitals', 'FCP', 'fcp'],
  ['webVitals', 'LCP', 'lcp'],
  ['webVitals', 'CLS', 'cls'],
  ['webVitals', 'TBT', 'tbt'],
  ['webVitals', 'consoleErrors', 'console_errors'],
  ['webVitals', 'networkErrors', 'network_errors'],
  ['webVitals', 'userScriptErrors', 'user_script_errors'],
  ['webVitals', 'documentErrors', 'document_errors'],
  [null, 'packetLoss', 'packet_loss'],
  [null, 'latencyMin', 'latency_min'],
  [null, 'latencyMax', 'latency_max'],
  [null, 'latencyAvg', 'latency_avg'],
  [null, 'latencyStdDev', 'latency_stddev'],
  [null, 'handshakeTimeMs', 'ssl_handshake_time'],
  [null, 'daysUntilExpiry', 'ssl_days_until_expiry'],
  [null, 'hopCount', 'hop_count'],
  [null, 'finalHopLatency', 'final_hop_latency'],
  [null, 'grpcStatusCode', 'grpc_status_code'],
];

/** The metric columns of check_results, in table order. */
export const METRIC_COLUMN_NAMES = METRIC_COLUMNS.map(([, , column]) => column);

/** The column holding a run's per-type result objects as JSON ('' when it reported none). */
export const DETAIL_COLUMN = 'detail';

/** The per-type result objects a run may carry (`apiCheckResult`, …), stored together in DETAIL_COLUMN: one key per type, in CHECK_TYPE_FACTS. */
export { RESULT_DETAIL_KEYS, type ResultDetailKey } from './checks.js';

/** The most JSON a run's detail may hold; a larger one is cut (boundDetail) by whoever made it. */
export const MAX_DETAIL_BYTES = 64 * 1024;

/** A cheap upper estimate of an object's JSON size, stopping once it passes `limit` (no string is built). */
export function estimate(value: unknown, limit: number, depth = 0): number {
  if (value === null || value === undefined) return 4;
  if (typeof value === 'string') return value.length * 3 + 2;
  if (typeof value !== 'object') return 24;
  if (depth > 64) return limit + 1;
  let n = 2;
  if (Array.isArray(value)) {
    for (const v of value) if ((n += estimate(v, limit, depth + 1) + 1) > limit) return n;
    return n;
  }
  // Keys walked without Object.entries' [key, value] pair each (the largest part of a run's garbage).
  const object = value as Record<string, unknown>;
  for (const k in object) {
    if (!Object.hasOwn(object, k)) continue;
    if ((n += k.length * 3 + 4 + estimate(object[k], limit, depth + 1)) > limit) return n;
  }
  return n;
}

/** `value` with strings cut to `text` characters, arrays and objects to `items` entries, nesting to 16 levels. */
function cut(value: unknown, text: number, items: number, depth = 0): unknown {
  if (typeof value === 'string') return value.length > text ? `${value.slice(0, text)} … (cut at ${text} characters)` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 16) return null;
  if (Array.isArray(value)) return value.slice(0, items).map((v) => cut(v, text, items, depth + 1));
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const [k, v] of Object.entries(value)) {
    // A run's kept files stay listed whole: each names a stored blob.
    if (k === 'assets' && Array.isArray(v)) out[k] = v;
    else if (kept++ < items) out[k] = cut(v, text, items, depth + 1);
  }
  return out;
}

const CUTS = [
  { text: 16_384, items: 1000 },
  { text: 4096, items: 200 },
  { text: 1024, items: 50 },
  { text: 256, items: 20 },
  { text: 64, items: 5 },
];

/**
 * A run's result objects within MAX_DETAIL_BYTES of JSON, whatever the tenant's script or target put in them (a
 * setup script's 20 MB request body, 2,000 headers, megabytes of console or step titles): strings, lists and
 * objects are cut, tighter and tighter, until it fits; each result object cut says `detailCut: true`. A detail
 * that fits is returned as it is (a cheap size estimate decides, no JSON is built).
 */
export function boundDetail(detail: Record<string, unknown>, maxBytes = MAX_DETAIL_BYTES): Record<string, unknown> {
  if (estimate(detail, maxBytes) <= maxBytes) return detail;
  for (const { text, items } of CUTS) {
    const bounded = cut(detail, text, items) as Record<string, unknown>;
    for (const [k, v] of Object.entries(bounded)) if (v && typeof v === 'object' && !Array.isArray(v)) bounded[k] = { ...v, detailCut: true };
    if (Buffer.byteLength(JSON.stringify(bounded)) <= maxBytes) return bounded;
  }
  // Nothing fits (a detail of thousands of kept files): only that it was cut.
  return Object.fromEntries(Object.keys(detail).map((k) => [k, { detailCut: true }]));
}

/** Columns of an inserted row, in the positional order of `ResultRow` (JSONCompactEachRow). */
export const ROW_COLUMNS = [
  'account_id',
  'check_id',
  'check_type',
  'result_id',
  'started_at',
  'stopped_at',
  'run_location',
  'has_failures',
  'has_errors',
  'is_degraded',
  'aborted',
  'attempts',
  ...METRIC_COLUMNS.map(([, , column]) => column),
  DETAIL_COLUMN,
] as const;

export type ResultRow = (string | number | boolean | null)[];

export const INGEST_QUEUE = 'check-results';

/** The layout of a queued batch; a worker refuses a version it does not know instead of guessing. */
export const JOB_VERSION = 2;

/**
 * A queued batch, self-describing: `rows` are positional in the order `columns` names, so a worker of
 * another version reads them by name or refuses them, and never pairs values with the wrong columns.
 */
export interface IngestJob {
  v: number;
  batchId: string;
  accountId: string;
  columns: readonly string[];
  rows: ResultRow[];
  /**
   * By result id, the span (epoch ms) in which another run with the same id may have started: a scheduled run's
   * id is its check's, slot's and location's, and a second run of that slot (a catch-up after a restart, a
   * result an agent made while cut off) starts at another time within it. Ingest looks for it there.
   */
  spans?: Record<string, [number, number]>;
  /**
   * Every run id of the batch was made by the service when it accepted the batch (random UUIDs, none a client
   * gave): no other batch can hold one, and until this batch is first tried none is stored, so its first try
   * skips deduplication. A later try (after a crash or a failed insert) looks for what an earlier one stored.
   */
  idsMinted?: true;
}

const KNOWN_COLUMNS = new Set<string>(ROW_COLUMNS);

/** The job's columns when a worker of this version can read them; otherwise the reason it cannot, for the failed set. */
export function readableLayout(job: Partial<IngestJob>): { columns: readonly string[] } | { problem: string } {
  if (job.v !== JOB_VERSION) return { problem: `job layout version ${String(job.v)} is not ${JOB_VERSION}, the one this worker reads` };
  const columns = job.columns;
  if (!Array.isArray(columns) || !Array.isArray(job.rows)) return { problem: 'job has no columns or rows' };
  const unknown = columns.filter((c) => !KNOWN_COLUMNS.has(c));
  if (unknown.length) return { problem: `job names columns this worker does not know: ${unknown.join(', ')}` };
  for (const required of ['account_id', 'check_id', 'result_id', 'started_at']) {
    if (!columns.includes(required)) return { problem: `job lacks the ${required} column` };
  }
  if (job.rows.some((row) => !Array.isArray(row) || row.length !== columns.length)) return { problem: 'a row does not match the job columns' };
  return { columns };
}

export function ingestJob(batchId: string, accountId: string, rows: ResultRow[], spans?: Record<string, [number, number]>, idsMinted = false): IngestJob {
  return {
    v: JOB_VERSION,
    batchId,
    accountId,
    columns: ROW_COLUMNS,
    rows,
    ...(spans && Object.keys(spans).length ? { spans } : {}),
    ...(idsMinted ? { idsMinted: true as const } : {}),
  };
}

/**
 * Where another run of a scheduled slot may have started: from a minute before the slot (a clock behind) to a
 * period (at least a minute) and ten minutes past it.
 */
export function slotSpan(slot: number, periodMs: number | undefined): [number, number] {
  return [slot - 60_000, slot + Math.max(60_000, periodMs ?? 60_000) + 600_000];
}

/** Depth and lag of the result queue, for /ready and /metrics. */
export interface ResultQueueStats {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldestWaitingSeconds: number;
  acceptedResults: number;
}

/** Where results go to be stored: the ingest queue. Features that record runs depend on this, not on ingest. */
export interface ResultQueue {
  enqueue(job: IngestJob): Promise<void>;
  stats(): Promise<ResultQueueStats>;
  /**
   * For an ingest worker in the same process: from now on the batches this process enqueues are also kept in
   * memory for a short while, and the function returned takes one by its batch id (or answers undefined: another
   * process's batch, an old one, a retry). Redis still holds every batch; this only spares the worker reading back
   * and parsing what its own process just wrote.
   */
  handOff?(options?: HandOffOptions): (batchId: string) => HeldBatch | undefined;
  /**
   * For an ingest worker in the same process: from now on a batch this process enqueues goes to `sink` itself, with
   * no queued job, whenever the sink has room for it. It is still in Redis before `enqueue` resolves (its rows, its
   * count, and its entry in the ingest journal, in one round trip), so a process that dies with it is recovered from
   * there. Returns the function that detaches the sink.
   */
  direct?(sink: DirectSink, options?: HandOffOptions): () => void;
}

/** An ingest worker of the producer's own process, taking batches straight from it (ResultQueue.direct). */
export interface DirectSink {
  /** How long its journal entry holds a batch before a sweeper may take it back (the worker renews it meanwhile). */
  readonly leaseMs: number;
  /** Who it is, in its journal entries (a UUID): a batch handed over again is given back only to the worker holding it. */
  readonly owner: string;
  /** Whether it would take a batch of so many rows and bytes of JSON now (it holds at most so much in flight). */
  room(rows: number, bytes: number): boolean;
  /**
   * The batch, recorded in Redis under its journal entry (which the sink renews and removes): the sink lands it, or
   * queues it to be tried again, or leaves it to be recovered. `again`: a first try recorded it and its reply was
   * lost, so it may be held elsewhere too: what was stored is looked for before its rows go in.
   */
  take(batch: HeldBatch, entry: string, again?: boolean): void;
}

/**
 * A batch its producer kept in memory: its job without the rows, the runs read from them, and the JSON they were
 * written in (the insert copies it). The rows themselves are not kept: a batch waits for its insert through several
 * of V8's young-generation collections, each of which copies what it holds, and a thousand rows' arrays, strings and
 * numbers are about three times its runs.
 */
export interface HeldBatch {
  job: Omit<IngestJob, 'rows'>;
  /** Every run of the batch, in row order (runsOf). */
  runs: Run[];
  written: WrittenRows;
  /** The rows as values, when the worker asked for them (HandOffOptions.withRows). */
  rows?: ResultRow[];
}

export interface HandOffOptions {
  /**
   * Keep each batch's rows as values too: for a worker whose store takes values (the server backend's client encodes
   * rows itself), which would otherwise read every row back from its bytes.
   */
  withRows?: boolean;
}

/**
 * What the ingest queue's job carries: the batch itself (its columns and rows) is kept beside it in Redis under
 * `payloadKey`, as one JSON text, so the queue's own scripts move a few hundred bytes instead of the rows. Jobs of
 * an older producer carry the whole IngestJob instead (`rows` inline); a worker reads both.
 */
export interface QueuedBatch {
  batchId: string;
  accountId: string;
  /** How many results the batch holds (for logs and the failed set). */
  results: number;
  payloadKey: string;
  idsMinted?: true;
  /**
   * Tried before, by a worker that took it from its producer's process (ResultQueue.direct) and failed, or died
   * with it: whatever it stored is looked for before its rows go in again.
   */
  retried?: true;
}

/** A file a browser or multi-step run kept in the blob store (its result's `assets`). */
export interface KeptAsset {
  type: 'screenshot' | 'trace' | 'video';
  /** Unique within the result: its download route's last segment. */
  name: string;
  contentType: string;
  /** The blob store key. */
  key: string;
  size: number;
}

/** Each kind of kept file: its content type and the blob kind (key prefix and extension) it is stored under. */
export const KEPT_ASSET_KINDS = {
  screenshot: { contentType: 'image/png', key: /^screenshots\/[0-9a-f]{64}\.png$/ },
  trace: { contentType: 'application/zip', key: /^traces\/[0-9a-f]{64}\.zip$/ },
  video: { contentType: 'video/webm', key: /^videos\/[0-9a-f]{64}\.webm$/ },
} as const;

/**
 * Why `asset` is not a kept file's description as a run writes it, or null when it is: a known type with its own
 * content type and blob key, a name of at most 200 letters, digits, `.`, `_` and `-`, a size. What a client posts
 * under `assets` is held to this (a CR/LF in a content type would break the download's headers).
 */
export function keptAssetProblem(asset: unknown): string | null {
  if (!asset || typeof asset !== 'object' || Array.isArray(asset)) return 'is not an object';
  const a = asset as Record<string, unknown>;
  const extra = Object.keys(a).filter((k) => !['type', 'name', 'contentType', 'key', 'size'].includes(k));
  if (extra.length) return `has unknown properties: ${extra.slice(0, 5).join(', ')}`;
  const kind = typeof a.type === 'string' ? KEPT_ASSET_KINDS[a.type as keyof typeof KEPT_ASSET_KINDS] : undefined;
  if (!kind) return 'type must be screenshot, trace or video';
  if (a.contentType !== kind.contentType) return `contentType must be ${kind.contentType} for a ${a.type as string}`;
  if (typeof a.key !== 'string' || !kind.key.test(a.key)) return `key must be a ${a.type as string} blob key`;
  if (typeof a.name !== 'string' || !/^[A-Za-z0-9._-]{1,200}$/.test(a.name)) return 'name must be 1-200 letters, digits, ".", "_" or "-"';
  if (!Number.isSafeInteger(a.size) || (a.size as number) < 0) return 'size must be a whole number of bytes';
  return null;
}

/**
 * What is wrong with the kept files the result objects of `detail` list: each problem with where it is (`key.assets[j]`)
 * and why; none is []. A list is at most 100 files, each held to keptAssetProblem, no name twice.
 */
export function keptAssetsProblems(detail: Record<string, unknown>): { at: string; rule: 'assets' | 'asset'; why: string }[] {
  const problems: { at: string; rule: 'assets' | 'asset'; why: string }[] = [];
  for (const key in detail) {
    if (!Object.hasOwn(detail, key)) continue;
    const assets = (detail[key] as { assets?: unknown } | null)?.assets;
    if (assets === undefined || assets === null) continue;
    if (!Array.isArray(assets) || assets.length > 100) {
      problems.push({ at: `${key}.assets`, rule: 'assets', why: 'must be a list of at most 100 kept files' });
      continue;
    }
    const names = new Set<string>();
    assets.forEach((asset, j) => {
      const why = keptAssetProblem(asset) ?? (names.has((asset as { name: string }).name) ? 'repeats the name of another file' : null);
      names.add((asset as { name?: string })?.name ?? '');
      if (why) problems.push({ at: `${key}.assets[${j}]`, rule: 'asset', why });
    });
  }
  return problems;
}

/** The result objects of runs that keep files (browser, multi-step, Playwright check suites). */
export const ASSET_DETAIL_KEYS = ['browserCheckResult', 'multiStepCheckResult', 'playwrightCheckResult'] as const;

/** The files a result's run kept (none for other types and for results posted without them). */
export function keptAssetsOf(item: Record<string, unknown>): KeptAsset[] {
  for (const key of ASSET_DETAIL_KEYS) {
    const detail = item[key] as { assets?: unknown } | null | undefined;
    if (detail && Array.isArray(detail.assets)) return detail.assets as KeptAsset[];
  }
  return [];
}

/** The trace id a run's requests carried (docs/traces.md), kept in its per-type result object; null without one. */
export function traceIdOfRun(run: Record<string, unknown>): string | null {
  for (const key of RESULT_DETAIL_KEYS) {
    const detail = run[key] as { traceId?: unknown } | null | undefined;
    if (detail && typeof detail.traceId === 'string' && /^[0-9a-f]{32}$/.test(detail.traceId)) return detail.traceId;
  }
  return null;
}
