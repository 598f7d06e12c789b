/**
 * Idle bench (issue 57, "Small installations pay little"): the service on its defaults (embedded engine, in-process
 * runner for every public location, scheduler, sweeps) with an account and no checks, left alone: its CPU over
 * `--seconds` by thread and its RSS at the end of it, and a CPU profile of the same span summed by owner (what the fixed costs are).
 * Writes bench/results/<time>-idle.json.
 *
 *   npm run bench:idle -- [--seconds 120] [--warm 30]
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchAccount,
  benchEnvironment,
  cpuSeconds,
  profileOwners,
  ROOT,
  removeBenchEnvironment,
  rssBytes,
  ServiceUnderTest,
  threadCpuDelta,
  threadCpuSeconds,
} from './harness.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '120' }, warm: { type: 'string', default: '30' } } });
const SECONDS = Number(values.seconds);
const WARM = Number(values.warm);

async function main() {
  const { env, dataDir } = benchEnvironment();
  await benchAccount(env, 'idle-bench');
  const svc = await ServiceUnderTest.start(env);
  const pid = svc.child.pid!;
  try {
    await new Promise((r) => setTimeout(r, WARM * 1000));
    const t0 = performance.now();
    const cpu0 = cpuSeconds(pid);
    const threads0 = threadCpuSeconds(pid);
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(pid) - cpu0;
    const threads = threadCpuDelta(threads0, threadCpuSeconds(pid));
    // What an idle service holds (V8 gives a heap back only when it collects: its memory reducer, docs/performance.md).
    const rssMB = Math.round(rssBytes(pid) / 1048576);
    // The same span again under the profiler (the profiler's own cost is in it: its figures rank, they do not total).
    const file = path.join(os.tmpdir(), `idle-${process.pid}.cpuprofile`);
    await svc.ask({ type: 'profile', action: 'start' });
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    await svc.ask({ type: 'profile', action: 'stop', file });
    const owners = profileOwners(file, 20);
    rmSync(file, { force: true });
    const result = {
      at: new Date().toISOString(),
      seconds: Math.round(wall),
      cpuSeconds: +cpu.toFixed(2),
      corePct: +((100 * cpu) / wall).toFixed(2),
      rssMB,
      threads,
      owners,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(path.join(ROOT, 'bench/results', `${result.at.replace(/[:.]/g, '-')}-idle.json`), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await svc.stop();
    await removeBenchEnvironment(env, dataDir);
  }
}

await main();
