import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, waitFor, type TestService } from '../../test/support/service.js';

describe('ingest under faults', () => {
  let svc: TestService;
  let checkId: string;
  /** Batches whose first completion must fail after ClickHouse has taken the insert. */
  const crashAfterInsert = new Set<string>();
  const attemptsSeen = new Map<string, number>();

  beforeAll(async () => {
    svc = await startTestService(
      {},
      {
        afterInsert: (job) => {
          attemptsSeen.set(job.data.batchId, (attemptsSeen.get(job.data.batchId) ?? 0) + 1);
          if (crashAfterInsert.delete(job.data.batchId)) throw new Error('worker crashed after the insert');
        },
      },
    );
    checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'api', request: { url: 'https://x.test' } } })).body.id;
  });
  afterAll(() => svc?.stop());

  const stored = async () =>
    Number(
      (await svc.deps.store.query<{ n: number }>('SELECT count() AS n FROM check_results WHERE check_id = {checkId:UUID}', { checkId }))[0].n,
    );

  const batch = (n: number, minute: number) =>
    Array.from({ length: n }, (_, i) => ({
      checkId, checkType: 'API', runLocation: 'eu-west-1', hasFailures: false, responseTime: i,
      startedAt: new Date(Date.UTC(2026, 10, 1, 0, minute, i % 60)).toISOString(),
      stoppedAt: new Date(Date.UTC(2026, 10, 1, 0, minute, i % 60)).toISOString(),
    }));

  it('never doubles rows when a batch is retried after ClickHouse accepted it', async () => {
    const before = await stored();
    // The batch id is only known from the answer, so arm the fault for whichever batch arrives next.
    const original = svc.deps.ingest.enqueue.bind(svc.deps.ingest);
    svc.deps.ingest.enqueue = async (job) => {
      crashAfterInsert.add(job.batchId);
      return original(job);
    };
    const res = await svc.call('POST', '/v1/check-results', { body: { results: batch(250, 1) } });
    svc.deps.ingest.enqueue = original;
    expect(res.status).toBe(202);
    const { batchId } = res.body;
    const job = await waitFor(
      () => svc.deps.ingest.queue.getJob(batchId),
      (j) => j !== undefined && j !== null && j.finishedOn !== undefined && j.returnvalue !== null,
    );
    expect(job!.attemptsMade).toBeGreaterThanOrEqual(1);
    expect(attemptsSeen.get(batchId)).toBe(2);
    expect(await stored()).toBe(before + 250);
    expect(svc.logs.some((l) => l.includes(batchId) && l.includes('will retry'))).toBe(true);
  });

  it('survives ClickHouse being briefly unavailable: the insert fails, retries, lands, nothing is lost', async () => {
    const before = await stored();
    await svc.deps.store.command('DETACH TABLE check_results');
    let reattached = false;
    try {
      const res = await svc.call('POST', '/v1/check-results', { body: { results: batch(120, 2) } });
      expect(res.status).toBe(202);
      const { batchId } = res.body;
      // Wait until the worker has failed at least once against the missing table.
      await waitFor(
        () => svc.deps.ingest.queue.getJob(batchId),
        (j) => (j?.attemptsMade ?? 0) >= 1,
      );
      expect(svc.logs.some((l) => l.includes(batchId) && l.includes('will retry'))).toBe(true);
      await svc.deps.store.command('ATTACH TABLE check_results');
      reattached = true;
      await waitFor(stored, (n) => n === before + 120, 30_000);
      const job = await svc.deps.ingest.queue.getJob(batchId);
      expect(job?.failedReason).toMatch(/check_results/);
      expect(await job?.isCompleted()).toBe(true);
      expect((await svc.deps.ingest.stats()).failed).toBe(0);
    } finally {
      if (!reattached) await svc.deps.store.command('ATTACH TABLE check_results').catch(() => {});
    }
  }, 60_000);
});
