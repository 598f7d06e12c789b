/**
 * API bench: the most frequent read, `GET /v1/checks/{id}` (a check with two alert channel subscriptions), at 32
 * connections, and create throughput, `POST /v1/checks/api` (each a new check, not activated so no runs follow), with
 * the account's rate limit raised. For each: requests a second, latency p50 and p99 as autocannon measures them, and
 * the service's CPU per request (its process's utime + stime over the load, divided by the answers).
 *
 * With `--profile` the service's CPU is profiled (its inspector) through one more GET load, and the profile's self
 * time is summed per owner (a package under node_modules, a file under src/, node's internals, GC) to say where the
 * time goes; the profile is kept in the system's temporary directory. Writes bench/results/<time>-api.json.
 *
 *   npm run bench:api -- [--seconds 15] [--connections 32] [--rounds 2] [--profile]
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import {
  benchAccount,
  benchEnvironment,
  cleanLoad,
  cpuSeconds,
  profileOwners,
  ROOT,
  removeBenchEnvironment,
  ServiceUnderTest,
  startCountingTarget,
} from './harness.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '2' },
    profile: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);

interface Load {
  rps: number;
  p50: number;
  p99: number;
  answers: number;
  cpuMsPerRequest: number;
}

async function load(svc: ServiceUnderTest, opts: autocannon.Options): Promise<Load> {
  const cpu0 = cpuSeconds(svc.child.pid!);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts }, (err, res) => (err ? reject(err) : resolve(res)));
  });
  const cpu = cpuSeconds(svc.child.pid!) - cpu0;
  cleanLoad(result);
  const answers = result.requests.total;
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    answers,
    cpuMsPerRequest: +((cpu * 1000) / answers).toFixed(3),
  };
}

async function main() {
  const { env, dataDir } = benchEnvironment();
  env.RUNNER = 'off';
  env.SCHEDULER = 'off';
  const { accountId, key } = await benchAccount(env, 'api-bench');
  const headers = { authorization: `Bearer ${key}`, 'x-checkly-account': accountId, 'content-type': 'application/json' };
  const target = await startCountingTarget();
  const results: Record<string, unknown> = {};
  const svc = await ServiceUnderTest.start(env);
  try {
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${svc.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`POST ${p} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { id: string | number };
    };
    const channels = [
      await post('/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'bench hook', url: `${target.url}/hook`, method: 'POST' } }),
      await post('/v1/alert-channels', { type: 'WEBHOOK', config: { name: 'bench hook 2', url: `${target.url}/hook2`, method: 'POST' } }),
    ];
    const apiCheck = (name: string) => ({
      name,
      activated: false,
      frequency: 1,
      locations: ['eu-west-1'],
      request: { method: 'GET', url: `${target.url}/health`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      alertChannelSubscriptions: channels.map((c) => ({ alertChannelId: c.id, activated: true })),
    });
    const check = await post('/v1/checks/api', apiCheck('bench read'));
    const getUrl = `${svc.url}/v1/checks/${check.id}`;

    await load(svc, { url: getUrl, headers, duration: 3 }); // warm-up
    const gets: Load[] = [];
    const creates: Load[] = [];
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      gets.push(await load(svc, { url: getUrl, headers }));
      creates.push(
        await load(svc, {
          url: `${svc.url}/v1/checks/api`,
          method: 'POST',
          headers,
          requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: JSON.stringify(apiCheck(`bench create ${n++}`)) }) }],
        }),
      );
    }
    results.get = gets;
    results.create = creates;
    console.log(`GET /v1/checks/{id}, ${CONNECTIONS} connections:`, gets);
    console.log(`POST /v1/checks/api, ${CONNECTIONS} connections:`, creates);

    if (values.profile) {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'api-prof-'));
      const file = path.join(dir, 'get.cpuprofile');
      await svc.ask({ type: 'profile', action: 'start' });
      const profiled = await load(svc, { url: getUrl, headers });
      await svc.ask({ type: 'profile', action: 'stop', file });
      results.profile = { load: profiled, selfTimeByOwner: profileOwners(file) };
      console.log('profile of one GET load (self time by owner):', results.profile);
      console.log(`the profile itself (for Chrome's DevTools): ${file}`);
    }
  } finally {
    await svc.stop();
    target.close();
    await removeBenchEnvironment(env, dataDir);
  }
  const out = path.join(ROOT, 'bench/results');
  mkdirSync(out, { recursive: true });
  const file = path.join(out, `${new Date().toISOString().replace(/[:.]/g, '-')}-api.json`);
  writeFileSync(
    file,
    JSON.stringify({ at: new Date().toISOString(), seconds: SECONDS, connections: CONNECTIONS, rounds: ROUNDS, cores: os.cpus().length, ...results }, null, 2),
  );
  console.log(`wrote ${path.relative(ROOT, file)}`);
}

await main();
