/** What every bench run shares: its own database, Redis prefix and data directory, the CLI, the service under test. */
import { type ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeHeapFlags } from '../src/platform/heap.js';
import { phaseOf } from '../src/runners/index.js';
import { dropDatabase } from '../src/storage/postgres.js';
import { deleteKeysWithPrefix } from '../src/storage/redis.js';
import type { Memory, ServiceMessage, ServiceReply } from './protocol.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A fresh database, Redis prefix and data directory for one bench run, and the environment naming them. */
export function benchEnvironment() {
  const runId = randomBytes(4).toString('hex');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'monitoring-bench-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/monitoring_bench_${runId}`,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `bench:${runId}:`,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    // An unused admin key, so first start does not print a generated one.
    BOOTSTRAP_API_KEY: `bench_bootstrap_${randomBytes(24).toString('hex')}`,
    // Bench traffic stays on this machine (docs/outbound.md).
    OUTBOUND_PUBLIC: 'false',
    OUTBOUND_ALLOW: '127.0.0.0/8',
  };
  delete env.CLICKHOUSE_URL;
  return { runId, dataDir, env };
}

/** Removes what benchEnvironment made: the database, the Redis keys under the prefix, the data directory. */
export async function removeBenchEnvironment(env: NodeJS.ProcessEnv, dataDir: string): Promise<void> {
  await dropDatabase(env.DATABASE_URL!);
  await deleteKeysWithPrefix(env.REDIS_URL!, env.REDIS_PREFIX!);
  rmSync(dataDir, { recursive: true, force: true });
}

/** The CLI, as a user runs it; stdout is the command's answer, stderr (progress bars) passes through. */
export function runCli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`cli ${args[0]} exited ${code}`))));
  });
}

/**
 * Migrates the bench's database and makes its account: an admin key and the account's own rate limit raised to
 * `points` a minute (the normal per-account setting: limiting stays on). `cli` runs further CLI commands.
 */
export async function benchAccount(env: NodeJS.ProcessEnv, name: string, points = 100_000_000) {
  const cli = (...args: string[]) => runCli(env, ...args);
  await cli('migrate');
  const accountId = await cli('create-account', '--name', name);
  const key = await cli('create-key', '--account', accountId, '--role', 'admin');
  await cli('set-rate-limit', '--account', accountId, '--points', String(points), '--window', '60');
  return { cli, accountId, key };
}

