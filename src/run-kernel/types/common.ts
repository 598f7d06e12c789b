import type { Readable } from 'node:stream';
import type { ResultDetailKey } from '../../model/results.js';
import type { OutboundPolicy } from '../../platform/outbound.js';
import type { RunnableCheck } from '../run.js';

/** What a run is given: the check as it runs, where, the policy its connections go through. */
export interface RunContext {
  check: RunnableCheck;
  location: string;
  resultId: string;
  attempt: number;
  policy: OutboundPolicy;
  /** Where a run keeps its files (browser screenshots, traces, videos); without it they are not kept. */
  blobs?: RunFiles;
  /** The route its kept files are listed under; default `/v1/check-results/{checkId}/{resultId}/assets`. */
  assetBase?: string;
}

/** The kinds of file a run keeps. */
export type RunFileKind = 'screenshots' | 'traces' | 'videos';

/**
 * Where runs keep their files and read code bundles: the service's blob store in its own processes, the
 * service over HTTPS for an agent. A key names a file of the account; `maxBytes` is a hard limit.
 */
export interface RunFiles {
  put(accountId: string, kind: RunFileKind, body: Readable, maxBytes: number): Promise<{ key: string; size: number }>;
  open(accountId: string, key: string): Promise<{ stream: Readable; size: number } | undefined>;
}

/** The metrics a run may report, by name: a result takes these and no other (an agent's report is held to them). */
export const RUN_METRIC_KEYS = [
  'responseTime',
  'statusCode',
  'timings',
  'packetLoss',
  'latencyMin',
  'latencyMax',
  'latencyAvg',
  'latencyStdDev',
  'handshakeTimeMs',
  'daysUntilExpiry',
  'hopCount',
  'finalHopLatency',
  'grpcStatusCode',
] as const;
export const RUN_TIMING_KEYS = ['wait', 'dns', 'tcp', 'firstByte', 'download', 'total', 'connection', 'data'] as const;

/** The metrics a run reports, as result items carry them. */
export interface RunMetrics {
  responseTime?: number;
  statusCode?: number;
  timings?: Partial<Record<'wait' | 'dns' | 'tcp' | 'firstByte' | 'download' | 'total' | 'connection' | 'data', number>>;
  packetLoss?: number;
  latencyMin?: number;
  latencyMax?: number;
  latencyAvg?: number;
  latencyStdDev?: number;
  handshakeTimeMs?: number;
  daysUntilExpiry?: number;
  hopCount?: number;
  finalHopLatency?: number;
  grpcStatusCode?: number;
}

// RUN_METRIC_KEYS names every metric of RunMetrics and nothing else (a type error otherwise).
const metricKeysMatch: [Exclude<keyof RunMetrics, (typeof RUN_METRIC_KEYS)[number]>, Exclude<(typeof RUN_METRIC_KEYS)[number], keyof RunMetrics>] extends [
  never,
  never,
]
  ? true
  : false = true;
void metricKeysMatch;

/** What one attempt of a run found. */
export interface RunOutcome {
  startedAt: number;
  stoppedAt: number;
  hasFailures: boolean;
  /** Something went wrong on the runner's side (not the target's): an unsupported type, a sandbox fault. */
  hasErrors: boolean;
  isDegraded: boolean;
  metrics: RunMetrics;
  detail: Partial<Record<ResultDetailKey, Record<string, unknown>>>;
  /** The target could not be reached at all (DNS, refused, reset, timeout): what `onlyOn: NETWORK_ERROR` retries. */
  networkError?: boolean;
  /** Why it failed, in a line (logs, session results). */
  error?: string;
}

export type CheckRunner = (ctx: RunContext) => Promise<RunOutcome>;

/** A check's response-time limits: its own, else the type's defaults (the anchor's). */
export function limitsOf(data: Record<string, unknown>, defaults: { degraded: number; max: number }) {
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  return { degraded: num(data.degradedResponseTime, defaults.degraded), max: num(data.maxResponseTime, defaults.max) };
}

/** Failed over the max, degraded over the degraded limit. */
export function judge(ms: number | undefined, limits: { degraded: number; max: number }): { overMax: boolean; degraded: boolean } {
  if (ms === undefined) return { overMax: false, degraded: false };
  return { overMax: ms > limits.max, degraded: ms > limits.degraded && ms <= limits.max };
}

/** Socket-level failures: the target was not reached. */
export function isNetworkError(err: unknown): boolean {
  const code = (err as { code?: string; cause?: { code?: string } })?.code ?? (err as { cause?: { code?: string } })?.cause?.code;
  return (
    typeof code === 'string' &&
    /^(ECONNRESET|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|UND_ERR_(CONNECT_TIMEOUT|SOCKET|HEADERS_TIMEOUT|BODY_TIMEOUT))$/.test(
      code,
    )
  );
}

/**
 * A run that could not reach or ask its target: failed (not errored: the check worked, the target did not), the
 * reason as the result's error and its type's result section (`detail`, under the type's anchor key).
 */
export function targetFailure(startedAt: number, detail: RunOutcome['detail'], why: string, networkError: boolean): RunOutcome {
  return { startedAt, stoppedAt: Date.now(), hasFailures: true, hasErrors: false, isDegraded: false, metrics: {}, detail, networkError, error: why };
}

/** A run of a type this runner does not execute: a result saying so, never silence. */
export const unsupported =
  (why: string): CheckRunner =>
  async () => {
    const now = Date.now();
    return { startedAt: now, stoppedAt: now, hasFailures: true, hasErrors: true, isDegraded: false, metrics: {}, detail: {}, error: why };
  };

/** The error text of anything thrown. */
export const messageOf = (err: unknown) => {
  const e = err as { message?: string; code?: string; cause?: { message?: string; code?: string } };
  const cause = e?.cause?.message && e.message === 'fetch failed' ? e.cause : undefined;
  const text = cause?.message ?? e?.message ?? String(err);
  const code = cause?.code ?? e?.code;
  return code && !text.includes(code) ? `${code}: ${text}` : text;
};
