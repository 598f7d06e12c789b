import type { ResultItem } from '../ingest/index.js';
import { CREATABLE_TYPES, LOCATIONS } from '../model/checks.js';
import { generateRuns, type SeedCheck, type SeedWindow } from './generator.js';
import { planSegments, type SeedPlan, seedCheckBody } from './seeder.js';

export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly key: string,
  ) {}

  /** JSON request that waits out 429s (Retry-After) and fails loudly on anything else non-2xx. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    for (;;) {
      const res = await fetch(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (res.status === 429) {
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
        continue;
      }
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
      return (text ? JSON.parse(text) : undefined) as T;
    }
  }
}

export async function createChecksOverHttp(client: HttpClient, plan: SeedPlan): Promise<SeedCheck[]> {
  const checks: SeedCheck[] = [];
  for (const [i, segment] of planSegments(plan).entries()) {
    const created = await client.request<{ id: string }>('POST', `/v1/checks/${segment}?autoAssignAlerts=false`, seedCheckBody(segment, i, plan));
    checks.push({ id: created.id, checkType: CREATABLE_TYPES[segment], frequency: plan.frequency, locations: [...LOCATIONS.slice(0, plan.locations)] });
  }
  return checks;
}

/** Posts generated runs through POST /v1/check-results, `concurrency` batches in flight. */
export async function seedOverHttp(
  client: HttpClient,
  checks: SeedCheck[],
  window: SeedWindow,
  opts: { batchSize: number; concurrency: number; onProgress?: (rows: number) => void },
): Promise<number> {
  let total = 0;
  const inFlight = new Set<Promise<void>>();
  const send = (results: ResultItem[]) => {
    const p = client.request('POST', '/v1/check-results', { results }).then(() => {
      total += results.length;
      opts.onProgress?.(results.length);
      inFlight.delete(p);
    });
    inFlight.add(p);
    return p;
  };
  let batch: ResultItem[] = [];
  for (const [index, check] of checks.entries()) {
    for (const item of generateRuns(check, window, index)) {
      batch.push(item);
      if (batch.length >= opts.batchSize) {
        void send(batch);
        batch = [];
        if (inFlight.size >= opts.concurrency) await Promise.race(inFlight);
      }
    }
  }
  if (batch.length) void send(batch);
  await Promise.all(inFlight);
  return total;
}
