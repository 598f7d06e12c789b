import { DAY_MS, Generations } from '../storage/generations.js';
import type { ReportRow } from './compiler.js';
import { rollupHorizon } from './rollups.js';
import { HOUR_MS, type Window } from './windows.js';

/**
 * Closed buckets of bucketed reports, kept in this process (docs/analytics.md, "Report cache"). A report's window
 * splits into its open edges (the partial first bucket, and everything from the last closed bucket on), computed
 * live, and its whole closed buckets, answered from here when the versions of the days each covers
 * (storage/generations.ts, bumped by ingest after every landed batch) are the ones it was read at. Missing or
 * stale buckets are read in one query per contiguous run. A bucket is the rows of every series in it, so a
 * bucket without runs is known to be empty. Memory is bounded (least recently used go first).
 */

/** A moving bound of a window as it was read (`at`), and the furthest it may move with the same runs inside. */
export interface Bound {
  at: number;
  until: number;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  hits: number;
  misses: number;
}

interface Entry {
  version: string;
  rows: ReportRow[];
  bytes: number;
  /** An open edge's (or a whole window's): each moving bound as it was read, and how far it may move (Edge). */
  bounds?: Bound[];
  /** What the entry's reader needs to know before it can ask for the versions (a raw page's days). */
  meta?: unknown;
}

export class BucketCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  /** Reads under way, by the keys they will set: a request missing the same entry waits for it instead of reading too. */
  private readonly reads = new Map<string, Promise<void>>();

  constructor(readonly maxBytes: number) {}

  /**
   * The reads under way of any of `keys`, to wait for; undefined (synchronously) when there are none, so that a
   * caller finding none marks its own read before anything else runs.
   */
  readsOf(keys: readonly string[]): Promise<unknown> | undefined {
    const pending = [...new Set(keys.map((k) => this.reads.get(k)).filter((p): p is Promise<void> => p !== undefined))];
    return pending.length ? Promise.all(pending) : undefined;
  }

  /** Marks a read of `keys` under way until the returned function is called (whatever the read's outcome). */
  beginRead(keys: readonly string[]): () => void {
    let done!: () => void;
    const promise = new Promise<void>((resolve) => (done = resolve));
    for (const k of keys) this.reads.set(k, promise);
    return () => {
      for (const k of keys) if (this.reads.get(k) === promise) this.reads.delete(k);
      done();
    };
  }

  /** The rows kept under `key` at `version`; for an open edge, while each `moving` bound is within the one it was kept with. */
  get(key: string, version: string, moving: readonly number[] = []): ReportRow[] | undefined {
    const entry = this.entries.get(key);
    const bounds = entry?.bounds ?? [];
    const outside = bounds.length !== moving.length || bounds.some((b, i) => moving[i]! < b.at || moving[i]! > b.until);
    if (!entry || entry.version !== version || outside) {
      this.misses++;
      return undefined;
    }
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry.rows;
  }

  /** The entry's `meta`, unchecked (to learn which versions to read before `get`). */
  peek(key: string): unknown {
    return this.entries.get(key)?.meta;
  }

  set(key: string, version: string, rows: ReportRow[], bounds?: Bound[], meta?: unknown): void {
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.bytes;
      this.entries.delete(key);
    }
    // What the rows weigh in memory, roughly: their JSON text twice over (UTF-16), and the key.
    const bytes = 2 * (JSON.stringify(rows).length + key.length) + 64;
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { version, rows, bytes, bounds, meta });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }

  stats(): CacheStats {
    return { entries: this.entries.size, bytes: this.bytes, maxBytes: this.maxBytes, hits: this.hits, misses: this.misses };
  }
}

/** The most days of versions one cached answer reads (a longer window is answered live). */
export const MAX_DAYS = 800;

export interface CachedRows {
  rows: ReportRow[];
  /** Closed buckets and open edges answered from the cache, and read now. */
  hits: number;
  misses: number;
  /** What the reads made now read (rollup tiers), for X-Analytics-Sources. */
  tiers: string[];
}

