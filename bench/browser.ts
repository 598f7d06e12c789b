/**
 * Browser bench: one runner process running browser checks (a click-through of a local two-page shop) in its
 * sandboxed Chromium, at 1 and 2 runs at once, each level run as the sandbox now runs (the pinned Node 22 runtime,
 * Chromium's headless shell, the compile cache) and as before (the service's own Node, the full Chromium, no
 * cache), alternated in the same process. Measures runs per minute, CPU per run (the runs' processes, counted by a
 * cpuacct cgroup where this process can make one, else the whole machine's busy time) and the resident memory of
 * the runs' processes (bubblewrap, Node, Chromium; proportional set size, so shared pages count once) sampled every
 * 100 ms: the peak, and the peak per concurrent run; and, read at the same samples, the CPU a run by kind of process
 * (Playwright's runner and worker, Chromium's processes, the collector). Then the floor no change inside this service
 * can go under while each run starts its own Playwright: the CPU of a Node process that only loads what Playwright's
 * runner loads (its CLI's program) and one that only loads its worker's entry, with the same Node and a warm compile
 * cache, outside the sandbox (`playwrightStartMs`, medians of 5), and the runs' Chromium starting, loading a blank page
 * and exiting, every process it started counted (`chromiumStartMs`); their sum is `startFloorMsPerRun`.
 * Writes bench/results/<time>-browser.json.
 *
 *   npm run bench:browser -- [--runs 12] [--concurrency 1,2] [--rounds 2] [--baseline on|off]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/platform/config.js';
import { OutboundPolicy } from '../src/platform/outbound.js';
import {
  CHROMIUM_ARGS,
  CHROMIUM_BINARY,
  configureBrowserRuns,
  processTree,
  type RunnableCheck,
  runBrowserCheck,
  SANDBOX_NODE,
  treeMemory,
} from '../src/run-kernel/index.js';
import { cpuSeconds, ROOT } from './harness.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '12' },
    concurrency: { type: 'string', default: '1,2' },
    rounds: { type: 'string', default: '2' },
    baseline: { type: 'string', default: 'on' },
  },
});
const RUNS = Number(values.runs);
const LEVELS = values.concurrency.split(',').map(Number);
const ROUNDS = Number(values.rounds);

const SCRIPT = `
import { test, expect } from '@playwright/test';
test('add to cart', async ({ page }) => {
  await page.goto(process.env.SITE + '/shop');
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await expect(page.locator('#count')).toHaveText('1');
  await page.getByRole('link', { name: 'Cart' }).click();
  await expect(page).toHaveTitle('Cart');
});`;

/** This process's descendants: the runs' bubblewrap, Node and Chromium processes. */
const runsProcesses = () => processTree(process.pid).filter((p) => p !== process.pid);

/** What a run's process is, from its command line. */
function processKind(cmdline: string): string {
  if (cmdline.includes('workerProcessEntry')) return 'Playwright worker (Node)';
  if (cmdline.includes('@playwright/test/cli.js')) return 'Playwright runner (Node)';
  if (cmdline.includes('collect.js')) return 'collector (Node)';
  const type = /--type=([\w-]+)/.exec(cmdline)?.[1];
  if (type) return `Chromium ${type}`;
  if (/chrom/.test(cmdline)) return 'Chromium browser';
  if (cmdline.includes('bwrap')) return 'bubblewrap';
  return 'other';
}

/**
 * CPU by kind of process: each descendant's user and system time read every 100 ms, its last reading counted (so a
 * little under: what a process spends after the last reading before it ends is missed). The cgroup's total is exact.
 */