/** An autocannon load's result, refused when any request erred, timed out or answered other than 2xx. */
export function cleanLoad<R extends { errors: number; non2xx: number; timeouts: number }>(result: R): R {
  if (result.errors || result.non2xx || result.timeouts)
    throw new Error(`load had ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
  return result;
}

/** The service's heap flags as `npm start` passes them, or BENCH_HEAP_FLAGS (space-separated; empty for V8's own) to try others. */
function serviceHeapFlags(): string[] {
  const tried = process.env.BENCH_HEAP_FLAGS;
  return tried === undefined ? [...nodeHeapFlags] : tried.split(/\s+/).filter(Boolean);
}

/** bench/service.ts in a child process, asked over IPC. */
export class ServiceUnderTest {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: ServiceReply) => void; reject: (e: Error) => void }>();
  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static start(env: NodeJS.ProcessEnv): Promise<ServiceUnderTest> {
    const child = fork(path.join(ROOT, 'bench/service.ts'), [], {
      cwd: ROOT,
      env,
      execArgv: [...serviceHeapFlags(), '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`service exited during start-up (${code})`)));
      child.once('message', (msg: { type: string; url: string }) => {
        const svc = new ServiceUnderTest(child, msg.url);
        child.removeAllListeners('exit');
        child.on('message', (m: ServiceReply & { id: number; message?: string }) => svc.settle(m));
        child.on('exit', (code) => {
          for (const p of svc.pending.values()) p.reject(new Error(`service exited (${code})`));
          svc.pending.clear();
        });
        resolve(svc);
      });
    });
  }

  private settle(m: ServiceReply & { id: number; message?: string }) {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if ((m as { type: string }).type === 'error') p.reject(new Error(m.message));
    else p.resolve(m);
  }

  ask<T extends ServiceReply['type']>(msg: ServiceMessage & { type: T }): Promise<Extract<ServiceReply, { type: T }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: ServiceReply) => void, reject });
      this.child.send({ ...msg, id });
    });
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/**
 * `npm run runner` as a user starts it (`workers/runner.ts` with the service's heap flags), serving `locations`, in a
 * child process with the bench's environment: runs made beside the service, not in it. Resolves once it has started
 * (a second; its queues connect lazily); `stop` ends it as a user would (SIGTERM).
 */
export async function startRunnerProcess(env: NodeJS.ProcessEnv, locations: string[]): Promise<{ pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [...serviceHeapFlags(), '--import', 'tsx', 'workers/runner.ts', '--locations', locations.join(',')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, 3000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`runner exited during start-up (${code})`));
    });
  });
  child.removeAllListeners('exit');
  return { pid: child.pid!, stop: () => stopChild(child) };
}

/** Ends a child process as a user would (SIGTERM) and waits for it to exit. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Resident memory of a live process, in bytes (`VmRSS`), or 0 once it has ended. */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Waits until the engine has finished what earlier load queued (see bench/service.ts), then a moment more. */
export async function settle(svc: ServiceUnderTest): Promise<void> {
  await svc.ask({ type: 'settle' });
  await new Promise((r) => setTimeout(r, 250));
}

/** A target for runner benches: answers every path 200 at once and counts the requests. */
export async function startCountingTarget(): Promise<{ url: string; hits: () => number; close: () => void }> {
  let hits = 0;
  const target = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  target.keepAliveTimeout = 5000;
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(target.address() as AddressInfo).port}`, hits: () => hits, close: () => void target.close() };
}

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds per kind of thread of a live process (`/proc/<pid>/task`): the main (JavaScript) thread, libuv's
 * pool, V8's helpers, and the embedded ClickHouse's threads, by their names. Threads that ended are not counted.
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\d:/-]+$/, '') || 'other';
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** The process's main thread: its CPU in user and system mode (seconds) and the minor page faults it took. */
export function mainThreadUsage(pid: number): { userSeconds: number; systemSeconds: number; minorFaults: number } {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return { userSeconds: Number(fields[11]) / 100, systemSeconds: Number(fields[12]) / 100, minorFaults: Number(fields[7]) };
}

/**
 * CPU seconds (user + system) of every process named `name` (for example `postgres`, `redis-server`) by pid: what the
 * service's stores spend on this machine beside it. Compare two readings with `processCpuDelta`.
 */
export function processCpuSeconds(name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== name) continue;
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      out.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return out;
}

/** What the processes of two `processCpuSeconds` readings spent between them (those that started meanwhile, all of theirs), in seconds. */
export function processCpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return Math.round(total * 100) / 100;
}

/** What each kind of thread spent between two `threadCpuSeconds` readings, largest first, in seconds. */
export function threadCpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const delta = Object.entries(after).map(([k, v]) => [k, Math.round((v - (before[k] ?? 0)) * 100) / 100] as const);
  return Object.fromEntries(delta.filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]));
}

/**
 * The one-minute (or `periodMs`) slots of `checkIds` in [start, end) and the stored runs that fall in them: each run
 * goes to the slot its start belongs to (by the check's phase), late by its start minus the slot's. `expected` counts
 * the slots; a slot with no run is missed, one with several is duplicated.
 */
export function slotRuns(
  runs: readonly { checkId: string; startedAt: number; failed?: boolean }[],
  checkIds: readonly string[],
  start: number,
  end: number,
  periodMs: number,
) {
  const ids = new Set(checkIds);
  const bySlot = new Map<string, number>();
  const lateness: number[] = [];
  /** Lateness by the minute the slot is in (epoch ms of the minute). */
  const byMinute = new Map<number, number[]>();
  let failed = 0;
  for (const r of runs) {
    if (!ids.has(r.checkId)) continue;
    const phase = phaseOf(r.checkId, periodMs);
    const slot = Math.floor((r.startedAt - phase) / periodMs) * periodMs + phase;
    if (slot < start || slot >= end) continue;
    lateness.push(r.startedAt - slot);
    const minute = Math.floor(slot / 60_000) * 60_000;
    const list = byMinute.get(minute);
    if (list) list.push(r.startedAt - slot);
    else byMinute.set(minute, [r.startedAt - slot]);
    const key = `${r.checkId}:${slot}`;
    bySlot.set(key, (bySlot.get(key) ?? 0) + 1);
    if (r.failed) failed++;
  }
  let expected = 0;
  for (const id of checkIds) {
    const phase = phaseOf(id, periodMs);
    for (let slot = Math.ceil((start - phase) / periodMs) * periodMs + phase; slot < end; slot += periodMs) expected++;
  }
  const duplicated = [...bySlot.values()].filter((n) => n > 1).reduce((a, n) => a + n - 1, 0);
  return { expected, found: bySlot.size, missed: expected - bySlot.size, duplicated, lateness, failed, byMinute };
}

