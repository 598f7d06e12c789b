/**
 * What rolling the runs up costs the embedded engine (ROLLUPS=ticks), by how often the horizon moves: N one-minute
 * checks' runs of one hour (N × 60 API results, as ingest stores them) in a fresh data directory, then either ticks of
 * a minute (the horizon moved every minute, as before; the first `--sample` minutes are measured and the hour's cost
 * is that × 60 ÷ sample) or one tick of the hour (the horizon moved in whole hours, split into statements of at most
 * 2,000 checks). The seeded runs are merged into one part first. Each way in its own process (one engine per process; peak RSS is the process's). CPU is the whole
 * process's (the engine's threads do the work) over the ticks only. Writes bench/results/<time>-ticks.json.
 *
 *   npm run bench:ticks -- [--checks 10000] [--sample 5] [--ways minute,hour] [--rollup-settings 'merge_max_block_size = 1024']
 *                          [--beside 2] [--beside-load 0.85] [--priorities background,normal]
 *
 * Besides the process's RSS, it samples the engine's memory tracker and its merges' memory every 200 ms, through
 * the merges the tick sets off, and names the largest merge.
 *
 * `--beside N` runs N busy threads (each busy `--beside-load` of the time) in the same process through the ticks (as the service's main thread shares the
 * process, and the cores, with the engine): their work a second while the ticks run, against theirs just before, is
 * what the ticks took from the service. `--priorities` measures each way with the tick's statements below the
 * service's threads (`background`, the default: QueryOptions.background) and as before (`normal`), each in its own
 * process.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { RollupTicks } from '../src/analytics/rollup-ticks.js';
import { TIERS } from '../src/analytics/rollups.js';
import { toRow } from '../src/ingest/result-rows.js';
import { ROW_COLUMNS } from '../src/model/results.js';
import { toClickHouseTime } from '../src/model/time.js';
import { loadConfig } from '../src/platform/config.js';
import { createLogger } from '../src/platform/logger.js';
import { applyClickhouseDdl } from '../src/storage/clickhouse/ddl.js';
import { createStore } from '../src/storage/clickhouse/index.js';
import { cpuSeconds, ROOT } from './harness.js';

const { values } = parseArgs({
  options: {
    checks: { type: 'string', default: '10000' },
    sample: { type: 'string', default: '5' },
    way: { type: 'string' },
    'rollup-settings': { type: 'string' },
    ways: { type: 'string', default: 'minute,hour' },
    beside: { type: 'string', default: '0' },
    'beside-load': { type: 'string', default: '1' },
    priority: { type: 'string' },
    priorities: { type: 'string', default: 'background' },
  },
});
const BESIDE = Number(values.beside);
const BESIDE_LOAD = Math.min(1, Math.max(0.05, Number(values['beside-load'])));
/** MergeTree settings for both rollup tables before the ticks, to try how they change the merges (`name = 1, other = 2`). */
const ROLLUP_SETTINGS = values['rollup-settings'] ?? '';
if (ROLLUP_SETTINGS && !/^[a-z_]+ = \d+(, [a-z_]+ = \d+)*$/.test(ROLLUP_SETTINGS)) throw new Error('--rollup-settings: "name = 1, other = 2"');
const CHECKS = Number(values.checks);
const SAMPLE = Number(values.sample);
const MINUTE = 60_000;
const HOUR = 3_600_000;

/**
 * N threads that each want `load` of a core (busy that share of every 100 ms): each counts the rounds of a fixed piece of work into its slot of a shared array.
 * `rate()` is their rounds a second since the last call.
 */
async function busyThreads(n: number, load: number) {
  const busyMs = Math.round(100 * load);
  const idleMs = 100 - busyMs;
  const counts = new BigInt64Array(new SharedArrayBuffer(8 * Math.max(1, n)));
  const workers = Array.from(
    { length: n },
    (_, i) =>
      new Worker(
        `const { workerData, parentPort } = require('node:worker_threads');
         parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
         const counts = workerData.counts; const idle = new Int32Array(new SharedArrayBuffer(4)); let x = 0;
         for (;;) {
           const until = performance.now() + ${busyMs};
           while (performance.now() < until) { for (let j = 0; j < 20000; j++) x = (x * 31 + j) % 1000003; Atomics.add(counts, ${i}, 1n); }
           if (${idleMs} > 0) Atomics.wait(idle, 0, 0, ${idleMs});
         }`,
        { eval: true, workerData: { counts } },
      ),
  );
  const tids = await Promise.all(workers.map((w) => new Promise<string>((resolve) => w.once('message', resolve))));
  /** Their CPU so far, in seconds (/proc/<tid> is each thread's own). */
  const cpu = () => tids.reduce((a, tid) => a + cpuSeconds(Number(tid)), 0);
  const total = () => counts.reduce((a, c) => a + Number(c), 0);
  let last = { at: performance.now(), rounds: total() };
  return {
    rate() {
      const now = { at: performance.now(), rounds: total() };
      const r = ((now.rounds - last.rounds) * 1000) / Math.max(1, now.at - last.at);
      last = now;
      return r;
    },
    cpu,
    stop: () => Promise.all(workers.map((w) => w.terminate())),
  };
}

