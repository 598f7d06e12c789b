import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClickHouseShim } from '../../test/support/clickhouse-http-shim.js';
import { PROCESS_DATA_DIR, startTestService, type TestService, waitFor } from '../../test/support/service.js';

describe('the service in server mode (CLICKHOUSE_URL)', () => {
  let shim: Awaited<ReturnType<typeof startClickHouseShim>>;
  let svc: TestService;
  beforeAll(async () => {
    shim = await startClickHouseShim(path.join(PROCESS_DATA_DIR, 'server-mode'));
    // The worker runs in-process here only because the test has no second process to run it.
    svc = await startTestService({ CLICKHOUSE_URL: shim.url, INGEST_IN_PROCESS: 'true' });
  });
  afterAll(async () => {
    await svc?.stop();
    await shim?.close();
  });

  it('ingests through the queue into the server backend and reads results back', async () => {
    expect(svc.deps.store.kind).toBe('server');
    const ready = await svc.call('GET', '/ready', { key: null });
    expect(ready.body.dependencies.clickhouse).toEqual({ status: 'ok' });
    const checkId = (await svc.call('POST', '/v1/checks/icmp', { body: { name: 'p', request: { hostname: 'x.test' } } })).body.id;
    const results = Array.from({ length: 30 }, (_, i) => ({
      checkId,
      checkType: 'ICMP',
      runLocation: 'eu-west-1',
      hasFailures: false,
      packetLoss: i % 3 ? 0 : 10,
      latencyAvg: 10 + i,
      startedAt: new Date(Date.UTC(2026, 10, 10, 0, i)).toISOString(),
      stoppedAt: new Date(Date.UTC(2026, 10, 10, 0, i, 1)).toISOString(),
    }));
    expect((await svc.call('POST', '/v1/check-results', { body: { results } })).status).toBe(202);
    const res = await waitFor(
      () => svc.call('GET', `/v1/check-results/${checkId}?limit=100`),
      (r) => r.body.length === 30,
    );
    expect(res.body[0]).toMatchObject({ latencyAvg: 39, packetLoss: 0, startedAt: '2026-11-10T00:29:00.000Z' });
    expect(res.body[2]).toMatchObject({ latencyAvg: 37, packetLoss: 10 });
    expect(Number(res.headers.get('x-total-count'))).toBe(30);
  });
});
