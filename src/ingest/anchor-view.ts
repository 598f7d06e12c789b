import type { CheckType } from '../model/checks.js';
import { RESULT_DETAIL_KEYS, traceIdOfRun } from '../model/results.js';
import type { StoredItem } from './repository.js';

export interface ResultCheck {
  name: string;
  check_type: CheckType;
  data: Record<string, unknown>;
}

type ResultView = (item: StoredItem, check: ResultCheck, times: { startTime: number; endTime: number }) => Record<string, object>;

const none: ResultView = () => ({});

function apiResult(item: StoredItem, check: ResultCheck) {
  const request = (check.data.request ?? {}) as { method?: string; url?: string };
  const timings = item.timings as Record<string, number> | undefined;
  return {
    apiCheckResult: {
      assertions: [],
      request: { method: request.method ?? 'GET', url: request.url ?? '', headers: {}, params: {} },
      response: {
        ...(item.statusCode !== undefined ? { status: item.statusCode } : {}),
        statusText: '',
        timings: timings ?? null,
        timingPhases: timings ? { ...timings, total: (item.responseTime as number | undefined) ?? Object.values(timings).reduce((a, b) => a + b, 0) } : null,
      },
      requestError: null,
    },
  };
}

/**
 * The type-specific part of the anchor's result, filled from what the run reported and the check's request:
 * one entry per check type (a type without one does not compile); types the anchor gives no result object
 * add nothing.
 */
const RESULT_VIEWS = {
  API: apiResult,
  URL: apiResult,
  BROWSER: (item, _check, { startTime, endTime }) => ({
    browserCheckResult: { type: 'PLAYWRIGHT', startTime, endTime, errors: [], pages: item.webVitals ? [{ webVitals: item.webVitals }] : [] },
  }),
  MULTI_STEP: (_item, _check, { startTime, endTime }) => ({ multiStepCheckResult: { startTime, endTime, errors: [] } }),
  PLAYWRIGHT: () => ({ playwrightCheckResult: { errors: [] } }),
  AGENTIC: () => ({ agenticCheckResult: { assertions: [], steps: [], errors: [] } }),
  TRACEROUTE: (item) => ({ tracerouteCheckResult: { ...(item.hopCount !== undefined ? { totalHops: item.hopCount } : {}) } }),
  GRPC: (item) => ({ grpcCheckResult: { ...(item.grpcStatusCode !== undefined ? { grpcStatusCode: item.grpcStatusCode } : {}) } }),
  SSL: (item) => ({
    sslCheckResult: {
      ...(item.handshakeTimeMs !== undefined ? { handshakeTimeMs: item.handshakeTimeMs } : {}),
      ...(item.daysUntilExpiry !== undefined ? { daysUntilExpiry: item.daysUntilExpiry } : {}),
    },
  }),
  TCP: none,
  DNS: none,
  ICMP: none,
  HEARTBEAT: none,
} satisfies Record<CheckType, ResultView>;

const isPlain = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * What the run reported over the synthesized view, one level deep: a reported `response` without timings keeps the
 * timings and phases the stored run has (what the run page shows), and what the run said wins where both have it.
 */
function mergeReported(made: Record<string, unknown>, reported: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...made, ...reported };
  for (const [k, v] of Object.entries(reported)) {
    if (isPlain(v) && isPlain(made[k]))
      out[k] = { ...(made[k] as Record<string, unknown>), ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined && x !== null)) };
  }
  return out;
}

/** The synthesized view, with what the run itself reported (its stored result objects) over it. */
function typeResult(item: StoredItem, check: ResultCheck): Record<string, object> {
  const view: ResultView | undefined = RESULT_VIEWS[check.check_type];
  const made = view ? view(item, check, { startTime: Date.parse(item.startedAt as string), endTime: Date.parse(item.stoppedAt as string) }) : {};
  const out: Record<string, object> = { ...made };
  for (const key of RESULT_DETAIL_KEYS) {
    const reported = (item as Record<string, unknown>)[key];
    if (reported && typeof reported === 'object') out[key] = mergeReported((made[key] ?? {}) as Record<string, unknown>, reported as Record<string, unknown>);
  }
  return out;
}

/**
 * What only a run's stored detail can tell, so lists (which do not read the detail) leave it out rather than show
 * an empty value beside a single result that has one: assertions, steps, errors, the response's status text.
 */
const DETAIL_ONLY = new Set(['assertions', 'steps', 'errors', 'statusText']);

function withoutDetail(view: Record<string, object>): Record<string, object> {
  const strip = (value: unknown): unknown => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !DETAIL_ONLY.has(k))
        .map(([k, v]) => [k, strip(v)]),
    );
  };
  return Object.fromEntries(Object.entries(view).map(([k, v]) => [k, strip(v) as object]));
}

/**
 * A stored run with the anchor's result fields beside this service's own. `listed`: read without its detail (a
 * list): the fields only the detail holds are left out, never shown empty.
 */
export function anchorResult(item: StoredItem, check: ResultCheck, listed = false, traceLink?: string) {
  const view = typeResult(item, check);
  const max = check.data.maxResponseTime;
  const rt = item.responseTime as number | undefined;
  return {
    ...item,
    name: check.name,
    isCancelled: item.aborted as boolean,
    overMaxResponseTime: typeof max === 'number' && rt !== undefined ? rt > max : null,
    resultType: 'FINAL' as const,
    sequenceId: null,
    traceId: traceIdOfRun(item),
    traceUrl: traceLink && traceIdOfRun(item) ? traceLink.replace('{traceId}', traceIdOfRun(item)!) : null,
    errorGroupIds: [] as string[],
    ...(listed ? withoutDetail(view) : view),
  };
}

/** Only the requested fields of each entry (the anchor's `fields` projection); all of them without a list. */
export function project<T extends Record<string, unknown>>(entry: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields?.length) return entry;
  return Object.fromEntries(fields.filter((f) => f in entry).map((f) => [f, entry[f]])) as Partial<T>;
}