/**
 * An open edge of a window: the partial first bucket [window.from, first), whose start moves with a rolling
 * window, or everything from the last closed bucket on [closedEnd, window.to), whose end moves. Its rows stay
 * what they were read as while no batch lands on its days (the versions) and the moving bound crosses no run:
 * the bound may move from where it was read (`at`) up to the first run at or after it (`until`), a run the
 * edge then still holds (the start) or does not yet hold (the end).
 */
interface Edge {
  kind: 'lead' | 'trail';
  range: Window;
  /** The bound that moves, and the days whose versions the entry is read at. */
  moving: number;
  fromDay: number;
  toDay: number;
  /** Undefined: not cached (an end past the days whose versions are read). */
  cacheKey?: string;
}

/**
 * Every row of a bucketed report's window (all series, all buckets; not paged), the closed buckets and the open
 * edges from the cache where they are current. Undefined when the window holds fewer than two closed buckets:
 * the caller answers it live as it is. `compute` reads one window (whole buckets inside it) and says which tiers
 * it read; `firstRuns` says, for each range, when its first run started (any status), or null.
 */
export async function bucketedRows(opts: {
  cache: BucketCache;
  generations: Generations;
  /** Everything the rows depend on but the window: catalog, check, metrics, interval, group, filter, precision. */
  key: string;
  checkId: string;
  window: Window;
  bucketMs: number;
  now: number;
  /** A bucket is closed this long after its end (fewer rewrites of buckets still filling). */
  closeAfterMs: number;
  /** Reads a window (or only `ranges` of it: the open edges, in one query). */
  compute: (window: Window, ranges?: Window[]) => Promise<{ rows: ReportRow[]; tiers: string[] }>;
  firstRuns: (ranges: Window[]) => Promise<(number | null)[]>;
}): Promise<CachedRows | undefined> {
  const { window, bucketMs } = opts;
  const first = Math.ceil(window.from / bucketMs) * bucketMs;
  const closedEnd = Math.floor(Math.min(window.to, opts.now - opts.closeAfterMs) / bucketMs) * bucketMs;
  if (closedEnd - first < 2 * bucketMs) return undefined;
  const day = (ms: number) => Math.floor(ms / DAY_MS);
  const edges: Edge[] = [];
  if (window.from < first) {
    edges.push({ kind: 'lead', range: { from: window.from, to: first }, moving: window.from, fromDay: day(first - bucketMs), toDay: day(first - 1) });
  }
  if (closedEnd < window.to) {
    // The days a trailing edge can reach while its key (closedEnd) stays: one bucket and the closing delay on.
    const toDay = day(closedEnd + bucketMs + opts.closeAfterMs) + 1;
    edges.push({ kind: 'trail', range: { from: closedEnd, to: window.to }, moving: window.to, fromDay: day(closedEnd), toDay });
  }
  const fromDay = Math.min(day(first), ...edges.map((e) => e.fromDay));
  const toDay = Math.max(day(closedEnd - 1), ...edges.map((e) => e.toDay));
  if (toDay - fromDay + 1 > MAX_DAYS) return undefined;
  // Versions first, then the reads: a batch landing meanwhile leaves what we keep stale, never the reverse.
  const { epoch, days } = await opts.generations.read(opts.checkId, fromDay, toDay);
  const versionOf = (d0: number, d1: number) => Generations.versionOf(epoch, days, d0, d1);
  const bucketVersion = (b: number) => versionOf(day(b), day(b + bucketMs - 1));
  // All the closed buckets of this window at once, while no batch landed on any of their days (the sum of those
  // days' versions): one lookup instead of one per bucket (30 days of hours: 720).
  const allClosedKey = `${opts.key}|closed|${first}|${closedEnd}`;
  const allClosedVersion = versionOf(day(first), day(closedEnd - 1));
  const allClosed = opts.cache.get(allClosedKey, allClosedVersion);
  const closed = new Map<number, ReportRow[] | undefined>();
  let hits = 0;
  if (allClosed) hits = (closedEnd - first) / bucketMs;
  else {
    for (let b = first; b < closedEnd; b += bucketMs) {
      const rows = opts.cache.get(`${opts.key}|${b}`, bucketVersion(b));
      closed.set(b, rows);
      if (rows) hits++;
    }
  }
  const edgeRows = new Map<Edge, ReportRow[]>();
  for (const edge of edges) {
    if (edge.kind === 'trail' && window.to > (edge.toDay + 1) * DAY_MS) continue;
    // With the hour its moving bound is in, and the rollups' horizon's: which rollup hours the edge reads
    // (planSources) stay the same.
    const hour = edge.kind === 'lead' ? Math.ceil(edge.moving / HOUR_MS) : Math.floor(edge.moving / HOUR_MS);
    edge.cacheKey = `${opts.key}|${edge.kind}|${edge.kind === 'lead' ? edge.range.to : edge.range.from}|${hour}|${Math.floor(rollupHorizon() / HOUR_MS)}`;
    const rows = opts.cache.get(edge.cacheKey, versionOf(edge.fromDay, edge.toDay), [edge.moving]);
    if (rows) {
      edgeRows.set(edge, rows);
      hits++;
    }
  }
  // What another request is reading now: wait for it, then take it if current (an edge: if it covers this bound).
  const waiting = edges.filter((e) => e.cacheKey && !edgeRows.has(e));
  const bucketKey = (b: number) => `${opts.key}|${b}`;
  const missingBuckets = [...closed].filter(([, rows]) => !rows).map(([b]) => b);
  const underWay = opts.cache.readsOf([...waiting.map((e) => e.cacheKey!), ...missingBuckets.map(bucketKey)]);
  if (underWay) {
    await underWay;
    for (const b of missingBuckets) {
      const rows = opts.cache.get(bucketKey(b), bucketVersion(b));
      if (rows) {
        closed.set(b, rows);
        hits++;
      }
    }
    for (const edge of waiting) {
      const rows = opts.cache.get(edge.cacheKey!, versionOf(edge.fromDay, edge.toDay), [edge.moving]);
      if (rows) {
        edgeRows.set(edge, rows);
        hits++;
      }
    }
  }
  // Missing buckets in contiguous runs, each read with one query.
  const runs: Window[] = [];
  for (const [b, rows] of closed) {
    if (rows) continue;
    const last = runs[runs.length - 1];
    if (last && last.to === b) last.to = b + bucketMs;
    else runs.push({ from: b, to: b + bucketMs });
  }
  // Too many holes: one read from the first to the last.
  const reads = runs.length > 4 ? [{ from: runs[0]!.from, to: runs[runs.length - 1]!.to }] : runs;
  const open = edges.filter((e) => !edgeRows.has(e));
  const cacheable = open.filter((e) => e.cacheKey);
  // The open edges in one read (the primary key reads both ranges), the closed holes one read each; with the
  // edges' first runs at or after their moving bounds (how far the bound may move), when they are to be kept.
  const readBuckets = [...closed].filter(([, rows]) => !rows).map(([b]) => bucketKey(b));
  const release = opts.cache.beginRead([...cacheable.map((e) => e.cacheKey!), ...readBuckets]);
  const tiers = new Set<string>();
  try {
    const [edgeRead, starts, ...results] = await Promise.all([
      open.length
        ? opts.compute({ from: open[0]!.range.from, to: open[open.length - 1]!.range.to }, open.length > 1 ? open.map((e) => e.range) : undefined)
        : undefined,
      cacheable.length ? opts.firstRuns(cacheable.map((e) => (e.kind === 'lead' ? e.range : { from: e.moving, to: (e.toDay + 1) * DAY_MS }))) : [],
      ...reads.map((w) => opts.compute(w)),
    ]);
    edgeRead?.tiers.forEach((t) => tiers.add(t));
    if (edgeRead) {
      for (const edge of open) {
        const rows = edgeRead.rows.filter((r) => Number(r.b) >= edge.range.from - (edge.range.from % bucketMs) && Number(r.b) < edge.range.to);
        edgeRows.set(edge, rows);
        const i = cacheable.indexOf(edge);
        if (i < 0) continue;
        const until = starts[i] ?? (edge.kind === 'lead' ? edge.range.to : (edge.toDay + 1) * DAY_MS);
        opts.cache.set(edge.cacheKey!, versionOf(edge.fromDay, edge.toDay), rows, [{ at: edge.moving, until }]);
      }
    }
    results.forEach((result, i) => {
      result.tiers.forEach((t) => tiers.add(t));
      const w = reads[i]!;
      const byBucket = new Map<number, ReportRow[]>();
      for (const row of result.rows) {
        const b = Number(row.b);
        const list = byBucket.get(b);
        if (list) list.push(row);
        else byBucket.set(b, [row]);
      }
      for (let b = w.from; b < w.to; b += bucketMs) {
        if (closed.get(b) && runs.length <= 4) continue;
        const rows = byBucket.get(b) ?? [];
        closed.set(b, rows);
        opts.cache.set(`${opts.key}|${b}`, bucketVersion(b), rows);
      }
    });
  } finally {
    // What waited for these reads finds them kept now (or reads them itself).
    release();
  }
  // In bucket order: the leading edge, the closed buckets, the trailing edge.
  const buckets = (closedEnd - first) / bucketMs;
  let closedRows = allClosed;
  if (!closedRows) {
    closedRows = [];
    for (const bucket of closed.values()) if (bucket) for (const row of bucket) closedRows.push(row);
    // Kept at the versions read before the reads, as each bucket is (a batch landing meanwhile: stale, read again).
    opts.cache.set(allClosedKey, allClosedVersion, closedRows);
  }
  const lead = edges.find((e) => e.kind === 'lead');
  const trail = edges.find((e) => e.kind === 'trail');
  const leadRows = lead ? edgeRows.get(lead) : undefined;
  const trailRows = trail ? edgeRows.get(trail) : undefined;
  // The same kept parts as the last request's: the same rows (and pageOf's pages of them), not built again.
  const known = WINDOWS.get(closedRows);
  if (known && known.lead === leadRows && known.trail === trailRows)
    return { rows: known.rows, hits, misses: buckets + edges.length - hits, tiers: [...tiers] };
  const rows: ReportRow[] = [...(leadRows ?? [])];
  for (const row of closedRows) rows.push(row);
  if (trailRows) rows.push(...[...trailRows].sort((x, y) => Number(x.b) - Number(y.b)));
  WINDOWS.set(closedRows, { lead: leadRows, trail: trailRows, rows });
  return { rows, hits, misses: buckets + edges.length - hits, tiers: [...tiers] };
}

