/**
 * What the embedded ClickHouse spends per stored result, table by table: one insert a second of N API results (the
 * rows ingest writes, each for another check, as one-minute checks make them) for S seconds, in a fresh data directory,
 * with every table and view, then again without some of them (each variant in its own process: one embedded engine
 * per process). CPU is read per thread of the process (`/proc/self/task`); the engine's threads do the inserts, the
 * views and the merges. Nothing is sent anywhere: the engine is in the process.
 *
 * With `--flat-out` the inserts go back to back instead, on `--connections` connections to the one engine (rows built
 * once, before the clock; each insert encodes them as ingest does, on the main thread, reported apart): the rows a
 * second the engine can land at all on this machine, and the cores it takes.
 *
 *   npm run bench:store -- [--rows 167] [--seconds 40] [--flat-out [--connections 1]] [--variants 'a|b']
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { toRow } from '../src/ingest/result-rows.js';
import { ROW_COLUMNS } from '../src/model/results.js';
import { loadConfig } from '../src/platform/config.js';
import { applyClickhouseDdl } from '../src/storage/clickhouse/ddl.js';
import { createStore, type Store } from '../src/storage/clickhouse/index.js';
import { ROOT, storeVariant, threadCpuDelta, threadCpuSeconds } from './harness.js';

/** The rollup views dropped, as the embedded engine runs by default (ROLLUPS=ticks: no view on insert). */
const TICKS = ['DROP VIEW IF EXISTS check_results_1h_mv', 'DROP VIEW IF EXISTS check_results_1d_mv'];

const VARIANTS: Record<string, string[]> = {
  'every table and view': [],
  'without the error groups view': ['DROP VIEW IF EXISTS check_error_groups_mv'],
  'without the summary projection': ['ALTER TABLE check_results DROP PROJECTION IF EXISTS summary_by_time_v2'],
  'without the daily rollup view': ['DROP VIEW IF EXISTS check_results_1d_mv'],
  'without the hourly and daily rollup views': TICKS,
  'without any view': [...TICKS, 'DROP VIEW IF EXISTS check_error_groups_mv'],
  // The raw table's part format: an insert of more than 10 MiB uncompressed (about 20,000 API results) is a Wide part
  // by default, a file per column and per projection column; Compact writes one.
  'rollup ticks, raw parts Wide from 10 MiB': [...TICKS, 'ALTER TABLE check_results MODIFY SETTING min_bytes_for_wide_part = 10485760'],
  'rollup ticks, raw parts Compact to 256 MiB': [...TICKS, 'ALTER TABLE check_results MODIFY SETTING min_bytes_for_wide_part = 268435456'],
};

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '167' },
    seconds: { type: 'string', default: '40' },
    variant: { type: 'string' },
    variants: { type: 'string' },
    'flat-out': { type: 'boolean', default: false },
    connections: { type: 'string', default: '1' },
  },
});

if (!Number.isInteger(Number(values.connections)) || Number(values.connections) < 1) throw new Error('--connections takes a whole number from 1');