/** The value at quantile q of an ascending list (NaN when empty). */
export const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);

/** Self time per owner of the code: a package, a file of src/, node's internals, or V8's own entries (GC, program). */
/** A V8 CPU profile as written by the inspector (`Profiler.stop`). */
function readProfile(file: string) {
  return JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: { id: number; callFrame: { url: string; functionName: string }; children?: number[] }[];
    samples: number[];
    timeDeltas: number[];
  };
}

/** Who owns a profiled frame: its package, its file under src/ or bench/, Node's module, or V8's name for it. */
function ownerOfFrame(url: string, functionName: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  const src = /\/((?:src|bench)\/.+?)(?:\?.*)?$/.exec(url)?.[1];
  return pkg ?? src ?? (url.startsWith('node:') ? `node:${url.slice(5).split('/')[0]}` : url ? 'other' : functionName || '(native)');
}

export function profileOwners(file: string, top = 18) {
  const profile = readProfile(file);
  const ownerOf = new Map<number, string>();
  for (const node of profile.nodes) {
    ownerOf.set(node.id, ownerOfFrame(node.callFrame.url, node.callFrame.functionName));
  }
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const owner = ownerOf.get(id)!;
    if (owner === '(idle)') return;
    const us = profile.timeDeltas[i] ?? 0;
    self.set(owner, (self.get(owner) ?? 0) + us);
    total += us;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([owner, us]) => ({ owner, share: +((100 * us) / total).toFixed(1) }));
}

/** A V8 sampling heap profile as the inspector writes it (`HeapProfiler.stopSampling`). */
interface HeapProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapProfileNode[];
}

/**
 * What was allocated while a sampling heap profile ran (bench/service.ts `allocations`), in MB: by owner of the code
 * that allocated (as profileOwners), and by function (owner, name and line), the largest first.
 */
