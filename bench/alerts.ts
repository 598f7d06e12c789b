/**
 * npm run bench:alerts [-- --quick]
 *
 * What acting on results costs and how fast it is:
 *  1. ingest throughput with check-state evaluation off, then on (same data, same load, fresh service each),
 *     batches of 1000 results over 50 checks moving forward in time, so every run is applied; off and on
 *     alternate for several rounds and their medians are compared (this VM's speed moves by ±20 % between
 *     one 20-second load and the next);
 *  2. the delay from a failing result's 202 to its alert's arrival at a webhook (a local HTTP receiver),
 *     p50 and p99 over many alerts.
 * Writes bench/results/<timestamp>-alerts[-quick].json and prints a table.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { dropDatabase } from '../src/storage/postgres.js';
import { deleteKeysWithPrefix } from '../src/storage/redis.js';
import { benchEnvironment, ROOT, runCli, ServiceUnderTest, settle } from './harness.js';
import { latencyStats, load, round } from './load.js';

const quick = process.argv.includes('--quick');
const PROFILE = quick ? { ingestSeconds: 8, alerts: 60, rounds: 1 } : { ingestSeconds: 20, alerts: 200, rounds: 3 };
const CHECKS = 50;
const BATCH = 1000;
const CONNECTIONS = 4;

const log = (line: string) => process.stderr.write(`[bench:alerts] ${line}\n`);

interface Started {
  svc: ServiceUnderTest;
  key: string;
  checks: string[];
  env: NodeJS.ProcessEnv;
  cleanup: () => Promise<void>;
}

async function startWith(stateEvaluation: boolean): Promise<Started> {
  const { env, dataDir } = benchEnvironment();
  env.STATE_EVALUATION = String(stateEvaluation);
  env.STATE_SWEEP_INTERVAL_MS = '1000';
  env.ALERT_RETRY_BASE_MS = '100';
  await runCli(env, 'migrate');
  const accountId = await runCli(env, 'create-account', '--name', 'bench');
  const key = await runCli(env, 'create-key', '--account', accountId, '--role', 'admin', '--name', 'bench');
  await runCli(env, 'set-rate-limit', '--account', accountId, '--points', '100000000', '--window', '60');
  const svc = await ServiceUnderTest.start(env);
  const checks: string[] = [];
  for (let i = 0; i < CHECKS; i++) {
    const res = await fetch(`${svc.url}/v1/checks/api?autoAssignAlerts=false`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `bench ${i}`, request: { url: `https://bench.example.test/${i}` } }),
    });
    checks.push(((await res.json()) as { id: string }).id);
  }
  return {
    svc,
    key,
    checks,
    env,
    cleanup: async () => {
      await svc.stop().catch(() => {});
      await dropDatabase(env.DATABASE_URL!).catch((e) => log(`drop database: ${(e as Error).message}`));
      await deleteKeysWithPrefix(env.REDIS_URL!, env.REDIS_PREFIX!).catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Batches of 1000 results spread over the checks, each batch a second later than the one before. */
function batches(checks: string[]) {
  let clock = Date.now() - 86_400_000;
  return () => {
    const results = Array.from({ length: BATCH }, (_, i) => {
      clock += 1;
      return {
        checkId: checks[i % checks.length],
        checkType: 'API',
        runLocation: 'eu-west-1',
        startedAt: new Date(clock).toISOString(),
        stoppedAt: new Date(clock + 180).toISOString(),
        hasFailures: i % 97 === 0,
        responseTime: 150 + (i % 50),
        statusCode: 200,
      };
    });
    return JSON.stringify({ results });
  };
}

