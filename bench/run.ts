/**
 * npm run bench [-- --quick]
 *
 * Starts the service in embedded mode on a fresh database, Redis prefix and data directory, fills it with
 * the `seed` command, warms up, runs every scenario with autocannon at fixed concurrency levels, runs each
 * report's compiled SQL straight on the store for the engine floor, writes bench/results/<timestamp>.json
 * (and, for a full run, the table in bench/README.md), and tears everything down.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dropDatabase } from '../src/storage/postgres.js';
import { deleteKeysWithPrefix } from '../src/storage/redis.js';
import { apiResultItem, benchEnvironment, ROOT, runCli, ServiceUnderTest, settle } from './harness.js';
import { type LoadResult, latencyStats, load, round } from './load.js';
import type { FloorRequest } from './protocol.js';
import { type BenchResults, evaluateTargets, type IngestResult, type ScenarioResult, writeReadme } from './results.js';

const quick = process.argv.includes('--quick');

/**
 * Quick keeps 30 days of the wide checks (scenario 2's target is about them), seeds 90 rather than 365 days of
 * the multi-step check's history and shrinks the rest.
 */
const PROFILE = quick
  ? { levels: [1, 32], seconds: 3, ingestSeconds: 6, manyChecks: 100, manyDays: 3, yearDays: 90 }
  : { levels: [1, 8, 32], seconds: 10, ingestSeconds: 15, manyChecks: 200, manyDays: 30, yearDays: 365 };
const WIDE = { locations: 22, frequency: 1, days: 30 };
/** The engine's own saturated throughput is measured at the HTTP run's highest concurrency. */
const SATURATE_SECONDS = quick ? 3 : 10;
const MANY_TYPES = 'api,url,browser,multistep,playwright,tcp,dns,icmp,heartbeat';
const INGEST_CONNECTIONS = 4;
const INGEST_BATCH = 1000;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const { runId, dataDir, env } = benchEnvironment();
const cli = (...args: string[]) => runCli(env, ...args);

interface Scenario {
  id: string;
  title: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  floor?: FloorRequest;
  /** Report scenarios are held to the 32-connection scaling target. */
  report?: boolean;
  headers?: Record<string, string>;
  /** Connection levels when not the profile's (a scenario slow enough that 32 connections only queue). */
  levels?: number[];
}

const seconds = (ms: number) => Math.round(ms / 10) / 100;

function summarize(r: LoadResult) {
  const { samples: _samples, ...rest } = r;
  return { ...rest, ok: r.errors === 0 && r.timeouts === 0 && r.non2xx === 0 };
}