export function allocationOwners(file: string, top = 25) {
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapProfileNode };
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapProfileNode) => {
    const { url, functionName, lineNumber } = node.callFrame;
    const owner = ownerOfFrame(url, functionName);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + node.selfSize);
    const fn = `${owner} ${functionName || '(anonymous)'}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(head);
  const mb = (bytes: number) => +(bytes / 1e6).toFixed(1);
  const largest = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, bytes]) => ({ name, mb: mb(bytes) }));
  return { totalMb: mb(total), byOwner: largest(byOwner), byFunction: largest(byFunction) };
}

/**
 * Where the ingest pipeline's main-thread time goes, from a CPU profile: each sample is given to the nearest frame up
 * its stack that marks a stage (the specific stages first, the clients' and Koa's generic ones only where no specific
 * one is on the stack), as a share of the profile and in µs a result of `mainSeconds` over `results`. Async stacks
 * are cut at their await: a reply read by ioredis or postgres counts under their client, not the caller.
 */
const STAGES: [string, (fn: string, url: string) => boolean, boolean?][] = [
  ['garbage collection', (f) => f === '(garbage collector)'],
  ['HTTP body: read and JSON.parse (koa-body)', (_f, u) => /co-body|raw-body|koa-body|iconv-lite|src\/http\/body\.ts/.test(u)],
  ['validation (ajv, text checks)', (f, u) => /src\/http\/validation\.ts|ajv/.test(u) || /^validate\d+$/.test(f)],
  ['queue: add a batch (its rows to Redis, BullMQ add)', (f, u) => /src\/ingest\/queue\.ts/.test(u) || (f === 'addJob' && /bullmq/.test(u))],
  [
    'queue: take a batch (BullMQ, reading the rows back)',
    (f, u) => /bullmq/.test(u) && /moveToFinished|moveToActive|fromJSON|getNextJob|processJob|retryIfFailed|mainLoop|waitForJob/.test(f),
  ],
  ['run-id dedup and maintenance lookups', (_f, u) => /src\/ingest\/dedup\.ts|src\/maintenance/.test(u)],
  ['day marks for the report cache', (_f, u) => /src\/storage\/generations\.ts/.test(u)],
  ['insert: rows encoded, the engine called', (_f, u) => /src\/storage\/clickhouse\/|src\/analytics\/rollup-ticks\.ts/.test(u)],
  ['check state and alerts', (_f, u) => /src\/state\/|src\/alerts\//.test(u)],
  ['ingest worker (runs, group commit)', (_f, u) => /src\/ingest\/worker\.ts|src\/ingest\/group-commit\.ts|src\/model\/runs\.ts/.test(u)],
  [
    'route handler (checks looked up, rules, rows made)',
    (_f, u) => /src\/ingest\/routes\.ts|src\/ingest\/result-rows\.ts|src\/model\/time\.ts|src\/checks\//.test(u),
  ],
  ['HTTP: auth, rate limit, routing, reply (Koa)', (_f, u) => /src\/http\/|src\/app\.ts|koa|node:_http|src\/accounts\//.test(u), true],
  ['Redis client: replies and writes (ioredis)', (_f, u) => /ioredis/.test(u), true],
  ['Postgres client: replies and writes', (_f, u) => /node_modules\/postgres/.test(u), true],
];

export function profileStages(file: string, mainSeconds: number, results: number) {
  const profile = readProfile(file);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const find = (id: number, generic: boolean) => {
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const { functionName, url } = byId.get(n)!.callFrame;
      const stage = STAGES.find(([, marks, isGeneric]) => (generic || !isGeneric) && marks(functionName, url));
      if (stage) return stage[0];
    }
  };
  const memo = new Map<number, string>();
  const tally = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    const us = profile.timeDeltas[i] ?? 0;
    let stage = memo.get(id);
    if (stage === undefined) {
      stage = find(id, false) ?? find(id, true) ?? 'other';
      memo.set(id, stage);
    }
    tally.set(stage, (tally.get(stage) ?? 0) + us);
    total += us;
  });
  return [...tally.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([stage, us]) => ({
      stage,
      share: +((100 * us) / total).toFixed(1),
      usPerResult: +(((us / total) * mainSeconds * 1e6) / Math.max(1, results)).toFixed(1),
    }));
}

/** One `bench:store` variant in a process of its own (one embedded engine a process): its JSON report. */
export function storeVariant(variant: string, opts: { rows: number | string; seconds: number | string; flatOut?: boolean; connections?: number | string }) {
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'bench/store.ts'),
      '--rows',
      String(opts.rows),
      '--seconds',
      String(opts.seconds),
      ...(opts.flatOut ? ['--flat-out', '--connections', String(opts.connections ?? 1)] : []),
      '--variant',
      variant,
    ],
    { encoding: 'utf8' },
  );
  const line = child.stdout.trim().split('\n').pop() ?? '';
  if (child.status !== 0 || !line.startsWith('{')) throw new Error(`bench:store ${variant}: ${child.stderr}`);
  return JSON.parse(line);
}

/** One API check's result as `POST /v1/check-results` takes it: started at `startedAt` (epoch ms), the i-th of its batch. */
export function apiResultItem(checkId: string, startedAt: number, i: number) {
  return {
    checkId,
    checkType: 'API',
    runLocation: 'eu-west-1',
    startedAt: new Date(startedAt).toISOString(),
    stoppedAt: new Date(startedAt + 180).toISOString(),
    hasFailures: i % 97 === 0,
    hasErrors: false,
    isDegraded: false,
    aborted: false,
    attempts: 1,
    responseTime: 150 + (i % 50),
    statusCode: 200,
    timings: { wait: 2, dns: 8, tcp: 12, firstByte: 90, download: 38 },
  };
}

/** What the service's memory was made of in one state sample, in MB (the figures benches report at the peak). */
export function memoryFigures(s: Memory & { engineBytes: number }): Record<string, number> {
  const mb = (b: number) => Math.round(b / 1048576);
  return {
    rssMB: mb(s.rssBytes),
    anonMB: mb(s.rssAnonBytes),
    fileMB: mb(s.rssFileBytes),
    heapUsedMB: mb(s.heapUsedBytes),
    heapTotalMB: mb(s.heapTotalBytes),
    externalMB: mb(s.externalBytes),
    engineTrackedMB: mb(s.engineBytes),
  };
}
