import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';

const TOKEN = 'metrics-token-0123456789';

/** GET /metrics: the operator's Prometheus endpoint, behind its own token. */
describe('/metrics', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ METRICS_TOKEN: TOKEN });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  const scrape = (token?: string) => fetch(`${svc.url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const sample = (text: string, name: string, labels: Record<string, string>) => {
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };

  it('answers only its own token: none or a wrong one is a 401, an API key opens nothing', async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape('wrong-token-0123456789')).status).toBe(401);
    const withApiKey = await scrape(svc.adminKey);
    expect(withApiKey.status).toBe(401);
    expect(await withApiKey.json()).toMatchObject({ statusCode: 401 });
  });

  it('counts requests by route template and status, and times them', async () => {
    await svc.call('GET', '/v1/checks');
    await svc.call('GET', `/v1/checks/${randomUUID()}`);
    const res = await scrape(TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(sample(text, 'http_requests_total', { route: '/v1/checks', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_requests_total', { route: '/v1/checks/:id', method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/checks', method: 'GET' })).toBeGreaterThanOrEqual(1);
    // Thrown errors count with the status they answered: a validation 400, a missing key's 401 (not Koa's default 404).
    expect((await svc.call('GET', '/v1/checks?limit=0')).status).toBe(400);
    expect((await svc.call('GET', '/v1/checks', { key: null })).status).toBe(401);
    const after = await (await scrape(TOKEN)).text();
    expect(sample(after, 'http_requests_total', { route: '/v1/checks', method: 'GET', status: '400' })).toBe(1);
    expect(sample(after, 'http_requests_total', { route: '/v1/checks', method: 'GET', status: '401' })).toBe(1);
    // Never a raw path with an id in it.
    expect(text).not.toMatch(/route="\/v1\/checks\/[0-9a-f]{8}-/);
  });

  it('shows ingest accepted and landed, the queue, and analytics query time and rows read by purpose', async () => {
    const check = (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'm', request: { url: 'https://m.example.test' } } })).body;
    const start = Date.now() - 3_600_000;
    const results = Array.from({ length: 30 }, (_, i) => ({
      id: randomUUID(),
      checkId: check.id,
      checkType: 'API',
      runLocation: 'eu-west-1',
      hasFailures: false,
      responseTime: 100 + i,
      startedAt: new Date(start + i * 60_000).toISOString(),
      stoppedAt: new Date(start + i * 60_000 + 100).toISOString(),
    }));
    expect((await svc.call('POST', '/v1/check-results', { body: { results } })).status).toBe(202);
    const text = await waitFor(
      () => scrape(TOKEN).then((r) => r.text()),
      (t) => Number(/^ingest_results_landed_total (\d+)/m.exec(t)?.[1]) >= 30,
    );
    expect(Number(/^ingest_results_accepted (\d+)/m.exec(text)?.[1])).toBeGreaterThanOrEqual(30);
    // Inserts are counted apart: at least one, at most one a result.
    const inserts = Number(/^ingest_inserts_total (\d+)/m.exec(text)?.[1]);
    expect(inserts).toBeGreaterThanOrEqual(1);
    expect(inserts).toBeLessThanOrEqual(Number(/^ingest_results_landed_total (\d+)/m.exec(text)?.[1]));
    expect(text).toMatch(/^ingest_queue_waiting \d+/m);
    expect(text).toMatch(/^ingest_lag_seconds [\d.e-]+/m);
    expect((await svc.call('GET', `/v1/analytics/api-checks/${check.id}?metrics=responseTime_p95&quickRange=last24Hours`)).status).toBe(200);
    const after = await (await scrape(TOKEN)).text();
    expect(sample(after, 'analytics_store_query_duration_seconds_count', { purpose: 'report' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'analytics_store_rows_read_total', { purpose: 'report' })).toBeGreaterThanOrEqual(30);
    expect(after).toMatch(/^# TYPE analytics_store_errors_total counter/m);
    // Every queue reports itself alike: jobs by state, wait and processing time, outcomes.
    expect(sample(after, 'queue_jobs', { queue: 'check-results', state: 'waiting' })).toBeGreaterThanOrEqual(0);
    expect(sample(after, 'queue_jobs', { queue: 'check-results', state: 'failed' })).toBe(0);
    expect(sample(after, 'queue_job_wait_seconds_count', { queue: 'check-results' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'queue_job_processing_seconds_count', { queue: 'check-results' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'queue_jobs_total', { queue: 'check-results', outcome: 'completed' })).toBeGreaterThanOrEqual(1);
  });
});

describe('/metrics without METRICS_TOKEN', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ LOG_REQUESTS: 'info' });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('is not served at all', async () => {
    const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: 'Bearer anything-at-all-here' } });
    expect(res.status).toBe(404);
  });

  it('a request whose client hangs up mid-query is logged 499, never as a 500', async () => {
    const check = (await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', { body: { name: 'abort', request: { url: 'https://a.example.test' } } }))
      .body;
    // The request is surely sent (a raw socket, not a fetch that may be aborted before it connects), then the client hangs up.
    const { hostname, port } = new URL(svc.url);
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), hostname, () => {
        socket.write(
          `GET /v1/analytics/api-checks/${check.id}?metrics=responseTime_p95&quickRange=last30Days&aggregationInterval=60 HTTP/1.1\r\n` +
            `Host: localhost\r\nAuthorization: Bearer ${svc.adminKey}\r\n\r\n`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 5);
      });
      socket.on('error', () => resolve());
    });
    const line = await waitFor(
      async () => svc.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.path === `/v1/analytics/api-checks/${check.id}`),
      (l) => l !== undefined,
    );
    expect([200, 499]).toContain(line.status);
    expect(svc.logs.some((l) => JSON.parse(l).level >= 50)).toBe(false);
  });
});
