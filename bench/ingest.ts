/**
 * Ingest bench: `POST /v1/check-results` at C connections, batches of B results each spread over K API checks of
 * the account (runs that just started, ids left to the service; `--late` spreads them over the last hour instead, so
 * every run is older than the rollups' horizon), for S seconds, with the service's defaults (views or ticks, run-id
 * dedup, check state, day marks for the report cache). Runner and scheduler are off, so only posted results land.
 *
 * Measures: results accepted a second (the service's own counter), results landed a second (ClickHouse's count from
 * the first request until every accepted result is counted and the queue is empty), the lag after the load stops,
 * loss (accepted − landed), failed batches, the service's CPU per landed result (and per kind of thread), peak RSS.
 * With `--profile` the service's CPU is profiled over the load and its main thread's time given by stage of the
 * pipeline (body, validation, queue, insert, state; `stages` below) and by owner of the code. `--rate N` posts at most
 * N batches a second (below what the service takes, CPU a result is the pipeline's cost, not a saturated one's).
 * `--beside-store` lands the same rows with the store alone (`bench:store --flat-out`, the service's table set, one
 * connection, as many rows an insert as the service's inserts averaged) before and after the service, for the ratio.
 * After the service stops, `pipelineFloor`: what the four steps every result takes (parse, validate, rows, bytes) cost the main thread, each
 * timed alone on the same bodies, and their sum (the stages that contain them in the service do more); its parse step is
 * also `bodyParseUsPerResult`, what any service written in Node pays before it looks at a result.
 * Writes bench/results/<time>-ingest.json.
 *
 *   npm run bench:ingest -- [--seconds 20] [--connections 4] [--batch 1000] [--checks 500] [--late] [--profile [--allocations]] [--rate N] [--beside-store]
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { compileValidator } from '../src/http/validation.js';
import { toRow } from '../src/ingest/result-rows.js';
import { IngestBody, type ResultItem } from '../src/ingest/schemas.js';
import { jsonWithRowsBytes } from '../src/model/json-bytes.js';
import { ingestJob } from '../src/model/results.js';
import { randomUuid } from '../src/model/uuid.js';
import {
  allocationOwners,
  apiResultItem,
  benchAccount,
  benchEnvironment,
  cpuSeconds,
  mainThreadUsage,
  memoryFigures,
  profileOwners,
  profileStages,
  ROOT,
  removeBenchEnvironment,
  ServiceUnderTest,
  storeVariant,
  threadCpuDelta,
  threadCpuSeconds,
} from './harness.js';
import { load } from './load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    connections: { type: 'string', default: '4' },
    batch: { type: 'string', default: '1000' },
    checks: { type: 'string', default: '500' },
    late: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    allocations: { type: 'boolean', default: false },
    rate: { type: 'string' },
    'beside-store': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const BATCH = Number(values.batch);
const CHECKS = Number(values.checks);
/** Distinct bodies sent in turn: building one per request would spend the bench's CPU beside the service's. */
const BODIES = 32;

/** One body: B results over the checks in turn, started within the last minute (or hour with --late). */
function body(checkIds: string[], n: number, now: number): string {
  const spanMs = values.late ? 3_600_000 : 30_000;
  const results = Array.from({ length: BATCH }, (_, i) => {
    const startedAt = now - spanMs + Math.floor(((i + 1) * spanMs) / BATCH) - (n % 7);
    return apiResultItem(checkIds[(n * BATCH + i) % checkIds.length], startedAt, i);
  });
  return JSON.stringify({ results });
}

