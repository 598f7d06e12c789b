/**
 * The agent package (issue 56): what a team installs on each agent machine, side by side with running the agent
 * from this repository's sources, in one bench run. For each: disk, time from an empty folder to a registered,
 * ready agent, processes, and RSS idle and while it runs 100 ten-second API checks of a local target.
 *
 *   npm run bench:agent-package
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildAgent } from '../scripts/build-agent.js';
import { startAgentProcess } from '../test/support/agents.js';
import { benchAccount, benchEnvironment, ROOT, removeBenchEnvironment, rssBytes, ServiceUnderTest, startCountingTarget } from './harness.js';

const du = (p: string) => Number(execFileSync('du', ['-sb', p], { encoding: 'utf8' }).split('\t')[0]) / 1024 / 1024;
/** The process and its descendants: pids, and their RSS together (MB). */
function tree(pid: number): { pids: number[]; rssMB: number } {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    try {
      const children = readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, 'utf8').trim();
      if (children) pids.push(...children.split(/\s+/).map(Number));
    } catch {
      // gone
    }
  }
  const bytes = pids.reduce((sum, p) => sum + rssBytes(p), 0);
  return { pids, rssMB: Math.round(bytes / 1048576) };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const target = await startCountingTarget();
  const { env, dataDir } = benchEnvironment();
  const { key } = await benchAccount(env, 'agent-package-bench');
  const svc = await ServiceUnderTest.start(env);
  const work = mkdtempSync(path.join(os.tmpdir(), 'agent-package-bench-'));
  const rows: Record<string, unknown>[] = [];
  try {
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(svc.url + p, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return (res.status === 204 ? undefined : res.json()) as Promise<any>;
    };
    const buildStart = performance.now();
    const { tarball } = await buildAgent(path.join(work, 'dist'));
    const buildMs = performance.now() - buildStart;

    for (const kind of ['package', 'sources'] as const) {
      const slug = `bench-${kind}`;
      const location = await api('POST', '/v1/private-locations', { name: `Bench ${kind}`, slugName: slug });
      const t0 = performance.now();
      let home: string | undefined;
      let disk: number;
      if (kind === 'package') {
        home = path.join(work, 'opt');
        mkdirSync(home);
        execFileSync('tar', ['-xzf', tarball, '-C', home, '--strip-components=1']);
        disk = du(home);
      } else disk = du(path.join(ROOT, 'node_modules')) + du(path.join(ROOT, 'src')) + du(path.join(ROOT, 'agent'));
      const agent = await startAgentProcess({ apiUrl: svc.url, apiKey: location.keys[0].rawKey, packageDir: home, concurrency: 10 });
      while ((await fetch(`${agent.healthUrl}/-/readiness`)).status !== 200) await sleep(20);
      const readyMs = performance.now() - t0;
      await sleep(30_000);
      const idle = tree(agent.proc.pid!);
      const checks = [];
      for (let i = 0; i < 100; i++)
        checks.push(
          await api('POST', '/v1/checks/api?autoAssignAlerts=false', {
            name: `${kind} ${i}`,
            locations: [],
            privateLocations: [slug],
            frequency: 0,
            frequencyOffset: 10,
            retryStrategy: null,
            request: { url: `${target.url}/${kind}/${i}` },
          }),
        );
      await sleep(60_000);
      const busy = tree(agent.proc.pid!);
      for (const c of checks) await api('DELETE', `/v1/checks/${c.id}`);
      await agent.stop();
      agent.remove();
      rows.push({
        kind,
        diskMB: Math.round(disk * 10) / 10,
        ...(kind === 'package' ? { tarballMB: Math.round(du(tarball) * 10) / 10, buildSeconds: Math.round(buildMs) / 1000 } : {}),
        installAndReadySeconds: Math.round(readyMs) / 1000,
        processes: idle.pids.length,
        idleRssMB: idle.rssMB,
        busyRssMB: busy.rssMB,
      });
      process.stdout.write(`${JSON.stringify(rows.at(-1))}\n`);
    }
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    const file = path.join(ROOT, 'bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-agent-package.json`);
    writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), node: process.version, rows }, null, 2)}\n`);
    process.stdout.write(`${file}\n`);
  } finally {
    await svc.stop();
    target.close();
    rmSync(work, { recursive: true, force: true });
    await removeBenchEnvironment(env, dataDir);
  }
}

await main();
