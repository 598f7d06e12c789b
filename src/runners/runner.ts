import type { ResultItem } from '../ingest/index.js';
import { CHECK_TYPE_FACTS } from '../model/checks.js';
import { boundDetail } from '../model/results.js';
import type { Logger } from '../platform/logger.js';
import type { OutboundPolicy } from '../platform/outbound.js';
import type { RunnableCheck } from './definitions.js';
import { maskSecretValues } from './interpolate.js';
import type { RunJob } from './jobs.js';
import type { RunnerPort, TakenRun } from './port.js';
import { type BrowserSettings, configureBrowserRuns } from './types/browser.js';
import { messageOf, RUN_METRIC_KEYS, RUN_TIMING_KEYS, type RunFiles, type RunOutcome } from './types/common.js';
import { CHECK_RUNNERS } from './types/index.js';

export interface RunnerOptions {
  /** What every connection of a run goes through. */
  policy: OutboundPolicy;
  logger: Logger;
  /** Browser and multi-step runs: how many at once in this process, and the memory of each. */
  browser?: BrowserSettings;
}

interface RetryStrategy {
  type?: 'FIXED' | 'LINEAR' | 'EXPONENTIAL' | 'SINGLE_RETRY' | 'NO_RETRIES';
  baseBackoffSeconds?: number;
  maxRetries?: number;
  maxDurationSeconds?: number;
  sameRegion?: boolean;
  onlyOn?: string[];
}

/**
 * Whether a failed attempt runs again, when and where: per the check's retryStrategy (the anchor's: FIXED waits
 * the base each time, LINEAR base × n, EXPONENTIAL base^n, SINGLE_RETRY once after the base; at most maxRetries,
 * all within maxDurationSeconds of the first try; `sameRegion: false` retries in another of the check's locations;
 * `onlyOn: NETWORK_ERROR` retries only runs that reached nothing). Without a strategy the deprecated `doubleCheck`
 * (the anchor's default) retries once at once in another location.
 */
export function nextRetry(check: RunnableCheck, job: RunJob, outcome: RunOutcome, now = Date.now()): { delayMs: number; location: string } | undefined {
  if (!outcome.hasFailures || outcome.hasErrors) return undefined;
  const raw = check.data.retryStrategy as RetryStrategy | null | undefined;
  const strategy: RetryStrategy | undefined =
    raw?.type && raw.type !== 'NO_RETRIES'
      ? raw
      : !raw && check.data.doubleCheck !== false
        ? { type: 'SINGLE_RETRY', baseBackoffSeconds: 0, sameRegion: false }
        : undefined;
  if (!strategy) return undefined;
  if (strategy.onlyOn?.includes('NETWORK_ERROR') && !outcome.networkError) return undefined;
  const retryNumber = job.attempt; // the retry this would be: 1 after the first try
  const maxRetries = strategy.type === 'SINGLE_RETRY' ? 1 : Math.min(10, strategy.maxRetries ?? 2);
  if (retryNumber > maxRetries) return undefined;
  const base = strategy.baseBackoffSeconds ?? 60;
  const seconds = strategy.type === 'LINEAR' ? base * retryNumber : strategy.type === 'EXPONENTIAL' ? base ** retryNumber : base;
  const delayMs = Math.max(0, seconds * 1000);
  const maxDurationMs = (strategy.type === 'SINGLE_RETRY' ? 600 : Math.min(600, strategy.maxDurationSeconds ?? 600)) * 1000;
  if (now + delayMs - (job.firstStartedAt ?? now) > maxDurationMs) return undefined;
  const others = check.locations.filter((l) => l !== job.location);
  const location = strategy.sameRegion === false && others.length ? others[Math.floor(Math.random() * others.length)] : job.location;
  return { delayMs, location };
}

/** A run's outcome as the result item ingest stores. */
export function resultItem(check: RunnableCheck, location: string, outcome: RunOutcome, attempts: number): ResultItem {
  return {
    ...withError(check, outcome),
    checkId: check.id,
    checkType: check.checkType,
    runLocation: location,
    startedAt: new Date(outcome.startedAt).toISOString(),
    stoppedAt: new Date(Math.max(outcome.stoppedAt, outcome.startedAt)).toISOString(),
    hasFailures: outcome.hasFailures,
    hasErrors: outcome.hasErrors,
    isDegraded: outcome.isDegraded,
    aborted: false,
    attempts: Math.min(255, attempts),
    ...cleanMetrics(outcome.metrics),
  } as ResultItem;
}

/** The longest failure reason a result keeps. */
const ERROR_CHARS = 4096;