const status = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;

async function measure(way: 'minute' | 'hour', priority: 'background' | 'normal') {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'monitoring-bench-ticks-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/unused', ROLLUPS: 'ticks' };
  delete env.CLICKHOUSE_URL;
  const config = loadConfig(env);
  const store = createStore(config);
  await applyClickhouseDdl(store, config.clickhouse);
  const accountId = randomUUID();
  const checks = Array.from({ length: CHECKS }, () => randomUUID());
  const base = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  // One run of every check each minute of the hour, inserted a minute at a time as ingest would.
  for (let m = 0; m < 60; m++) {
    for (let from = 0; from < CHECKS; from += 20_000) {
      const rows = checks.slice(from, from + 20_000).map((checkId, i) => {
        const at = new Date(base + m * MINUTE + (((from + i) * 7) % MINUTE)).toISOString();
        const item = {
          checkId,
          checkType: 'API',
          runLocation: 'eu-west-1',
          startedAt: at,
          stoppedAt: at,
          hasFailures: (from + i + m) % 97 === 0,
          hasErrors: false,
          isDegraded: false,
          aborted: false,
          attempts: 1,
          responseTime: 100 + ((i * 13 + m) % 300),
          statusCode: 200,
          timings: { wait: 1, dns: 2, tcp: 3, firstByte: 80 + (i % 40), download: 10 },
        };
        return [...toRow(accountId, randomUUID(), item as never), false, ''];
      });
      await store.insert('check_results', [...ROW_COLUMNS, 'in_maintenance', 'late_batch'], rows, {
        settings: { insert_deduplication_token: `seed-${m}-${from}` },
      });
    }
  }
  // The seeded parts merged first, so no merge of them runs beside the ticks measured.
  await store.command('OPTIMIZE TABLE check_results FINAL');
  await store.command("INSERT INTO rollup_state (key, at) VALUES ('rolled_through', {at:DateTime64(3, 'UTC')})", { at: toClickHouseTime(base) });
  if (ROLLUP_SETTINGS) for (const tier of TIERS) await store.command(`ALTER TABLE ${tier.table} MODIFY SETTING ${ROLLUP_SETTINGS}`);
  // The engine's memory tracker and its merges' memory, every 200 ms (one sample at a time: the embedded engine runs
  // one query at a time), through the merges the tick sets off: what the peak above the process's was made of.
  const engine = { peakMB: 0, mergesPeakMB: 0, largestMerge: { table: '', parts: 0, rowsRead: 0, memoryMB: 0 } };
  let sampling = true;
  const sampled = (async () => {
    const mb = (b: number) => Math.round(Number(b) / 1048576);
    while (sampling) {
      const rows = await store
        .query<{ table: string; num_parts: number; rows_read: number; memory_usage: number; tracked: number }>(
          "SELECT table, num_parts, rows_read, memory_usage, (SELECT value FROM system.metrics WHERE metric = 'MemoryTracking') AS tracked FROM system.merges UNION ALL SELECT '', 0, 0, 0, (SELECT value FROM system.metrics WHERE metric = 'MemoryTracking')",
          {},
        )
        .catch(() => []);
      engine.peakMB = Math.max(engine.peakMB, mb(rows[0]?.tracked ?? 0));
      const merges = rows.filter((r) => r.table);
      engine.mergesPeakMB = Math.max(engine.mergesPeakMB, mb(merges.reduce((a, r) => a + Number(r.memory_usage), 0)));
      for (const r of merges) {
        if (mb(r.memory_usage) >= engine.largestMerge.memoryMB)
          engine.largestMerge = { table: r.table, parts: Number(r.num_parts), rowsRead: Number(r.rows_read), memoryMB: mb(r.memory_usage) };
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const ticks = new RollupTicks(store, {
    logger: createLogger('warn'),
    everyMs: 24 * HOUR,
    stepMs: way === 'minute' ? MINUTE : HOUR,
    lagMs: 0,
    background: priority === 'background',
  });
  // Far in the future: start() only reads the horizon (no tick is pending).
  await ticks.start(base);
  // The peak from here on is the ticks' (writing 5 to clear_refs resets VmHWM to the current RSS).
  writeFileSync('/proc/self/clear_refs', '5');
  const rssBefore = status('VmRSS');
  // The service's work beside the ticks: its rate alone (the engine idle), then while the ticks run.
  const busy = BESIDE ? await busyThreads(BESIDE, BESIDE_LOAD) : undefined;
  let busyAlone = 0;
  if (busy) {
    await new Promise((r) => setTimeout(r, 1000));
    busy.rate();
    await new Promise((r) => setTimeout(r, 4000));
    busyAlone = busy.rate();
  }
  const cpu0 = cpuSeconds(process.pid) - (busy?.cpu() ?? 0);
  const started = performance.now();
  const minutes = way === 'minute' ? SAMPLE : 60;
  if (way === 'minute') for (let m = 1; m <= SAMPLE; m++) await ticks.tick(base + m * MINUTE);
  else await ticks.tick(base + HOUR);
  const seconds = (performance.now() - started) / 1000;
  // The ticks' CPU: the process's, less the busy threads'.
  const cpu = cpuSeconds(process.pid) - (busy?.cpu() ?? 0) - cpu0;
  const busyDuring = busy ? busy.rate() : 0;
  await busy?.stop();
  if (ticks.rolledThrough !== base + minutes * MINUTE) throw new Error(`the horizon is at ${ticks.rolledThrough}, not ${base + minutes * MINUTE}`);
  const [rolled] = await store.query<{ day: number; hour: number }>(
    `SELECT (SELECT sum(runs) FROM check_results_1d) AS day, (SELECT sum(runs) FROM check_results_1h) AS hour`,
  );
  if (Number(rolled.day) !== CHECKS * minutes || Number(rolled.hour) !== CHECKS * minutes)
    throw new Error(`rolled ${JSON.stringify(rolled)}, not ${CHECKS * minutes} each`);
  // The rollup tables' merges the tick set off run after it: their memory is the tick's too (sampled until none runs).
  for (let i = 0; i < 60; i++) {
    const [running] = await store.query<{ n: number }>('SELECT count() AS n FROM system.merges', {});
    if (Number(running?.n ?? 0) === 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  sampling = false;
  await sampled;
  await ticks.close();
  try {
    rmSync(dataDir, { recursive: true, force: true });
  } catch {
    // merges still writing; the temporary directory goes with the machine
  }
  const scale = 60 / minutes;
  return {
    way,
    priority,
    checks: CHECKS,
    minutesRolled: minutes,
    cpuSecondsPerHour: +(cpu * scale).toFixed(2),
    wallSecondsPerHour: +(seconds * scale).toFixed(2),
    cpuUsPerRun: +((cpu * 1e6) / (CHECKS * minutes)).toFixed(1),
    longestStatementSeconds: way === 'minute' ? +(seconds / minutes).toFixed(2) : +seconds.toFixed(2),
    rssBeforeMB: Math.round(rssBefore / 1048576),
    peakRssMB: Math.round(status('VmHWM') / 1048576),
    engine,
    ...(busy
      ? {
          beside: {
            threads: BESIDE,
            load: BESIDE_LOAD,
            /** Their work a second while the ticks ran, as a share of theirs just before (1: the ticks took nothing from them). */
            shareWhileTicking: +(busyAlone ? busyDuring / busyAlone : 0).toFixed(3),
            /** What that cost them, in seconds of one core, scaled to an hour. */
            coreSecondsTakenPerHour: +(BESIDE * BESIDE_LOAD * (1 - (busyAlone ? busyDuring / busyAlone : 0)) * seconds * scale).toFixed(1),
          },
        }
      : {}),
    ...(ROLLUP_SETTINGS ? { rollupSettings: ROLLUP_SETTINGS } : {}),
  };
}

if (values.way) {
  console.log(JSON.stringify(await measure(values.way as 'minute' | 'hour', (values.priority ?? 'background') as 'background' | 'normal')));
  process.exit(0);
}
const results = [];
const WAYS = values.ways.split(',');
if (!WAYS.every((w) => w === 'minute' || w === 'hour')) throw new Error('--ways: minute, hour or both');
const PRIORITIES = values.priorities.split(',');
if (!PRIORITIES.every((p) => p === 'background' || p === 'normal')) throw new Error('--priorities: background, normal or both');
for (const way of WAYS) {
  for (const priority of PRIORITIES) {
    const args = [
      '--checks',
      String(CHECKS),
      '--sample',
      String(SAMPLE),
      '--way',
      way,
      '--priority',
      priority,
      '--beside',
      String(BESIDE),
      '--beside-load',
      String(BESIDE_LOAD),
      ...(ROLLUP_SETTINGS ? ['--rollup-settings', ROLLUP_SETTINGS] : []),
    ];
    const child = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/ticks.ts'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    if (child.status !== 0 || !line.startsWith('{')) throw new Error(`${way} ${priority}: ${child.stderr.slice(-2000)}`);
    const r = JSON.parse(line);
    results.push(r);
    console.log(r);
  }
}
const file = path.join(ROOT, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-ticks.json`);
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), cores: os.cpus().length, results }, null, 2));
console.log(`wrote ${path.relative(ROOT, file)}`);
