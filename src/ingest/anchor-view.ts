import type { CheckType } from '../resources/checks/enums.js';
import type { StoredItem } from './repository.js';


export interface ResultCheck {
  name: string;
  check_type: CheckType;
  data: Record<string, unknown>;
}

/** The type-specific part of the anchor's result, filled from what the run reported and the check's request. */
function typeResult(item: StoredItem, check: ResultCheck): Record<string, object> {
  const startTime = Date.parse(item.startedAt as string);
  const endTime = Date.parse(item.stoppedAt as string);
  switch (check.check_type) {
    case 'API':
    case 'URL': {
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
    case 'BROWSER':
      return { browserCheckResult: { type: 'PLAYWRIGHT', startTime, endTime, errors: [], pages: item.webVitals ? [{ webVitals: item.webVitals }] : [] } };
    case 'MULTI_STEP':
      return { multiStepCheckResult: { startTime, endTime, errors: [] } };
    case 'PLAYWRIGHT':
      return { playwrightCheckResult: { errors: [] } };
    case 'AGENTIC':
      return { agenticCheckResult: { assertions: [], steps: [], errors: [] } };
    case 'TRACEROUTE':
      return { tracerouteCheckResult: { ...(item.hopCount !== undefined ? { totalHops: item.hopCount } : {}) } };
    case 'GRPC':
      return { grpcCheckResult: { ...(item.grpcStatusCode !== undefined ? { grpcStatusCode: item.grpcStatusCode } : {}) } };
    case 'SSL':
      return {
        sslCheckResult: {
          ...(item.handshakeTimeMs !== undefined ? { handshakeTimeMs: item.handshakeTimeMs } : {}),
          ...(item.daysUntilExpiry !== undefined ? { daysUntilExpiry: item.daysUntilExpiry } : {}),
        },
      };
    default:
      return {};
  }
}

/** A stored run with the anchor's result fields beside this service's own. */
export function anchorResult(item: StoredItem, check: ResultCheck) {
  const max = check.data.maxResponseTime;
  const rt = item.responseTime as number | undefined;
  return {
    ...item,
    name: check.name,
    isCancelled: item.aborted as boolean,
    overMaxResponseTime: typeof max === 'number' && rt !== undefined ? rt > max : null,
    resultType: 'FINAL' as const,
    sequenceId: null,
    traceId: null,
    errorGroupIds: [] as string[],
    ...typeResult(item, check),
  };
}

/** Only the requested fields of each entry (the anchor's `fields` projection); all of them without a list. */
export function project<T extends Record<string, unknown>>(entry: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields?.length) return entry;
  return Object.fromEntries(fields.filter((f) => f in entry).map((f) => [f, entry[f]])) as Partial<T>;
}