/** A window's rows by the kept closed rows they were made of, with the edges' kept rows (identities). */
const WINDOWS = new WeakMap<ReportRow[], { lead?: ReportRow[]; trail?: ReportRow[]; rows: ReportRow[] }>();

/** A raw page's entry: the first rows of the window from `from`, and whether they are all of it. */
interface RawMeta {
  from: number;
  to: number;
  fromDay: number;
  toDay: number;
  complete: boolean;
}

/** Rows kept beyond the page, so that a rolling window's start can move past some runs before the next read. */
const RAW_SPARE_ROWS = 1000;

/**
 * A page of raw rows (ordered by start, location, result id) from the report cache: the first rows of the window
 * are kept, `offset + limit` and RAW_SPARE_ROWS more, with the versions of the days they span. A later request
 * whose window starts no earlier and ends no earlier is answered from them while those versions hold and, after
 * the rows before its start are dropped, enough rows remain to fill its page; when the kept rows were all the
 * window held, its end must also stay before the next run (as an open edge's). Otherwise the rows are read again
 * with one query (`read`, at most `count` rows from the window's start) beside the first run after the window.
 */
export async function rawPage(opts: {
  cache: BucketCache;
  generations: Generations;
  key: string;
  checkId: string;
  window: Window;
  offset: number;
  limit: number;
  read: (count: number) => Promise<ReportRow[]>;
  firstRuns: (ranges: Window[]) => Promise<(number | null)[]>;
}): Promise<{ rows: ReportRow[]; hit: boolean }> {
  const { window, offset, limit } = opts;
  const day = (ms: number) => Math.floor(ms / DAY_MS);
  const key = `${opts.key}|raw|${day(window.from)}`;
  const page = (rows: ReportRow[]) => {
    // The first kept row at or after the window's start (rows are in start order).
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (Number(rows[mid]!.t) < window.from) lo = mid + 1;
      else hi = mid;
    }
    return rows.slice(lo);
  };
  const held = async () => {
    const meta = opts.cache.peek(key) as RawMeta | undefined;
    if (!meta || window.from < meta.from || window.to < meta.to) return undefined;
    const { epoch, days } = await opts.generations.read(opts.checkId, meta.fromDay, meta.toDay);
    const kept = opts.cache.get(key, Generations.versionOf(epoch, days, meta.fromDay, meta.toDay), meta.complete ? [window.to] : []);
    const rows = kept && page(kept);
    return rows && (meta.complete || rows.length >= offset + limit) ? rows.slice(offset, offset + limit).filter((r) => Number(r.t) < window.to) : undefined;
  };
  let rows = await held();
  // Another request reading these rows now: wait for it, then try them.
  const underWay = rows ? undefined : opts.cache.readsOf([key]);
  if (underWay) {
    await underWay;
    rows = await held();
  }
  if (rows) return { rows, hit: true };
  // Read again: versions first (of the days the window may hold), then the rows.
  const fromDay = day(window.from);
  const lastDay = day(window.to) + 1;
  if (lastDay - fromDay + 1 > MAX_DAYS) return { rows: (await opts.read(offset + limit)).slice(offset), hit: false };
  const release = opts.cache.beginRead([key]);
  try {
    const { epoch, days } = await opts.generations.read(opts.checkId, fromDay, lastDay);
    const count = offset + limit + RAW_SPARE_ROWS;
    const after = { from: window.to, to: (lastDay + 1) * DAY_MS };
    const [read, [next]] = await Promise.all([opts.read(count), opts.firstRuns([after])]);
    const complete = read.length < count;
    // The days the kept rows span (all of the window's when they are all of it).
    const toDay = complete ? lastDay : day(Number(read[read.length - 1]!.t));
    const meta: RawMeta = { from: window.from, to: window.to, fromDay, toDay, complete };
    opts.cache.set(key, Generations.versionOf(epoch, days, fromDay, toDay), read, complete ? [{ at: window.to, until: next ?? after.to }] : [], meta);
    return { rows: read.slice(offset, offset + limit), hit: false };
  } finally {
    release();
  }
}