function processCpu() {
  const seen = new Map<number, { kind: string; ms: number }>();
  return {
    sample(pids: readonly number[]) {
      for (const pid of pids) {
        try {
          const ms = cpuSeconds(pid) * 1000;
          const known = seen.get(pid);
          const kind = known?.kind ?? processKind(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
          seen.set(pid, { kind, ms: Math.max(ms, known?.ms ?? 0) });
        } catch {
          // the process ended meanwhile
        }
      }
    },
    byKind(runs: number): Record<string, number> {
      const out: Record<string, number> = {};
      for (const { kind, ms } of seen.values()) out[kind] = (out[kind] ?? 0) + ms;
      return Object.fromEntries(
        Object.entries(out)
          .map(([k, v]) => [k, Math.round(v / runs)] as const)
          .sort((a, b) => b[1] - a[1]),
      );
    },
  };
}

/** How the sandbox ran before issue 38: the service's own Node, Debian's full Chromium, no compile cache. */
const VARIANTS = {
  now: { node: SANDBOX_NODE, chromium: CHROMIUM_BINARY, compileCache: true },
  before: { node: process.execPath, chromium: '/usr/lib/chromium/chromium', compileCache: false },
};

/**
 * CPU time of this process's descendants, in ms, from a cpuacct cgroup this process moved itself into (cgroup v1, as
 * root); else the whole machine's busy time (/proc/stat), which counts everything else running too.
 */
function cpuMeter(): { kind: 'cgroup' | 'machine'; childrenMs: () => number; others: () => number } {
  const dir = `/sys/fs/cgroup/cpuacct/bench-browser-${process.pid}`;
  try {
    mkdirSync(dir);
    writeFileSync(`${dir}/cgroup.procs`, String(process.pid));
    process.once('exit', () => {
      try {
        writeFileSync('/sys/fs/cgroup/cpuacct/cgroup.procs', String(process.pid));
        rmdirSync(dir);
      } catch {
        // left for the system to remove
      }
    });
    const own = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    return {
      kind: 'cgroup',
      childrenMs: () => Number(readFileSync(`${dir}/cpuacct.usage`, 'utf8')) / 1e6 - own(),
      // Processes in the cgroup besides this one: a descendant its parent left behind stays in it, reparented or not.
      others: () =>
        readFileSync(`${dir}/cgroup.procs`, 'utf8')
          .split('\n')
          .filter((pid) => pid !== '' && pid !== String(process.pid)).length,
    };
  } catch {
    const busy = () => {
      const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) * (1000 / 100);
    };
    return { kind: 'machine', childrenMs: busy, others: () => 0 };
  }
}

/**
 * The CPU (ms, median of 5) of a process of the sandbox's Node that starts and loads Playwright's runner (the program
 * its CLI runs) or its worker's entry, and nothing else, with a compile cache made by a first load: what each run
 * pays twice before its test starts.
 */
