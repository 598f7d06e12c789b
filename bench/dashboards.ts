/**
 * npm run bench:dashboards [-- --quick]
 *
 * Viewers of one rendered dashboard with 20 checks (30 days of 1-minute results in 4 locations each):
 *  1. the cold build: the data document's first request (status, three windows of availability/p95/p99 and
 *     recent runs for every check), repeated with the cache expired each time;
 *  2. 500 concurrent viewers polling data.json as fast as they get answers, then the page itself, with the
 *     dashboard's data cached for its refreshRate as in production: p50/p99, req/s, and the analytics queries
 *     the service issued meanwhile (from its own /metrics), per minute.
 * Writes bench/results/<timestamp>-dashboards[-quick].json and prints a table.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { dropDatabase } from '../src/storage/postgres.js';
import { deleteKeysWithPrefix } from '../src/storage/redis.js';
import { benchEnvironment, ROOT, runCli, ServiceUnderTest, settle } from './harness.js';
import { type LoadResult, latencyStats, load, round } from './load.js';

const quick = process.argv.includes('--quick');
const PROFILE = quick ? { seconds: 15, days: 7, coldRuns: 5 } : { seconds: 60, days: 30, coldRuns: 20 };
const VIEWERS = 500;
const CHECKS = 20;
const METRICS_TOKEN = 'bench-metrics-token-0123456789';

const log = (line: string) => process.stderr.write(`[bench:dashboards] ${line}\n`);

/** Dashboard queries the service has issued so far (its own analytics_store_query_duration_seconds count). */
async function dashboardQueries(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith('analytics_store_query_duration_seconds_count{') && l.includes('purpose="dashboard"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

function summarize(r: LoadResult) {
  const { samples: _samples, ...rest } = r;
  return { ...rest, ok: r.errors === 0 && r.timeouts === 0 && r.non2xx === 0 };
}

async function main() {
  const { env, dataDir } = benchEnvironment();
  env.METRICS_TOKEN = METRICS_TOKEN;
  let svc: ServiceUnderTest | undefined;
  try {
    await runCli(env, 'migrate');
    const accountId = await runCli(env, 'create-account', '--name', 'bench');
    const key = await runCli(env, 'create-key', '--account', accountId, '--role', 'admin', '--name', 'bench');
    const seeded = JSON.parse(
      await runCli(
        env,
        'seed',
        '--account',
        accountId,
        '--checks',
        String(CHECKS),
        '--types',
        'api,url,browser,multistep',
        '--locations',
        '4',
        '--frequency',
        '1',
        '--days',
        String(PROFILE.days),
        '--seed',
        '7',
      ),
    ) as { rows: number };
    log(`seeded ${seeded.rows} rows`);
    svc = await ServiceUnderTest.start(env);
    const created = await fetch(`${svc.url}/v1/dashboards`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ header: 'Wall screen', customUrl: 'wall', refreshRate: 60, checksPerPage: 20, showCheckRunLinks: true }),
    });
    if (created.status !== 201) throw new Error(`dashboard: ${created.status} ${await created.text()}`);
    const { id } = (await created.json()) as { id: number };

    /** A change to the dashboard gives it a new cache entry (once its settings are reread, within 5 s). */
    const invalidate = async (description: string) => {
      await fetch(`${svc!.url}/v1/dashboards/${id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ description }),
      });
      await new Promise((r) => setTimeout(r, 5100));
    };

    // 1. Cold builds.
    const cold: number[] = [];
    for (let i = 0; i < PROFILE.coldRuns; i++) {
      await invalidate(`cold ${i}`);
      await settle(svc);
      const started = performance.now();
      const res = await fetch(`${svc.url}/dashboards/wall/data.json`);
      const body = (await res.json()) as { checks: unknown[] };
      cold.push(performance.now() - started);
      if (res.status !== 200 || body.checks.length !== CHECKS) throw new Error(`cold build: ${res.status}, ${body.checks.length} checks`);
    }
    const coldMs = latencyStats(cold);
    log(`cold build: p50 ${coldMs.p50} ms, p99 ${coldMs.p99} ms`);

    // 2. Viewers, each run starting on an empty cache.
    const runs = [];
    for (const [name, p] of [
      ['data.json', '/dashboards/wall/data.json'],
      ['page', '/dashboards/wall'],
    ] as const) {
      await invalidate(`viewers ${name}`);
      await settle(svc);
      const before = await dashboardQueries(svc.url);
      const r = await load({ url: svc.url, method: 'GET', path: p, connections: VIEWERS, durationSeconds: PROFILE.seconds });
      const queries = (await dashboardQueries(svc.url)) - before;
      const perMinute = round((queries / PROFILE.seconds) * 60);
      log(
        `${name}: ${r.requestsPerSecond} req/s, p50 ${r.latencyMs.p50} ms, p99 ${r.latencyMs.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}; ${queries} analytics queries (${perMinute}/min)`,
      );
      runs.push({ name, path: p, ...summarize(r), analyticsQueries: queries, analyticsQueriesPerMinute: perMinute });
    }
    const memory = await svc.ask({ type: 'memory' });
    const out = {
      startedAt: new Date().toISOString(),
      mode: quick ? 'quick' : 'full',
      data: `${CHECKS} checks, 4 locations, every minute, ${PROFILE.days} days (${seeded.rows} runs)`,
      coldBuildMs: coldMs,
      viewers: VIEWERS,
      runs,
      peakRssBytes: memory.peakRssBytes,
    };
    const dir = path.join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${out.startedAt.replace(/[:.]/g, '-')}-dashboards${quick ? '-quick' : ''}.json`);
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    const lines = [
      `Dashboard viewers (${out.mode}): ${out.data}; cold build of the data document p50 ${coldMs.p50} ms / p99 ${coldMs.p99} ms.`,
      '',
      `| ${VIEWERS} viewers on | req/s | p50 ms | p99 ms | non-2xx | errors | analytics queries | per minute |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...runs.map(
        (r) =>
          `| ${r.name} | ${r.requestsPerSecond} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${r.non2xx} | ${r.errors} | ${r.analyticsQueries} | ${r.analyticsQueriesPerMinute} |`,
      ),
      '',
      `Peak service RSS ${(memory.peakRssBytes / 2 ** 30).toFixed(2)} GiB.`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    log(`results: ${path.relative(ROOT, file)}`);
    if (!runs.every((r) => r.ok)) process.exitCode = 1;
  } finally {
    await svc?.stop().catch(() => {});
    await dropDatabase(env.DATABASE_URL!).catch(() => {});
    await deleteKeysWithPrefix(env.REDIS_URL!, env.REDIS_PREFIX!).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  log(`failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
