/**
 * The service under test, started exactly as src/server.ts starts it, plus an IPC channel for the bench:
 * the engine floor (a report's compiled SQL run straight on the store, no HTTP, no Koa), row counts, queue
 * state and memory. Only the bench starts this file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import v8 from 'node:v8';
import {
  budgetSettings,
  CATALOGS,
  compileErrorGroups,
  planReport,
  planSummary,
  type QuickRange,
  type ReportQuery,
  type RollupTicks,
  reportCache,
  reportQuery,
} from '../src/analytics/index.js';
import { findCheckRow } from '../src/checks/index.js';
import { compileValidator } from '../src/http/validation.js';
import { loadConfig } from '../src/platform/config.js';
import { boundHeapGrowth, giveBackStartMemory } from '../src/platform/heap.js';
import { createLogger } from '../src/platform/logger.js';
import { startService } from '../src/service.js';
import type { FloorRequest, Sample, ServiceMessage, ServiceReply } from './protocol.js';

// As src/server.ts starts the service; BENCH_V8_FLAGS (V8 flags set after it) to try others.
boundHeapGrowth();
if (process.env.BENCH_V8_FLAGS) v8.setFlagsFromString(process.env.BENCH_V8_FLAGS);
const service = await startService(loadConfig(), createLogger((process.env.BENCH_LOG_LEVEL as 'warn' | undefined) ?? 'warn'));
// As src/server.ts does once it listens; a bench that measures steady work waits for it ('startSettled').
const startSettled = giveBackStartMemory();
const { store } = service.deps;

/** The same validation and planning the report route runs (the check's volume included), so the floor runs the same SQL. */
async function compile(req: FloorRequest) {
  if (req.kind === 'errorGroups') return compileErrorGroupsFloor(req);
  if (req.kind === 'summary') return planSummary(req.accountId, req.checkIds, req.quickRange as QuickRange, service.deps.config.analytics);
  const catalog = CATALOGS.find((c) => c.segment === req.segment)!;
  const schema = reportQuery(catalog);
  const query = compileValidator('query', schema, { strings: true })(Object.fromEntries(new URLSearchParams(req.query))) as ReportQuery;
  const { plan } = planReport(catalog, req.accountId, req.checkId, query, service.deps.config.analytics);
  if (!plan.pageCandidate) return plan;
  const check = await findCheckRow(service.deps.sql, req.accountId, req.checkId);
  return planReport(catalog, req.accountId, req.checkId, query, service.deps.config.analytics, Date.now(), check).plan;
}

/**
 * The error-groups route's query (the view's groups of the account's checks, or of one), or the same groups computed
 * from the runs when the request asks: the view's own SELECT (from system.tables) over the account's runs in its place.
 */
async function compileErrorGroupsFloor(req: Extract<FloorRequest, { kind: 'errorGroups' }>) {
  const ids = req.checkId
    ? [req.checkId]
    : (await service.deps.sql<{ id: string }[]>`select id from checks where account_id = ${req.accountId}`).map((c) => c.id);
  const { sql, params } = compileErrorGroups(req.accountId, ids, { limit: 100, page: 1 });
  const settings = budgetSettings(service.deps.config.analytics);
  if (req.source === 'view') return { sql, params, settings };
  const [view] = await store.query<{ q: string }>(
    "SELECT as_select AS q FROM system.tables WHERE database = currentDatabase() AND name = 'check_error_groups_mv'",
    {},
  );
  const runs = view.q.replace(
    /FROM\s+(\w+\.)?check_results\b/,
    'FROM (SELECT * FROM check_results WHERE account_id = {accountId:UUID} AND check_id IN {checkIds:Array(UUID)})',
  );
  if (runs === view.q) throw new Error('the error groups view reads no check_results');
  return { sql: sql.replace('FROM check_error_groups', `FROM (${runs})`), params, settings };
}

function memory() {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  const m = process.memoryUsage();
  return {
    rssBytes: kb('VmRSS') * 1024,
    peakRssBytes: kb('VmHWM') * 1024,
    rssAnonBytes: kb('RssAnon') * 1024,
    rssFileBytes: kb('RssFile') * 1024,
    heapUsedBytes: m.heapUsed,
    heapTotalBytes: m.heapTotal,
    externalBytes: m.external,
  };
}

/** What the embedded engine's memory tracker counts (its allocations: caches, parts being merged, queries). */
async function engineMemory(): Promise<number> {
  const [row] = await store.query<{ v: number }>("SELECT value AS v FROM system.metrics WHERE metric = 'MemoryTracking'", {});
  return Number(row?.v ?? 0);
}

/** The queue, the rollup tick under way and the service's counters: nothing the engine is asked. */
async function sample(): Promise<Sample> {
  const ticks = (store as { rollupTicks?: RollupTicks }).rollupTicks;
  return {
    queue: await service.deps.ingest.stats(),
    rollingTo: ticks?.rollingTo,
    ingestInserts: (await service.deps.metrics.ingestInserts.get()).values[0]?.value ?? 0,
    // Absent in code from before the definition cache (a bench of it alternated with this harness).
    definitions: Object.fromEntries(
      ((await (service.deps.metrics as Partial<typeof service.deps.metrics>).runDefinitions?.get())?.values ?? []).map((v) => [String(v.labels.from), v.value]),
    ),
  };
}

