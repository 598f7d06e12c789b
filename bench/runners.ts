/**
 * Runner bench: N API checks at a 1-minute frequency against a local HTTP target, for M minutes, with the
 * service's own scheduler and in-process runner (npm start's defaults). Measures, per slot: lateness of the
 * run against its slot (p50, p99, max), missed slots and duplicated runs; the service process's CPU and RSS;
 * whether ingest keeps up (queue depth and lag). Then, in the same run and against the same target, the peer stack
 * (bench/peer.ts: Debian's Prometheus scraping blackbox_exporter) probes as many URLs once a minute for as many
 * minutes, and its CPU per probe is set beside the service's CPU per run (`--peer off` skips it). Writes
 * bench/results/<time>-runners.json.
 *
 * With `--profile` the service's CPU is profiled (its inspector) over the last measured minute, and the self time is
 * summed per owner of the code (bench/harness.ts profileOwners); the profile is kept in the temporary directory.
 * `--allocations` (with `--profile`) samples what the service allocates in the same minute (garbage included), by
 * owner and by function (bench/harness.ts allocationOwners).
 *
 * `--warm N` lets the checks run N minutes before the window (V8 optimises code after so many calls: at 3,000 checks the
 * first minutes are mostly start-up); each minute of the window reports its own CPU a run.
 *
 * `--runner-processes N` runs the checks in N `npm run runner` processes beside the service (its in-process runner off,
 * the locations shared out among them), as a larger installation would: the CPU, threads and peak RSS reported are
 * the service's and theirs together (by process in `runnerProcesses`); the profile is the service's alone.
 *
 *   npm run bench:runners -- [--checks 10000] [--minutes 10] [--warm 0] [--peer off] [--runner-processes 0]
 *     [--profile [--allocations]]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { LOCATIONS } from '../src/model/checks.js';
import { dropDatabase } from '../src/storage/postgres.js';
import { deleteKeysWithPrefix } from '../src/storage/redis.js';
import {
  allocationOwners,
  benchEnvironment,
  cpuSeconds,
  memoryFigures,
  processCpuDelta,
  processCpuSeconds,
  profileOwners,
  quantile,
  ROOT,
  rssBytes,
  runCli,
  ServiceUnderTest,
  slotRuns,
  startCountingTarget,
  startRunnerProcess,
  threadCpuDelta,
  threadCpuSeconds,
} from './harness.js';
import { measurePeer } from './peer.js';

const { values } = parseArgs({
  options: {
    checks: { type: 'string', default: '10000' },
    minutes: { type: 'string', default: '10' },
    locations: { type: 'string', default: '4' },
    peer: { type: 'string', default: 'on' },
    profile: { type: 'boolean', default: false },
    allocations: { type: 'boolean', default: false },
    warm: { type: 'string', default: '0' },
    'runner-processes': { type: 'string', default: '0' },
  },
});
const CHECKS = Number(values.checks);
const MINUTES = Number(values.minutes);
const LOCATION_COUNT = Math.min(LOCATIONS.length, Math.max(1, Number(values.locations)));
const PERIOD = 60_000;
/** Minutes the checks run before the measured window: V8 optimises a function after so many calls, not so many seconds. */
const WARM_MINUTES = Math.max(0, Number(values.warm));
const RUNNER_PROCESSES = Math.max(0, Math.floor(Number(values['runner-processes'])));

