import type { ResultItem } from '../../src/ingest/schemas.js';

/**
 * An independent computation of reports and summaries, straight from the generated result items.
 * It shares nothing with the compiler but the request vocabulary: values are read from the items by
 * their API field names, percentiles are computed here by the R7 rule, groups and buckets here too.
 */

const SUFFIX = /_(avg|max|median|min|p50|p90|p95|p99|stddev|sum)$/;

export function fieldValue(item: ResultItem, base: string): number | null {
  const direct = (item as unknown as Record<string, unknown>)[base];
  const value =
    typeof direct === 'number'
      ? direct
      : ((item.timings as Record<string, number> | undefined)?.[base] ?? (item.webVitals as Record<string, number> | undefined)?.[base]);
  return typeof value === 'number' ? value : null;
}

/** Linear interpolation between closest ranks (Hyndman-Fan type 7). */
export function quantile(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export function aggregate(values: number[], suffix: string): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const sum = values.reduce((s, v) => s + v, 0);
  const mean = sum / values.length;
  switch (suffix) {
    case 'avg':
      return mean;
    case 'sum':
      return sum;
    case 'min':
      return sorted[0];
    case 'max':
      return sorted[sorted.length - 1];
    case 'stddev':
      return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
    case 'median':
    case 'p50':
      return quantile(sorted, 0.5);
    default:
      return quantile(sorted, Number(suffix.slice(1)) / 100);
  }
}

/**
 * Where a sketch's percentile may fall (relative accuracy `alpha`): within alpha of a value between the two
 * nearest ranks of the exact R7 interpolation, or within 3 alpha where that value's magnitude is below 1
 * (the bound docs/analytics.md states for ClickHouse's quantileDD).
 */
export interface Bounds {
  lo: number;
  hi: number;
}

export function sketchBounds(values: number[], p: number, alpha: number): Bounds | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) * p;
  const lo = sorted[Math.floor(h)];
  const hi = sorted[Math.min(Math.ceil(h), sorted.length - 1)];
  const a = (v: number) => (Math.abs(v) >= 1 ? alpha : 3 * alpha);
  return { lo: Math.min(lo * (1 - a(lo)), lo * (1 + a(lo))), hi: Math.max(hi * (1 - a(hi)), hi * (1 + a(hi))) };
}

