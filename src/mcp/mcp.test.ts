import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService, waitFor } from '../../test/support/service.js';
import { createApiKey } from '../accounts/repository.js';
import { TOOLS } from './tools.js';

/**
 * The MCP server at /mcp (docs/mcp.md), driven by the SDK's own client: connect with a key, list the tools the key's
 * role may use, call each, see writes in the audit log, bad arguments and refusals answered as errors.
 */
describe('the MCP server', { timeout: 180_000 }, () => {
  let svc: TestService;
  let target: Server;
  let targetUrl: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    target = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/ok`;
    svc = await startTestService({ RUNNER: 'on', RUNNER_LOCATIONS: 'eu-west-1' });
  }, 90_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await svc?.stop();
    await new Promise((r) => target?.close(r));
  });

  const connect = async (key: string) => {
    const client = new Client({ name: 'mcp-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
    clients.push(client);
    return client;
  };
  type Called = { isError?: boolean; content: { type: string; text: string }[] };
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
    const res = (await client.callTool({ name, arguments: args })) as Called;
    return { ...res, data: res.isError ? undefined : JSON.parse(res.content[0]!.text) };
  };

  it('lists every tool with its input schema to an admin key, and each one answers', async () => {
    const client = await connect(svc.adminKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description?.length).toBeGreaterThan(20);
    }

    // A check with a run, a failure and its group.
    const check = await svc.call('POST', '/v1/checks/api?autoAssignAlerts=false', {
      body: { name: 'MCP shop', locations: ['eu-west-1'], request: { url: targetUrl } },
    });
    expect(check.status).toBe(201);
    const at = Date.now() - 60_000;
    const resultId = randomUUID();
    await svc.call('POST', '/v1/check-results', {
      body: {
        results: [
          {
            id: resultId,
            checkId: check.body.id,
            checkType: 'API',
            runLocation: 'eu-west-1',
            startedAt: new Date(at).toISOString(),
            stoppedAt: new Date(at + 50).toISOString(),
            hasFailures: true,
            responseTime: 50,
            apiCheckResult: { response: { status: 500, body: '{}' }, errors: [{ message: 'Status code 500' }], assertions: [] },
          },
        ],
      },
    });

    const listed = await waitFor(
      () => call(client, 'list_checks', { search: 'mcp' }),
      (r) => r.data?.[0]?.state === 'failing',
    );
    expect(listed.data).toEqual([expect.objectContaining({ id: check.body.id, name: 'MCP shop', type: 'API', state: 'failing' })]);
    expect((await call(client, 'get_check', { checkId: check.body.id })).data.name).toBe('MCP shop');
    const results = await call(client, 'get_check_results', { checkId: check.body.id, failedOnly: true });
    expect(results.data.map((r: { id: string }) => r.id)).toContain(resultId);
    expect((await call(client, 'get_run', { checkId: check.body.id, resultId })).data.apiCheckResult.response.status).toBe(500);
    const groups = await waitFor(
      () => call(client, 'list_error_groups', { checkId: check.body.id }),
      (r) => r.data?.length === 1,
    );
    const explained = await call(client, 'explain_failure', { errorGroupId: groups.data[0].id });
    expect(explained.isError, explained.content[0]!.text).toBeFalsy();
    expect(explained.data).toMatchObject({ status: 'COMPLETED', provider: 'local', errorGroupId: groups.data[0].id });
    expect(explained.data.analysis.rootCause).toContain('500');
    expect((await call(client, 'get_root_cause_analysis', { id: explained.data.id })).data.id).toBe(explained.data.id);

    const ran = await call(client, 'trigger_check', { checkId: check.body.id, waitSeconds: 60 });
    expect(ran.isError, JSON.stringify(ran.content)).toBeFalsy();
    expect(ran.data.results[0]).toMatchObject({ checkId: check.body.id });

    // Status pages, an incident and its update; maintenance; the report.
    const service = await svc.call('POST', '/v1/status-pages/services', { body: { name: 'Shop' } });
    await svc.call('POST', '/v1/status-pages', {
      body: { name: 'Shop status', url: 'mcp-shop', cards: [{ name: 'All', services: [{ id: service.body.id }] }] },
    });
    const incident = await svc.call('POST', '/v1/status-pages/incidents', {
      body: {
        name: 'Slow cart',
        severity: 'MINOR',
        services: [{ id: service.body.id }],
        incidentUpdates: [{ description: 'Looking', status: 'INVESTIGATING' }],
      },
    });
    expect(incident.status, incident.text).toBeLessThan(300);
    expect((await call(client, 'list_status_pages')).data).toBeTruthy();
    expect(JSON.stringify((await call(client, 'list_incidents')).data)).toContain('Slow cart');
    const update = await call(client, 'post_incident_update', { incidentId: incident.body.id, description: 'Fixed the cache', status: 'RESOLVED' });
    expect(update.data).toMatchObject({ description: 'Fixed the cache', status: 'RESOLVED' });
    const planned = await call(client, 'create_maintenance_window', {
      name: 'DB upgrade',
      startsAt: '2030-01-01T22:00:00Z',
      endsAt: '2030-01-01T23:00:00Z',
      tags: ['db'],
    });
    expect(planned.data).toMatchObject({ name: 'DB upgrade' });
    expect(JSON.stringify((await call(client, 'list_maintenance_windows')).data)).toContain('DB upgrade');
    expect(Array.isArray((await call(client, 'get_report')).data)).toBe(true);

    // Writes made through tools are in the audit log, as the key's.
    const audit = await svc.call('GET', '/v1/audit-logs?operation=createMaintenanceWindow');
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).toContain('createMaintenanceWindow');
  });

  it('gives a read-only key only the tools that read; bad arguments and API refusals are tool errors, never a crash', async () => {
    const { key } = await createApiKey(svc.deps.sql, { accountId: svc.defaultAccountId, role: 'read-only' });
    const client = await connect(key);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_checks');
    for (const writer of ['trigger_check', 'explain_failure', 'post_incident_update', 'create_maintenance_window']) expect(names).not.toContain(writer);
    const refused = (await client.callTool({
      name: 'create_maintenance_window',
      arguments: { name: 'x', startsAt: '2030-01-01T00:00:00Z', endsAt: '2030-01-01T01:00:00Z' },
    })) as Called;
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/not found/);
    expect((await svc.call('GET', '/v1/maintenance-windows')).body.some((w: { name: string }) => w.name === 'x')).toBe(false);

    const admin = await connect(svc.adminKey);
    const bad = (await admin
      .callTool({ name: 'get_check', arguments: { checkId: 'not-an-id' } })
      .catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }))) as Called;
    expect(bad.isError).toBe(true);
    const missing = await call(admin, 'get_check', { checkId: randomUUID() });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/answered 404/);
    // Still serving.
    expect((await call(admin, 'list_checks')).isError).toBeFalsy();
  });

  it('refuses a request without a key, or with a key that is not one', async () => {
    const none = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { message: string }).message).toBe('Bad Token');
    const wrong = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer mk_nope', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(wrong.status).toBe(401);
    expect((await fetch(`${svc.url}/mcp`)).status).toBe(405);
    // An account header that is no id is no account of the key's: a 403, never a 500.
    const odd = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.adminKey}`, 'x-checkly-account': 'abc', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(odd.status).toBe(403);
  });
});