async function main() {
  const target = await startCountingTarget();
  const targetUrl = target.url;

  const { env, dataDir } = benchEnvironment();
  env.RUNNER_LOCATIONS = LOCATIONS.slice(0, LOCATION_COUNT).join(',');
  env.RUNNER_CONCURRENCY = env.RUNNER_CONCURRENCY ?? '32';
  const cli = (...args: string[]) => runCli(env, ...args);
  await cli('migrate');
  const accountId = await cli('create-account', '--name', 'runner-bench');
  const svc = await ServiceUnderTest.start(RUNNER_PROCESSES ? { ...env, RUNNER: 'off' } : env);
  const sql = postgres(env.DATABASE_URL!, { max: 4, onnotice: () => {} });
  const runners: Awaited<ReturnType<typeof startRunnerProcess>>[] = [];
  let result: Record<string, unknown>;
  try {
    const served = LOCATIONS.slice(0, LOCATION_COUNT);
    for (let i = 0; i < RUNNER_PROCESSES; i++) {
      // Locations dealt out in turn; with more processes than locations, a location's queue is shared.
      const mine = RUNNER_PROCESSES <= served.length ? served.filter((_, j) => j % RUNNER_PROCESSES === i) : [served[i % served.length]!];
      runners.push(await startRunnerProcess(env, mine));
    }
    /** The service's CPU and its runner processes' together, in seconds. */
    const allCpu = () => cpuSeconds(pid) + runners.reduce((sum, r) => sum + cpuSeconds(r.pid), 0);
    /** Threads by kind, a runner process's prefixed `runner:`. */
    const allThreads = () => {
      const out = threadCpuSeconds(pid);
      for (const r of runners) for (const [k, v] of Object.entries(threadCpuSeconds(r.pid))) out[`runner:${k}`] = (out[`runner:${k}`] ?? 0) + v;
      return out;
    };
    const pid = svc.child.pid!;
    console.log(`creating ${CHECKS} API checks at 1 minute in ${LOCATION_COUNT} locations against ${targetUrl}`);
    const ids: string[] = [];
    for (let i = 0; i < CHECKS; i += 1000) {
      const part = Array.from({ length: Math.min(1000, CHECKS - i) }, (_, j) => {
        const id = randomUUID();
        ids.push(id);
        const location = LOCATIONS[(i + j) % LOCATION_COUNT];
        return {
          id,
          account_id: accountId,
          name: `bench ${i + j}`,
          check_type: 'API',
          activated: true,
          muted: false,
          frequency: 1,
          tags: [],
          data: sql.json({
            request: { method: 'GET', url: `${targetUrl}/c/${i + j}` },
            locations: [location],
            doubleCheck: false,
            retryStrategy: null,
            maxResponseTime: 5000,
          } as never),
        };
      });
      await sql`insert into checks ${sql(part)}`;
    }
    // Measure whole minutes that start after every schedule exists (reconcile runs every 5 s).
    const start = Math.ceil((Date.now() + 15_000) / PERIOD) * PERIOD + WARM_MINUTES * PERIOD;
    const end = start + MINUTES * PERIOD;
    console.log(`measuring ${new Date(start).toISOString()} to ${new Date(end).toISOString()}`);
    // What live objects hold in V8's heap (after a full collection) as the window starts and after it ends: growth
    // there is memory kept, not garbage V8 has not collected yet. The collection it forces is one that gives memory
    // back: it throws away optimised code and shrinks the young generation, so the minute after it costs more than
    // the service's own steady state (a third more at 3,000 checks without V8's memory reducer). With a warm-up it is
    // made as the warm-up starts, so that cost falls in the warm-up.
    await new Promise((r) => setTimeout(r, start - WARM_MINUTES * PERIOD - 2000 - Date.now()));
    const liveHeapStart = (await svc.ask({ type: 'memory', gc: true })).heapUsedBytes;
    await new Promise((r) => setTimeout(r, start - Date.now()));
    const cpuStart = allCpu();
    const threadsStart = allThreads();
    const runnersCpuStart = runners.map((r) => cpuSeconds(r.pid));
    const storesStart = { postgres: processCpuSeconds('postgres'), redis: processCpuSeconds('redis-server') };
    const hitsStart = target.hits();
    let peakRss = 0;
    /** The memory figures of the sample with the highest RSS: what the peak was made of. */
    let atPeak: Record<string, number> = {};
    let runnersRssAtPeak: number[] = [];
    let maxWaiting = 0;
    let maxLag = 0;
    /** Where scheduled runs' definitions came from since the service started (the definition cache's counts). */
    let definitions: Record<string, number> = {};
    let stateSamplesFailed = 0;
    /** Hourly rollup ticks seen under way in the window (sampled every 2 s): the range's end, first and last seen. */
    const ticks: { rolledTo: string; firstSeenAt: string; lastSeenAt: string }[] = [];
    // Samples leave the engine alone (`sample`, not `state`): its two statements every 2 s were about 0.25 s of the
    // engine's CPU in a measured two minutes, 4 % of a 3,000-check service's. Only a new peak asks it for its memory.
    const sampler = setInterval(() => {
      void svc.ask({ type: 'sample' }).then(
        (s) => {
          const runnersRss = runners.map((r) => rssBytes(r.pid));
          const rss = s.rssBytes + runnersRss.reduce((a, b) => a + b, 0);
          if (rss > peakRss) {
            const figures = memoryFigures({ ...s, engineBytes: Number.NaN });
            atPeak = figures;
            runnersRssAtPeak = runnersRss;
            void svc.ask({ type: 'state' }).then(
              (full) => {
                figures.engineTrackedMB = memoryFigures(full).engineTrackedMB;
              },
              () => {},
            );
          }
          peakRss = Math.max(peakRss, rss);
          if (s.definitions) definitions = s.definitions;
          maxWaiting = Math.max(maxWaiting, s.queue.waiting);
          maxLag = Math.max(maxLag, s.queue.oldestWaitingSeconds);
          if (s.rollingTo !== undefined) {
            const at = new Date().toISOString();
            const rolledTo = new Date(s.rollingTo).toISOString();
            const tick = ticks.find((t) => t.rolledTo === rolledTo);
            if (tick) tick.lastSeenAt = at;
            else ticks.push({ rolledTo, firstSeenAt: at, lastSeenAt: at });
          }
        },
        () => {
          // A sample the service could not answer (its Redis commands timing out under load) is counted, not fatal.
          stateSamplesFailed++;
        },
      );
    }, 2000);
    // The service's CPU in each minute of the window (read at each minute's end), set beside that minute's runs.
    const cpuAtMinute: number[] = [cpuStart];
    const minuteReader = setInterval(() => cpuAtMinute.length <= MINUTES && cpuAtMinute.push(allCpu()), PERIOD);
    let profile: ReturnType<typeof profileOwners> | undefined;
    let allocations: ReturnType<typeof allocationOwners> | undefined;
    if (values.profile) {
      await new Promise((r) => setTimeout(r, end - PERIOD - Date.now()));
      await svc.ask({ type: 'profile', action: 'start', allocations: values.allocations });
      await new Promise((r) => setTimeout(r, end - Date.now()));
      const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'runners-prof-')), 'last-minute.cpuprofile');
      await svc.ask({ type: 'profile', action: 'stop', file });
      profile = profileOwners(file, 30);
      if (values.allocations) allocations = allocationOwners(file.replace(/\.cpuprofile$/, '.heapprofile'));
      console.log(`the last minute's profile: ${file}`);
    }
    await new Promise((r) => setTimeout(r, end - Date.now()));
    const cpu = allCpu() - cpuStart;
    const threads = threadCpuDelta(threadsStart, allThreads());
    const runnersCpu = runners.map((r, i) => Math.round((cpuSeconds(r.pid) - runnersCpuStart[i]!) * 100) / 100);
    const stores = {
      postgres: processCpuDelta(storesStart.postgres, processCpuSeconds('postgres')),
      redis: processCpuDelta(storesStart.redis, processCpuSeconds('redis-server')),
    };
    const requests = target.hits() - hitsStart;
    clearInterval(sampler);
    clearInterval(minuteReader);
    if (cpuAtMinute.length <= MINUTES) cpuAtMinute.push(allCpu());
    const liveHeapEnd = (await svc.ask({ type: 'memory', gc: true })).heapUsedBytes;
    /** The window's runs found in the store, by check and slot. */
    const count = async () => slotRuns((await svc.ask({ type: 'runs', accountId, from: start - 5000, to: end + 5000 })).runs, ids, start, end, PERIOD);
    // Let the last slots' results land: 20 s, then, while some are missing and more keep arriving (results waiting
    // behind an hourly tick, say), 10 s more at a time, up to 80 s in all. A run found late is landed late, not missed.
    await new Promise((r) => setTimeout(r, 20_000));
    let counted = await count();
    let landedWithinSeconds = 20;
    for (let waited = 20; waited < 80 && counted.missed > 0; waited += 10) {
      await new Promise((r) => setTimeout(r, 10_000));
      const again = await count();
      if (again.found === counted.found) break;
      counted = again;
      landedWithinSeconds = waited + 10;
    }
    const { expected, missed, duplicated, lateness, failed, byMinute } = counted;
    const latenessByMinuteMs = [...byMinute]
      .sort(([a], [b]) => a - b)
      .map(([minute, list]) => {
        list.sort((a, b) => a - b);
        const i = Math.round((minute - start) / PERIOD);
        const cpuMs = i + 1 < cpuAtMinute.length ? (cpuAtMinute[i + 1] - cpuAtMinute[i]) * 1000 : undefined;
        return {
          minute: new Date(minute).toISOString().slice(11, 16),
          runs: list.length,
          p99: quantile(list, 0.99),
          max: list[list.length - 1],
          ...(cpuMs === undefined ? {} : { cpuMsPerRun: +(cpuMs / Math.max(1, list.length)).toFixed(3) }),
        };
      });
    lateness.sort((a, b) => a - b);
    result = {
      at: new Date().toISOString(),
      checks: CHECKS,
      locations: LOCATION_COUNT,
      minutes: MINUTES,
      warmMinutes: WARM_MINUTES,
      runnerConcurrencyPerLocation: Number(env.RUNNER_CONCURRENCY),
      expectedRuns: expected,
      runs: lateness.length,
      targetRequests: requests,
      missed,
      /** Seconds after the window by which the runs counted had landed (20 unless some were still arriving). */
      landedWithinSeconds,
      duplicated,
      failedRuns: failed,
      latenessMs: { p50: quantile(lateness, 0.5), p99: quantile(lateness, 0.99), max: lateness[lateness.length - 1] },
      serviceCpuCores: Math.round((cpu / (MINUTES * 60)) * 100) / 100,
      serviceCpuMsPerRun: +((cpu * 1000) / Math.max(1, lateness.length)).toFixed(3),
      servicePeakRssMB: Math.round(peakRss / 1048576),
      memoryAtPeak: atPeak,
      ...(runners.length
        ? {
            /** Each runner process's CPU seconds in the window and RSS at the peak (the figures above include them). */
            runnerProcesses: runners.map((_, i) => ({ cpuSeconds: runnersCpu[i], rssMBAtPeak: Math.round((runnersRssAtPeak[i] ?? 0) / 1048576) })),
          }
        : {}),
      liveHeapMB: { start: Math.round(liveHeapStart / 1048576), end: Math.round(liveHeapEnd / 1048576) },
      serviceCpuSecondsByThread: threads,
      /** CPU seconds Postgres and Redis spent in the window (every process of theirs on this machine: run nothing else beside the bench). */
      storesCpuSeconds: stores,
      ingest: { maxWaitingBatches: maxWaiting, maxLagSeconds: Math.round(maxLag * 10) / 10 },
      definitions,
      stateSamplesFailed,
      rollupTicks: ticks,
      latenessByMinuteMs,
      ...(profile ? { lastMinuteSelfTimeByOwner: profile, cpuNote: 'profiled minute included: the inspector adds to the CPU figures' } : {}),
      ...(allocations ? { lastMinuteAllocations: allocations } : {}),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await sql.end({ timeout: 5 });
    for (const r of runners) await r.stop();
    await svc.stop();
    await dropDatabase(env.DATABASE_URL!).catch((e: Error) => console.error(`drop database: ${e.message}`));
    await deleteKeysWithPrefix(env.REDIS_URL!, env.REDIS_PREFIX!).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
  try {
    // The service has stopped: the peer stack has the machine to itself, as the service had.
    if (values.peer !== 'off') {
      console.log(`the peer stack: ${CHECKS} probes once a minute for ${MINUTES} minutes against the same target`);
      const peer = await measurePeer(targetUrl, CHECKS, MINUTES, target.hits);
      result.peer = peer;
      result.serviceCpuPerRunAgainstPeer = +((result.serviceCpuMsPerRun as number) / peer.cpuMsPerProbe.total).toFixed(2);
      console.log(JSON.stringify({ peer, serviceCpuPerRunAgainstPeer: result.serviceCpuPerRunAgainstPeer }, null, 2));
    }
  } finally {
    target.close();
  }
  mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  writeFileSync(path.join(ROOT, `bench/results/${(result.at as string).replace(/[:.]/g, '-')}-runners.json`), `${JSON.stringify(result, null, 2)}\n`);
}

await main();
