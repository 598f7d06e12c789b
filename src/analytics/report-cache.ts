import { DAY_MS, type Generations } from '../storage/generations.js';
import type { ReportRow } from './compiler.js';
import type { Window } from './windows.js';

/**
 * Closed buckets of bucketed reports, kept in this process (docs/analytics.md, "Report cache"). A report's window
 * splits into its open edges (the partial first bucket, and everything from the last closed bucket on), computed
 * live, and its whole closed buckets, answered from here when the versions of the days each covers
 * (storage/generations.ts, bumped by ingest after every landed batch) are the ones it was read at. Missing or
 * stale buckets are read in one query per contiguous run. A bucket is the rows of every series in it, so a
 * bucket without runs is known to be empty. Memory is bounded (least recently used go first).
 */

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
}

export class BucketCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  constructor(readonly maxBytes: number) {}

  get(key: string, version: string): ReportRow[] | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) {
      this.misses++;
      return undefined;
    }
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry.rows;
  }

  set(key: string, version: string, rows: ReportRow[]): void {
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.bytes;
      this.entries.delete(key);
    }
    // What the rows weigh in memory, roughly: their JSON text twice over (UTF-16), and the key.
    const bytes = 2 * (JSON.stringify(rows).length + key.length) + 64;
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { version, rows, bytes });
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

/** The most days of versions one report reads (a longer window is answered live). */
const MAX_DAYS = 800;

export interface CachedRows {
  rows: ReportRow[];
  /** Closed buckets answered from the cache, and read now. */
  hits: number;
  misses: number;
  /** What the live parts read (rollup tiers), for X-Analytics-Sources. */
  tiers: string[];
}

/**
 * Every row of a bucketed report's window (all series, all buckets; not paged), the closed buckets from the
 * cache where they are current. Undefined when the window holds fewer than two closed buckets: the caller
 * answers it live as it is. `compute` reads one window (whole buckets inside it) and says which tiers it read.
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
}): Promise<CachedRows | undefined> {
  const { window, bucketMs } = opts;
  const first = Math.ceil(window.from / bucketMs) * bucketMs;
  const closedEnd = Math.floor(Math.min(window.to, opts.now - opts.closeAfterMs) / bucketMs) * bucketMs;
  if (closedEnd - first < 2 * bucketMs) return undefined;
  const fromDay = Math.floor(first / DAY_MS);
  const toDay = Math.floor((closedEnd - 1) / DAY_MS);
  if (toDay - fromDay + 1 > MAX_DAYS) return undefined;
  // Versions first, then the reads: a batch landing meanwhile leaves what we keep stale, never the reverse.
  const { epoch, days } = await opts.generations.read(opts.checkId, fromDay, toDay);
  const versionOf = (b: number) => {
    let sum = 0;
    for (let d = Math.floor(b / DAY_MS); d <= Math.floor((b + bucketMs - 1) / DAY_MS); d++) sum += days.get(d) ?? 0;
    return `${epoch}:${sum}`;
  };
  const closed = new Map<number, ReportRow[] | undefined>();
  let hits = 0;
  for (let b = first; b < closedEnd; b += bucketMs) {
    const rows = opts.cache.get(`${opts.key}|${b}`, versionOf(b));
    closed.set(b, rows);
    if (rows) hits++;
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
  const edges: Window[] = [];
  if (window.from < first) edges.push({ from: window.from, to: first });
  if (closedEnd < window.to) edges.push({ from: closedEnd, to: window.to });
  // The open edges in one read (the primary key reads both ranges), the closed holes one read each.
  const results = await Promise.all([
    ...reads.map((w) => opts.compute(w)),
    ...(edges.length ? [opts.compute({ from: edges[0]!.from, to: edges[edges.length - 1]!.to }, edges.length > 1 ? edges : undefined)] : []),
  ]);
  const tiers = new Set<string>();
  const live: ReportRow[] = [];
  results.forEach((result, i) => {
    result.tiers.forEach((t) => tiers.add(t));
    if (i >= reads.length) {
      live.push(...result.rows);
      return;
    }
    const w = reads[i]!;
    const byBucket = new Map<number, ReportRow[]>();
    for (const row of result.rows) {
      const b = Number(row.b);
      byBucket.set(b, [...(byBucket.get(b) ?? []), row]);
    }
    for (let b = w.from; b < w.to; b += bucketMs) {
      if (closed.get(b) && runs.length <= 4) continue;
      const rows = byBucket.get(b) ?? [];
      closed.set(b, rows);
      opts.cache.set(`${opts.key}|${b}`, versionOf(b), rows);
    }
  });
  const rows = [...live, ...[...closed.values()].flatMap((r) => r ?? [])];
  return { rows, hits, misses: closed.size - hits, tiers: [...tiers] };
}

/** ClickHouse's order of a series key: by value, NULL last. */
function compareKeys(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : 1;
}

/** The page of rows the report query would answer: ordered by series and bucket, `limit` per series from `offset`. */
export function pageOf(rows: ReportRow[], grouped: boolean, limit: number, offset: number): ReportRow[] {
  const sorted = [...rows].sort((x, y) => (grouped ? compareKeys(x.g, y.g) : 0) || Number(x.b) - Number(y.b));
  if (!grouped) return sorted.slice(offset, offset + limit);
  const out: ReportRow[] = [];
  let key: unknown = Symbol('none');
  let index = 0;
  for (const row of sorted) {
    if (row.g !== key) {
      key = row.g;
      index = 0;
    }
    if (index >= offset && index < offset + limit) out.push(row);
    index++;
  }
  return out;
}