async function main() {
  const started = Date.now();
  let service: ServiceUnderTest | undefined;
  let peakRss = 0;
  let sampler: NodeJS.Timeout | undefined;
  try {
    log(`${quick ? 'quick' : 'full'} run ${runId}: database monitoring_bench_${runId}, data ${dataDir}`);
    await cli('migrate');
    const accountId = await cli('create-account', '--name', 'bench');
    const key = await cli('create-key', '--account', accountId, '--role', 'admin', '--name', 'bench');
    // The bench account gets its own high limit through the normal per-account setting.
    await cli('set-rate-limit', '--account', accountId, '--points', '100000000', '--window', '60');
    const seedStarted = Date.now();
    const seed = async (checks: number, types: string, locations: number, frequency: number, days: number, seed: number) =>
      JSON.parse(
        await cli(
          'seed',
          '--account',
          accountId,
          '--checks',
          String(checks),
          '--types',
          types,
          '--locations',
          String(locations),
          '--frequency',
          String(frequency),
          '--days',
          String(days),
          '--seed',
          String(seed),
        ),
      ) as { checks: { id: string; checkType: string }[]; rows: number; rowsPerSecond: number };
    const year = await seed(1, 'multistep', WIDE.locations, WIDE.frequency, PROFILE.yearDays, 1);
    const icmpSeed = await seed(1, 'icmp', WIDE.locations, WIDE.frequency, WIDE.days, 3);
    const many = await seed(PROFILE.manyChecks, MANY_TYPES, 4, 10, PROFILE.manyDays, 2);
    const wideRows = year.rows + icmpSeed.rows;
    const seeding = {
      wideRows,
      manyRows: many.rows,
      seconds: seconds(Date.now() - seedStarted),
      rowsPerSecond: Math.round((wideRows + many.rows) / ((Date.now() - seedStarted) / 1000)),
    };
    log(`seeded ${wideRows + many.rows} rows in ${seeding.seconds} s`);

    // The seeded checks are not run here (runners have their own bench): their runs would land among the ingest
    // scenario's count and move what the reports read while they are measured.
    service = await ServiceUnderTest.start({ ...env, SCHEDULER: 'off', RUNNER: 'off' });
    const svc = service;
    sampler = setInterval(() => {
      svc.ask({ type: 'memory' }).then(
        (m) => (peakRss = Math.max(peakRss, m.peakRssBytes)),
        () => {},
      );
    }, 1000);

    const multistep = year.checks[0].id;
    const icmp = icmpSeed.checks[0].id;
    const summaryIds = many.checks.slice(0, 100).map((c) => c.id);
    const apiCheck = many.checks.find((c) => c.checkType === 'API')!.id;
    const report = (id: string, segment: string, checkId: string, query: string, title: string): Scenario => ({
      id,
      title,
      method: 'GET',
      path: `/v1/analytics/${segment}/${checkId}?${query}`,
      floor: { kind: 'report', segment, accountId, checkId, query },
      report: true,
    });
    const summary = (id: string, range: string): Scenario => ({
      id,
      title: `4. summary of 100 checks, ${range}`,
      method: 'POST',
      path: `/v1/analytics/checks?quickRange=${range}`,
      body: JSON.stringify({ checkIds: summaryIds }),
      floor: { kind: 'summary', accountId, checkIds: summaryIds, quickRange: range },
    });
    const grouped = 'metrics=responseTime_p95,responseTime_avg,availability&groupBy=runLocation';
    const s2 = report(
      'report-30d-hourly-grouped',
      'multistep-checks',
      multistep,
      `quickRange=last30Days&${grouped}&aggregationInterval=60`,
      '2. multi-step, last30Days, p95+avg+availability, hourly, by location',
    );
    const yearFrom = Math.floor(Date.now() / 1000) - 365 * 86_400;
    const scenarios: Scenario[] = [
      report(
        'report-24h-raw',
        'multistep-checks',
        multistep,
        'quickRange=last24Hours&metrics=responseTime&limit=100',
        '1. multi-step, last24Hours, raw responseTime, limit 100',
      ),
      s2,
      report(
        'report-30d-hourly-grouped-counts',
        'multistep-checks',
        multistep,
        'quickRange=last30Days&metrics=responseTime_avg,responseTime_max,availability&groupBy=runLocation&aggregationInterval=60',
        '2. no percentiles: multi-step, last30Days, avg+max+availability, hourly, by location',
      ),
      report(
        'report-30d-hourly-grouped-exact',
        'multistep-checks',
        multistep,
        `quickRange=last30Days&${grouped}&aggregationInterval=60&precision=exact`,
        '2. exact: multi-step, last30Days, p95+avg+availability, hourly, by location, precision=exact',
      ),
      report(
        'report-365d-daily-grouped',
        'multistep-checks',
        multistep,
        `quickRange=last30Days&from=${yearFrom}&${grouped}&aggregationInterval=1440`,
        `2. year: multi-step, last 365 days (${PROFILE.yearDays} seeded), p95+avg+availability, daily, by location`,
      ),
      // The same two with the report cache bypassed (every bucket read now), side by side in this run.
      { ...s2, id: 'report-30d-hourly-grouped-uncached', title: `${s2.title}, Cache-Control: no-cache`, headers: { 'cache-control': 'no-cache' } },
      {
        ...report(
          'report-365d-daily-grouped-uncached',
          'multistep-checks',
          multistep,
          `quickRange=last30Days&from=${yearFrom}&${grouped}&aggregationInterval=1440`,
          `2. year: multi-step, last 365 days (${PROFILE.yearDays} seeded), p95+avg+availability, daily, by location, Cache-Control: no-cache`,
        ),
        headers: { 'cache-control': 'no-cache' },
      },
      report(
        'report-icmp-7d-daily',
        'icmp',
        icmp,
        'quickRange=last7Days&metrics=latencyAvg_p99,packetLoss_avg&aggregationInterval=1440',
        '3. ICMP, last7Days, latencyAvg_p99+packetLoss_avg, daily',
      ),
      summary('summary-100-last24Hours', 'last24Hours'),
      {
        ...summary('summary-100-last24Hours-uncached', 'last24Hours'),
        title: '4. summary of 100 checks, last24Hours, Cache-Control: no-cache',
        headers: { 'cache-control': 'no-cache' },
      },
      {
        id: 'reporting-30d',
        title: `7. GET /v1/reporting, every check of the account (${many.checks.length + 2}), last30Days`,
        method: 'GET',
        path: '/v1/reporting?quickRange=last30Days',
      },
      {
        id: 'reporting-30d-uncached',
        title: `7. GET /v1/reporting, every check of the account (${many.checks.length + 2}), last30Days, Cache-Control: no-cache`,
        method: 'GET',
        path: '/v1/reporting?quickRange=last30Days',
        headers: { 'cache-control': 'no-cache' },
      },
      // Longer than 32 days: the daily rollup serves whole UTC days inside the zone's weeks (auto) or every run is read
      // (exact); both uncached, one connection (the exact one takes seconds).
      ...(['auto', 'exact'] as const).map(
        (precision): Scenario => ({
          id: `reporting-90d-weekly-${precision}-uncached`,
          title: `7. GET /v1/reporting, every check (${many.checks.length + 2}), 90 days, weekly in America/New_York, precision=${precision}, Cache-Control: no-cache`,
          method: 'GET',
          path: `/v1/reporting?from=${Math.floor(Date.now() / 1000) - 90 * 86_400}&to=${Math.floor(Date.now() / 1000)}&granularity=week&timezone=America/New_York&precision=${precision}`,
          headers: { 'cache-control': 'no-cache' },
          levels: [1],
        }),
      ),
      summary('summary-100-lastMonth', 'lastMonth'),
      // Error groups (of every check, and of the multi-step check's 90 or 365 days of failures) read from the view.
      {
        id: 'error-groups-account',
        title: `8. GET /v1/error-groups, every check (${many.checks.length + 2}), limit 100`,
        method: 'GET',
        path: '/v1/error-groups?limit=100',
        floor: { kind: 'errorGroups', accountId, source: 'view' },
      },
      {
        id: 'error-groups-check',
        title: `8. GET /v1/error-groups/checks/{id}, multi-step (${PROFILE.yearDays} days), limit 100`,
        method: 'GET',
        path: `/v1/error-groups/checks/${multistep}?limit=100`,
        floor: { kind: 'errorGroups', accountId, checkId: multistep, source: 'view' },
      },
      { id: 'crud-get-check', title: '6. GET /v1/checks/{id}', method: 'GET', path: `/v1/checks/${apiCheck}` },
      {
        id: 'crud-create-browser',
        title: '6. POST /v1/checks/browser',
        method: 'POST',
        path: '/v1/checks/browser',
        body: JSON.stringify({ name: 'bench browser check', script: '// bench' }),
      },
    ];

    log('warming up');
    for (const s of scenarios.filter((s) => s.floor)) {
      await load({ url: svc.url, key, method: s.method, path: s.path, body: s.body, headers: s.headers, connections: 1, durationSeconds: 1 });
      await svc.ask({ type: 'floor', request: s.floor!, runs: 5 });
    }

    const results: ScenarioResult[] = [];
    for (const s of scenarios) {
      const levels = [];
      let floor: ScenarioResult['floor'];
      for (const connections of s.levels ?? PROFILE.levels) {
        await settle(svc);
        const r = await load({
          url: svc.url,
          key,
          method: s.method,
          path: s.path,
          body: s.body,
          headers: s.headers,
          connections,
          durationSeconds: PROFILE.seconds,
        });
        levels.push(summarize(r));
        log(
          `${s.id} c=${connections}: ${r.requestsPerSecond} req/s, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
        );
        // The floor runs right after the 1-connection level, under the same conditions.
        if (s.floor && connections === PROFILE.levels[0]) floor = await measureFloor(svc, s, levels[0]);
      }
      const saturated = s.floor ? await measureSaturated(svc, s) : undefined;
      results.push({
        id: s.id,
        title: s.title,
        method: s.method,
        path: s.path.replace(/\?.*/, ''),
        query: s.path.split('?')[1],
        report: !!s.report,
        levels,
        floor,
        saturated,
      });
    }

    // The alternative to the error groups' view: the same groups computed from the runs at read time.
    const errorGroups: NonNullable<BenchResults['errorGroups']> = [];
    for (const [id, checkId] of [
      ['error-groups-account', undefined],
      ['error-groups-check', multistep],
    ] as const) {
      const view = results.find((r) => r.id === id)?.floor;
      await settle(svc);
      const f = await svc.ask({ type: 'floor', request: { kind: 'errorGroups', accountId, checkId, source: 'runs' }, runs: 5 });
      const runs = { storeMs: latencyStats(f.wallMs).p50, engineMs: latencyStats(f.engineMs).p50, rowsRead: f.rowsRead };
      errorGroups.push({ id, view: view ? { storeMs: view.storeMs.p50, engineMs: view.engineMs.p50, rowsRead: view.rowsRead } : undefined, runs });
      log(`${id} grouped from the runs: store p50 ${runs.storeMs} ms (engine ${runs.engineMs} ms), rows read ${runs.rowsRead}`);
    }

    const cache = await svc.ask({ type: 'reportCache' });
    log(
      `report cache: ${cache.stats.entries} entries, ${(cache.stats.bytes / 2 ** 20).toFixed(2)} MiB of ${cache.stats.maxBytes / 2 ** 20} MiB, ${cache.stats.hits} hits, ${cache.stats.misses} misses`,
    );
    log('ingest under report load');
    await settle(svc);
    const ingest = await ingestScenario(svc, key, apiCheck, s2);
    // What marking days for the report cache costs ingest: the same load without and with it in this run, in the
    // order off, on, on, off (rounds get faster as the engine warms: the order cancels a steady drift). The cache
    // stays on; the ingest check is not the one scenario 2 reads, so its answers stay the same.
    const ingestMarking: { markDays: boolean; result: IngestResult }[] = [];
    for (const markDays of [false, true, true, false]) {
      log(`ingest under report load, ingest marking days ${markDays ? 'on' : 'off'}`);
      await svc.ask({ type: 'reportCache', markDays });
      await settle(svc);
      ingestMarking.push({ markDays, result: await ingestScenario(svc, key, apiCheck, s2) });
    }
    await svc.ask({ type: 'reportCache', markDays: true });

    peakRss = Math.max(peakRss, (await svc.ask({ type: 'memory' })).peakRssBytes);
    const out: BenchResults = {
      startedAt: new Date(started).toISOString(),
      mode: quick ? 'quick' : 'full',
      machine: { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 2 ** 30, 1), node: process.version },
      data: {
        wide: `1 multi-step check (${PROFILE.yearDays} days) and 1 ICMP monitor (${WIDE.days} days), ${WIDE.locations} locations, every ${WIDE.frequency} min`,
        many: `${PROFILE.manyChecks} checks of mixed types, 4 locations, every 10 min, ${PROFILE.manyDays} days`,
        seeding,
      },
      scenarios: results,
      ingest,
      ingestMarking,
      errorGroups,
      reportCache: cache.stats,
      service: { peakRssBytes: peakRss },
      durationSeconds: seconds(Date.now() - started),
      targets: [],
      ok: false,
    };
    out.targets = evaluateTargets(out);
    out.ok = results.every((r) => r.levels.every((l) => l.ok)) && ingest.ok && ingestMarking.every((m) => m.result.ok);
    const dir = path.join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${out.startedAt.replace(/[:.]/g, '-')}${quick ? '-quick' : ''}.json`);
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    log(`results: ${path.relative(ROOT, file)}`);
    const table = writeReadme(out, path.join(ROOT, 'bench/README.md'), !quick);
    process.stdout.write(`${table}\n`);
    if (!out.ok) {
      log('FAILED: a scenario had errors or non-2xx responses (see the table)');
      process.exitCode = 1;
    }
  } finally {
    if (sampler) clearInterval(sampler);
    await service?.stop().catch(() => {});
    await dropDatabase(env.DATABASE_URL!).catch((e) => log(`drop database: ${(e as Error).message}`));
    await deleteKeysWithPrefix(env.REDIS_URL!, env.REDIS_PREFIX!).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The engine floor: the scenario's compiled SQL straight on the store, as many times as the HTTP run made requests. */
async function measureFloor(svc: ServiceUnderTest, s: Scenario, http: { requests: number; latencyMs: { p50: number } }): Promise<ScenarioResult['floor']> {
  await settle(svc);
  const runs = Math.max(20, Math.min(http.requests, 3000));
  const f = await svc.ask({ type: 'floor', request: s.floor!, runs });
  const wall = latencyStats(f.wallMs);
  const engine = latencyStats(f.engineMs);
  const floor = {
    runs,
    sql: f.sql,
    storeMs: wall,
    engineMs: engine,
    rowsRead: f.rowsRead,
    httpOverStore: round(http.latencyMs.p50 / wall.p50),
  };
  log(`${s.id} floor: store p50 ${floor.storeMs.p50} ms (engine ${floor.engineMs.p50} ms), HTTP ÷ store ${floor.httpOverStore}, rows read ${f.rowsRead}`);
  return floor;
}

/**
 * The engine's own saturated throughput for the scenario's compiled SQL: as many concurrent callers as the
 * HTTP run's top level, straight on the store in the service process, for a fixed time.
 */
async function measureSaturated(svc: ServiceUnderTest, s: Scenario): Promise<ScenarioResult['saturated']> {
  await settle(svc);
  const concurrency = PROFILE.levels[PROFILE.levels.length - 1];
  const r = await svc.ask({ type: 'saturate', request: s.floor!, concurrency, seconds: SATURATE_SECONDS });
  const saturated = { concurrency, queries: r.queries, seconds: r.seconds, queriesPerSecond: round(r.queries / r.seconds) };
  log(`${s.id} engine saturated: ${saturated.queriesPerSecond} queries/s at ${concurrency} concurrent`);
  return saturated;
}

/** One ingest body: 1000 results of one check over the last hour; ids are left to the service. */
function ingestBody(checkId: string): string {
  const now = Date.now();
  const results = Array.from({ length: INGEST_BATCH }, (_, i) => {
    const startedAt = now - 3_600_000 + i * 3_600;
    return apiResultItem(checkId, startedAt, i);
  });
  return JSON.stringify({ results });
}

async function ingestScenario(svc: ServiceUnderTest, key: string, checkId: string, concurrent: Scenario) {
  const before = await svc.ask({ type: 'state', checkId });
  let maxWaiting = 0;
  let maxOldest = 0;
  const poll = setInterval(() => {
    svc.ask({ type: 'state', checkId }).then(
      (s) => {
        maxWaiting = Math.max(maxWaiting, s.queue.waiting);
        maxOldest = Math.max(maxOldest, s.queue.oldestWaitingSeconds);
      },
      () => {},
    );
  }, 500);
  const loadStarted = Date.now();
  const [posted, reports] = await Promise.all([
    load({
      url: svc.url,
      key,
      method: 'POST',
      path: '/v1/check-results',
      body: ingestBody(checkId),
      connections: INGEST_CONNECTIONS,
      durationSeconds: PROFILE.ingestSeconds,
    }),
    load({ url: svc.url, key, method: concurrent.method, path: concurrent.path, connections: 1, durationSeconds: PROFILE.ingestSeconds }),
  ]);
  const loadStopped = Date.now();
  clearInterval(poll);
  // autocannon drops the responses still in flight when the duration ends, but the service may have
  // accepted those batches: the service's own count is the truth, the 202s seen are a lower bound.
  let state = await svc.ask({ type: 'state', checkId });
  // Requests still in flight when the load stopped may be accepted after this first look: the count is taken
  // again with every poll (taken once, batches accepted later showed as landed beyond what was accepted).
  let accepted = state.queue.acceptedResults - before.queue.acceptedResults;
  const acceptedAtStop = accepted;
  const seen = (posted.statusCodes['202'] ?? 0) * INGEST_BATCH;
  const deadline = Date.now() + 120_000;
  while ((state.rows - before.rows < accepted || state.queue.waiting + state.queue.active + state.queue.delayed > 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    state = await svc.ask({ type: 'state', checkId });
    accepted = state.queue.acceptedResults - before.queue.acceptedResults;
  }
  const drained = Date.now();
  const landed = state.rows - before.rows;
  const result = {
    seconds: PROFILE.ingestSeconds,
    connections: INGEST_CONNECTIONS,
    batchSize: INGEST_BATCH,
    post: summarize(posted),
    acceptedResults: accepted,
    acceptedResponsesSeen: seen,
    acceptedPerSecond: Math.round(acceptedAtStop / ((loadStopped - loadStarted) / 1000)),
    landedResults: landed,
    landedPerSecond: Math.round(landed / ((drained - loadStarted) / 1000)),
    lagAfterStopSeconds: seconds(drained - loadStopped),
    maxQueueWaiting: maxWaiting,
    maxOldestWaitingSeconds: round(maxOldest),
    failedBatches: state.queue.failed,
    lost: accepted - landed,
    concurrentReport: { id: concurrent.id, ...summarize(reports) },
    ok: false,
  };
  result.ok = result.post.ok && result.concurrentReport.ok && result.lost === 0 && result.failedBatches === 0 && seen <= accepted;
  log(`ingest: accepted ${result.acceptedPerSecond}/s, landed ${result.landedPerSecond}/s, lag ${result.lagAfterStopSeconds} s, lost ${result.lost}`);
  return result;
}

main().catch((err) => {
  log(`bench failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
