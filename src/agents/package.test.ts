import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAgent } from '../../scripts/build-agent.js';
import { type AgentProcess, freePort, startAgentProcess } from '../../test/support/agents.js';
import { runNow, startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { type HttpTarget, startDnsTarget, startHttpTarget, startTcpTarget } from '../../test/support/targets.js';

/**
 * The agent as a team installs it (docs/agent.md, "Install"): `npm run agent:build`'s tarball unpacked into an empty
 * folder with no node_modules of the service in reach, run with plain `node agent.mjs`. It registers with the
 * package's version, makes an API, a TCP and a DNS check, goes on after the service restarts, and stops cleanly.
 */
describe('the agent package', () => {
  let first: TestService;
  let svc: TestService;
  let http: HttpTarget;
  let tcp: Awaited<ReturnType<typeof startTcpTarget>>;
  let dns: Awaited<ReturnType<typeof startDnsTarget>>;
  let agent: AgentProcess | undefined;
  let work: string;
  let overrides: Record<string, string>;

  beforeAll(async () => {
    [http, tcp, dns] = await Promise.all([startHttpTarget(), startTcpTarget(), startDnsTarget({ 'svc.test': '10.1.2.3' })]);
    overrides = { PORT: String(await freePort()), AGENT_LEASE_SECONDS: '5' };
    first = await startTestService(overrides);
    svc = first;
    work = mkdtempSync(path.join(os.tmpdir(), 'agent-package-'));
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    agent?.remove();
    await svc?.stop();
    await Promise.all([http?.close(), tcp?.close(), dns?.close()]);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('installs from its tarball into an empty folder and runs checks through a service restart', async () => {
    const { tarball } = await buildAgent(path.join(work, 'dist'));
    const home = path.join(work, 'opt');
    execFileSync('mkdir', ['-p', home]);
    execFileSync('tar', ['-xzf', tarball, '-C', home, '--strip-components=1']);
    // Nothing of the service's: one bundle, the native addon it cannot bundle, and no node_modules above it.
    expect(existsSync(path.join(home, 'agent.mjs'))).toBe(true);
    expect(
      execFileSync('ls', [path.join(home, 'node_modules')], { encoding: 'utf8' })
        .trim()
        .split('\n'),
    ).toEqual(['isolated-vm']);
    for (let dir = path.dirname(home); dir !== path.dirname(dir); dir = path.dirname(dir)) expect(existsSync(path.join(dir, 'node_modules'))).toBe(false);
    const version = (JSON.parse(readFileSync(path.join(home, 'package.json'), 'utf8')) as { version: string }).version;
    expect(execFileSync(process.execPath, ['agent.mjs', '--version'], { cwd: home, encoding: 'utf8' }).trim()).toBe(version);
    const help = execFileSync(process.execPath, ['agent.mjs', '--help'], { cwd: home, encoding: 'utf8' });
    for (const name of ['API_KEY', 'API_URL', 'JOB_CONCURRENCY', 'AGENT_DATA_DIR', 'OUTBOUND_ALLOW']) expect(help).toContain(name);

    const location = (await svc.call('POST', '/v1/private-locations', { body: { name: 'Branch', slugName: 'branch' } })).body;
    agent = await startAgentProcess({ apiUrl: svc.url, apiKey: location.keys[0].rawKey, packageDir: home });
    const started = agent.logs.map((l) => JSON.parse(l)).find((l: { msg?: string }) => l.msg === 'agent started') ?? {};
    const fleet = await waitFor(
      () => svc.call('GET', `/v1/private-locations/${location.id}`),
      (r) => r.body.agentCount === 1,
      30_000,
    );
    expect(fleet.body.runningAgents).toEqual([expect.objectContaining({ version, isOutdated: false, count: 1 })]);
    // Without Playwright beside it, it says so and leases no browser type.
    expect(started.checkTypes).toEqual(expect.arrayContaining(['API', 'TCP', 'DNS']));
    expect(started.checkTypes).not.toContain('BROWSER');
    expect(typeof started.browserChecks).toBe('string');
    expect(started.scripts).toBe(true);

    const create = async (segment: string, body: Record<string, unknown>) => {
      const res = await svc.call('POST', `/v1/checks/${segment}?autoAssignAlerts=false`, {
        body: { locations: [], privateLocations: ['branch'], frequency: 720, retryStrategy: null, doubleCheck: false, ...body },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const runOnce = async (checkId: string) => (await runNow(svc, checkId)).result;

    const api = await create('api', {
      name: 'branch api',
      request: { url: `${http.url}/ok`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      localSetupScript: "request.headers['x-from'] = 'setup';",
    });
    const tcpCheck = await create('tcp', { name: 'branch tcp', request: { hostname: '127.0.0.1', port: tcp.port } });
    const dnsCheck = await create('dns', {
      name: 'branch dns',
      request: { query: 'svc.test', recordType: 'A', nameServer: '127.0.0.1', port: dns.udpPort },
    });
    const apiResult = await runOnce(api);
    expect(apiResult).toMatchObject({ hasFailures: false, runLocation: 'branch' });
    // The setup script ran in the bundled isolated-vm.
    expect(http.hits('/ok').some((h) => h.headers['x-from'] === 'setup')).toBe(true);
    expect(await runOnce(tcpCheck)).toMatchObject({ hasFailures: false, runLocation: 'branch' });
    expect(await runOnce(dnsCheck)).toMatchObject({ hasFailures: false, runLocation: 'branch' });

    // The service restarts (same database and Redis); the same agent process goes on.
    await first.close();
    svc = await startTestService({
      ...overrides,
      DATABASE_URL: first.env.DATABASE_URL,
      REDIS_PREFIX: first.env.REDIS_PREFIX,
      BOOTSTRAP_API_KEY: first.env.BOOTSTRAP_API_KEY,
    });
    expect(agent.proc.exitCode).toBe(null);
    expect(await runOnce(api)).toMatchObject({ hasFailures: false, runLocation: 'branch' });

    // SIGTERM: a clean stop.
    await agent.stop();
    expect(await agent.exited).toBe(0);
    expect(agent.logs.some((l) => l.includes('agent stopping'))).toBe(true);
  }, 240_000);
});
