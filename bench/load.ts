import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  /** The API key sent as a bearer token; none for pages viewers open. */
  key?: string;
  body?: string;
  /** A new body for every request (instead of `body`), e.g. results that move forward in time. */
  bodies?: () => string;
  connections: number;
  durationSeconds: number;
  /** More request headers (a report asked with `cache-control: no-cache`). */
  headers?: Record<string, string>;
  /** At most this many requests a second over all connections (autocannon's overallRate); unset: as fast as answered. */
  rate?: number;
}

export interface LoadResult {
  connections: number;
  durationSeconds: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Every response latency, for the caller's own statistics (not written to the results). */
  samples: number[];
}

/** Percentile of sorted values by the nearest-rank rule. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export const round = (v: number, digits = 2) => Math.round(v * 10 ** digits) / 10 ** digits;

/** p50/p95/p99 of latencies in ms, rounded to 0.01 ms. */
export function latencyStats(values: number[]): { p50: number; p95: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: round(percentile(sorted, 0.5)), p95: round(percentile(sorted, 0.95)), p99: round(percentile(sorted, 0.99)) };
}

/**
 * Runs autocannon against one route and records every response time, so p95 (which autocannon's own
 * summary lacks) is computed from all samples.
 */
export async function load(spec: LoadSpec): Promise<LoadResult> {
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url + spec.path,
        method: spec.method,
        connections: spec.connections,
        duration: spec.durationSeconds,
        headers: {
          ...(spec.key ? { authorization: `Bearer ${spec.key}` } : {}),
          ...(spec.body || spec.bodies ? { 'content-type': 'application/json' } : {}),
          ...spec.headers,
        },
        body: spec.body,
        ...(spec.bodies ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: spec.bodies!() }) }] } : {}),
        timeout: 30,
        ...(spec.rate ? { overallRate: spec.rate } : {}),
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      samples.push(responseTime);
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    });
  });

  return {
    connections: spec.connections,
    durationSeconds: spec.durationSeconds,
    requests: samples.length,
    requestsPerSecond: round(samples.length / (result.duration || spec.durationSeconds)),
    latencyMs: { ...latencyStats(samples), max: round(samples.length ? samples.reduce((m, v) => Math.max(m, v), 0) : Number.NaN) },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    samples,
  };
}