/** One variant, in this process: its CPU per result and per thread. */
async function measure(variant: string) {
  const rowsPerInsert = Number(values.rows);
  const seconds = Number(values.seconds);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'monitoring-bench-store-'));
  // The store alone: no Postgres is opened (the URL is only read).
  // The views' cost is what this measures (ROLLUPS=views); with ticks (the embedded default) there are none.
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/unused', ROLLUPS: 'views' };
  delete env.CLICKHOUSE_URL;
  const config = loadConfig(env);
  const store = createStore(config);
  const extra: Store[] = [];
  await applyClickhouseDdl(store, config.clickhouse);
  for (const statement of VARIANTS[variant]) await store.command(statement);
  const accountId = randomUUID();
  const checks = Array.from({ length: 10_000 }, () => randomUUID());
  const timings = { wait: 0, dns: 0, tcp: 0.3, firstByte: 0.8, download: 0.1, total: 1.3 };
  const apiCheckResult = {
    request: { method: 'GET', url: 'http://127.0.0.1:8080/c/1', data: '', headers: { 'user-agent': 'monitoring-service-runner/1' }, params: {} },
    response: {
      status: 200,
      statusText: 'OK',
      body: 'ok',
      headers: { 'content-type': 'text/plain', date: new Date().toUTCString(), connection: 'close', 'content-length': '2' },
      timingPhases: timings,
    },
    assertions: [],
    requestError: null,
    jobLog: { setup: [], request: [], teardown: [] },
  };
  let next = 0;
  const batch = () =>
    Array.from({ length: rowsPerInsert }, () => {
      const now = new Date().toISOString();
      const item = {
        apiCheckResult,
        checkId: checks[next++ % checks.length],
        checkType: 'API',
        runLocation: 'eu-west-1',
        startedAt: now,
        stoppedAt: now,
        hasFailures: false,
        hasErrors: false,
        isDegraded: false,
        aborted: false,
        attempts: 1,
        responseTime: 1.3,
        statusCode: 200,
        timings,
      };
      return [...toRow(accountId, randomUUID(), item as never), false];
    });
  const insert = (rows: unknown[][], into: Store = store) =>
    // As ingest inserts: a deduplication token per insert (the service's is its batches' ids), so a batch sent again
    // with another token is stored again.
    into.insert('check_results', [...ROW_COLUMNS, 'in_maintenance'], rows as never, {
      purpose: 'ingest',
      settings: { insert_deduplication_token: randomUUID() },
    });
  let inserted = 0;
  const before = threadCpuSeconds(process.pid);
  const started = Date.now();
  if (values['flat-out']) {
    // Back to back on each connection (the engine runs one statement at a time a connection), cycling through
    // batches built before the clock started: the rows are made once; each insert still encodes its rows as the
    // service's does (on the main thread, reported apart).
    const batches = Array.from({ length: 4 }, batch);
    const connections = [store, ...Array.from({ length: Number(values.connections) - 1 }, () => createStore(config))];
    extra.push(...connections.slice(1));
    let turn = 0;
    await Promise.all(
      connections.map(async (into) => {
        while (Date.now() - started < seconds * 1000) {
          await insert(batches[turn++ % batches.length]!, into);
          inserted += rowsPerInsert;
        }
      }),
    );
  } else {
    for (let s = 0; s < seconds; s++) {
      const at = Date.now();
      await insert(batch());
      inserted += rowsPerInsert;
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - at))));
    }
  }
  const elapsed = (Date.now() - started) / 1000;
  const byThread = threadCpuDelta(before, threadCpuSeconds(process.pid));
  const total = Object.values(byThread).reduce((a, b) => a + b, 0);
  // What the raw table's parts are after the run (merges still running are not counted above).
  const parts = await store.query<{ part_type: string; parts: string }>(
    `SELECT part_type, toString(count()) AS parts FROM system.parts WHERE database = currentDatabase() AND table = 'check_results' AND active GROUP BY part_type ORDER BY part_type`,
  );
  for (const other of extra) await other.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
  const engine = total - (byThread.main ?? 0);
  return {
    variant,
    rowsPerInsert,
    seconds: Math.round(elapsed * 10) / 10,
    rowsPerSecond: Math.round(inserted / elapsed),
    engineCores: +(engine / elapsed).toFixed(2),
    cpuSecondsByThread: byThread,
    cpuMsPerResult: +((total * 1000) / inserted).toFixed(4),
    engineUsPerResult: +((engine * 1e6) / inserted).toFixed(1),
    rawParts: Object.fromEntries(parts.map((p) => [p.part_type, Number(p.parts)])),
  };
}

if (values.variant) {
  console.log(JSON.stringify(await measure(values.variant)));
  process.exit(0);
}
const results = [];
// --variants 'a|b': only those, in that order (a name may repeat, to alternate).
const chosen = values.variants ? values.variants.split('|') : Object.keys(VARIANTS);
for (const variant of chosen) {
  if (!VARIANTS[variant]) throw new Error(`no variant "${variant}"; there are: ${Object.keys(VARIANTS).join(', ')}`);
  const r = storeVariant(variant, { rows: values.rows!, seconds: values.seconds!, flatOut: values['flat-out'], connections: values.connections });
  results.push(r);
  console.log(
    `${variant.padEnd(44)} ${String(r.cpuMsPerResult).padStart(6)} ms a result  ${r.rowsPerSecond} rows/s  engine ${r.engineCores} cores  parts ${JSON.stringify(r.rawParts)}  ${JSON.stringify(r.cpuSecondsByThread)}`,
  );
}
const file = path.join(ROOT, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-store.json`);
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(
  file,
  JSON.stringify(
    {
      at: new Date().toISOString(),
      rowsPerInsert: Number(values.rows),
      seconds: Number(values.seconds),
      flatOut: values['flat-out'],
      connections: Number(values.connections),
      results,
    },
    null,
    2,
  ),
);
console.log(`written to ${path.relative(ROOT, file)}`);
