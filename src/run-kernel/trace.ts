import { randomBytes } from 'node:crypto';

/**
 * W3C trace context for a run's requests (docs/traces.md): a new trace per run, so the request a check made can be
 * found in the team's own traces by the id its result keeps. `tracestate` marks the request as a synthetic run
 * with the anchor's own marker (`checkly=true`), so filters written for the SaaS keep working.
 */
export interface TraceContext {
  traceId: string;
  spanId: string;
  traceparent: string;
  tracestate: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
export const SYNTHETIC_TRACESTATE = 'checkly=true';

export function newTraceContext(): TraceContext {
  let traceId = randomBytes(16).toString('hex');
  // All zeros is invalid (W3C Trace Context, section 3.2.2.3); one in 2^128, but cheap to rule out.
  if (/^0+$/.test(traceId)) traceId = `${traceId.slice(0, 31)}1`;
  const spanId = randomBytes(8)
    .toString('hex')
    .replace(/^0{16}$/, '0000000000000001');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01`, tracestate: SYNTHETIC_TRACESTATE };
}

/** The trace id of a `traceparent` the check sets itself (kept as it is), or undefined when it is not valid. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  const m = traceparent ? TRACEPARENT.exec(traceparent.trim().toLowerCase()) : null;
  return m && !/^0+$/.test(m[1]!) ? m[1] : undefined;
}
