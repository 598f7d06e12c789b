import type { CheckType } from '../resources/checks/enums.js';
import type { StoredItem } from './repository.js';


export interface ResultCheck {
  name: string;
  check_type: CheckType;
  data: Record<string, unknown>;
}

/** The type-specific part of the anchor's result, filled from what the run reported. */
function typeResult(item: StoredItem, type: CheckType): Record<string, object> {
  const startTime = Date.parse(item.startedAt as string);
  const endTime = Date.parse(item.stoppedAt as string);
  switch (type) {
    case 'API':
    case 'URL':
    case 'TCP':
    case 'DNS':
      return {
        apiCheckResult: {
          assertions: [],
          response: { ...(item.statusCode !== undefined ? { status: item.statusCode } : {}), timings: item.timings ?? null },
        },
      };
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
    ...typeResult(item, check.check_type),
  };
}

/** Only the requested fields of each entry (the anchor's `fields` projection); all of them without a list. */
export function project<T extends Record<string, unknown>>(entry: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields?.length) return entry;
  return Object.fromEntries(fields.filter((f) => f in entry).map((f) => [f, entry[f]])) as Partial<T>;
}
