import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { INGEST_QUEUE, type IngestJob, ingestJob, type QueuedBatch, ROW_COLUMNS } from '../model/results.js';
import { runsOf } from '../model/runs.js';
import { IngestJournal } from './journal.js';
import { IngestQueue, journalKey, payloadKey, recoveringKey } from './queue.js';
import { toRow } from './result-rows.js';
import { startIngestWorker } from './worker.js';

/** N API results of `checkId`, one a second from `minute` of the given day of November 2026, ids left to the service. */
const apiResults = (checkId: string, n: number, day: number, minute: number) =>
  Array.from({ length: n }, (_, i) => ({
    checkId,
    checkType: 'API',
    runLocation: 'eu-west-1',
    hasFailures: false,
    responseTime: i,
    startedAt: new Date(Date.UTC(2026, 10, day, 0, minute, i % 60)).toISOString(),
    stoppedAt: new Date(Date.UTC(2026, 10, day, 0, minute, i % 60)).toISOString(),
  }));

/** How many results of `checkId` the store holds. */
const storedOf = async (svc: TestService, checkId: string) =>
  Number((await svc.deps.store.query<{ n: number }>('SELECT count() AS n FROM check_results WHERE check_id = {checkId:UUID}', { checkId }))[0].n);

describe('ingest under faults', () => {
  let svc: TestService;
  /** The ingest queue's BullMQ side, to watch the jobs the service made. */
  const ingestQueue = () => svc.deps.queues.queue<IngestJob>(INGEST_QUEUE);
  let checkId: string;
  /** Batches whose first completion must fail after ClickHouse has taken the insert. */
  const crashAfterInsert = new Set<string>();
  const attemptsSeen = new Map<string, number>();

  beforeAll(async () => {
    svc = await startTestService(
      {},
      {
        afterInsert: (batchId) => {
          attemptsSeen.set(batchId, (attemptsSeen.get(batchId) ?? 0) + 1);
          if (crashAfterInsert.delete(batchId)) throw new Error('worker crashed after the insert');
        },
      },
    );
    // Never run (the test service's runner is off); a local address all the same.
    checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'api', request: { url: 'http://127.0.0.1:9/' } } })).body.id;
  });
  afterAll(() => svc?.stop());

  const stored = () => storedOf(svc, checkId);

  const batch = (n: number, minute: number) => apiResults(checkId, n, 1, minute);

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
      () => ingestQueue().getJob(batchId),
      (j) => j !== undefined && j !== null && j.finishedOn !== undefined && j.returnvalue !== null,
    );
    expect(job!.attemptsMade).toBeGreaterThanOrEqual(1);
    expect(attemptsSeen.get(batchId)).toBe(2);
    // Its ids were the service's own: the first try (taken in process) skipped deduplication; the retry, queued as
    // tried before, looked for what it stored.
    expect(job!.data).toMatchObject({ batchId, retried: true });
    expect(job!.data).not.toHaveProperty('idsMinted');
    expect(await stored()).toBe(before + 250);
    // The rollups count each run once too.
    for (const table of ['check_results_1h', 'check_results_1d']) {
      const [{ n }] = await svc.deps.store.query<{ n: number }>(`SELECT sum(runs) AS n FROM ${table} WHERE check_id = {checkId:UUID}`, { checkId });
      expect(Number(n)).toBe(await stored());
    }
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
        () => ingestQueue().getJob(batchId),
        (j) => (j?.attemptsMade ?? 0) >= 1,
      );
      expect(svc.logs.some((l) => l.includes(batchId) && l.includes('will retry'))).toBe(true);
      await svc.deps.store.command('ATTACH TABLE check_results');
      reattached = true;
      await waitFor(stored, (n) => n === before + 120, 30_000);
      // The job completes after the insert, once the batch's check state is applied.
      const job = await waitFor(
        () => ingestQueue().getJob(batchId),
        (j) => j?.finishedOn !== undefined,
      );
      expect(job?.failedReason).toMatch(/check_results/);
      expect(await job?.isCompleted()).toBe(true);
      expect((await svc.deps.ingest.stats()).failed).toBe(0);
    } finally {
      if (!reattached) await svc.deps.store.command('ATTACH TABLE check_results').catch(() => {});
    }
  }, 60_000);
});

