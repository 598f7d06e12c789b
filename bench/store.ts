/**
 * What the embedded ClickHouse spends per stored result, table by table: one insert a second of N API results (the
 * rows ingest writes, each for another check, as one-minute checks make them) for S seconds, in a fresh data directory,
 * with every table and view, then again without some of them (each variant in its own process: one embedded engine
 * per process). CPU is read per thread of the process (`/proc/self/task`); the engine's threads do the inserts, the
 * views and the merges. Nothing is sent anywhere: the engine is in the process.
 *
 *   npm run bench:store -- [--rows 167] [--seconds 40]
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/platform/config.js';
import { createStore } from '../src/storage/clickhouse/index.js';
import { applyClickhouseDdl } from '../src/storage/clickhouse/ddl.js';
import { toRow } from '../src/ingest/rows.js';
import { ROW_COLUMNS } from '../src/model/results.js';
import { ROOT, threadCpuDelta, threadCpuSeconds } from './harness.js';

const VARIANTS: Record<string, string[]> = {
  'every table and view': [],
  'without the error groups view': ['DROP VIEW IF EXISTS check_error_groups_mv'],
  'without the summary projection': ['ALTER TABLE check_results DROP PROJECTION IF EXISTS summary_by_time_v2'],
  'without the daily rollup view': ['DROP VIEW IF EXISTS check_results_1d_mv'],
  'without the hourly and daily rollup views': ['DROP VIEW IF EXISTS check_results_1h_mv', 'DROP VIEW IF EXISTS check_results_1d_mv'],
  'without any view': ['DROP VIEW IF EXISTS check_results_1h_mv', 'DROP VIEW IF EXISTS check_results_1d_mv', 'DROP VIEW IF EXISTS check_error_groups_mv'],
};

const { values } = parseArgs({ options: { rows: { type: 'string', default: '167' }, seconds: { type: 'string', default: '40' }, variant: { type: 'string' } } });

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
  await applyClickhouseDdl(store, config.clickhouse);
  for (const statement of VARIANTS[variant]) await store.command(statement);
  const accountId = randomUUID();
  const checks = Array.from({ length: 10_000 }, () => randomUUID());
  const timings = { wait: 0, dns: 0, tcp: 0.3, firstByte: 0.8, download: 0.1, total: 1.3 };
  const apiCheckResult = {
    request: { method: 'GET', url: 'http://127.0.0.1:8080/c/1', data: '', headers: { 'user-agent': 'monitoring-service-runner/1' }, params: {} },
    response: { status: 200, statusText: 'OK', body: 'ok', headers: { 'content-type': 'text/plain', date: new Date().toUTCString(), connection: 'close', 'content-length': '2' }, timingPhases: timings },
    assertions: [],
    requestError: null,
    jobLog: { setup: [], request: [], teardown: [] },
  };
  let next = 0;
  const before = threadCpuSeconds(process.pid);
  const started = Date.now();
  for (let s = 0; s < seconds; s++) {
    const at = Date.now();
    const rows = Array.from({ length: rowsPerInsert }, () => {
      const now = new Date().toISOString();
      const item = { apiCheckResult, checkId: checks[next++ % checks.length], checkType: 'API', runLocation: 'eu-west-1', startedAt: now, stoppedAt: now, hasFailures: false, hasErrors: false, isDegraded: false, aborted: false, attempts: 1, responseTime: 1.3, statusCode: 200, timings };
      return [...toRow(accountId, randomUUID(), item as never), false];
    });
    await store.insert('check_results', [...ROW_COLUMNS, 'in_maintenance'], rows as never, { purpose: 'ingest' });
    await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - at))));
  }
  const byThread = threadCpuDelta(before, threadCpuSeconds(process.pid));
  const total = Object.values(byThread).reduce((a, b) => a + b, 0);
  rmSync(dataDir, { recursive: true, force: true });
  return { variant, rowsPerInsert, seconds: Math.round((Date.now() - started) / 100) / 10, cpuSecondsByThread: byThread, cpuMsPerResult: +((total * 1000) / (rowsPerInsert * seconds)).toFixed(3) };
}

if (values.variant) {
  console.log(JSON.stringify(await measure(values.variant)));
  process.exit(0);
}
const results = [];
for (const variant of Object.keys(VARIANTS)) {
  const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/store.ts'), '--rows', values.rows!, '--seconds', values.seconds!, '--variant', variant], { encoding: 'utf8' });
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{')) throw new Error(`${variant}: ${child.stderr}`);
  const r = JSON.parse(line);
  results.push(r);
  console.log(`${variant.padEnd(44)} ${String(r.cpuMsPerResult).padStart(6)} ms a result  ${JSON.stringify(r.cpuSecondsByThread)}`);
}
const file = path.join(ROOT, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-store.json`);
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), results }, null, 2));
console.log(`written to ${path.relative(ROOT, file)}`);