async function main() {
  const { env, dataDir } = benchEnvironment();
  env.RUNNER = 'off';
  env.SCHEDULER = 'off';
  const { accountId, key } = await benchAccount(env, 'ingest-bench');
  const svc = await ServiceUnderTest.start(env);
  const headers = { authorization: `Bearer ${key}`, 'x-checkly-account': accountId, 'content-type': 'application/json' };
  let out: Record<string, unknown>;
  let bodies: string[] = [];
  try {
    const checkIds: string[] = [];
    for (let i = 0; i < CHECKS; i++) {
      const res = await fetch(`${svc.url}/v1/checks/api`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          name: `ingest ${i}`,
          activated: false,
          frequency: 1,
          locations: ['eu-west-1'],
          request: { method: 'GET', url: 'http://127.0.0.1:9/x' },
        }),
      });
      if (res.status !== 201) throw new Error(`creating a check answered ${res.status}: ${await res.text()}`);
      checkIds.push(((await res.json()) as { id: string }).id);
    }
    const now = Date.now();
    bodies = Array.from({ length: BODIES }, (_, n) => body(checkIds, n, now));
    let next = 0;
    console.log(
      `${CHECKS} checks; ${CONNECTIONS} connections post ${BATCH}-result batches (${(bodies[0].length / 1024).toFixed(0)} KiB each) for ${SECONDS} s${values.late ? ', runs of the last hour' : ''}`,
    );

    // The service's one full collection after start-up (giveBackStartMemory) falls before the measurement, not in it:
    // a few hundred ms of main thread, once, is no result's cost.
    await svc.ask({ type: 'startSettled' });
    const pid = svc.child.pid!;
    const before = await svc.ask({ type: 'state' });
    const cpu0 = cpuSeconds(pid);
    const threads0 = threadCpuSeconds(pid);
    const main0 = mainThreadUsage(pid);
    let peakRss = 0;
    let atPeak: Record<string, number> = {};
    let maxWaiting = 0;
    let maxOldest = 0;
    // Polls leave the engine alone (`sample`, not `state`: two statements of about 2 ms of its CPU each, every 500 ms);
    // only a new peak asks it for its memory.
    const poll = setInterval(() => {
      void svc.ask({ type: 'sample' }).then(
        (s) => {
          if (s.rssBytes > (atPeak.rssMB ?? 0) * 1048576) {
            const figures = memoryFigures({ ...s, engineBytes: Number.NaN });
            atPeak = figures;
            void svc.ask({ type: 'state' }).then(
              (full) => {
                figures.engineTrackedMB = memoryFigures(full).engineTrackedMB;
              },
              () => {},
            );
          }
          peakRss = Math.max(peakRss, s.peakRssBytes);
          maxWaiting = Math.max(maxWaiting, s.queue.waiting);
          maxOldest = Math.max(maxOldest, s.queue.oldestWaitingSeconds);
        },
        () => {},
      );
    }, 500);
    const profileFile = values.profile ? path.join(mkdtempSync(path.join(os.tmpdir(), 'ingest-prof-')), 'ingest.cpuprofile') : undefined;
    if (profileFile) await svc.ask({ type: 'profile', action: 'start', allocations: values.allocations });
    const started = Date.now();
    const posted = await load({
      url: svc.url,
      key,
      method: 'POST',
      path: '/v1/check-results',
      bodies: () => bodies[next++ % BODIES],
      connections: CONNECTIONS,
      durationSeconds: SECONDS,
      rate: values.rate ? Number(values.rate) : undefined,
    });
    const stopped = Date.now();
    let state = await svc.ask({ type: 'state' });
    const acceptedAtStop = state.queue.acceptedResults - before.queue.acceptedResults;
    let accepted = acceptedAtStop;
    const deadline = Date.now() + 180_000;
    while ((state.rows - before.rows < accepted || state.queue.waiting + state.queue.active + state.queue.delayed > 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      state = await svc.ask({ type: 'state' });
      accepted = state.queue.acceptedResults - before.queue.acceptedResults;
    }
    const drained = Date.now();
    if (profileFile) await svc.ask({ type: 'profile', action: 'stop', file: profileFile });
    clearInterval(poll);
    const cpu = cpuSeconds(pid) - cpu0;
    const threads = threadCpuDelta(threads0, threadCpuSeconds(pid));
    const main1 = mainThreadUsage(pid);
    const landed = state.rows - before.rows;
    const inserts = (state.ingestInserts ?? 0) - (before.ingestInserts ?? 0);
    peakRss = Math.max(peakRss, state.peakRssBytes);
    out = {
      at: new Date(started).toISOString(),
      cores: os.cpus().length,
      seconds: SECONDS,
      connections: CONNECTIONS,
      batch: BATCH,
      checks: CHECKS,
      late: values.late,
      rollups: env.ROLLUPS ?? 'default',
      post: {
        requests: posted.requests,
        p50: posted.latencyMs.p50,
        p99: posted.latencyMs.p99,
        statusCodes: posted.statusCodes,
        errors: posted.errors,
        timeouts: posted.timeouts,
      },
      acceptedPerSecond: Math.round(acceptedAtStop / ((stopped - started) / 1000)),
      landedPerSecond: Math.round(landed / ((drained - started) / 1000)),
      accepted,
      landed,
      lost: accepted - landed,
      lagAfterStopSeconds: +((drained - stopped) / 1000).toFixed(1),
      maxQueueWaiting: maxWaiting,
      maxOldestWaitingSeconds: +maxOldest.toFixed(1),
      failedBatches: state.queue.failed - before.queue.failed,
      cpuCores: +(cpu / ((drained - started) / 1000)).toFixed(2),
      cpuUsPerResult: +((cpu * 1e6) / Math.max(1, landed)).toFixed(1),
      // All threads but the engine's (its pool's and its merges'): the service's own cost of a result.
      mainThreadUsPerResult: +(((threads.main ?? 0) * 1e6) / Math.max(1, landed)).toFixed(1),
      // Of it, the kernel's share (page faults, socket writes) and the page faults themselves.
      mainThreadSystemUsPerResult: +(((main1.systemSeconds - main0.systemSeconds) * 1e6) / Math.max(1, landed)).toFixed(1),
      mainThreadFaultsPerBatch: +(((main1.minorFaults - main0.minorFaults) * BATCH) / Math.max(1, landed)).toFixed(1),
      rate: values.rate ? Number(values.rate) : undefined,
      inserts,
      rowsPerInsert: Math.round(landed / Math.max(1, inserts)),
      threadsSeconds: threads,
      peakRssMB: Math.round(peakRss / 1048576),
      memoryAtPeak: atPeak,
      ...(profileFile ? { stages: profileStages(profileFile, threads.main ?? 0, landed), profile: profileOwners(profileFile, 30), profileFile } : {}),
      ...(profileFile && values.allocations ? { allocated: allocationOwners(profileFile.replace(/\.cpuprofile$/, '.heapprofile'), 30) } : {}),
    };
    console.log(out);
  } finally {
    await svc.stop();
    await removeBenchEnvironment(env, dataDir);
  }
  // With the service stopped: the floor of its first step for these bodies, and what the four steps every result takes cost.
  const floor = pipelineFloorUs(bodies, accountId);
  out.pipelineFloor = floor;
  // The field older result files carry, now the floor's parse step (it was measured a second way beside it).
  out.bodyParseUsPerResult = floor.parse;
  console.log({ bodyParseUsPerResult: out.bodyParseUsPerResult, pipelineFloor: out.pipelineFloor });
  if (values['beside-store']) {
    // The store alone just before (at the start, before the service) would need the insert size first: so after the
    // service, twice, and the service between them is compared with their mean.
    const rows = Number(out.rowsPerInsert) || BATCH;
    const alone = [storeAlone(rows), storeAlone(rows)];
    const mean = (alone[0].rowsPerSecond + alone[1].rowsPerSecond) / 2;
    out.besideStore = {
      storeAlone: alone,
      storeRowsPerSecond: Math.round(mean),
      landedVsStore: +(Number(out.landedPerSecond) / mean).toFixed(2),
    };
    console.log(out.besideStore);
  }
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-ingest.json`);
  writeFileSync(file, JSON.stringify(out, null, 2));
  console.log(`wrote ${path.relative(ROOT, file)}`);
}

/**
 * What four steps every result takes cost this process's main thread (µs a result), each timed alone on the same
 * bodies with nothing around it (no HTTP, queue, Redis, Postgres or engine): `parse` (bytes to text, JSON.parse; not
 * the body middleware's own checks), `validate` (the route's body schema, compiled as the service compiles it), `rows`
 * (each item as its stored row, `toRow`, with a minted id and its detail text already made, as the route calls it) and
 * `bytes` (the rows' JSON as the queue writes it and the insert copies it). A pass goes through the bodies one at a
 * time, as the service takes batches, keeping nothing of one for the next; its input is made beforehand and moved out of
 * the young generation by a full collection, so the collections inside a pass are its own garbage's. A step's figure is
 * its cheapest of seven passes (after one unmeasured). Their `sum`: what these steps cost alone; in the service the
 * stages that contain them do more.
 */
function pipelineFloorUs(bodies: readonly string[], accountId: string) {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;
  const bytes = bodies.map((b) => Buffer.from(b, 'utf8'));
  const validate = compileValidator('body', IngestBody(BATCH));
  const results = bodies.length * BATCH;
  const parse = (b: Buffer) => JSON.parse(b.toString('utf8')) as { results: ResultItem[] };
  const rowsOf = (b: { results: ResultItem[] }) => b.results.map((item) => toRow(accountId, randomUuid(), item, ''));
  /**
   * The cheapest of seven timed passes of `step` over each of the inputs `prepare` makes. The thread's CPU clock moves
   * in scheduler ticks here (a 1.5 ms loop reads 0 or about 4 ms), so a pass goes over its inputs as many times as
   * make it last at least PASS_MS (timed by the wall clock on the unmeasured first pass): a tick is then at most 2 % of it.
   */
  const cheapest = <T>(prepare: () => readonly T[], step: (input: T) => unknown) => {
    let least = Number.POSITIVE_INFINITY;
    let rounds = 1;
    for (let i = 0; i < 8; i++) {
      const inputs = prepare();
      collect();
      const t0 = threadCpu();
      const w0 = performance.now();
      for (let r = 0; r < rounds; r++) for (const input of inputs) step(input);
      const t = threadCpu(t0);
      if (i === 0) rounds = Math.max(1, Math.ceil(PASS_MS / Math.max(0.001, performance.now() - w0)));
      else least = Math.min(least, (t.user + t.system) / rounds);
    }
    return +(least / results).toFixed(2);
  };
  const floor = {
    parse: cheapest(() => bytes, parse),
    validate: cheapest(
      () => bytes.map(parse),
      (b) => validate(b, true),
    ),
    rows: cheapest(() => bytes.map(parse), rowsOf),
    bytes: cheapest(
      () => bytes.map((b) => rowsOf(parse(b))),
      (rows) => jsonWithRowsBytes(ingestJob(randomUuid(), accountId, rows), { starts: [], ends: [] }),
    ),
  };
  return { ...floor, sum: +(floor.parse + floor.validate + floor.rows + floor.bytes).toFixed(2), clock: threadClock };
}

/** How long a timed pass of the floor lasts at least (pipelineFloorUs). */
const PASS_MS = 200;

/** The main thread's CPU where this Node can read it alone (22.19 and later), else the whole process's. */
const threadClock = 'threadCpuUsage' in process ? 'main thread' : 'process';
const threadCpu: (since?: NodeJS.CpuUsage) => NodeJS.CpuUsage =
  'threadCpuUsage' in process ? (process.threadCpuUsage as NodeJS.Process['cpuUsage']).bind(process) : process.cpuUsage.bind(process);

/** The store alone on this machine now: `bench:store --flat-out` with the service's table set, one connection. */
function storeAlone(rows: number): { rowsPerSecond: number; engineCores: number; mainUsPerResult: number } {
  const r = storeVariant('without the hourly and daily rollup views', { rows, seconds: SECONDS, flatOut: true, connections: 1 });
  return {
    rowsPerSecond: r.rowsPerSecond,
    engineCores: r.engineCores,
    mainUsPerResult: +(((r.cpuSecondsByThread.main ?? 0) * 1e6) / (r.rowsPerSecond * r.seconds)).toFixed(1),
  };
}

await main();