const LEVEL: Record<string, number> = { median: 0.5, p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

/** A metric over runs; with `sketch` (an accuracy), percentiles are the bounds a sketch must fall in. */
export function metricOverWith(items: ResultItem[], name: string, sketch?: number): number | null | Bounds {
  const m = SUFFIX.exec(name);
  if (sketch !== undefined && m && LEVEL[m[1]] !== undefined) {
    const values = items.map((r) => fieldValue(r, name.slice(0, m.index))).filter((v): v is number => v !== null);
    return sketchBounds(values, LEVEL[m[1]], sketch);
  }
  return metricOver(items, name);
}

export function metricOver(items: ResultItem[], name: string): number | null {
  if (name === 'availability') return items.length ? (100 * items.filter((r) => !r.hasFailures).length) / items.length : null;
  if (name === 'retries') return items.filter((r) => r.attempts > 1).length;
  const m = SUFFIX.exec(name);
  if (!m) throw new Error(`oracle: ${name} is not an aggregated metric`);
  const base = name.slice(0, m.index);
  const values = items.map((r) => fieldValue(r, base)).filter((v): v is number => v !== null);
  return aggregate(values, m[1]);
}

export interface OracleRequest {
  from: number;
  to: number;
  metrics: string[];
  intervalMinutes?: number;
  status?: 'success' | 'failure';
  groupBy?: 'runLocation' | 'statusCode';
  limit: number;
  page: number;
}

type Row = Record<string, unknown>;
export interface OracleSeries {
  key?: string | number | null;
  data: Row[];
}

function compareKeys(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return 1; // NULL sorts last
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

export function report(items: ResultItem[], req: OracleRequest, sketch?: number): OracleSeries[] {
  const inWindow = items.filter((r) => {
    const t = Date.parse(r.startedAt);
    if (t < req.from || t >= req.to) return false;
    if (req.status === 'success') return !r.hasFailures;
    if (req.status === 'failure') return r.hasFailures;
    return true;
  });
  const keyOf = (r: ResultItem): string | number | null =>
    req.groupBy === 'runLocation' ? r.runLocation : req.groupBy === 'statusCode' ? (r.statusCode ?? null) : null;
  const groups = new Map<string | number | null, ResultItem[]>();
  for (const r of inWindow) {
    const k = keyOf(r);
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k)!.push(r);
  }
  const keys = [...groups.keys()].sort(compareKeys);
  if (!req.groupBy && !keys.length) keys.push(null);
  const raw = req.metrics.every((m) => m !== 'availability' && m !== 'retries' && !SUFFIX.test(m));
  const offset = (req.page - 1) * req.limit;
  return keys.map((key) => {
    const runs = groups.get(key) ?? [];
    let rows: Row[];
    if (raw) {
      rows = [...runs]
        .sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt) || (a.runLocation < b.runLocation ? -1 : 1))
        .map((r) => ({
          startedAt: new Date(Date.parse(r.startedAt)).toISOString(),
          runLocation: r.runLocation,
          hasFailures: r.hasFailures,
          ...Object.fromEntries(req.metrics.map((m) => [m, fieldValue(r, m)])),
        }));
    } else if (req.intervalMinutes) {
      const width = req.intervalMinutes * 60_000;
      const buckets = new Map<number, ResultItem[]>();
      for (const r of runs) {
        const b = Math.floor(Date.parse(r.startedAt) / width) * width;
        if (!buckets.has(b)) buckets.set(b, []);
        buckets.get(b)!.push(r);
      }
      rows = [...buckets.keys()]
        .sort((a, b) => a - b)
        .map((b) => ({
          bucketStart: new Date(b).toISOString(),
          ...Object.fromEntries(req.metrics.map((m) => [m, metricOverWith(buckets.get(b)!, m, sketch)])),
        }));
    } else {
      rows = runs.length ? [Object.fromEntries(req.metrics.map((m) => [m, metricOverWith(runs, m, sketch)]))] : [];
    }
    return { key, data: rows.slice(offset, offset + req.limit) };
  });
}

/**
 * Numbers equal within a relative tolerance (float sums differ in the last bits between engines); an
 * expected `{lo, hi}` is a range the value must fall in.
 */
/**
 * The API rounds every figure to 2 decimals (percentages to 4; model/figures.ts, docs/analytics.md): a figure may
 * differ from the exact value by half of its last place, and no more.
 */
const ROUNDING = 0.005 + 1e-12;

export function close(actual: unknown, expected: unknown, rel = 1e-9): boolean {
  if (expected !== null && typeof expected === 'object' && 'lo' in expected) {
    const b = expected as Bounds;
    const slack = rel * Math.max(1, Math.abs(b.lo), Math.abs(b.hi)) + ROUNDING;
    return typeof actual === 'number' && actual >= b.lo - slack && actual <= b.hi + slack;
  }
  if (typeof expected !== 'number' || typeof actual !== 'number') return actual === expected;
  return Math.abs(actual - expected) <= rel * Math.max(1, Math.abs(expected)) + ROUNDING;
}

/** Throws with the first difference, so a failure says which row and metric. */
export function expectRowsClose(actual: Row[], expected: Row[], where: string, rel = 1e-9): void {
  if (actual.length !== expected.length) throw new Error(`${where}: ${actual.length} rows, oracle has ${expected.length}`);
  expected.forEach((row, i) => {
    const got = actual[i];
    const keys = new Set([...Object.keys(row), ...Object.keys(got)]);
    for (const k of keys) {
      if (!close(got[k], row[k], rel)) {
        throw new Error(`${where}: row ${i} ${k} = ${JSON.stringify(got[k])}, oracle ${JSON.stringify(row[k])}`);
      }
    }
  });
}