/** The inspector session of a CPU profile the bench asked for (bench/api.ts), while one runs. */
let profiler: Session | undefined;
/** Whether the allocation sampler runs beside that profile. */
let sampling = false;

async function handle(msg: ServiceMessage): Promise<ServiceReply> {
  switch (msg.type) {
    case 'floor': {
      const { sql, params, settings } = await compile(msg.request);
      const wallMs: number[] = [];
      const engineMs: number[] = [];
      let rowsRead = 0;
      for (let i = 0; i < msg.runs; i++) {
        const started = performance.now();
        const { stats } = await store.queryWithStats(sql, params, { settings });
        wallMs.push(performance.now() - started);
        engineMs.push(stats.elapsedMs);
        rowsRead = stats.rowsRead;
      }
      return { type: 'floor', sql, wallMs, engineMs, rowsRead };
    }
    case 'saturate': {
      const { sql, params, settings } = await compile(msg.request);
      const started = performance.now();
      const until = started + msg.seconds * 1000;
      let queries = 0;
      const caller = async () => {
        while (performance.now() < until) {
          await store.query(sql, params, { settings });
          queries++;
        }
      };
      await Promise.all(Array.from({ length: msg.concurrency }, caller));
      return { type: 'saturate', queries, seconds: (performance.now() - started) / 1000 };
    }
    case 'state': {
      const [{ rows }] = msg.checkId
        ? await store.query<{ rows: number }>('SELECT count() AS rows FROM check_results WHERE check_id = {checkId:UUID}', { checkId: msg.checkId })
        : await store.query<{ rows: number }>('SELECT count() AS rows FROM check_results');
      return { type: 'state', rows: Number(rows), engineBytes: await engineMemory(), ...(await sample()), ...memory() };
    }
    case 'sample':
      return { type: 'sample', ...(await sample()), ...memory() };
    case 'memory':
      if (msg.gc) {
        const session = new Session();
        session.connect();
        await session.post('HeapProfiler.collectGarbage');
        session.disconnect();
      }
      return { type: 'memory', ...memory() };
    case 'runs': {
      const rows = await store.query<{ checkId: string; startedAt: number; failed: boolean }>(
        `SELECT toString(check_id) AS checkId, toUnixTimestamp64Milli(started_at) AS startedAt, has_failures AS failed FROM check_results
         WHERE account_id = {accountId:UUID} AND started_at >= {from:DateTime64(3, 'UTC')} AND started_at < {to:DateTime64(3, 'UTC')}`,
        {
          accountId: msg.accountId,
          from: new Date(msg.from).toISOString().replace('T', ' ').slice(0, 23),
          to: new Date(msg.to).toISOString().replace('T', ' ').slice(0, 23),
        },
      );
      return { type: 'runs', runs: rows.map((r) => ({ checkId: r.checkId, startedAt: Number(r.startedAt), failed: Boolean(r.failed) })) };
    }
    case 'reportCache': {
      const settings = service.deps.config.reportCache;
      if (msg.markDays !== undefined) settings.markDays = msg.markDays;
      return { type: 'reportCache', markDays: settings.markDays !== false, stats: reportCache(settings.maxBytes).stats() };
    }
    case 'profile': {
      profiler ??= new Session();
      if (msg.action === 'start') {
        profiler.connect();
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.start');
        if (msg.allocations) {
          sampling = true;
          await profiler.post('HeapProfiler.enable');
          // Every 16 KB allocated on average, kept whether or not a collection took it since: allocation, not retention.
          await profiler.post('HeapProfiler.startSampling', {
            samplingInterval: 16_384,
            // V8 takes these (since 10.x); Node's types do not list them yet.
            ...{ includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true },
          });
        }
      } else {
        const { profile } = await profiler.post('Profiler.stop');
        writeFileSync(msg.file, JSON.stringify(profile));
        if (sampling) {
          const { profile: heap } = await profiler.post('HeapProfiler.stopSampling');
          writeFileSync(msg.file.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(heap));
          sampling = false;
        }
        profiler.disconnect();
        profiler = undefined;
      }
      return { type: 'profile' };
    }
    case 'startSettled':
      await startSettled;
      return { type: 'startSettled' };
    case 'settle':
      // chdb runs parameterized queries one at a time, in order: once this one answers, every report
      // still queued from the previous load level has finished and the next level starts on an idle engine.
      await store.query('SELECT {settled:UInt8} AS settled', { settled: 1 });
      return { type: 'settle' };
  }
}

process.on('message', (msg: ServiceMessage & { id: number }) => {
  handle(msg).then(
    (reply) => process.send!({ ...reply, id: msg.id }),
    (err: Error) => process.send!({ type: 'error', id: msg.id, message: err.message }),
  );
});
process.once('SIGTERM', () => {
  service.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
process.send!({ type: 'ready', url: service.url, id: 0 });
