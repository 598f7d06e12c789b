import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_DIR, type CliResult, checkly, cliEnv } from '../support/checkly-cli.js';
import { createOtherTenant, startTestService, type TestService } from '../support/service.js';
import { type HttpTarget, startHttpTarget } from '../support/targets.js';

/**
 * Monitoring as code with the anchor's CLI (checkly 9.5.0): `deploy --preview`, `deploy`, `destroy` and `import`
 * of the sample project in test/compat/projects/shop against the real service, and what each leaves in the account.
 */
const SAMPLE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'projects/shop');

interface Check {
  id: string;
  name: string;
  checkType: string;
  groupId: number | null;
  tags: string[];
  alertChannelSubscriptions: { alertChannelId: number }[];
  heartbeat?: { pingUrl: string };
  request?: { url?: string; assertions?: unknown[] };
  degradedResponseTime?: number;
  dependencies?: { path: string; content: string }[];
}

describe('checkly deploy, destroy and import against this service', { timeout: 120_000 }, () => {
  let svc: TestService;
  let target: HttpTarget;
  let home: string;
  let project: string;
  let env: NodeJS.ProcessEnv;

  const cli = (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<CliResult> => checkly({ ...env, ...extra }, project, args);
  const ok = async (args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const res = await cli(args, extra);
    expect(
      res.code,
      `checkly ${args.join(' ')}\n${res.out}\n${svc.logs
        .filter((l) => /"level":(40|50)/.test(l))
        .slice(-3)
        .join('\n')}`,
    ).toBe(0);
    return res.out;
  };
  const list = async <T>(route: string): Promise<T[]> => (await svc.call('GET', `${route}?limit=100`)).body as T[];
  const checks = () => list<Check>('/v1/checks');
  const byName = async (name: string) => (await checks()).find((c) => c.name === name);
  /** Every resource of the account, as ids: what "nothing changed" compares. */
  const snapshot = async () => ({
    checks: (await list<{ id: string; updated_at: string | null }>('/v1/checks')).map((c) => `${c.id}@${c.updated_at}`).sort(),
    groups: (await list<{ id: number; updated_at: string | null }>('/v1/check-groups')).map((c) => `${c.id}@${c.updated_at}`).sort(),
    channels: (await list<{ id: number; updated_at: string | null; subscriptions: unknown[] }>('/v1/alert-channels'))
      .map((c) => `${c.id}@${c.updated_at}/${JSON.stringify(c.subscriptions)}`)
      .sort(),
    windows: (await list<{ id: number; updated_at: string | null }>('/v1/maintenance-windows')).map((c) => `${c.id}@${c.updated_at}`).sort(),
  });

  beforeAll(async () => {
    svc = await startTestService();
    target = await startHttpTarget();
    home = mkdtempSync(path.join(os.tmpdir(), 'checkly-deploy-'));
    project = path.join(home, 'shop');
    cpSync(SAMPLE, project, { recursive: true });
    // The project resolves `checkly` (and its constructs) from the pinned CLI install.
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(path.join(CLI_DIR, 'node_modules/checkly'), path.join(project, 'node_modules/checkly'), 'dir');
    env = cliEnv(svc.url, svc.adminKey, svc.defaultAccountId, home, { SHOP_URL: target.url });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await target?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('deploy --preview lists what a deploy would create and changes nothing', async () => {
    const before = await snapshot();
    const out = await ok(['deploy', '--preview']);
    expect(out).toMatch(/Create:/);
    for (const line of [
      'ApiCheck: shop-health',
      'BrowserCheck: shop-home',
      'CheckGroupV2: shop-group',
      'EmailAlertChannel: oncall-email',
      'HeartbeatMonitor: nightly-backup',
      'MaintenanceWindow: release-window',
      'TcpMonitor: shop-tcp',
      'WebhookAlertChannel: ops-webhook',
    ]) {
      expect(out).toContain(line);
    }
    expect(await snapshot()).toEqual(before);
    expect((await svc.call('GET', '/next/projects/shop-monitoring')).status).toBe(404);
  });

  it('deploy creates every resource of the project, with references, subscriptions and shared files', async () => {
    const out = await ok(['deploy', '--force']);
    expect(out).toContain('Successfully deployed project "Shop monitoring"');
    const all = await checks();
    expect(all.map((c) => c.name).sort()).toEqual(['Nightly backup', 'Shop health', 'Shop home page', 'Shop port']);
    const health = all.find((c) => c.name === 'Shop health')!;
    const [group] = await list<{ id: number; name: string; alertChannelSubscriptions: { alertChannelId: number }[] }>('/v1/check-groups');
    expect(group.name).toBe('Shop');
    expect(health.groupId).toBe(group.id);
    expect(health.request!.url).toBe(`${target.url}/health`);
    expect(health.degradedResponseTime).toBe(2000);
    const channels = await list<{ id: number; type: string; config: { name?: string; address?: string } }>('/v1/alert-channels');
    const hook = channels.find((c) => c.type === 'WEBHOOK')!;
    const email = channels.find((c) => c.type === 'EMAIL')!;
    expect(hook.config.name).toBe('Ops webhook');
    expect(health.alertChannelSubscriptions.map((s) => s.alertChannelId).sort()).toEqual([hook.id, email.id].sort());
    expect(group.alertChannelSubscriptions.map((s) => s.alertChannelId)).toEqual([hook.id]);
    // The heartbeat's ping URL is printed (the CLI reads it back per heartbeat in the diff).
    const heartbeat = all.find((c) => c.name === 'Nightly backup')!;
    expect(out).toContain(`Ping URL of heartbeat check Nightly backup is ${heartbeat.heartbeat!.pingUrl}`);
    // The browser check's helper came as a shared file and is stored as its dependency.
    const browser = (await svc.call('GET', `/v1/checks/${all.find((c) => c.name === 'Shop home page')!.id}?includeDependencies=true`)).body as Check;
    expect(browser.dependencies!.map((d) => d.path)).toEqual([expect.stringContaining('helpers.ts')]);
    expect(browser.dependencies![0].content).toContain("HOME_TITLE = 'Shop'");
    expect((await list<{ name: string }>('/v1/maintenance-windows')).map((w) => w.name)).toEqual(['Weekly release']);
    const projectBody = (await svc.call('GET', '/next/projects/shop-monitoring')).body;
    expect(projectBody).toMatchObject({ name: 'Shop monitoring', logicalId: 'shop-monitoring', repoUrl: 'https://git.example.test/shop' });
  });

  it('a second deploy of the same code changes and creates nothing', async () => {
    const before = await snapshot();
    const out = await ok(['deploy', '--force', '--output']);
    expect(out).toContain('Update and Unchanged:');
    expect(out).not.toMatch(/^Create:/m);
    expect(await snapshot()).toEqual(before);
  });

  it('an edited check is updated in place; a check removed from the code is deleted', async () => {
    const health = (await byName('Shop health'))!;
    const tcp = (await byName('Shop port'))!;
    const preview = await ok(['deploy', '--preview'], { SHOP_HEALTH_NAME: 'Shop health v2', SHOP_WITHOUT_TCP: '1' });
    expect(preview).toMatch(/Delete:\s+Check: shop-tcp/);
    await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2', SHOP_WITHOUT_TCP: '1' });
    const renamed = (await svc.call('GET', `/v1/checks/${health.id}`)).body as Check;
    expect(renamed.name).toBe('Shop health v2');
    expect((await svc.call('GET', `/v1/checks/${tcp.id}`)).status).toBe(404);
  });

  it('--preserve-resources leaves a removed check in the account, outside the project', async () => {
    await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
    const tcp = (await byName('Shop port'))!;
    const out = await ok(['deploy', '--force', '--preserve-resources', '--output'], { SHOP_HEALTH_NAME: 'Shop health v2', SHOP_WITHOUT_TCP: '1' });
    expect(out).toMatch(/Kept in your Checkly account[^\n]*\n\s+Check: shop-tcp/);
    expect((await svc.call('GET', `/v1/checks/${tcp.id}`)).status).toBe(200);
    // The next deploy that has it again makes a new one: the kept check is no longer the project's.
    await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
    expect((await checks()).filter((c) => c.name === 'Shop port')).toHaveLength(2);
    await svc.call('DELETE', `/v1/checks/${tcp.id}`);
  });

  it('a dangling reference is a 400 naming the resource and field, and nothing changes', async () => {
    const before = await snapshot();
    writeFileSync(
      path.join(project, '__checks__/dangling.check.ts'),
      "import { ApiCheck, CheckGroup } from 'checkly/constructs'\n" +
        "new ApiCheck('orphan', { name: 'Orphan', group: CheckGroup.fromId(999999), request: { method: 'GET', url: `${process.env.SHOP_URL}/orphan` } })\n",
    );
    try {
      const res = await cli(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
      expect(res.code).toBe(1);
      expect(res.out).toContain('Your project could not be deployed.');
      expect(res.out).toContain('(logicalId "check-group-999999"): physicalId 999999 names no check-group of this account');
    } finally {
      rmSync(path.join(project, '__checks__/dangling.check.ts'));
    }
    // A body that names a logicalId it does not have, as another client could send it.
    const res = await svc.call('POST', '/v1/projects/deploy', {
      body: {
        project: { logicalId: 'shop-monitoring', name: 'Shop monitoring' },
        sharedFiles: [],
        resources: [
          {
            logicalId: 'x',
            type: 'check',
            member: true,
            payload: { name: 'X', checkType: 'API', groupId: { ref: 'nope' }, request: { url: `${target.url}/x` } },
          },
        ],
        repoInfo: null,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe(
      'resources[0] (logicalId "x"): groupId refers to check-group "nope", which is not in the project (neither made by it nor referenced with fromId)',
    );
    expect(await snapshot()).toEqual(before);
  });

  it('a resource the routes refuse fails the whole deploy with its field named, and nothing changes', async () => {
    const before = await snapshot();
    writeFileSync(
      path.join(project, '__checks__/bad.check.ts'),
      "import { ApiCheck } from 'checkly/constructs'\n" +
        // The outbound policy refuses a metadata address at create (it is never contacted).
        "new ApiCheck('bad-check', { name: 'Bad', request: { method: 'GET', url: 'http://169.254.169.254/latest' } })\n",
    );
    try {
      const res = await cli(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
      expect(res.code).toBe(1);
      expect(res.out).toContain('Your project could not be deployed.');
      expect(res.out).toMatch(/resources\[\d+\] \(logicalId "bad-check"\): request\.url/);
    } finally {
      rmSync(path.join(project, '__checks__/bad.check.ts'));
    }
    // A channel kind the service does not deliver, and a status-page component (not a kind of this service), are refused by name.
    const call = await svc.call('POST', '/v1/projects/deploy?dryRun=true', {
      body: {
        project: { logicalId: 'shop-monitoring', name: 'Shop monitoring' },
        resources: [{ logicalId: 'phone', type: 'alert-channel', member: true, payload: { type: 'CALL', config: { number: '+15550100', name: 'On call' } } }],
      },
    });
    expect(call.status).toBe(400);
    expect(call.body.message).toBe(
      'resources[0] (logicalId "phone"): alert channels of type "CALL" are not delivered by this service; it sends EMAIL, WEBHOOK, SLACK, SMS, PAGERDUTY, OPSGENIE',
    );
    const page = await svc.call('POST', '/v1/projects/deploy?dryRun=true', {
      body: {
        project: { logicalId: 'shop-monitoring', name: 'Shop monitoring' },
        resources: [{ logicalId: 'status', type: 'status-page-component', member: true, payload: { name: 'Status' } }],
      },
    });
    expect(page.status).toBe(400);
    expect(page.body.message).toContain('cannot deploy resources of type status-page-component');
    expect(await snapshot()).toEqual(before);
  });

  it('friends: resources made outside the project are used by reference and never changed', async () => {
    const outside = (await svc.call('POST', '/v1/alert-channels', { body: { type: 'EMAIL', config: { address: 'outside@shop.example.test' } } })).body;
    const before = (await svc.call('GET', `/v1/alert-channels/${outside.id}`)).body;
    writeFileSync(
      path.join(project, '__checks__/friend.check.ts'),
      "import { AlertChannel, ApiCheck } from 'checkly/constructs'\n" +
        `new ApiCheck('friendly', { name: 'Friendly', alertChannels: [AlertChannel.fromId(${outside.id})], request: { method: 'GET', url: \`\${process.env.SHOP_URL}/friendly\` } })\n`,
    );
    try {
      await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
      const friendly = (await byName('Friendly'))!;
      expect(friendly.alertChannelSubscriptions.map((s) => s.alertChannelId)).toEqual([outside.id]);
      expect((await svc.call('GET', `/v1/alert-channels/${outside.id}`)).body.config).toEqual(before.config);
    } finally {
      rmSync(path.join(project, '__checks__/friend.check.ts'));
    }
    await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
    expect(await byName('Friendly')).toBeUndefined();
    expect((await svc.call('GET', `/v1/alert-channels/${outside.id}`)).status).toBe(200);
  });

  it("status pages and their services deploy as code; a check's triggerIncident names its service; removed from the code, they go", async () => {
    writeFileSync(
      path.join(project, '__checks__/status.check.ts'),
      "import { ApiCheck, StatusPage, StatusPageService } from 'checkly/constructs'\n" +
        "const api = new StatusPageService('svc-api', { name: 'Shop API' })\n" +
        "const web = new StatusPageService('svc-web', { name: 'Shop website' })\n" +
        "new StatusPage('shop-status', { name: 'Shop status', url: 'shop-status-code', defaultTheme: 'DARK', cards: [{ name: 'Shop', services: [api, web] }] })\n" +
        "new ApiCheck('api-incident', { name: 'API incident', triggerIncident: { service: api, name: 'Shop API down', description: 'd', severity: 'MAJOR', notifySubscribers: false }, request: { method: 'GET', url: `${process.env.SHOP_URL}/health` } })\n",
    );
    try {
      await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
      const pages = (await svc.call('GET', '/v1/status-pages')).body.entries as {
        id: string;
        url: string;
        defaultTheme: string;
        cards: { services: { id: string; name: string }[] }[];
      }[];
      const page = pages.find((p) => p.url === 'shop-status-code')!;
      expect(page).toMatchObject({ defaultTheme: 'DARK', cards: [{ services: [{ name: 'Shop API' }, { name: 'Shop website' }] }] });
      const check = (await svc.call('GET', `/v1/checks/${(await byName('API incident'))!.id}`)).body;
      expect(check.triggerIncident).toMatchObject({ serviceId: page.cards[0]!.services[0]!.id, name: 'Shop API down', severity: 'MAJOR' });
      // A second deploy changes nothing: the same page and services.
      await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
      const again = (await svc.call('GET', '/v1/status-pages')).body.entries as { id: string }[];
      expect(again.map((p) => p.id)).toEqual(pages.map((p) => p.id));
      expect((await svc.call('GET', '/v1/status-pages/services')).body.length).toBe(2);
    } finally {
      rmSync(path.join(project, '__checks__/status.check.ts'));
    }
    await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v2' });
    expect((await svc.call('GET', '/v1/status-pages')).body.entries).toEqual([]);
    expect((await svc.call('GET', '/v1/status-pages/services')).body.entries).toEqual([]);
  });

  it('a deploy while another runs gets 409 naming it; the CLI waits for it and then deploys', async () => {
    // Hold the project's lock as a running deploy would, with its deployment row.
    const { projectLockKey } = await import('../../src/projects/repository.js');
    const sql = svc.deps.sql;
    const [row] = await sql<{ id: string }[]>`insert into project_deployments (account_id, project_logical_id, kind, status, started_at)
      values (${svc.defaultAccountId}, 'shop-monitoring', 'DEPLOY', 'RUNNING', now()) returning id`;
    const holder = await sql.reserve();
    await holder`begin`;
    await holder`select pg_advisory_xact_lock(${projectLockKey(svc.defaultAccountId, 'shop-monitoring').toString()}::bigint)`;
    const direct = await svc.call('POST', '/v1/projects/deploy', {
      body: { project: { logicalId: 'shop-monitoring', name: 'Shop monitoring' }, sharedFiles: [], resources: [], repoInfo: null },
    });
    expect(direct.status).toBe(409);
    expect(direct.body).toMatchObject({ statusCode: 409, error: 'Conflict', deploymentId: row.id });
    // The lock is held until the CLI says it waits (however long it takes to get there on a busy machine).
    let sawWait!: () => void;
    const saidWaiting = new Promise<void>((resolve) => (sawWait = resolve));
    const waiting = checkly({ ...env, SHOP_HEALTH_NAME: 'Shop health v3' }, project, ['deploy', '--force'], 120_000, (out) => {
      if (out.includes('Waiting for an in-progress deployment')) sawWait();
    });
    await Promise.race([saidWaiting, waiting]);
    // The holder finishes: its deployment ends and its lock is released.
    await holder`update project_deployments set status = 'SUCCEEDED', ended_at = now(), progress = 100 where id = ${row.id}`;
    await holder`commit`;
    holder.release();
    const res = await waiting;
    expect(res.code, res.out).toBe(0);
    expect(res.out).toContain('Waiting for an in-progress deployment to finish');
    expect(await byName('Shop health v3')).toBeDefined();
  });

  it('a deployment whose server died is marked FAILED and does not block the next deploy', async () => {
    const sql = svc.deps.sql;
    const [row] = await sql<{ id: string }[]>`insert into project_deployments (account_id, project_logical_id, kind, status, started_at)
      values (${svc.defaultAccountId}, 'shop-monitoring', 'DEPLOY', 'RUNNING', now()) returning id`;
    const completion = await svc.call('GET', `/v1/projects/shop-monitoring/deployments/${row.id}/completion?maxWaitSeconds=1`);
    expect(completion.status).toBe(200);
    expect(completion.body).toMatchObject({ id: row.id, status: 'FAILED', error: { code: 'INTERRUPTED' } });
    await ok(['deploy', '--force'], { SHOP_HEALTH_NAME: 'Shop health v3' });
  });

  it('an older CLI deploys synchronously through /next-v2/projects/deploy with a gzip body', async () => {
    const body = {
      project: { logicalId: 'legacy-project', name: 'Legacy project' },
      sharedFiles: [],
      resources: [
        {
          logicalId: 'legacy-api',
          type: 'check',
          member: true,
          payload: { name: 'Legacy API', checkType: 'API', groupId: null, request: { method: 'GET', url: `${target.url}/legacy` } },
        },
      ],
      repoInfo: null,
    };
    const res = await fetch(`${svc.url}/next-v2/projects/deploy?dryRun=false&scheduleOnDeploy=false`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(body)),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { project: { logicalId: string }; diff: { type: string; logicalId: string; action: string; physicalId: string }[] };
    expect(json.project.logicalId).toBe('legacy-project');
    expect(json.diff).toEqual([{ type: 'check', logicalId: 'legacy-api', physicalId: expect.any(String), action: 'CREATE' }]);
    expect((await svc.call('GET', `/v1/checks/${json.diff[0].physicalId}`)).body.name).toBe('Legacy API');
    const destroyed = await svc.call('DELETE', '/next/projects/legacy-project');
    expect(destroyed.status).toBe(200);
    expect(destroyed.body.diff).toEqual([{ type: 'check', logicalId: 'legacy-api', physicalId: json.diff[0].physicalId, action: 'DELETE' }]);
    expect((await svc.call('GET', `/v1/checks/${json.diff[0].physicalId}`)).status).toBe(404);
    expect((await svc.call('DELETE', '/next/projects/legacy-project')).status).toBe(404);
  });

  it("another account sees none of the project's deployments and cannot use its resources as friends", async () => {
    const other = await createOtherTenant(svc);
    const deployment = (await svc.deps.sql<{ id: string }[]>`select id from project_deployments where account_id = ${svc.defaultAccountId} limit 1`)[0];
    expect((await svc.call('GET', `/v1/projects/shop-monitoring/deployments/${deployment.id}`, { key: other.key })).status).toBe(404);
    expect((await svc.call('GET', '/next/projects/shop-monitoring', { key: other.key })).status).toBe(404);
    const group = (await list<{ id: number }>('/v1/check-groups'))[0];
    const res = await svc.call('POST', '/v1/projects/deploy', {
      key: other.key,
      body: {
        project: { logicalId: 'shop-monitoring', name: 'Theirs' },
        sharedFiles: [],
        resources: [{ logicalId: `check-group-${group.id}`, type: 'check-group', physicalId: group.id, member: false, payload: null }],
        repoInfo: null,
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(`physicalId ${group.id} names no check-group of this account`);
  });

  it('destroy deletes the project and its resources and keeps what was made outside it', async () => {
    const outside = (await svc.call('POST', '/v1/checks/api', { body: { name: 'Made by hand', request: { url: `${target.url}/hand` } } })).body;
    const out = await ok(['destroy', '--force']);
    expect(out).toContain('All resources associated with project "Shop monitoring" have been successfully deleted.');
    expect((await checks()).map((c) => c.name)).toEqual(['Made by hand']);
    expect(await list('/v1/check-groups')).toEqual([]);
    expect(await list('/v1/maintenance-windows')).toEqual([]);
    expect((await svc.call('GET', '/next/projects/shop-monitoring')).status).toBe(404);
    expect((await svc.call('GET', `/v1/checks/${outside.id}`)).status).toBe(200);
    // Destroying it again is not an error: nothing is left to delete.
    await ok(['destroy', '--force']);
  });

  it('import plan, apply and commit bring resources made by hand into the project; its next deploy updates them', async () => {
    await ok(['deploy', '--force'], { SHOP_PROJECT_ID: 'imports-demo', SHOP_PROJECT_NAME: 'Imports demo', SHOP_WITHOUT_TCP: '1' });
    const hand = (await byName('Made by hand'))!;
    const plan = await ok(['import', 'plan', `check:${hand.id}`], { SHOP_PROJECT_ID: 'imports-demo', SHOP_PROJECT_NAME: 'Imports demo' });
    expect(plan).toContain('Your import plan has been created!');
    // The CLI wrote the check as code, from the check's public shape.
    const generated = readFileSync(path.join(project, '__checks__/resources/api-checks/made-by-hand/made-by-hand.check.ts'), 'utf8');
    expect(generated).toContain("new ApiCheck('made-by-hand'");
    expect(generated).toContain(`url: '${target.url}/hand'`);
    const [planned] = (await svc.call('GET', '/next/projects/imports-demo/imports')).body as {
      id: string;
      changes: { resources: { logicalId: string; physicalId: string }[] };
    }[];
    expect(planned.changes.resources).toEqual([expect.objectContaining({ logicalId: 'made-by-hand', physicalId: hand.id })]);
    await ok(['import', 'apply', '--plan-id', planned.id], { SHOP_PROJECT_ID: 'imports-demo', SHOP_PROJECT_NAME: 'Imports demo' });
    await ok(['import', 'commit', '--plan-id', planned.id, '--force'], { SHOP_PROJECT_ID: 'imports-demo', SHOP_PROJECT_NAME: 'Imports demo' });
    const [committed] = (await svc.call('GET', '/next/projects/imports-demo/imports')).body as { appliedAt?: string; committedAt?: string }[];
    expect(committed.appliedAt).toEqual(expect.any(String));
    expect(committed.committedAt).toEqual(expect.any(String));
    // The generated code deploys as an update of the imported check, not a new one.
    const out = await ok(['deploy', '--force', '--output'], { SHOP_PROJECT_ID: 'imports-demo', SHOP_PROJECT_NAME: 'Imports demo', SHOP_WITHOUT_TCP: '1' });
    expect(out).not.toMatch(/Create:[\s\S]*made-by-hand/);
    expect((await checks()).filter((c) => c.name === 'Made by hand')).toEqual([expect.objectContaining({ id: hand.id })]);
    await ok(['destroy', '--force'], { SHOP_PROJECT_ID: 'imports-demo', SHOP_PROJECT_NAME: 'Imports demo' });
    expect((await svc.call('GET', `/v1/checks/${hand.id}`)).status).toBe(404);
  });

  it('storage: uploads are content-addressed per account; too large is a 413 the CLI understands', async () => {
    const bytes = Buffer.from('a tiny bundle');
    const put = async (key = svc.adminKey, body: Buffer = bytes) =>
      fetch(`${svc.url}/next/checkly-storage/upload-code-bundle`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream' },
        body,
      });
    const first = (await (await put()).json()) as { key: string };
    expect(first.key).toMatch(/^code-bundles\/[0-9a-f]{64}\.tar\.gz$/);
    expect(((await (await put()).json()) as { key: string }).key).toBe(first.key);
    const download = await svc.call('POST', '/next/checkly-storage/download', { body: { key: first.key } });
    expect(download.status).toBe(200);
    expect(download.text).toBe('a tiny bundle');
    const other = await createOtherTenant(svc);
    expect((await svc.call('POST', '/next/checkly-storage/download', { key: other.key, body: { key: first.key } })).status).toBe(404);
    const big = await put(svc.adminKey, Buffer.alloc(svc.deps.config.projects.blobLimitBytes + 1));
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toMatch(/maximum allowed: \d+/);
    // Sent chunked (no Content-Length), the service finds out while reading: still the 413 the CLI parses.
    const limit = svc.deps.config.projects.blobLimitBytes;
    const chunks = (function* () {
      for (let sent = 0; sent <= limit; sent += 1024 * 1024) yield new Uint8Array(1024 * 1024);
    })();
    const chunked = await fetch(`${svc.url}/next/checkly-storage/upload-code-bundle`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/octet-stream' },
      body: new ReadableStream({
        pull: (c) => {
          const next = chunks.next();
          if (next.done) c.close();
          else c.enqueue(next.value);
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(((await chunked.json()) as { message: string }).message).toBe(`Payload content length greater than maximum allowed: ${limit}`);
  });
});