/** ClickHouse's order of a series key: by value, NULL last. */
function compareKeys(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : 1;
}

/**
 * The page of rows the report query would answer: ordered by series and bucket, `limit` per series from `offset`.
 * One pass when the rows come in bucket order (as bucketedRows gives them).
 */
export function pageOf(rows: ReportRow[], grouped: boolean, limit: number, offset: number): ReportRow[] {
  // Rows are never changed once made: a page of the same rows is the same page.
  const key = `${grouped}|${limit}|${offset}`;
  const pages = PAGES.get(rows);
  const known = pages?.get(key);
  if (known) return known;
  const page = cutPage(rows, grouped, limit, offset);
  if (pages) pages.set(key, page);
  else PAGES.set(rows, new Map([[key, page]]));
  return page;
}

const PAGES = new WeakMap<ReportRow[], Map<string, ReportRow[]>>();

function cutPage(rows: ReportRow[], grouped: boolean, limit: number, offset: number): ReportRow[] {
  let ordered = true;
  for (let i = 1; i < rows.length && ordered; i++) ordered = Number(rows[i - 1]!.b) <= Number(rows[i]!.b);
  const byBucket = ordered ? rows : [...rows].sort((x, y) => Number(x.b) - Number(y.b));
  if (!grouped) return byBucket.slice(offset, offset + limit);
  const series = new Map<unknown, { seen: number; page: ReportRow[] }>();
  for (const row of byBucket) {
    let s = series.get(row.g);
    if (!s) series.set(row.g, (s = { seen: 0, page: [] }));
    if (s.seen >= offset && s.seen < offset + limit) s.page.push(row);
    s.seen++;
  }
  return [...series.keys()].sort(compareKeys).flatMap((g) => series.get(g)!.page);
}