async function ingest(s: Started) {
  await settle(s.svc);
  const before = await s.svc.ask({ type: 'state' });
  const started = Date.now();
  const posted = await load({
    url: s.svc.url,
    key: s.key,
    method: 'POST',
    path: '/v1/check-results',
    bodies: batches(s.checks),
    connections: CONNECTIONS,
    durationSeconds: PROFILE.ingestSeconds,
  });
  const stopped = Date.now();
  // Batches in flight when the load stopped may still be accepted: wait for responses to settle first.
  await new Promise((r) => setTimeout(r, 1000));
  let state = await s.svc.ask({ type: 'state' });
  const accepted = state.queue.acceptedResults - before.queue.acceptedResults;
  const deadline = Date.now() + 300_000;
  while ((state.rows - before.rows < accepted || state.queue.waiting + state.queue.active + state.queue.delayed > 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    state = await s.svc.ask({ type: 'state' });
  }
  const drained = Date.now();
  const landed = state.rows - before.rows;
  return {
    accepted,
    acceptedPerSecond: Math.round(accepted / ((stopped - started) / 1000)),
    landed,
    landedPerSecond: Math.round(landed / ((drained - started) / 1000)),
    lagAfterStopSeconds: round((drained - stopped) / 1000),
    postP50Ms: posted.latencyMs.p50,
    non2xx: posted.non2xx,
    lost: accepted - landed,
  };
}

/** Failing and passing results in turn for one check; each raises an alert; time from the 202 to the webhook. */
async function alertDelay(s: Started) {
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { run: { id: string } };
      arrivals.set(body.run.id, performance.now());
      waiters.get(body.run.id)?.();
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const headers = { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' };
  const channel = (await (
    await fetch(`${s.svc.url}/v1/alert-channels`, { method: 'POST', headers, body: JSON.stringify({ type: 'WEBHOOK', config: { name: 'bench', url: hook } }) })
  ).json()) as { id: number };
  const check = s.checks[0];
  await fetch(`${s.svc.url}/v1/alert-channels/${channel.id}/subscriptions`, {
    method: 'PUT',
    headers,
    body: JSON.stringify({ checkId: check, activated: true }),
  });
  const delays: number[] = [];
  let clock = Date.now();
  for (let i = 0; i < PROFILE.alerts; i++) {
    const id = randomUUID();
    clock += 1000;
    const result = {
      id,
      checkId: check,
      checkType: 'API',
      runLocation: 'eu-west-1',
      startedAt: new Date(clock).toISOString(),
      stoppedAt: new Date(clock + 100).toISOString(),
      hasFailures: i % 2 === 0,
      responseTime: 100,
    };
    const arrived = new Promise<void>((resolve) => waiters.set(id, resolve));
    const res = await fetch(`${s.svc.url}/v1/check-results`, { method: 'POST', headers, body: JSON.stringify({ results: [result] }) });
    const accepted = performance.now();
    if (res.status !== 202) throw new Error(`ingest answered ${res.status}`);
    await Promise.race([arrived, new Promise((_, reject) => setTimeout(() => reject(new Error('no webhook within 30 s')), 30_000))]);
    delays.push(arrivals.get(id)! - accepted);
  }
  receiver.close();
  return { alerts: delays.length, ...latencyStats(delays), max: round(Math.max(...delays)) };
}

type IngestRun = Awaited<ReturnType<typeof ingest>>;

/** The run with the median landing rate (of an odd number of rounds, the middle one). */
function medianRun(runs: IngestRun[]): IngestRun {
  const sorted = [...runs].sort((a, b) => a.landedPerSecond - b.landedPerSecond);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

async function main() {
  const startedAt = new Date();
  const rounds: Record<'off' | 'on', IngestRun[]> = { off: [], on: [] };
  let delay: Awaited<ReturnType<typeof alertDelay>> | undefined;
  for (let r = 0; r < PROFILE.rounds; r++) {
    for (const stateEvaluation of [false, true]) {
      const mode = stateEvaluation ? 'on' : 'off';
      const s = await startWith(stateEvaluation);
      try {
        log(`round ${r + 1}/${PROFILE.rounds}: ingest with state evaluation ${mode}`);
        rounds[mode].push(await ingest(s));
        log(`  ${JSON.stringify(rounds[mode].at(-1))}`);
        if (stateEvaluation && r === PROFILE.rounds - 1) {
          log('alert delay');
          delay = await alertDelay(s);
          log(`  ${JSON.stringify(delay)}`);
        }
      } finally {
        await s.cleanup();
      }
    }
  }
  const runs = { off: medianRun(rounds.off), on: medianRun(rounds.on) };
  const ratio = round(runs.on.landedPerSecond / runs.off.landedPerSecond);
  const out = {
    startedAt: startedAt.toISOString(),
    mode: quick ? 'quick' : 'full',
    setup: { checks: CHECKS, batch: BATCH, connections: CONNECTIONS, ingestSeconds: PROFILE.ingestSeconds, rounds: PROFILE.rounds },
    ingest: runs,
    rounds,
    landedOnOverOff: ratio,
    alertDelayMs: delay,
    targets: [{ target: 'ingest with state evaluation ≥ 85% of without (landed/s, medians of the rounds)', measured: ratio, met: ratio >= 0.85 }],
  };
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}-alerts${quick ? '-quick' : ''}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(
    `${[
      '| measure | state evaluation off | on |',
      '|---|---|---|',
      `| accepted results/s | ${runs.off.acceptedPerSecond} | ${runs.on.acceptedPerSecond} |`,
      `| landed results/s, median of ${PROFILE.rounds} | ${runs.off.landedPerSecond} | ${runs.on.landedPerSecond} (×${ratio}) |`,
      `| landed results/s, each round | ${rounds.off.map((x) => x.landedPerSecond).join(', ')} | ${rounds.on.map((x) => x.landedPerSecond).join(', ')} |`,
      `| lag after load stops | ${runs.off.lagAfterStopSeconds} s | ${runs.on.lagAfterStopSeconds} s |`,
      `| lost | ${runs.off.lost} | ${runs.on.lost} |`,
      '',
      `Failing result 202 → webhook arrival over ${delay?.alerts} alerts: p50 ${delay?.p50} ms, p95 ${delay?.p95} ms, p99 ${delay?.p99} ms, max ${delay?.max} ms`,
      `results: ${path.relative(ROOT, file)}`,
    ].join('\n')}\n`,
  );
}

main().catch((err) => {
  log(`failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