async function playwrightStartMs(): Promise<{ runner: number; worker: number }> {
  const lib = path.join(path.dirname(createRequire(import.meta.url).resolve('playwright/package.json')), 'lib');
  const cache = mkdtempSync(path.join(os.tmpdir(), 'bench-pw-cache-'));
  try {
    const load = (file: string) =>
      Number(
        execFileSync(
          SANDBOX_NODE,
          [
            '-e',
            `require('node:module').enableCompileCache?.(${JSON.stringify(cache)}); require(${JSON.stringify(file)}); const u = process.cpuUsage(); console.log((u.user + u.system) / 1000)`,
          ],
          { env: { PATH: '/usr/bin:/bin', HOME: cache }, encoding: 'utf8' },
        ).trim(),
      );
    const [runner, worker] = [path.join(lib, 'program.js'), path.join(lib, 'worker/workerProcessEntry.js')];
    return { runner: await medianOfFive(() => load(runner)), worker: await medianOfFive(() => load(worker)) };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/**
 * The CPU (ms, median of 5) of the runs' Chromium, with their flags (Playwright adds its own switches and a debugging
 * pipe to a run's) and a profile of its own, starting, loading a blank page and exiting (`--dump-dom about:blank`):
 * what each run pays for its browser before Playwright asks anything of it. Counted by `meter`, after every process
 * Chromium started has left its cgroup (orphans included). With the machine's meter (no cgroup could be made) it is
 * read when the browser process exits, so helpers left running after it are missed, and everything else running counts.
 */
async function chromiumStartMs(meter: ReturnType<typeof cpuMeter>): Promise<number> {
  const once = async () => {
    const profile = mkdtempSync(path.join(os.tmpdir(), 'bench-chromium-'));
    try {
      const before = meter.childrenMs();
      const started = spawnSync(CHROMIUM_BINARY, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, '--headless', '--dump-dom', 'about:blank'], {
        encoding: 'utf8',
        env: { PATH: '/usr/bin:/bin', HOME: profile },
        timeout: 30_000,
      });
      if (started.status !== 0 || !started.stdout.includes('<html')) {
        throw new Error(`chromium's start: exit ${started.status ?? started.signal}, ${started.stderr.slice(-500)}`);
      }
      for (let waited = 0; meter.others() > 0; waited += 10) {
        if (waited > 10_000) throw new Error("chromium's start: its processes outlived it by 10 s");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return meter.childrenMs() - before;
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  };
  return medianOfFive(once);
}

/** The median of five measures, after one unmeasured (warm caches), rounded; one at a time. */
async function medianOfFive(measure: () => number | Promise<number>): Promise<number> {
  await measure();
  const ms: number[] = [];
  for (let i = 0; i < 5; i++) ms.push(await measure());
  return Math.round(ms.sort((a, b) => a - b)[2]!);
}

async function main() {
  const site = createServer((req, res) => {
    if (req.url === '/shop') {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<!doctype html><title>Shop</title><button onclick="c.textContent=String(Number(c.textContent)+1)">Add to cart</button><span id="count">0</span><a href="/cart">Cart</a><script>var c=document.getElementById("count")</script>',
        );
    } else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Cart</title>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const config = loadConfig({ ...process.env, OUTBOUND_PUBLIC: 'false', OUTBOUND_ALLOW: '127.0.0.0/8' });
  const policy = new OutboundPolicy(config.outbound);
  const check = (): RunnableCheck => ({
    id: randomUUID(),
    accountId: randomUUID(),
    name: 'bench',
    checkType: 'BROWSER',
    activated: true,
    tags: [],
    groupId: null,
    data: { script: SCRIPT },
    variables: { SITE: siteUrl },
    secrets: [],
    locations: ['eu-west-1'],
    runParallel: false,
  });
  const results: Record<string, unknown>[] = [];
  const meter = cpuMeter();
  const variants = values.baseline === 'off' ? (['now'] as const) : (['now', 'before'] as const);
  const run = () => runBrowserCheck({ check: check(), location: 'eu-west-1', resultId: randomUUID(), attempt: 1, policy });
  for (let round = 1; round <= ROUNDS; round++)
    for (const level of LEVELS)
      for (const variant of variants) {
        configureBrowserRuns({ concurrency: level, memoryBytes: 4096 * 1024 * 1024, ...VARIANTS[variant] });
        // One run first: the compile cache's warm-up (once per process), the page cache warm for both.
        await run();
        let peak = 0;
        const cpuByProcess = processCpu();
        const sampler = setInterval(() => {
          const pids = runsProcesses();
          peak = Math.max(peak, treeMemory(pids));
          cpuByProcess.sample(pids);
        }, 100);
        const cpu0 = meter.childrenMs();
        const t0 = performance.now();
        const outcomes = await Promise.all(Array.from({ length: RUNS }, run));
        const seconds = (performance.now() - t0) / 1000;
        const cpuMs = meter.childrenMs() - cpu0;
        clearInterval(sampler);
        const failed = outcomes.filter((o) => o.hasFailures);
        const durations = outcomes.map((o) => o.stoppedAt - o.startedAt).sort((a, b) => a - b);
        const row = {
          round,
          variant,
          ...VARIANTS[variant],
          concurrency: level,
          runs: RUNS,
          failed: failed.length,
          firstFailure: failed[0]?.error,
          seconds: Number(seconds.toFixed(1)),
          runsPerMinute: Number(((RUNS / seconds) * 60).toFixed(1)),
          cpuMsPerRun: Math.round(cpuMs / RUNS),
          cpuCountedBy: meter.kind,
          cpuMsPerRunByProcess: cpuByProcess.byKind(RUNS),
          runMsMedian: durations[Math.floor(durations.length / 2)],
          peakPssMb: Math.round(peak / 1024 / 1024),
          peakPssPerRunMb: Math.round(peak / 1024 / 1024 / level),
        };
        console.log(JSON.stringify(row));
        results.push(row);
      }
  site.closeAllConnections();
  site.close();
  const start = await playwrightStartMs();
  const chromium = await chromiumStartMs(meter);
  const floor = { playwrightStartMs: start, chromiumStartMs: chromium, startFloorMsPerRun: start.runner + start.worker + chromium };
  console.log(JSON.stringify(floor));
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-browser.json`);
  writeFileSync(file, JSON.stringify({ runs: RUNS, levels: LEVELS, rounds: ROUNDS, results, ...floor }, null, 2));
  console.log(`written ${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
