/**
 * People bench: what a password sign-in costs (argon2id at the service's parameters, through the HTTP route: right
 * password, wrong password, unknown email), and what a browser session adds to an API read against an API key:
 * `GET /v1/checks/{id}` with `Authorization: Bearer` and with the session cookie, in alternating rounds (this
 * machine drifts: key, session, key, session), at 1 and 8 connections. Writes bench/results/<time>-people.json.
 *
 *   npm run bench:people -- [--signins 40] [--seconds 10] [--rounds 2]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchAccount, benchEnvironment, cleanLoad, ROOT, removeBenchEnvironment, ServiceUnderTest } from './harness.js';

const { values } = parseArgs({
  options: { signins: { type: 'string', default: '40' }, seconds: { type: 'string', default: '10' }, rounds: { type: 'string', default: '2' } },
});
const SIGNINS = Number(values.signins);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const PASSWORD = 'a measured password that is long';

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const summary = (ms: number[]) => {
  const s = [...ms].sort((a, b) => a - b);
  return { n: s.length, p50: +quantile(s, 0.5).toFixed(1), p95: +quantile(s, 0.95).toFixed(1), max: +s.at(-1)!.toFixed(1) };
};

async function load(url: string, headers: Record<string, string>, connections: number) {
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ url, connections, duration: SECONDS, headers }, (err, res) => (err ? reject(err) : resolve(res)));
  });
  cleanLoad(result);
  return { p50: result.latency.p50, p99: result.latency.p99, rps: Math.round(result.requests.average) };
}

async function main() {
  const { env, dataDir } = benchEnvironment();
  env.RUNNER = 'off';
  env.SCHEDULER = 'off';
  // The bench signs in many times from one address: failures only are throttled, and it makes none but three.
  const { cli, accountId, key } = await benchAccount(env, 'people-bench');
  const created = await cli('create-user', '--email', 'bench@people.test', '--role', 'OWNER', '--account', accountId);
  const svc = await ServiceUnderTest.start(env);
  try {
    // The printed link names PUBLIC_URL or the default port: its token is what counts.
    const link = new URL(/(http\S+)/.exec(created)![1]!);
    const first = await fetch(`${svc.url}${link.pathname}${link.search}`, { redirect: 'manual' });
    const cookie = first.headers.getSetCookie()[0]!.split(';')[0]!;
    const set = await fetch(`${svc.url}/v1/auth/password`, {
      method: 'POST',
      headers: { cookie, origin: svc.url, 'content-type': 'application/json' },
      body: JSON.stringify({ newPassword: PASSWORD }),
    });
    if (set.status !== 204) throw new Error(`setting the password answered ${set.status}`);

    const signIn = async (email: string, password: string, expect: number) => {
      const t0 = performance.now();
      const res = await fetch(`${svc.url}/v1/auth/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      const ms = performance.now() - t0;
      await res.arrayBuffer();
      if (res.status !== expect) throw new Error(`sign-in answered ${res.status}, not ${expect}`);
      return { ms, res };
    };
    await signIn('bench@people.test', PASSWORD, 200); // warm-up (the decoy hash, the connection pools)
    const right: number[] = [];
    let session = '';
    for (let i = 0; i < SIGNINS; i++) {
      const { ms, res } = await signIn('bench@people.test', PASSWORD, 200);
      right.push(ms);
      session = res.headers.getSetCookie()[0]!.split(';')[0]!;
    }
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i++) {
      wrong.push((await signIn('bench@people.test', 'not the password at all', 401)).ms);
      unknown.push((await signIn(`nobody-${i}@people.test`, 'not the password at all', 401)).ms);
    }
    const signIns = { right: summary(right), wrongPassword: summary(wrong), unknownEmail: summary(unknown) };
    console.log('sign-in', JSON.stringify(signIns));

    const check = await fetch(`${svc.url}/v1/checks/api`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench check', request: { url: 'http://127.0.0.1:9/', method: 'GET' } }),
    });
    const checkId = ((await check.json()) as { id: string }).id;
    const url = `${svc.url}/v1/checks/${checkId}`;
    const reads: Record<string, unknown>[] = [];
    for (const connections of [1, 8]) {
      await load(url, { authorization: `Bearer ${key}` }, connections); // warm-up
      for (let round = 1; round <= ROUNDS; round++) {
        for (const via of ['key', 'session'] as const) {
          const r = await load(url, via === 'key' ? { authorization: `Bearer ${key}` } : { cookie: session }, connections);
          reads.push({ connections, round, via, ...r });
          console.log(JSON.stringify(reads.at(-1)));
        }
      }
    }
    const mean = (c: number, via: string, f: 'p50' | 'rps') => {
      const rows = reads.filter((r) => r.connections === c && r.via === via) as { p50: number; rps: number }[];
      return rows.reduce((a, r) => a + r[f], 0) / rows.length;
    };
    const overhead = [1, 8].map((c) => ({
      connections: c,
      keyRps: Math.round(mean(c, 'key', 'rps')),
      sessionRps: Math.round(mean(c, 'session', 'rps')),
      throughputCostPct: +((1 - mean(c, 'session', 'rps') / mean(c, 'key', 'rps')) * 100).toFixed(1),
      keyP50: mean(c, 'key', 'p50'),
      sessionP50: mean(c, 'session', 'p50'),
    }));
    console.log('session overhead', JSON.stringify(overhead));
    const result = { at: new Date().toISOString(), signIns, reads, overhead };
    const dir = path.join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${result.at.replace(/[:.]/g, '-')}-people.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    console.log(`written ${path.relative(ROOT, file)}`);
  } finally {
    await svc.stop();
    await removeBenchEnvironment(env, dataDir);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
