import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOtherTenant, startTestService, type TestService } from '../../test/support/service.js';
import { deploysSettled } from './deployments.js';
import { projectLockKey } from './repository.js';

/**
 * Project deploys through the API, with a body of every resource type the anchor's CLI sends (its own
 * synthesized output for a project of every construct, URLs pointed at this machine).
 */
const EVERY_TYPE = JSON.parse(
  readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/projects/every-type.json'), 'utf8'),
) as { project: { logicalId: string; name: string }; resources: { logicalId: string; type: string; payload: Record<string, unknown> | null }[] };

type Change = { type: string; logicalId: string; physicalId?: string | number; action: string };

describe('project deploys', () => {
  let svc: TestService;

  /** A real deploy, followed to its end as the CLI does (202, then the completion long poll). */
  const deploy = async (body: unknown, query = 'scheduleOnDeploy=false', key?: string) => {
    const res = await svc.call('POST', `/v1/projects/deploy?dryRun=false&${query}`, { body, key });
    if (res.status !== 202) return res;
    const done = await svc.call('GET', `/v1/projects/${encodeURIComponent(res.body.logicalId)}/deployments/${res.body.id}/completion?maxWaitSeconds=30`, {
      key,
    });
    expect(done.status).toBe(200);
    return done;
  };
  const project = (logicalId: string, resources: unknown[]) => ({ project: { logicalId, name: logicalId }, sharedFiles: [], resources, repoInfo: null });
  const apiCheck = (logicalId: string, extra: Record<string, unknown> = {}) => ({
    logicalId,
    type: 'check',
    member: true,
    payload: { name: logicalId, checkType: 'API', groupId: null, request: { method: 'GET', url: `http://127.0.0.1:9/${logicalId}` }, ...extra },
  });

  beforeAll(async () => {
    svc = await startTestService();
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('deploys every resource type; the dry run before it answered the same diff; a redeploy writes nothing', async () => {
    const preview = await svc.call('POST', '/v1/projects/deploy?dryRun=true&scheduleOnDeploy=true', { body: EVERY_TYPE });
    expect(preview.status).toBe(200);
    expect((await svc.call('GET', '/v1/checks')).body).toEqual([]);
    const done = await deploy(EVERY_TYPE);
    expect(done.body.status).toBe('SUCCEEDED');
    const diff = done.body.result.diff as Change[];
    const shape = (d: Change[]) => d.map((c) => `${c.type} ${c.logicalId} ${c.action}`);
    expect(shape(diff)).toEqual(shape(preview.body.diff));
    expect(diff.every((c) => c.action === 'CREATE')).toBe(true);
    expect(new Set(diff.map((c) => c.type))).toEqual(new Set(EVERY_TYPE.resources.map((r) => r.type)));

    const checks = (await svc.call('GET', '/v1/checks?limit=100')).body as {
      name: string;
      checkType: string;
      groupId: number | null;
      privateLocations: string[] | null;
      id: string;
    }[];
    expect(checks.map((c) => c.checkType).sort()).toEqual([
      'API',
      'API',
      'BROWSER',
      'DNS',
      'GRPC',
      'HEARTBEAT',
      'ICMP',
      'MULTI_STEP',
      'SSL',
      'TCP',
      'TRACEROUTE',
      'URL',
    ]);
    const groups = (await svc.call('GET', '/v1/check-groups')).body as {
      id: number;
      name: string;
      privateLocations: string[] | null;
      retryStrategy?: unknown;
    }[];
    const physical = (logicalId: string) => diff.find((c) => c.logicalId === logicalId)!.physicalId;
    // Private-location assignments became the check's and the group's privateLocations.
    expect(checks.find((c) => c.id === physical('api-1'))!.privateLocations).toEqual(['my-pl-new']);
    expect(groups.find((g) => g.id === physical('group-pl'))!.privateLocations).toEqual(['pl-two']);
    expect(groups.find((g) => g.id === physical('group-v2'))!.retryStrategy).toMatchObject({ type: 'FIXED', maxRetries: 2 });
    expect(checks.find((c) => c.id === physical('api-1'))!.groupId).toBe(physical('group-v2'));
    expect((await svc.call('GET', `/v1/dashboards/${physical('dash-1')}`)).body).toMatchObject({ customUrl: 'acme-dash', header: 'Hello' });
    expect((await svc.call('GET', `/v1/maintenance-windows/${physical('mw-1')}`)).body).toMatchObject({ name: 'MW', repeatUnit: 'WEEK' });
    const teams = (await svc.call('GET', `/v1/alert-channels/${physical('teams-1')}`)).body;
    expect(teams).toMatchObject({ type: 'WEBHOOK', config: { webhookType: 'WEBHOOK_MSTEAMS' } });
    expect(teams.subscriptions).toEqual([expect.objectContaining({ checkId: physical('url-1') })]);

    const stamps = async () => ({
      checks: ((await svc.call('GET', '/v1/checks?limit=100')).body as { id: string; updated_at: string | null }[]).map((c) => `${c.id}@${c.updated_at}`),
      groups: ((await svc.call('GET', '/v1/check-groups')).body as { id: string; updated_at: string | null }[]).map((c) => `${c.id}@${c.updated_at}`),
      dashboards: ((await svc.call('GET', '/v1/dashboards')).body as { id: string; updated_at: string | null }[]).map((c) => `${c.id}@${c.updated_at}`),
    });
    const before = await stamps();
    const again = await svc.call('POST', '/v1/projects/deploy?dryRun=true', { body: EVERY_TYPE });
    const redeploy = await deploy(EVERY_TYPE);
    expect(redeploy.body.result.diff.every((c: Change) => c.action === 'UPDATE')).toBe(true);
    expect(redeploy.body.result.diff).toEqual(again.body.diff);
    expect(redeploy.body.result.diff.map((c: Change) => c.physicalId)).toEqual(diff.map((c) => c.physicalId));
    expect(await stamps()).toEqual(before);
    // The operator's log says each deploy ran and how it ended.
    const logged = svc.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'deployment' && l.deploymentId === done.body.id);
    expect(logged).toEqual([
      expect.objectContaining({ level: 30, msg: 'deployment succeeded', status: 'SUCCEEDED', kind: expect.any(String), ms: expect.any(Number) }),
    ]);
  });

  it('groupId null takes a check out of its group; a field left out of the code goes back to its default', async () => {
    const group = { logicalId: 'g', type: 'check-group', member: true, payload: { name: 'G', v: 2 } };
    const first = await deploy(project('regroup', [group, apiCheck('c', { groupId: { ref: 'g' }, degradedResponseTime: 1234, description: 'first' })]));
    const id = (first.body.result.diff as Change[]).find((c) => c.logicalId === 'c')!.physicalId;
    expect((await svc.call('GET', `/v1/checks/${id}`)).body).toMatchObject({ groupId: expect.any(Number), degradedResponseTime: 1234, description: 'first' });
    await deploy(project('regroup', [group, apiCheck('c')]));
    const after = (await svc.call('GET', `/v1/checks/${id}`)).body;
    expect(after.groupId).toBeNull();
    // As a check made without them reads.
    const fresh = (await svc.call('POST', '/v1/checks/api', { body: { name: 'fresh', request: { url: 'http://127.0.0.1:9/fresh' } } })).body;
    expect(after.degradedResponseTime).toEqual(fresh.degradedResponseTime);
    expect(after.description).toEqual(fresh.description);
    await svc.call('DELETE', `/v1/checks/${fresh.id}`);
  });

  it('a change of check type under the same logicalId replaces the check', async () => {
    const first = await deploy(project('retype', [apiCheck('x')]));
    const oldId = first.body.result.diff[0].physicalId;
    const second = await deploy(
      project('retype', [
        { logicalId: 'x', type: 'check', member: true, payload: { name: 'x', checkType: 'TCP', groupId: null, request: { hostname: '127.0.0.1', port: 9 } } },
      ]),
    );
    const newId = second.body.result.diff[0].physicalId;
    expect(newId).not.toBe(oldId);
    expect((await svc.call('GET', `/v1/checks/${oldId}`)).status).toBe(404);
    expect((await svc.call('GET', `/v1/checks/${newId}`)).body.checkType).toBe('TCP');
  });

  it('a resource deleted by hand is made again by the next deploy', async () => {
    const first = await deploy(project('healing', [apiCheck('h')]));
    const id = first.body.result.diff[0].physicalId;
    await svc.call('DELETE', `/v1/checks/${id}`);
    const second = await deploy(project('healing', [apiCheck('h')]));
    expect(second.body.result.diff).toEqual([{ type: 'check', logicalId: 'h', physicalId: expect.not.stringMatching(id), action: 'CREATE' }]);
  });

  it('the event stream sends LF-only frames: progress while it runs, complete with the final deployment', async () => {
    const many = project(
      'streamed',
      Array.from({ length: 150 }, (_, i) => apiCheck(`s-${i}`)),
    );
    const started = await svc.call('POST', '/v1/projects/deploy?dryRun=false&scheduleOnDeploy=false', { body: many });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ logicalId: 'streamed', status: 'RUNNING', dryRun: false, result: null, error: null });
    const res = await fetch(`${svc.url}/v1/projects/streamed/deployments/${started.body.id}/events`, {
      headers: { authorization: `Bearer ${svc.adminKey}`, accept: 'text/event-stream', 'accept-encoding': 'gzip, br' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('content-encoding')).toBeNull();
    const text = await res.text();
    expect(text).not.toContain('\r');
    const frames = text
      .split('\n\n')
      .filter(Boolean)
      .filter((f) => !f.startsWith(':'));
    const events = frames.map((f) => ({ event: /^event: (.+)$/m.exec(f)![1], data: JSON.parse(/^data: (.+)$/m.exec(f)![1]) }));
    expect(events.at(-1)).toMatchObject({ event: 'complete', data: { id: started.body.id, status: 'SUCCEEDED', progress: 100 } });
    expect(events.at(-1)!.data.result.diff).toHaveLength(150);
    expect(events.filter((e) => e.event === 'progress').length).toBeGreaterThan(0);
    // A finished deployment: complete at once.
    const again = await (
      await fetch(`${svc.url}/v1/projects/streamed/deployments/${started.body.id}/events`, { headers: { authorization: `Bearer ${svc.adminKey}` } })
    ).text();
    expect(again).toMatch(/^: connected\n\nevent: complete\ndata: \{.*"status":"SUCCEEDED"/);
  });

  it('cancel stops a running deploy: it ends CANCELLED and nothing of it stays', async () => {
    const many = project(
      'cancelled',
      Array.from({ length: 300 }, (_, i) => apiCheck(`c-${i}`)),
    );
    const before = (await svc.call('GET', '/v1/checks?limit=1')).headers.get('x-total-count');
    const started = await svc.call('POST', '/v1/projects/deploy?dryRun=false&scheduleOnDeploy=false', { body: many });
    const cancel = await svc.call('POST', `/v1/projects/cancelled/deployments/${started.body.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.cancelRequestedAt).toEqual(expect.any(String));
    const done = await svc.call('GET', `/v1/projects/cancelled/deployments/${started.body.id}/completion?maxWaitSeconds=30`);
    expect(done.body).toMatchObject({ status: 'CANCELLED', result: null });
    expect((await svc.call('GET', '/v1/checks?limit=1')).headers.get('x-total-count')).toBe(before);
    expect((await svc.call('GET', '/next/projects/cancelled')).status).toBe(404);
  });

  it('completion answers 408 while a deployment runs; a dry run is not blocked by it', async () => {
    const sql = svc.deps.sql;
    const [row] = await sql<{ id: string }[]>`insert into project_deployments (account_id, project_logical_id, kind, status, started_at)
      values (${svc.defaultAccountId}, 'held', 'DEPLOY', 'RUNNING', now()) returning id`;
    const holder = await sql.reserve();
    try {
      await holder`begin`;
      await holder`select pg_advisory_xact_lock(${projectLockKey(svc.defaultAccountId, 'held').toString()}::bigint)`;
      const waited = await svc.call('GET', `/v1/projects/held/deployments/${row.id}/completion?maxWaitSeconds=1`);
      expect(waited.status).toBe(408);
      expect(waited.body).toMatchObject({ statusCode: 408, deploymentId: row.id });
      expect((await svc.call('POST', '/v1/projects/deploy?dryRun=true', { body: project('held', [apiCheck('d')]) })).status).toBe(200);
      const conflict = await svc.call('DELETE', '/v1/projects/held?preserveResources=false&dryRun=false');
      // No project "held" exists yet: nothing to destroy, whatever runs.
      expect(conflict.body).toEqual({ project: null, diff: [] });
    } finally {
      await holder`rollback`;
      holder.release();
    }
  });

  it('scheduleOnDeploy starts a run of each check the deploy created or changed, and only those', async () => {
    const sessions = async () => (await svc.deps.sql<{ n: number }[]>`select count(*)::int as n from check_sessions where run_source = 'CLI_DEPLOY'`)[0].n;
    const base = await sessions();
    await deploy(project('scheduled', [apiCheck('r1'), apiCheck('r2')]), 'scheduleOnDeploy=true');
    await deploysSettled();
    await expect.poll(sessions).toBe(base + 2);
    await deploy(project('scheduled', [apiCheck('r1'), apiCheck('r2', { description: 'changed' })]), 'scheduleOnDeploy=true');
    await expect.poll(sessions).toBe(base + 3);
    await deploy(project('scheduled', [apiCheck('r1'), apiCheck('r2', { description: 'again' })]), 'scheduleOnDeploy=false');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await sessions()).toBe(base + 3);
  });

  it('a Playwright check suite deploys with the code bundle the CLI uploaded, and only with one of its account', async () => {
    const upload = await fetch(`${svc.url}/next/checkly-storage/upload-code-bundle`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/octet-stream' },
      body: Buffer.from('pretend tar.gz'),
    });
    const { key } = (await upload.json()) as { key: string };
    const suite = (bundle: string) => ({
      logicalId: 'pw',
      type: 'check',
      member: true,
      payload: {
        name: 'PW suite',
        checkType: 'PLAYWRIGHT',
        codeBundlePath: bundle,
        browsers: ['chromium'],
        playwrightVersion: '1.51.1',
        testCommand: 'npx playwright test',
        workingDir: '.',
        doubleCheck: false,
      },
    });
    const done = await deploy(project('pw-project', [suite(key)]));
    expect(done.body.error).toBeNull();
    const check = (await svc.call('GET', `/v1/checks/${done.body.result.diff[0].physicalId}`)).body;
    expect(check).toMatchObject({ checkType: 'PLAYWRIGHT', codeBundlePath: key, testCommand: 'npx playwright test' });
    const other = await createOtherTenant(svc);
    const theirs = await deploy(project('pw-project', [suite(key)]), 'scheduleOnDeploy=false', other.key);
    expect(theirs.body).toMatchObject({
      status: 'FAILED',
      error: { message: 'resources[0] (logicalId "pw"): codeBundlePath names no code bundle this account uploaded' },
    });
  });

  it('read-only keys cannot deploy or destroy; bodies that are not a project are a 400', async () => {
    const { createApiKey } = await import('../accounts/repository.js');
    const { key } = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    expect((await svc.call('POST', '/v1/projects/deploy', { key, body: project('ro', [apiCheck('ro')]) })).status).toBe(403);
    expect((await svc.call('DELETE', '/v1/projects/regroup', { key })).status).toBe(403);
    const noProject = await svc.call('POST', '/v1/projects/deploy', { body: { resources: [] } });
    expect(noProject.status).toBe(400);
    expect(noProject.body.message).toBe('body.project is required');
    const twice = await svc.call('POST', '/v1/projects/deploy?dryRun=true', { body: project('dup', [apiCheck('a'), apiCheck('a')]) });
    expect(twice.body.message).toBe('resources[1] (logicalId "a"): another check (resources[0]) has the same logicalId');
    const unknown = await svc.call('POST', '/v1/projects/deploy?dryRun=true&verbose=true', { body: project('q', []) });
    expect(unknown.status).toBe(400);
  });

  it('a dozen deploys at once from two accounts neither deadlock nor starve the pool: past the cap a 429, every request answers', async () => {
    const other = await createOtherTenant(svc);
    const many = (prefix: string) => Array.from({ length: 40 }, (_, i) => apiCheck(`${prefix}-${i}`));
    const attempts = [svc.adminKey, other.key].flatMap((key, a) =>
      Array.from({ length: 6 }, (_, i) =>
        svc
          .call('POST', '/v1/projects/deploy?dryRun=false&scheduleOnDeploy=false', { key, body: project(`crowd-${a}-${i}`, many(`c${a}${i}`)) })
          .then((res) => ({ key, logicalId: `crowd-${a}-${i}`, res })),
      ),
    );
    // Authenticated reads while the deploys run: each answers (the pool is never all held by deploys).
    const reads = Array.from({ length: 8 }, () => svc.call('GET', '/v1/checks?limit=1'));
    const [answers, readAnswers] = await Promise.all([Promise.all(attempts), Promise.all(reads)]);
    expect(readAnswers.map((r) => r.status)).toEqual(readAnswers.map(() => 200));
    const statuses = answers.map((a) => a.res.status);
    expect(
      statuses.every((s) => s === 202 || s === 429),
      JSON.stringify(statuses),
    ).toBe(true);
    const refused = answers.filter((a) => a.res.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.res.headers.get('retry-after')).toBe('5');
    expect(refused[0]!.res.body.message).toMatch(/Too many deployments in progress/);
    // Those taken finish; none of the refused left anything behind.
    for (const { key, res } of answers.filter((a) => a.res.status === 202)) {
      const done = await svc.call('GET', `/v1/projects/${res.body.logicalId}/deployments/${res.body.id}/completion?maxWaitSeconds=30`, { key });
      expect(done.body.status).toBe('SUCCEEDED');
    }
    for (const { key, logicalId } of refused) expect((await svc.call('GET', `/next/projects/${logicalId}`, { key })).status).toBe(404);
    expect((await svc.call('GET', '/v1/checks?limit=1', { key: other.key })).status).toBe(200);
  }, 120_000);
});
