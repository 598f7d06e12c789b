/**
 * Agents bench (issue 37): N one-minute API checks against a local target, run first by the service's in-process
 * runner and then, in the same bench run, by K agent processes of one private location (`npm run agent`, each
 * JOB_CONCURRENCY 10) reaching the service over HTTP. For each: missed slots, duplicated runs, lateness against
 * the slot (p50, p99, max), the service's CPU per run, and each agent's. Writes bench/results/<time>-agents.json.
 *
 *   npm run bench:agents -- [--checks 10000] [--minutes 3] [--agents 4]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { type AgentProcess, startAgentProcess } from '../test/support/agents.js';
import { benchEnvironment, cpuSeconds, quantile, ROOT, removeBenchEnvironment, runCli, ServiceUnderTest, slotRuns, startCountingTarget } from './harness.js';

const { values } = parseArgs({
  options: { checks: { type: 'string', default: '10000' }, minutes: { type: 'string', default: '3' }, agents: { type: 'string', default: '4' } },
});
const CHECKS = Number(values.checks);
const MINUTES = Number(values.minutes);
const AGENTS = Number(values.agents);
const PERIOD = 60_000;

/** An agent's event counters, from its /metrics. */
async function eventsOf(a: AgentProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${a.healthUrl}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^agent_events_total\{event="([\w-]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}
const rssMB = (pid: number) => Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

async function main() {
  const target = await startCountingTarget();
  const targetUrl = target.url;

  const { env, dataDir } = benchEnvironment();
  env.RUNNER_LOCATIONS = 'eu-west-1';
  env.RUNNER_CONCURRENCY = '32';
  const cli = (...args: string[]) => runCli(env, ...args);
  await cli('migrate');
  const accountId = await cli('create-account', '--name', 'agents-bench');
  const key = await cli('create-key', '--account', accountId, '--role', 'admin');
  const svc = await ServiceUnderTest.start(env);
  const sql = postgres(env.DATABASE_URL!, { max: 4, onnotice: () => {} });
  const agents: AgentProcess[] = [];
  const phases: Record<string, unknown>[] = [];
  try {
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(svc.url + p, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    await cli('set-rate-limit', '--account', accountId, '--points', '1000000', '--window', '60').catch(() => undefined);
    const location = await api('POST', '/v1/private-locations', { name: 'Bench agents', slugName: 'bench-agents' });

    /** Inserts N activated one-minute checks running in `where` (public or private), answers their ids. */
    const createChecks = async (where: { locations: string[]; privateLocations: string[] }) => {
      const ids: string[] = [];
      for (let i = 0; i < CHECKS; i += 1000) {
        const part = Array.from({ length: Math.min(1000, CHECKS - i) }, (_, j) => {
          const id = randomUUID();
          ids.push(id);
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
              ...where,
              doubleCheck: false,
              retryStrategy: null,
              maxResponseTime: 5000,
            } as never),
          };
        });
        await sql`insert into checks ${sql(part)}`;
      }
      return ids;
    };

    /** Measures whole minutes once the schedules exist: slots, lateness, CPU of the service and of each agent. */
    const measure = async (name: string, ids: string[], pids: number[]) => {
      const start = Math.ceil((Date.now() + 20_000) / PERIOD) * PERIOD;
      const end = start + MINUTES * PERIOD;
      console.log(`${name}: measuring ${new Date(start).toISOString()} to ${new Date(end).toISOString()}`);
      await new Promise((r) => setTimeout(r, start - Date.now()));
      const cpu0 = [svc.child.pid!, ...pids].map(cpuSeconds);
      const hits0 = target.hits();
      await new Promise((r) => setTimeout(r, end - Date.now()));
      const cpu = [svc.child.pid!, ...pids].map((pid, i) => cpuSeconds(pid) - cpu0[i]!);
      const requests = target.hits() - hits0;
      // Until every agent has reported what it leased and ingest has landed everything queued (at most 3 minutes).
      const settleBy = Date.now() + 180_000;
      let agentEvents: Record<string, number>[] = [];
      for (;;) {
        agentEvents = await Promise.all(agents.filter((a) => pids.includes(a.proc.pid!)).map(eventsOf));
        const { queue } = await svc.ask({ type: 'state' });
        const unreported = agentEvents.reduce((n, e) => n + (e.leased ?? 0) - (e.reported ?? 0) - (e.lost ?? 0) - (e['expired-unreported'] ?? 0), 0);
        if ((unreported <= 0 && queue.waiting === 0 && queue.active === 0) || Date.now() > settleBy) break;
        await new Promise((r) => setTimeout(r, 2000));
      }
      await new Promise((r) => setTimeout(r, 5000));
      const { runs } = await svc.ask({ type: 'runs', accountId, from: start - 5000, to: end + 65_000 });
      const { expected, missed, duplicated, lateness } = slotRuns(runs, ids, start, end, PERIOD);
      lateness.sort((a, b) => a - b);
      const stored = lateness.length;
      const seconds = MINUTES * 60;
      const phase = {
        runner: name,
        checks: CHECKS,
        minutes: MINUTES,
        expectedRuns: expected,
        storedRuns: stored,
        targetRequests: requests,
        missed,
        duplicated,
        latenessMs: { p50: quantile(lateness, 0.5), p99: quantile(lateness, 0.99), max: lateness.at(-1) ?? NaN },
        service: {
          cores: Math.round((cpu[0]! / seconds) * 100) / 100,
          cpuMsPerRun: Math.round((cpu[0]! * 1000 * 100) / Math.max(1, stored)) / 100,
          peakRssMB: rssMB(svc.child.pid!),
        },
        agentEvents,
        agents: pids.map((pid, i) => ({
          cores: Math.round((cpu[i + 1]! / seconds) * 100) / 100,
          cpuMsPerRun: Math.round((cpu[i + 1]! * 1000 * 100 * pids.length) / Math.max(1, stored)) / 100,
          peakRssMB: rssMB(pid),
        })),
      };
      console.log(JSON.stringify(phase, null, 2));
      phases.push(phase);
    };

    // 1. The in-process runner.
    console.log(`in-process runner: ${CHECKS} API checks at 1 minute in eu-west-1 against ${targetUrl}`);
    const local = await createChecks({ locations: ['eu-west-1'], privateLocations: [] });
    await measure('in-process', local, []);
    await sql`update checks set activated = false where account_id = ${accountId}`;

    // 2. Agents of one private location.
    console.log(`${AGENTS} agents (JOB_CONCURRENCY 10): ${CHECKS} API checks at 1 minute in bench-agents`);
    for (let i = 0; i < AGENTS; i++)
      agents.push(await startAgentProcess({ apiUrl: svc.url, apiKey: location.keys[0].rawKey, concurrency: 10, env: { LOG_LEVEL: 'warn' } }));
    const remote = await createChecks({ locations: [], privateLocations: ['bench-agents'] });
    await measure(
      'agents',
      remote,
      agents.map((a) => a.proc.pid!),
    );

    const result = { at: new Date().toISOString(), agents: AGENTS, phases };
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(path.join(ROOT, `bench/results/${result.at.replace(/[:.]/g, '-')}-agents.json`), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await Promise.all(agents.map(async (a) => (await a.stop(), a.remove())));
    await sql.end({ timeout: 5 });
    await svc.stop();
    target.close();
    await removeBenchEnvironment(env, dataDir).catch((e: Error) => console.error(`cleanup: ${e.message}`));
  }
}

await main();
