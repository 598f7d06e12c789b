/**
 * Project deploy bench: a project of N API checks in G check groups (v2), each check subscribed to one of two
 * webhook channels, deployed as the anchor's CLI sends it (gzip body, then the completion long poll). Measures
 * the dry run, the first deploy, the no-change redeploy (nothing written), a redeploy that changes every tenth
 * check, and the destroy; the service's peak RSS. Writes bench/results/<time>-projects.json.
 *
 *   npm run bench:projects -- [--checks 500] [--groups 50] [--rounds 3]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { benchAccount, benchEnvironment, ROOT, removeBenchEnvironment, ServiceUnderTest } from './harness.js';

const { values } = parseArgs({
  options: { checks: { type: 'string', default: '500' }, groups: { type: 'string', default: '50' }, rounds: { type: 'string', default: '3' } },
});
const CHECKS = Number(values.checks);
const GROUPS = Number(values.groups);
const ROUNDS = Number(values.rounds);

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}

/** The body the CLI sends for the project (its synthesize output for ApiCheck, CheckGroupV2, WebhookAlertChannel). */
function projectBody(round: number, changeEvery: number | undefined) {
  const resources: unknown[] = [];
  for (const c of ['a', 'b']) {
    resources.push({
      logicalId: `hook-${c}`,
      type: 'alert-channel',
      member: true,
      payload: {
        type: 'WEBHOOK',
        sendRecovery: true,
        sendFailure: true,
        config: { name: `Hook ${c}`, url: `http://127.0.0.1:9/hook-${c}`, method: 'POST', template: '{"check":"{{CHECK_NAME}}"}' },
      },
    });
  }
  for (let g = 0; g < GROUPS; g++) {
    resources.push({
      logicalId: `group-${g}`,
      type: 'check-group',
      member: true,
      payload: {
        name: `Group ${g}`,
        activated: true,
        locations: ['eu-west-1'],
        apiCheckDefaults: { headers: [], queryParameters: [], url: '', basicAuth: { username: '', password: '' } },
        environmentVariables: [],
        v: 2,
      },
    });
  }
  for (let i = 0; i < CHECKS; i++) {
    const changed = changeEvery !== undefined && i % changeEvery === 0;
    resources.push({
      logicalId: `check-${i}`,
      type: 'check',
      member: true,
      payload: {
        name: `Check ${i}${changed ? ` r${round}` : ''}`,
        locations: ['eu-west-1', 'us-east-1'],
        tags: ['bench', `group-${i % GROUPS}`],
        frequency: 10,
        groupId: { ref: `group-${i % GROUPS}` },
        useGlobalAlertSettings: true,
        runParallel: false,
        runtimeId: '2025.04',
        environmentVariables: [],
        checkType: 'API',
        request: {
          method: 'GET',
          url: `http://127.0.0.1:9/check/${i}`,
          assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', property: '', target: '200', regex: null }],
        },
      },
    });
    resources.push({
      logicalId: `check-alert-channel-subscription#check-${i}#hook-${i % 2 ? 'a' : 'b'}`,
      type: 'alert-channel-subscription',
      member: true,
      payload: { alertChannelId: { ref: `hook-${i % 2 ? 'a' : 'b'}` }, checkId: { ref: `check-${i}` }, activated: true },
    });
  }
  return { project: { logicalId: 'bench-project', name: 'Bench project' }, sharedFiles: [], resources, repoInfo: null };
}

async function main() {
  const { env, dataDir } = benchEnvironment();
  // Deploys only: no check runs while they are measured.
  env.RUNNER = 'off';
  env.SCHEDULER = 'off';
  const { key } = await benchAccount(env, 'projects-bench', 1_000_000);
  const svc = await ServiceUnderTest.start(env);
  const pid = svc.child.pid!;
  let peakRss = rssBytes(pid);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(pid))), 100);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  async function deploy(body: unknown, dryRun: boolean) {
    const gz = gzipSync(JSON.stringify(body));
    const t0 = performance.now();
    const res = await fetch(`${svc.url}/v1/projects/deploy?dryRun=${dryRun}&scheduleOnDeploy=false`, {
      method: 'POST',
      headers: { ...headers, 'content-encoding': 'gzip' },
      body: gz,
    });
    const json = (await res.json()) as { id: string; diff?: { action: string }[] };
    if (!res.ok) throw new Error(`deploy answered ${res.status}: ${JSON.stringify(json)}`);
    let diff = json.diff;
    if (!dryRun) {
      const done = await fetch(`${svc.url}/v1/projects/bench-project/deployments/${json.id}/completion?maxWaitSeconds=60`, { headers });
      const final = (await done.json()) as { status: string; result: { diff: { action: string }[] }; error: unknown };
      if (final.status !== 'SUCCEEDED') throw new Error(`deployment ${final.status}: ${JSON.stringify(final.error)}`);
      diff = final.result.diff;
    }
    const ms = performance.now() - t0;
    const actions: Record<string, number> = {};
    for (const c of diff ?? []) actions[c.action] = (actions[c.action] ?? 0) + 1;
    return { ms: Math.round(ms), bodyBytes: gz.length, actions };
  }

  const rounds: Record<string, unknown>[] = [];
  try {
    const resources = projectBody(0, undefined).resources.length;
    console.log(`project of ${CHECKS} checks, ${GROUPS} groups, 2 channels, ${CHECKS} subscriptions (${resources} resources)`);
    for (let round = 1; round <= ROUNDS; round++) {
      const r: Record<string, unknown> = { round };
      r.dryRunEmpty = await deploy(projectBody(round, undefined), true);
      r.firstDeploy = await deploy(projectBody(round, undefined), false);
      r.noChangeDryRun = await deploy(projectBody(round, undefined), true);
      r.noChangeRedeploy = await deploy(projectBody(round, undefined), false);
      r.tenthChanged = await deploy(projectBody(round, 10), false);
      const t0 = performance.now();
      const destroy = await fetch(`${svc.url}/v1/projects/bench-project?preserveResources=false&dryRun=false`, { method: 'DELETE', headers });
      const started = (await destroy.json()) as { id: string };
      const done = (await (await fetch(`${svc.url}/v1/projects/bench-project/deployments/${started.id}/completion?maxWaitSeconds=60`, { headers })).json()) as {
        status: string;
      };
      if (done.status !== 'SUCCEEDED') throw new Error(`destroy ${done.status}`);
      r.destroyMs = Math.round(performance.now() - t0);
      console.log(JSON.stringify(r));
      rounds.push(r);
    }
  } finally {
    clearInterval(sampler);
    await svc.stop();
    await removeBenchEnvironment(env, dataDir);
  }
  const result = { at: new Date().toISOString(), checks: CHECKS, groups: GROUPS, rounds, peakRssMb: Math.round(peakRss / 1024 / 1024) };
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${result.at.replace(/[:.]/g, '-')}-projects.json`);
  writeFileSync(file, JSON.stringify(result, null, 2));
  console.log(`peak RSS ${result.peakRssMb} MB; written ${path.relative(ROOT, file)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
