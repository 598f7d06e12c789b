import { CHECK_TYPE_FACTS, CHECK_TYPES, type CheckType } from '../../src/model/checks.js';

export type { CheckType };

/** Each check type's facts as the service states them (src/model/checks.ts): a new type needs no entry here. */
const byType = <V>(pick: (t: CheckType) => V) => Object.fromEntries(CHECK_TYPES.map((t) => [t, pick(t)])) as Record<CheckType, V>;

/** Each type's path segment in the API (`/v1/checks/{segment}`). */
export const CHECK_SEGMENTS = byType((t) => CHECK_TYPE_FACTS[t].segment);

/** The report route of each type (`/v1/analytics/<segment>/{id}`). */
export const REPORT_SEGMENTS = byType((t) => CHECK_TYPE_FACTS[t].report);

/** Check types as people say them. */
export const TYPE_LABELS = byType((t) => CHECK_TYPE_FACTS[t].label);

/** A type's label, for any text an answer holds (an unknown type is shown as it is). */
export const typeLabel = (type: string) => (TYPE_LABELS as Record<string, string>)[type] ?? type;

/** A check's runs over a window as the timeline answers them: in columns, one entry per bucket. */
export interface TimelineItem {
  checkId: string;
  inMaintenance: boolean;
  total: {
    runs: number;
    failed: number;
    degraded: number;
    responseTimeP95: number | null;
    latencyP95: number | null;
    /** The runs it should have made, and the share of them that did not happen (null for heartbeats). */
    expectedRuns?: number | null;
    noDataRatio?: number | null;
  };
  from: string;
  bucketSeconds: number;
  runs: number[];
  failed: number[];
  degraded: number[];
  /** Runs expected per bucket (null for heartbeats): fewer runs than that is no data. */
  expected?: number[] | null;
  maintenanceBuckets: number[];
}

/** One bucket of a timeline, as the strip and the bars draw it. */
export interface Bucket {
  from: string;
  runs: number;
  failed: number;
  degraded: number;
  /** Runs expected in it (null: not counted, heartbeats). */
  expected: number | null;
  inMaintenance: boolean;
}

/** The timeline's columns as buckets, oldest first. */
export function bucketsOf(t: TimelineItem): Bucket[] {
  const start = Date.parse(t.from);
  const maintained = new Set(t.maintenanceBuckets);
  return t.runs.map((runs, i) => ({
    from: new Date(start + i * t.bucketSeconds * 1000).toISOString(),
    runs,
    failed: t.failed[i] ?? 0,
    degraded: t.degraded[i] ?? 0,
    expected: t.expected?.[i] ?? null,
    inMaintenance: maintained.has(i),
  }));
}

export interface CheckResult {
  id: string;
  checkId: string;
  name?: string;
  hasFailures: boolean;
  hasErrors: boolean;
  isDegraded: boolean;
  runLocation: string;
  startedAt: string;
  stoppedAt: string;
  responseTime: number | null;
  attempts?: number;
  resultType?: string;
  apiCheckResult?: Record<string, unknown> | null;
  browserCheckResult?: Record<string, unknown> | null;
  multiStepCheckResult?: Record<string, unknown> | null;
  playwrightCheckResult?: Record<string, unknown> | null;
  tracerouteCheckResult?: Record<string, unknown> | null;
  grpcCheckResult?: Record<string, unknown> | null;
  sslCheckResult?: Record<string, unknown> | null;
  agenticCheckResult?: Record<string, unknown> | null;
}

export const resultState = (r: Pick<CheckResult, 'hasFailures' | 'hasErrors' | 'isDegraded'>) =>
  r.hasFailures || r.hasErrors ? ('failing' as const) : r.isDegraded ? ('degraded' as const) : ('passing' as const);

/** Windows a person picks from, and a custom one in the address. */
export const RANGES: Record<string, { label: string; ms: number }> = {
  '1h': { label: '1 hour', ms: 3_600_000 },
  '6h': { label: '6 hours', ms: 6 * 3_600_000 },
  '24h': { label: '24 hours', ms: 24 * 3_600_000 },
  '7d': { label: '7 days', ms: 7 * 86_400_000 },
  '30d': { label: '30 days', ms: 30 * 86_400_000 },
};

/**
 * The window a screen shows: the address's own, else a range by name, else 24 hours; a check younger than that
 * (`since`, its creation) gets the smallest range that covers its life, so its first runs are not one bar at the edge.
 */
export function windowOf(query: URLSearchParams, now = Date.now(), since?: string | null): { from: number; to: number; key: string } {
  const from = Date.parse(query.get('from') ?? '');
  const to = Date.parse(query.get('to') ?? '');
  if (!Number.isNaN(from) && !Number.isNaN(to) && from < to) return { from, to, key: 'custom' };
  const age = since ? now - Date.parse(since) : Number.NaN;
  const young = Number.isNaN(age) ? undefined : Object.entries(RANGES).find(([, r]) => r.ms >= age && r.ms <= RANGES['24h']!.ms)?.[0];
  const key = query.get('range') && RANGES[query.get('range')!] ? query.get('range')! : (young ?? '24h');
  // Rounded to the minute, so a window stays the same across renders within it.
  const end = Math.ceil(now / 60_000) * 60_000;
  return { from: end - RANGES[key]!.ms, to: end, key };
}