/** An outcome within what a result keeps, whatever the check's target or script put in it (boundDetail). */
export function bounded(outcome: RunOutcome): RunOutcome {
  const error = outcome.error && outcome.error.length > ERROR_CHARS ? `${outcome.error.slice(0, ERROR_CHARS)} … (cut)` : outcome.error;
  return { ...outcome, detail: boundDetail(outcome.detail), error };
}

/**
 * The run's detail, with why it failed kept as its result object's first error (`errors[0].message`) when the
 * object does not say already: error groups (docs/analytics.md) group failed runs by it.
 */
function withError(check: RunnableCheck, outcome: RunOutcome): Record<string, unknown> {
  const key = CHECK_TYPE_FACTS[check.checkType].resultKey;
  if (!outcome.hasFailures || !outcome.error || !key) return outcome.detail;
  const current = (outcome.detail[key] ?? {}) as { errors?: unknown };
  if (Array.isArray(current.errors) && current.errors.length) return outcome.detail;
  return { ...outcome.detail, [key]: { ...current, errors: [{ message: maskSecretValues(outcome.error, check.secrets) }] } };
}

/** Metrics within what a result item holds (no NaN, no negative, ms within a day). */
function cleanMetrics(m: RunOutcome['metrics']): Partial<ResultItem> {
  const ms = (v: unknown) => (typeof v !== 'number' || !Number.isFinite(v) ? undefined : Math.min(86_400_000, Math.max(0, v)));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) {
    // Only the metrics a run reports: nothing else of a result (its check, its times) can come in this way.
    if (v === undefined || v === null || !METRIC_KEYS.has(k)) continue;
    if (k !== 'timings' && (typeof v !== 'number' || !Number.isFinite(v))) continue;
    if (k === 'timings') {
      if (typeof v !== 'object') continue;
      const t = Object.fromEntries(
        Object.entries(v as Record<string, number>).flatMap(([tk, tv]) => (!TIMING_KEYS.has(tk) || ms(tv) === undefined ? [] : [[tk, ms(tv)]])),
      );
      if (Object.keys(t).length) out.timings = t;
    } else if (k === 'daysUntilExpiry') out[k] = Math.max(-36500, Math.min(36500, v as number));
    else if (k === 'statusCode') {
      if ((v as number) >= 100 && (v as number) <= 599) out[k] = v;
    } else if (k === 'grpcStatusCode' || k === 'hopCount') out[k] = Math.max(0, Math.min(k === 'hopCount' ? 255 : 16, Math.round(v as number)));
    else if (k === 'packetLoss') out[k] = Math.max(0, Math.min(100, v as number));
    else if (ms(v) !== undefined) out[k] = ms(v);
  }
  return out as Partial<ResultItem>;
}
const METRIC_KEYS: ReadonlySet<string> = new Set(RUN_METRIC_KEYS);
const TIMING_KEYS: ReadonlySet<string> = new Set(RUN_TIMING_KEYS);

/** Executes a run by its check's type. A fault of the runner itself is the run's error, never a lost run. */
export async function executeRun(taken: TakenRun, policy: OutboundPolicy, files: RunFiles | undefined, logger: Logger): Promise<RunOutcome> {
  const { run, check, resultId, assetBase } = taken;
  const started = Date.now();
  try {
    const outcome = await CHECK_RUNNERS[check.checkType]({ check, location: run.location, resultId, attempt: run.attempt, policy, blobs: files, assetBase });
    // Why it failed may quote the request (a URL, a header): secret values never leave the run, to a log, a disk or a report.
    return bounded(outcome.error ? { ...outcome, error: maskSecretValues(outcome.error, check.secrets) } : outcome);
  } catch (err) {
    // Masked and bounded like any failure: a thrown message may quote a secret, and may be of any length.
    const why = maskSecretValues(messageOf(err), check.secrets);
    logger.error({ checkId: check.id, adhocId: run.adhocId, err: why.slice(0, ERROR_CHARS) }, 'runner failed on a run');
    return bounded({
      startedAt: started,
      stoppedAt: Date.now(),
      hasFailures: true,
      hasErrors: true,
      isDegraded: false,
      metrics: {},
      detail: {},
      error: `The runner failed: ${why}`,
    });
  }
}

/**
 * A runner: executes the runs its port hands it, each by its check's type, and gives each outcome back to the
 * port. It holds none of the service's stores: the port is the service in this process (runners/local-port.ts)
 * or the service over HTTPS (an agent, docs/agent.md).
 */
export function startRunner(port: RunnerPort, opts: RunnerOptions) {
  if (opts.browser) configureBrowserRuns(opts.browser);
  port.serve((taken) => executeRun(taken, opts.policy, port.files, opts.logger));
  return { close: () => port.close() };
}