describe('run ids, idempotency keys and job layout', () => {
  let svc: TestService;
  const ingestQueue = () => svc.deps.queues.queue<IngestJob | QueuedBatch>(INGEST_QUEUE);
  let checkId: string;

  beforeAll(async () => {
    svc = await startTestService();
    checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'api', request: { url: 'https://x.test' } } })).body.id;
  });
  afterAll(() => svc?.stop());

  const stored = () => storedOf(svc, checkId);
  const results = (n: number, minute: number) => apiResults(checkId, n, 2, minute).map((r) => ({ id: randomUUID(), ...r }));
  const settled = () =>
    waitFor(
      () => svc.deps.ingest.stats(),
      (s) => s.waiting === 0 && s.active === 0 && s.delayed === 0,
    );

  it('lands a batch posted to this process with no queued job, and removes its journal entry and rows once it landed', async () => {
    const before = [await stored(), (await svc.deps.ingest.stats()).acceptedResults];
    const res = await svc.call('POST', '/v1/check-results', { body: { results: results(50, 13) } });
    expect(res.status).toBe(202);
    const { batchId } = res.body;
    await waitFor(stored, (n) => n === before[0] + 50);
    const key = payloadKey(svc.env.REDIS_PREFIX!, batchId);
    await waitFor(
      async () => [await svc.deps.redis.exists(key), await svc.deps.redis.zcard(journalKey(svc.env.REDIS_PREFIX!))],
      ([rows, entries]) => rows === 0 && entries === 0,
    );
    expect(await ingestQueue().getJob(batchId)).toBeUndefined();
    expect((await svc.deps.ingest.stats()).acceptedResults).toBe(before[1] + 50);
  });

  it('lands a batch another process queued (its rows read from Redis) and a job of an older producer that carries its rows', async () => {
    const before = await stored();
    const rowsOf = (items: ReturnType<typeof results>) => items.map((item) => toRow(svc.defaultAccountId, item.id, item as never));
    // A runner process: a queue of its own, so this process's worker has nothing of it in memory.
    const elsewhere = ingestJob(randomUUID(), svc.defaultAccountId, rowsOf(results(30, 14)));
    await new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!).enqueue(elsewhere);
    // Its job names its rows in Redis: a few hundred bytes.
    const queued = await ingestQueue().getJob(elsewhere.batchId);
    expect(queued!.data).toEqual({
      batchId: elsewhere.batchId,
      accountId: svc.defaultAccountId,
      results: 30,
      payloadKey: payloadKey(svc.env.REDIS_PREFIX!, elsewhere.batchId),
    });
    expect(JSON.stringify(queued!.data).length).toBeLessThan(300);
    // A job queued before this version: the whole batch is the job's data.
    const inline = ingestJob(randomUUID(), svc.defaultAccountId, rowsOf(results(20, 15)));
    await ingestQueue().add('batch', inline, { jobId: inline.batchId, attempts: 2 });
    await settled();
    expect(await stored()).toBe(before + 50);
    expect(await svc.deps.redis.exists(payloadKey(svc.env.REDIS_PREFIX!, elsewhere.batchId))).toBe(0);
    expect((await ingestQueue().getJob(inline.batchId))!.returnvalue).toEqual({ rows: 20, duplicates: 0 });
  });

  it('hands a batch to a worker of the same process from memory, once, and only after the worker asked', async () => {
    const queue = new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!);
    const before = await stored();
    const early = ingestJob(randomUUID(), svc.defaultAccountId, [toRow(svc.defaultAccountId, randomUUID(), results(1, 16)[0] as never)]);
    await queue.enqueue(early);
    const take = queue.handOff();
    expect(take(early.batchId)).toBeUndefined();
    const late = ingestJob(randomUUID(), svc.defaultAccountId, [toRow(svc.defaultAccountId, randomUUID(), results(1, 17)[0] as never)]);
    await queue.enqueue(late);
    const held = take(late.batchId);
    // Its job without the rows, and its runs: the rows themselves are not kept.
    const { rows, ...meta } = late;
    expect(held?.job).toEqual(meta);
    expect(held?.job).not.toHaveProperty('rows');
    expect(held?.runs).toEqual(runsOf(late.columns, rows));
    // With the JSON its copy in Redis was written in, and where its row is in it: what the worker's insert copies.
    const written = held!.written;
    expect(JSON.parse(written.bytes.toString('utf8'))).toEqual(JSON.parse(JSON.stringify(late)));
    expect(JSON.parse(written.bytes.subarray(written.starts[0], written.ends[0]).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(rows[0])));
    expect(take(late.batchId)).toBeUndefined();
    // A job this worker would refuse (another layout version) is not held: it is read back from Redis and refused.
    const other = { ...ingestJob(randomUUID(), svc.defaultAccountId, [toRow(svc.defaultAccountId, randomUUID(), results(1, 18)[0] as never)]), v: 99 };
    await queue.enqueue(other);
    expect(take(other.batchId)).toBeUndefined();
    // The service's worker read both from Redis (and refused the third).
    await settled();
    expect(await stored()).toBe(before + 2);
    const refused = await waitFor(
      () => ingestQueue().getJob(other.batchId),
      (j) => Boolean(j?.failedReason),
    );
    expect(refused!.failedReason).toMatch(/layout version 99/);
    // A worker whose store takes values (the server backend) asks for the rows too.
    const withRows = new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!);
    const takeWithRows = withRows.handOff({ withRows: true });
    const third = ingestJob(randomUUID(), svc.defaultAccountId, [toRow(svc.defaultAccountId, randomUUID(), results(1, 19)[0] as never)]);
    await withRows.enqueue(third);
    expect(takeWithRows(third.batchId)?.rows).toBe(third.rows);
    await settled();
  });

  it('fails a job whose rows are gone from Redis for good, saying so, and stores nothing', async () => {
    const before = await stored();
    const batchId = randomUUID();
    await ingestQueue().add(
      'batch',
      { batchId, accountId: svc.defaultAccountId, results: 3, payloadKey: payloadKey(svc.env.REDIS_PREFIX!, batchId) },
      { jobId: batchId, attempts: 3 },
    );
    const failed = await waitFor(
      () => ingestQueue().getJob(batchId),
      (j) => Boolean(j?.failedReason),
    );
    expect(failed!.failedReason).toMatch(/batch's rows are no longer in Redis/);
    expect(failed!.attemptsMade).toBe(1);
    expect(await stored()).toBe(before);
  });

  it('stores a run once when the same results arrive in two batches at once', async () => {
    const before = await stored();
    const items = results(300, 1);
    const [a, b] = await Promise.all([
      svc.call('POST', '/v1/check-results', { body: { results: items } }),
      svc.call('POST', '/v1/check-results', { body: { results: items } }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.batchId).not.toBe(b.body.batchId);
    await settled();
    expect(await stored()).toBe(before + 300);
  });

  it('stores a run once when it is posted again later, alone or among new runs', async () => {
    const before = await stored();
    const first = results(100, 2);
    expect((await svc.call('POST', '/v1/check-results', { body: { results: first } })).status).toBe(202);
    await waitFor(stored, (n) => n === before + 100);
    // The claims of the first batch have expired; the store itself says these runs landed.
    await svc.deps.redis.del(...first.map((r) => `${svc.env.REDIS_PREFIX}ingest:rid:${r.id}`));
    const again = [...first.slice(0, 50), ...results(20, 3)];
    expect((await svc.call('POST', '/v1/check-results', { body: { results: again } })).status).toBe(202);
    await settled();
    expect(await stored()).toBe(before + 120);
  });

  it('counts a batch handed to ingest twice (a retry after a lost reply) once among accepted results', async () => {
    const before = [await stored(), (await svc.deps.ingest.stats()).acceptedResults];
    const items = results(7, 12);
    const batch = ingestJob(
      randomUUID(),
      svc.defaultAccountId,
      items.map((item) => toRow(svc.defaultAccountId, item.id, item as never)),
    );
    await svc.deps.ingest.enqueue(batch);
    await svc.deps.ingest.enqueue(batch);
    await settled();
    expect([await stored(), (await svc.deps.ingest.stats()).acceptedResults]).toEqual([before[0] + 7, before[1] + 7]);
  });

  it('keeps no Redis key of a run once it landed (claims are released, not left to expire)', async () => {
    const items = results(200, 10);
    expect((await svc.call('POST', '/v1/check-results', { body: { results: items } })).status).toBe(202);
    await settled();
    const keys = items.map((r) => `${svc.env.REDIS_PREFIX}ingest:rid:${r.id}`);
    expect(await svc.deps.redis.exists(...keys)).toBe(0);
  });

  it('takes a repeat with the same body in another key order as the same request', async () => {
    const headers = { 'idempotency-key': `order-${randomUUID()}` };
    const [item] = results(1, 11);
    const first = await svc.call('POST', '/v1/check-results', { body: { results: [item] }, headers });
    const reordered = Object.fromEntries(Object.entries(item).reverse());
    const again = await svc.call('POST', '/v1/check-results', { body: { results: [reordered] }, headers });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    await settled();
  });

  it('refuses one batch carrying the same run id twice', async () => {
    const [item] = results(1, 4);
    const res = await svc.call('POST', '/v1/check-results', { body: { results: [item, { ...item, id: item.id.toUpperCase() }] } });
    expect(res.status).toBe(400);
    expect(res.body.attributes.errors).toEqual([{ field: 'body.results[1].id', rule: 'unique', message: 'repeats the id of results[0]' }]);
  });

  it('answers a repeated Idempotency-Key with the first 202 and queues nothing', async () => {
    const before = await stored();
    const body = { results: results(40, 5) };
    const headers = { 'idempotency-key': `retry-${randomUUID()}` };
    const first = await svc.call('POST', '/v1/check-results', { body, headers });
    expect(first.status).toBe(202);
    const accepted = (await svc.deps.ingest.stats()).acceptedResults;
    const again = await svc.call('POST', '/v1/check-results', { body, headers });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect((await svc.deps.ingest.stats()).acceptedResults).toBe(accepted);
    const other = await svc.call('POST', '/v1/check-results', { body: { results: results(1, 6) }, headers });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ statusCode: 409, message: 'This Idempotency-Key was used with another body' });
    await settled();
    expect(await stored()).toBe(before + 40);
    expect((await svc.call('POST', '/v1/check-results', { body, headers: { 'idempotency-key': 'bad key' } })).status).toBe(400);
  });

  it('reads a job by its column names, whatever their order', async () => {
    const before = await stored();
    const items = results(5, 7);
    const job = ingestJob(
      randomUUID(),
      svc.defaultAccountId,
      items.map((item) => toRow(svc.defaultAccountId, item.id, item as never)),
    );
    const order = [...ROW_COLUMNS.keys()].reverse();
    await svc.deps.ingest.enqueue({ ...job, columns: order.map((i) => ROW_COLUMNS[i]), rows: job.rows.map((row) => order.map((i) => row[i])) });
    await waitFor(stored, (n) => n === before + 5);
    const back = await svc.call('GET', `/v1/check-results/${checkId}?from=2026-11-02T00:07:00Z&to=2026-11-02T00:08:00Z&limit=10`);
    expect(back.body.map((r: { id: string }) => r.id).sort()).toEqual(items.map((r) => r.id).sort());
  });

  it.each([
    ['an unknown layout version', (j: ReturnType<typeof ingestJob>) => ({ ...j, v: 1 }), /layout version 1 is not 2/],
    [
      'a column this worker does not know',
      (j: ReturnType<typeof ingestJob>) => ({ ...j, columns: [...j.columns.slice(0, -1), 'quantum_flux'] }),
      /does not know: quantum_flux/,
    ],
    [
      'rows without columns (the old positional layout)',
      (j: ReturnType<typeof ingestJob>) => ({ batchId: j.batchId, accountId: j.accountId, rows: j.rows }),
      /layout version undefined/,
    ],
  ])('refuses a job with %s into the failed set, inserting nothing', async (_what, mutate, reason) => {
    const before = await stored();
    const items = results(3, 8);
    const job = ingestJob(
      randomUUID(),
      svc.defaultAccountId,
      items.map((item) => toRow(svc.defaultAccountId, item.id, item as never)),
    );
    await svc.deps.ingest.enqueue(mutate(job) as never);
    const failed = await waitFor(
      () => ingestQueue().getJob(job.batchId),
      (j) => Boolean(j?.failedReason),
    );
    expect(failed!.failedReason).toMatch(reason);
    expect(failed!.attemptsMade).toBe(1);
    expect(await failed!.isFailed()).toBe(true);
    expect(await stored()).toBe(before);
    // Its rows stay as long as the failed job does: the payload's TTL is taken off.
    await waitFor(
      () => svc.deps.redis.ttl(payloadKey(svc.env.REDIS_PREFIX!, job.batchId)),
      (ttl) => ttl === -1,
    );
  });
});

