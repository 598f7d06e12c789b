import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.js';
import { createAccount, createApiKey } from '../accounts/index.js';

/** GET /v1/secret-scans over a real account: what it finds, where it points, what it never looks at or says. */
describe('the secret scan', () => {
  let svc: TestService;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    svc = await startTestService();
    const made = async (path: string, body: unknown) => {
      const res = await svc.call('POST', path, { body });
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body as { id: string | number };
    };
    ids.api = String(
      (
        await made('/v1/checks/api?autoAssignAlerts=false', {
          name: 'Orders API',
          locations: ['eu-west-1'],
          request: {
            url: 'http://127.0.0.1:9/orders?api_key=k3y-in-the-url',
            headers: [
              { key: 'Authorization', value: 'Bearer abcdefghijklmnopqrstu' },
              { key: 'X-Api-Key', value: '{{{ORDERS_KEY}}}' },
            ],
            basicAuth: { username: 'orders', password: 'orders-password-1' },
          },
          environmentVariables: [{ key: 'HIDDEN_TOKEN', value: 'never-looked-at', secret: true }],
        })
      ).id,
    );
    ids.group = String(
      (
        await made('/v1/check-groups', {
          name: 'Shop',
          locations: ['eu-west-1'],
          apiCheckDefaults: { headers: [{ key: 'X-Auth-Token', value: 'group-level-token' }] },
        })
      ).id,
    );
    ids.snippet = String((await made('/v1/snippets', { name: 'login', script: `const key = 'AKIAABCDEFGHIJKLMNOP';` })).id);
    ids.channel = String(
      (
        await made('/v1/alert-channels', {
          type: 'WEBHOOK',
          config: {
            name: 'ops hook',
            url: 'http://127.0.0.1:9/hook',
            method: 'POST',
            headers: [
              { key: 'Authorization', value: 'Bearer webhook-literal-token' },
              { key: 'X-Signed', value: 'kept-secret-value', secret: true },
            ],
          },
        })
      ).id,
    );
    await made('/v1/variables', { key: 'STRIPE_SECRET', value: `sk_live_${'a'.repeat(24)}` });
    await made('/v1/variables', { key: 'DB_PASSWORD', value: 'a-locked-password', locked: true });
    await made('/v1/variables', { key: 'REGION', value: 'eu-west-1' });
    // The check is managed by a project (as `checkly deploy` records it).
    const [project] = await svc.deps
      .sql`insert into projects (account_id, logical_id, name) values (${svc.defaultAccountId}, 'shop-monitoring', 'Shop monitoring') returning id`;
    await svc.deps.sql`insert into project_resources (project_id, type, logical_id, physical_id) values (${project!.id}, 'check', 'orders-api', ${ids.api})`;
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('points at each inline credential with a redacted preview, and never at a secret or locked value', async () => {
    const res = await svc.call('GET', '/v1/secret-scans');
    expect(res.status, res.text).toBe(200);
    const found = (res.body as { entityType: string; entityId: string; fieldPath: string; fieldKey: string | null }[]).map(
      (f) => `${f.entityType} ${f.entityId} ${f.fieldPath} ${f.fieldKey ?? '-'}`,
    );
    expect(found.sort()).toEqual(
      [
        `CHECK ${ids.api} request.url api_key`,
        `CHECK ${ids.api} request.headers[0].value Authorization`,
        `CHECK ${ids.api} request.basicAuth.password -`,
        `CHECK_GROUP ${ids.group} apiCheckDefaults.headers[0].value X-Auth-Token`,
        `SNIPPET ${ids.snippet} script -`,
        `ALERT_CHANNEL ${ids.channel} config.headers[0].value Authorization`,
        'ENVIRONMENT_VARIABLE STRIPE_SECRET value STRIPE_SECRET',
      ].sort(),
    );
    const header = res.body.find((f: { fieldKey: string; entityType: string }) => f.fieldKey === 'Authorization' && f.entityType === 'CHECK');
    expect(header).toMatchObject({
      entityName: 'Orders API',
      checkType: 'API',
      project: { logicalId: 'shop-monitoring', name: 'Shop monitoring' },
      logicalId: 'orders-api',
      valuePreview: 'abcd…tu',
    });
    // No value is ever returned whole.
    for (const secret of [
      'abcdefghijklmnopqrstu',
      'orders-password-1',
      'k3y-in-the-url',
      'group-level-token',
      'AKIAABCDEFGHIJKLMNOP',
      'webhook-literal-token',
      'never-looked-at',
      'kept-secret-value',
      'a-locked-password',
    ]) {
      expect(res.text).not.toContain(secret);
    }
  });

  it("scans only what the caller may read, in the caller's account", async () => {
    const { key: readOnly } = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    const mine = await svc.call('GET', '/v1/secret-scans', { key: readOnly });
    expect(mine.status).toBe(200);
    // A read-only key reads webhook header values empty: nothing of them is scanned.
    expect(mine.body.some((f: { entityType: string }) => f.entityType === 'ALERT_CHANNEL')).toBe(false);
    const other = await createAccount(svc.deps.sql, 'elsewhere');
    const { key } = await createApiKey(svc.deps.sql, { accountId: other.id, role: 'admin' });
    expect((await svc.call('GET', '/v1/secret-scans', { key })).body).toEqual([]);
  });
});