describe('check state of batches applied together', () => {
  let svc: TestService;
  /** The next `held` batches wait after their insert until all of them have arrived, then go on in one turn. */
  let held = 0;
  let arrived: (() => void)[] = [];

  beforeAll(async () => {
    svc = await startTestService(
      {},
      {
        afterInsert: () => {
          if (held === 0) return;
          return new Promise<void>((resolve) => {
            arrived.push(resolve);
            if (arrived.length === held) {
              const go = arrived;
              held = 0;
              arrived = [];
              for (const release of go) release();
            }
          });
        },
      },
    );
  });
  afterAll(() => svc?.stop());

  it("moves each account's checks under its own account when two accounts' batches share a state transaction", async () => {
    const other = await createOtherTenant(svc);
    const create = (key: string | undefined, name: string) =>
      svc.call('POST', '/v1/checks/api', { key, body: { name, request: { url: 'https://x.test' } } }).then((r) => r.body.id as string);
    const mine = await create(undefined, 'mine');
    const theirs = await create(other.key, 'theirs');
    const failing = (checkId: string) => ({
      results: [
        {
          checkId,
          checkType: 'API',
          runLocation: 'eu-west-1',
          hasFailures: true,
          responseTime: 5,
          startedAt: '2026-11-03T00:00:00Z',
          stoppedAt: '2026-11-03T00:00:01Z',
        },
      ],
    });
    held = 2;
    const posted = await Promise.all([
      svc.call('POST', '/v1/check-results', { body: failing(mine) }),
      svc.call('POST', '/v1/check-results', { key: other.key, body: failing(theirs) }),
    ]);
    expect(posted.map((r) => r.status)).toEqual([202, 202]);
    const status = (checkId: string, key?: string) => svc.call('GET', `/v1/check-statuses/${checkId}`, { key });
    expect(
      (
        await waitFor(
          () => status(mine),
          (r) => r.status === 200,
        )
      ).body,
    ).toMatchObject({ checkId: mine, hasFailures: true });
    expect(
      (
        await waitFor(
          () => status(theirs, other.key),
          (r) => r.status === 200,
        )
      ).body,
    ).toMatchObject({ checkId: theirs, hasFailures: true });
    const alerts = async (checkId: string, key?: string) => (await svc.call('GET', `/v1/check-alerts/${checkId}`, { key })).body as { alertType: string }[];
    expect((await alerts(mine)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
    expect((await alerts(theirs, other.key)).map((a) => a.alertType)).toEqual(['ALERT_FAILURE']);
    // Neither account sees the other's state.
    expect((await status(theirs)).status).toBe(404);
    expect((await status(mine, other.key)).status).toBe(404);
  });
});

describe('the ingest journal: batches a worker took from its own process', () => {
  let svc: TestService;
  let checkId: string;
  const ingestQueue = () => svc.deps.queues.queue<QueuedBatch>(INGEST_QUEUE);

  beforeAll(async () => {
    svc = await startTestService({}, { journal: { leaseMs: 2000, sweepEveryMs: 200 } });
    // Never run (the test service's runner is off); a local address all the same.
    checkId = (await svc.call('POST', '/v1/checks/api', { body: { name: 'api', request: { url: 'http://127.0.0.1:9/' } } })).body.id;
  });
  afterAll(() => svc?.stop());

  const stored = () => storedOf(svc, checkId);
  const batch = (n: number, minute: number) =>
    ingestJob(
      randomUUID(),
      svc.defaultAccountId,
      apiResults(checkId, n, 4, minute).map((r) => toRow(svc.defaultAccountId, randomUUID(), r as never)),
      undefined,
      true,
    );

  it('queues the batch of a worker that died holding it once its lease ran out, and stores and counts it once', async () => {
    const before = [await stored(), (await svc.deps.ingest.stats()).acceptedResults];
    // A process whose worker takes the batch and dies with it: nothing lands it there.
    const dead = new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!);
    const taken: [string, boolean][] = [];
    dead.direct({ leaseMs: 1000, owner: randomUUID(), room: () => true, take: (b, _entry, again) => void taken.push([b.job.batchId, again === true]) });
    const job = batch(20, 1);
    await dead.enqueue(job);
    expect(taken).toEqual([[job.batchId, false]]);
    // Handed over again while it is in the journal (the first try's reply was lost in a Redis stall): the worker is
    // given it again, told that it may be held elsewhere, and it is not counted twice.
    await dead.enqueue(job);
    expect(taken).toEqual([
      [job.batchId, false],
      [job.batchId, true],
    ]);
    // Another process handed the same batch (a batch id made from its contents, as a heartbeat's misses are) does not
    // get it: it is held by the first.
    const elsewhere: string[] = [];
    const other = new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!);
    other.direct({ leaseMs: 1000, owner: randomUUID(), room: () => true, take: (b) => void elsewhere.push(b.job.batchId) });
    await other.enqueue(job);
    expect(elsewhere).toEqual([]);
    expect(await svc.deps.redis.zcard(journalKey(svc.env.REDIS_PREFIX!))).toBe(1);
    // Counted when it was taken, and still being landed as far as the queue's figures say.
    expect(await svc.deps.ingest.stats()).toMatchObject({ acceptedResults: before[1] + 20, active: 1 });
    await waitFor(stored, (n) => n === before[0] + 20, 15_000);
    // The service's sweeper queued it, as a batch tried before (what was stored is looked for first).
    const queued = await waitFor(
      () => ingestQueue().getJob(job.batchId),
      (j) => j?.finishedOn !== undefined,
    );
    // Not said to have minted ids (a worker of an older version, blind to `retried`, looks for what was stored too).
    expect(queued!.data).toEqual({
      batchId: job.batchId,
      accountId: svc.defaultAccountId,
      results: 20,
      payloadKey: payloadKey(svc.env.REDIS_PREFIX!, job.batchId),
      retried: true,
    });
    expect(queued!.returnvalue).toEqual({ rows: 20, duplicates: 0 });
    await waitFor(
      async () => [
        await svc.deps.redis.zcard(journalKey(svc.env.REDIS_PREFIX!)),
        await svc.deps.redis.zcard(recoveringKey(svc.env.REDIS_PREFIX!)),
        await svc.deps.redis.exists(payloadKey(svc.env.REDIS_PREFIX!, job.batchId)),
      ],
      (left) => left.every((n) => n === 0),
    );
    expect((await svc.deps.ingest.stats()).acceptedResults).toBe(before[1] + 20);
    // Handed over again (a retry after a lost reply), it changes nothing.
    await dead.enqueue(job);
    expect(taken).toHaveLength(2);
    expect(await svc.deps.redis.zcard(journalKey(svc.env.REDIS_PREFIX!))).toBe(0);
    expect([await stored(), (await svc.deps.ingest.stats()).acceptedResults]).toEqual([before[0] + 20, before[1] + 20]);
  }, 30_000);

  it("tells a worker whose lease ran out that the batch is no longer its own, renews the ones it holds, and keeps a swept batch's rows", async () => {
    const prefix = `${svc.env.REDIS_PREFIX}journal-test:`;
    const journal = new IngestJournal(svc.deps.redis, prefix);
    const redisNow = async () => {
      const [seconds, micros] = await svc.deps.redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    const now = await redisNow();
    await svc.deps.redis.zadd(journalKey(prefix), now - 1, 'late', now + 60_000, 'held');
    await svc.deps.redis.set(payloadKey(prefix, 'late-batch'), 'rows');
    await svc.deps.redis.set(payloadKey(prefix, 'held-batch'), 'rows');
    expect(await journal.sweep(400)).toEqual(['late']);
    expect([...(await journal.renew(['late', 'held'], 120_000))]).toEqual(['late']);
    // Deadlines are on Redis's clock.
    expect(Number(await svc.deps.redis.zscore(journalKey(prefix), 'held'))).toBeGreaterThanOrEqual(now + 120_000);
    // A sweeper that died before queueing what it took leaves it to the next, once its own deadline passed.
    expect(await journal.sweep(400)).toEqual([]);
    await new Promise((r) => setTimeout(r, 500));
    expect(await journal.sweep(400)).toEqual(['late']);
    await journal.recoveredQueued(['late']);
    // Both land at last: the swept one keeps its rows for the job its sweeper queued; the held one's go.
    await journal.landed([
      { entry: 'late', batchId: 'late-batch' },
      { entry: 'held', batchId: 'held-batch' },
    ]);
    expect([await svc.deps.redis.exists(payloadKey(prefix, 'late-batch')), await svc.deps.redis.exists(payloadKey(prefix, 'held-batch'))]).toEqual([1, 0]);
    expect(await svc.deps.redis.zcard(journalKey(prefix))).toBe(0);
    await svc.deps.redis.del(payloadKey(prefix, 'late-batch'));
  });

  it('queues a batch that reaches a worker after it began to close, and lands it through the queue', async () => {
    const before = await stored();
    // A producer that read its worker's room just before the worker closed: its script returns after the close.
    const producer = new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!);
    const closing = startIngestWorker(svc.deps.queues, svc.env.REDIS_URL!, {
      redisPrefix: svc.env.REDIS_PREFIX!,
      store: svc.deps.store,
      logger: svc.deps.logger,
      direct: (sink) => {
        producer.direct({ leaseMs: sink.leaseMs, owner: sink.owner, room: () => true, take: (b, entry, again) => sink.take(b, entry, again) });
        return () => {};
      },
    });
    await closing.close();
    const job = batch(15, 3);
    await producer.enqueue(job);
    const queued = await waitFor(
      () => ingestQueue().getJob(job.batchId),
      (j) => j?.finishedOn !== undefined,
    );
    expect(queued!.data).toMatchObject({ batchId: job.batchId, results: 15, retried: true });
    expect(await stored()).toBe(before + 15);
    await waitFor(
      () => svc.deps.redis.zcard(journalKey(svc.env.REDIS_PREFIX!)),
      (n) => n === 0,
    );
    expect(svc.logs.some((l) => l.includes(job.batchId) && l.includes('reached a closing worker'))).toBe(true);
  });

  it('sends a batch through the queue when the worker of its process has no room for it', async () => {
    const before = await stored();
    const full = new IngestQueue(svc.deps.queues, svc.env.REDIS_PREFIX!);
    full.direct({ leaseMs: 60_000, owner: randomUUID(), room: () => false, take: () => expect.fail('a sink without room took a batch') });
    const job = batch(10, 2);
    await full.enqueue(job);
    expect(await svc.deps.redis.zscore(journalKey(svc.env.REDIS_PREFIX!), job.batchId)).toBeNull();
    const queued = await waitFor(
      () => ingestQueue().getJob(job.batchId),
      (j) => j?.finishedOn !== undefined,
    );
    expect(queued!.data).not.toHaveProperty('retried');
    expect(await stored()).toBe(before + 10);
  });
});
