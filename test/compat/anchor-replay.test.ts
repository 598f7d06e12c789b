import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATABLE_TYPES, type TypeSegment } from '../../src/model/checks.js';
import { seedCheckBody } from '../../src/seed/seeder.js';
import {
  ANCHOR,
  type AnchorOperation,
  anchorOperations,
  exampleOf,
  requestBodySchema,
  responseValidator,
  routeKey,
  successStatuses,
} from '../support/anchor.js';
import { startTestService, type TestService, waitFor } from '../support/service.js';

/**
 * Replays the anchor API's own examples against every anchor operation this service serves: each request
 * (its body built from the examples the anchor document gives) is accepted with one of the anchor's success
 * statuses, and each response is valid against the anchor's response schema for it.
 *
 * Where an example names another resource (a group id, an alert channel, a private location, a snippet,
 * a client certificate) the replay names the fixture of this account instead: ids from someone else's
 * account are a 400 here by design. Names that must be unique (custom URLs, variable keys, slugs) are made
 * unique per request.
 */
const cert = readFileSync(new URL('../fixtures/client-cert.pem', import.meta.url), 'utf8');

/**
 * Where this service answers differently from the anchor on purpose, and why. Each entry names the
 * operation and the response path the anchor's schema flags.
 */
const DEVIATIONS: { op: string; at: RegExp; why: string }[] = [
  {
    op: 'GET /v1/private-locations',
    at: /\/keys\/\d+ must have required property 'rawKey'/,
    why: 'a key is shown once, when it is created; reads show maskedKey only',
  },
  { op: 'GET /v1/private-locations/{}', at: /\/keys\/\d+ must have required property 'rawKey'/, why: 'as above' },
  { op: 'PUT /v1/private-locations/{}', at: /\/keys\/\d+ must have required property 'rawKey'/, why: 'as above' },
  { op: 'DELETE /v1/status-pages/{}', at: /^ must be string$/, why: 'a 204 answer has no body; the anchor documents a JSON string for it' },
  { op: 'DELETE /v1/status-pages/incidents/{}', at: /^ must be string$/, why: 'as above' },
  { op: 'DELETE /v1/status-pages/incidents/{}/incident-updates/{}', at: /^ must be string$/, why: 'as above' },
];

interface Fixtures {
  checks: Record<TypeSegment, string>;
  groupId: number;
  groupedCheck: string;
  channelId: number;
  dashboardId: string;
  windowId: number;
  variableKey: string;
  snippetId: number;
  location: { id: string; slug: string; keyId: string };
  certificateId: string;
  sessionId: string;
  sessionResultId: string;
  resultId: string;
  checkSessionId: string;
  heartbeatEventId: string;
  dashboardNumericId: number;
  status: { serviceId: string; pageId: string; incidentId: string; updateId: string; subscriptionId: string };
  dashboardIncident: { id: string; updateId: string };
  maintenance: { windowId: number; id: string; updateId: string };
  errorGroupId: string;
  testSessionErrorGroupId: string;
  rcaId: string;
  projectId: string;
  /** A member (not an Owner) whose role the replay may change. */
  memberUserId: string;
}

describe("the anchor API's examples replayed against every operation served", () => {
  let svc: TestService;
  let fx: Fixtures;
  const served = new Map<string, AnchorOperation>();
  let unique = 0;

  /** A person made a READ_WRITE member of the account (members are made by invitation or the CLI, not by a POST). */
  const member = async (email: string) => {
    const { ensureUser } = await import('../../src/accounts/users.js');
    const { addMember } = await import('../../src/accounts/members.js');
    const user = await ensureUser(svc.deps.sql, email);
    await addMember(svc.deps.sql, svc.defaultAccountId, user.id, 'READ_WRITE');
    return user.id;
  };

  const post = async (path: string, body: unknown) => {
    const res = await svc.call('POST', path, { body });
    if (res.status >= 300) throw new Error(`fixture ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  beforeAll(async () => {
    // Runners on (no scheduler): check sessions the replay starts end, so their completion answers 200.
    svc = await startTestService({ RUNNER: 'on', CHECK_SESSION_TIMEOUT_SECONDS: '20' });
    await svc.deps.sql`update accounts set rate_limit_points = 100000 where id = ${svc.defaultAccountId}`;
    const ours = (await svc.call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const mine = new Set(Object.entries(ours.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => routeKey(m, p))));
    for (const op of anchorOperations()) if (mine.has(routeKey(op.method, op.path))) served.set(routeKey(op.method, op.path), op);

    const plan = { count: 1, types: [], frequency: 10, locations: 2 };
    const checks = {} as Record<TypeSegment, string>;
    for (const segment of Object.keys(CREATABLE_TYPES) as TypeSegment[])
      checks[segment] = (await post(`/v1/checks/${segment}`, seedCheckBody(segment, 0, plan))).id;
    const groupId = (await post('/v1/check-groups', { name: 'replay group' })).id;
    const groupedCheck = (await post('/v1/checks/api', { name: 'grouped', groupId, request: { url: 'http://127.0.0.1:9/' } })).id;
    // The anchor's channel example is an SMS channel; the type of a channel does not change on update.
    const channelId = (await post('/v1/alert-channels', { type: 'SMS', config: { name: 'on call', number: '+15555550100' } })).id;
    const dashboard = await post('/v1/dashboards', { header: 'replay', customUrl: `replay-${randomUUID().slice(0, 8)}` });
    const dashboardId = dashboard.dashboardId;
    const windowId = (await post('/v1/maintenance-windows', { name: 'w', startsAt: '2030-01-01', endsAt: '2030-01-02' })).id;
    const variableKey = (await post('/v1/variables', { key: 'REPLAY_VAR', value: 'v' })).key;
    const snippetId = (await post('/v1/snippets', { name: 's', script: 'x' })).id;
    const loc = await post('/v1/private-locations', { name: 'replay', slugName: 'replay-loc' });
    const certificateId = (await post('/v1/client-certificates', { host: 'x.test', cert })).id;
    await post(`/v1/triggers/checks/${checks.api}`, undefined);
    await post(`/v1/triggers/check-groups/${groupId}`, undefined);
    const session = await post('/v1/test-sessions', { name: 's', results: [{ checkId: checks.api, name: 'r', runLocation: 'eu-west-1' }] });
    const now = Date.now();
    const resultId = randomUUID();
    await post('/v1/check-results', {
      results: [
        {
          id: resultId,
          checkId: checks.api,
          checkType: 'API',
          runLocation: 'eu-west-1',
          startedAt: new Date(now - 60_000).toISOString(),
          stoppedAt: new Date(now - 59_000).toISOString(),
          hasFailures: false,
          responseTime: 100,
          statusCode: 200,
        },
      ],
    });
    await waitFor(
      () => svc.call('GET', `/v1/check-statuses/${checks.api}`),
      (r) => r.status === 200,
    );
    const checkSessionId = (await post('/v2/check-sessions/trigger', { target: { checkId: [checks.api] } })).sessions[0].checkSessionId;
    const pingToken = (await svc.call('GET', `/v1/checks/${checks.heartbeat}`)).body.heartbeat.pingToken;
    await svc.call('GET', `/ping/${pingToken}`);
    const events = await waitFor(
      () => svc.call('GET', `/v1/checks/heartbeats/${checks.heartbeat}/events`),
      (r) => r.body?.[0]?.events?.length > 0,
    );
    // Badges are served once the account turns them on.
    expect((await svc.call('PATCH', '/v1/account', { body: { badgesEnabled: true } })).status).toBe(200);
    // Status pages: a service on a page with a subscriber, an incident on it with an update.
    const serviceId = (await post('/v1/status-pages/services', { name: 'replay service' })).id;
    const pageId = (await post('/v1/status-pages', { name: 'replay', url: 'replay-page', cards: [{ name: 'c', services: [{ id: serviceId }] }] })).id;
    await post(`/v1/status-pages/${pageId}/subscriptions/bulk`, { subscriptions: [{ type: 'EMAIL', config: 'replay@example.test' }], autoVerify: true });
    const subscriptionId = (await svc.call('GET', `/v1/status-pages/${pageId}/subscriptions`)).body[0].id;
    const spIncident = await post('/v1/status-pages/incidents', {
      name: 'replay',
      severity: 'MINOR',
      services: [{ id: serviceId }],
      incidentUpdates: [{ description: 'd' }],
    });
    const dashIncident = await post('/v1/incidents', {
      name: 'replay',
      impact: 'MINOR',
      dashboardId: dashboard.id,
      incidentUpdates: [{ status: 'INVESTIGATING', description: 'd' }],
    });
    const day = 86_400_000;
    const maintWindowId = (
      await post('/v1/maintenance-windows', { name: 'soon', startsAt: new Date(now + day).toISOString(), endsAt: new Date(now + 2 * day).toISOString() })
    ).id;
    const maintenanceId = (await svc.call('GET', `/v1/maintenance-windows/${maintWindowId}/maintenances`)).body[0].id;
    const maintUpdateId = (
      await post(`/v1/maintenance-windows/${maintWindowId}/maintenances/${maintenanceId}/updates`, { status: 'SCHEDULED', description: 'd' })
    ).id;
    // A failed run with an error: its error group.
    await post('/v1/check-results', {
      results: [
        {
          id: randomUUID(),
          checkId: checks.api,
          checkType: 'API',
          runLocation: 'eu-west-1',
          startedAt: new Date(now - 30_000).toISOString(),
          stoppedAt: new Date(now - 29_000).toISOString(),
          hasFailures: true,
          responseTime: 100,
          apiCheckResult: { requestError: 'connect ECONNREFUSED 127.0.0.1:9' },
        },
      ],
    });
    const errorGroupId = (
      await waitFor(
        () => svc.call('GET', `/v1/error-groups/checks/${checks.api}`),
        (r) => r.body?.length > 0,
      )
    ).body[0].id;
    // A Playwright reporter run that failed: its test-session error group. A deployed project.
    const pw = await post('/next/test-sessions/create', { name: 'replay pw', testResults: [{ name: 't' }] });
    await svc.call('POST', `/next/test-sessions/${pw.testSessionId}/results/${pw.testResults[0].testResultId}`, {
      body: { status: 'FAILED', metadata: { errors: [{ error: { message: 'boom 1' } }] } },
    });
    const testSessionErrorGroupId = (await svc.call('GET', '/v1/test-session-error-groups')).body[0].id;
    // A root-cause analysis of the check's error group (GET /v1/root-cause-analyses/{id} reads it, made or not).
    const rcaId = (await post(`/v1/root-cause-analyses/error-groups/${errorGroupId}`, {})).id as string;
    const deployed = await post('/v1/projects/deploy?dryRun=false&scheduleOnDeploy=false', {
      project: { logicalId: 'replay-project', name: 'replay' },
      resources: [],
    });
    await waitFor(
      () => svc.call('GET', `/v1/projects/replay-project/deployments/${deployed.id}`),
      (r) => r.body?.status === 'SUCCEEDED',
    );
    const projectId = (await svc.call('GET', '/next/projects/replay-project')).body.id;
    fx = {
      errorGroupId,
      testSessionErrorGroupId,
      rcaId,
      projectId,
      dashboardNumericId: dashboard.id,
      status: { serviceId, pageId, incidentId: spIncident.id, updateId: spIncident.incidentUpdates[0].id, subscriptionId },
      dashboardIncident: { id: dashIncident.id, updateId: dashIncident.incidentUpdates[0].id },
      maintenance: { windowId: maintWindowId, id: maintenanceId, updateId: maintUpdateId },
      checks,
      groupId,
      groupedCheck,
      channelId,
      dashboardId,
      windowId,
      variableKey,
      snippetId,
      location: { id: loc.id, slug: loc.slugName, keyId: loc.keys[0].id },
      certificateId,
      sessionId: session.testSessionId,
      sessionResultId: session.results[0].testSessionResultId,
      resultId,
      checkSessionId,
      heartbeatEventId: events.body[0].events[0].id,
      memberUserId: await member('replay-member@example.test'),
    };
  }, 120_000);
  afterAll(() => svc?.stop());

  /** A fixture of this account for each path parameter, by what the path names. */
  function pathFor(path: string, disposable: Record<string, string>): string {
    return path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (disposable[name]) return disposable[name];
      const typed = /^\/v1\/checks\/(\w+)\/\{id\}$/.exec(path)?.[1] as TypeSegment | undefined;
      if (typed) return fx.checks[typed];
      const analytics = /^\/v1\/analytics\/([\w-]+)\/\{id\}$/.exec(path)?.[1];
      if (analytics) {
        const bySegment: Record<string, TypeSegment> = {
          'multistep-checks': 'multistep',
          icmp: 'icmp',
          'api-checks': 'api',
          'url-monitors': 'url',
          'browser-checks': 'browser',
          'playwright-checks': 'playwright',
          'tcp-checks': 'tcp',
          dns: 'dns',
          'heartbeat-checks': 'heartbeat',
          ssl: 'ssl',
        };
        return fx.checks[bySegment[analytics]];
      }
      if (path.includes('check-groups') || path.startsWith('/v1/badges/groups')) return name === 'checkId' ? fx.groupedCheck : String(fx.groupId);
      if (path.startsWith('/v1/root-cause-analyses/error-groups/')) return fx.errorGroupId;
      if (path.startsWith('/v1/root-cause-analyses/test-session-error-groups/')) return fx.testSessionErrorGroupId;
      if (path.startsWith('/v1/root-cause-analyses/')) return fx.rcaId;
      if (path.startsWith('/v1/error-groups/{id}')) return fx.errorGroupId;
      if (path.startsWith('/v1/test-session-error-groups/projects/')) return fx.projectId;
      if (path.startsWith('/v1/test-session-error-groups/')) return fx.testSessionErrorGroupId;
      if (path.includes('/maintenances'))
        return name === 'id' ? String(fx.maintenance.windowId) : name === 'maintenanceId' ? fx.maintenance.id : fx.maintenance.updateId;
      if (path.startsWith('/v1/incidents'))
        return name === 'incidentId' || !path.includes('/updates') ? fx.dashboardIncident.id : fx.dashboardIncident.updateId;
      if (path.startsWith('/v1/status-pages/services')) return fx.status.serviceId;
      if (path.startsWith('/v1/status-pages/incidents')) return name === 'incidentId' ? fx.status.incidentId : fx.status.updateId;
      if (path.startsWith('/v1/status-pages')) return name === 'subscriptionId' ? fx.status.subscriptionId : fx.status.pageId;
      if (path.startsWith('/v1/alert-channels')) return String(fx.channelId);
      if (path.startsWith('/v1/dashboards')) return fx.dashboardId;
      if (path.startsWith('/v1/maintenance-windows')) return String(fx.windowId);
      if (path.startsWith('/v1/variables')) return fx.variableKey;
      if (path.startsWith('/v1/snippets')) return String(fx.snippetId);
      if (path.startsWith('/v1/private-locations')) return name === 'keyId' ? fx.location.keyId : fx.location.id;
      if (path.startsWith('/v1/client-certificates')) return fx.certificateId;
      if (path.startsWith('/v1/test-sessions')) return name === 'testSessionResultId' ? fx.sessionResultId : fx.sessionId;
      if (path.startsWith('/v1/check-results')) return name === 'checkResultId' ? fx.resultId : fx.checks.api;
      if (path.includes('/check-sessions/')) return fx.checkSessionId;
      if (path.startsWith('/v1/checks/heartbeats/')) return name === 'id' ? fx.heartbeatEventId : fx.checks.heartbeat;
      if (path.startsWith('/v1/accounts')) return name === 'userId' ? fx.memberUserId : svc.defaultAccountId;
      if (path.startsWith('/v1/runtimes')) return '2025.04';
      return fx.checks.api;
    });
  }

  /** `url` with its host made loopback's and its port the discard port (its scheme, path and query kept). */
  function loopbackUrl(url: string): string {
    try {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = '9';
      return parsed.toString();
    } catch {
      return 'http://127.0.0.1:9/';
    }
  }

  /** Example values that name resources become this account's fixtures; unique names become unique; hosts become local. */
  function localise(value: unknown, key = ''): unknown {
    if (Array.isArray(value)) {
      if (key === 'privateLocations') return [fx.location.slug];
      // Status-page services are named by id: this account's.
      if (key === 'services') return [{ id: fx.status.serviceId, name: 'replay service', accountId: svc.defaultAccountId }];
      if (key === 'checkIds') return [fx.checks.api];
      return value.map((v) => localise(v, key));
    }
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, localise(v, k)]));
    if (value === undefined || value === null) return value;
    // The anchor's examples name public hosts (api.example.com, hooks.slack.com, a proxy's address): every URL and
    // host a run, a delivery or a fetch could reach becomes this machine's discard port, on which nothing listens.
    if (typeof value === 'string' && /^(https?|wss?):\/\//i.test(value)) return loopbackUrl(value);
    switch (key) {
      case 'hostname':
      case 'host':
      case 'nameServer':
        return typeof value === 'string' && !/^\d+$/.test(value) ? '127.0.0.1' : value;
      case 'groupId':
        return fx.groupId;
      case 'alertChannelId':
        return fx.channelId;
      case 'setupSnippetId':
      case 'tearDownSnippetId':
        return fx.snippetId;
      case 'sslClientCertificateId':
        return fx.certificateId;
      case 'checkId':
        return fx.checks.api;
      case 'dashboardId':
        return typeof value === 'number' ? fx.dashboardNumericId : value;
      case 'customUrl':
      case 'slugName':
        return `replay-${++unique}`;
      case 'customDomain':
        return `replay-${++unique}.example.test`;
      default:
        return value;
    }
  }

  function queryFor(op: AnchorOperation['op']): string {
    const params = ((op.parameters as { in: string; name: string; required?: boolean; schema?: Record<string, unknown> }[]) ?? []).filter(
      (p) => p.in === 'query' && p.required,
    );
    return new URLSearchParams(
      params.map((p) => {
        let v = exampleOf(p.schema);
        // A required list with no example: its first allowed value.
        if (Array.isArray(v) && !v.length) v = [exampleOf((p.schema as { items?: Record<string, unknown> }).items)];
        return [p.name, Array.isArray(v) ? v.join(',') : String(v)] as [string, string];
      }),
    ).toString();
  }

  /** Alert channel examples give the type but no config: the config that type needs. */
  const CHANNEL_CONFIG: Record<string, object> = {
    EMAIL: { address: 'ops@example.com' },
    SLACK: { url: 'http://127.0.0.1:9/services/T/B/X' },
    WEBHOOK: { name: 'hook', url: 'http://127.0.0.1:9/hook' },
    SMS: { name: 'on call', number: '+15555550100' },
    CALL: { name: 'on call', number: '+15555550100' },
  };

  async function replay(key: string, op: AnchorOperation, disposable: Record<string, string> = {}) {
    const problems: string[] = [];
    const bodySchema = requestBodySchema(op.op);
    let body = bodySchema ? localise(exampleOf(bodySchema)) : undefined;
    if (op.path === '/v1/variables' && op.method === 'POST') body = { ...(body as object), key: `REPLAY_${++unique}` };
    // The key in the path is the variable's; the contract does not let an update change it.
    if (op.path === '/v1/variables/{key}' && op.method === 'PUT') body = { ...(body as object), key: fx.variableKey };
    // The contract requires heartbeat and script on the generic update (the anchor does not).
    if (op.path === '/v1/checks/{id}' && op.method === 'PUT') body = { script: null, heartbeat: {}, ...(body as object) };
    // A TCP monitor needs a host to connect to; the anchor's example gives only the port.
    if (op.path === '/v1/checks/tcp' && op.method === 'POST') {
      const b = body as { request: Record<string, unknown> };
      body = { ...b, request: { hostname: '127.0.0.1', ...b.request } };
    }
    const channel = body as { type?: string; config?: object } | undefined;
    if (op.path.startsWith('/v1/alert-channels') && channel?.type && channel.config && !Object.keys(channel.config).length) {
      body = { ...channel, config: CHANNEL_CONFIG[channel.type] ?? {} };
    }
    if (op.path === '/v1/client-certificates' && op.method === 'POST') body = { ...(body as object), cert };
    // The anchor's example names neither a check nor a group (both null); a trigger needs one of them.
    if (op.path === '/v1/deployment-triggers' && op.method === 'POST') body = { ...(body as object), checkId: fx.checks.api };
    // A status page's url is unique across accounts; a subscriber is an email address.
    if (op.path.startsWith('/v1/status-pages') && body && typeof body === 'object' && 'url' in body && 'cards' in body)
      body = { ...(body as object), url: `replay-page-${++unique}` };
    if (op.path === '/v1/status-pages/{statusPageId}/subscriptions/bulk')
      body = { ...(body as object), subscriptions: [{ type: 'EMAIL', config: `replay-${++unique}@example.test` }] };
    // The anchor's example leaves the first update out (its x-constraint says exactly one).
    if (op.path === '/v1/status-pages/incidents' && op.method === 'POST') {
      const b = body as { incidentUpdates?: unknown[] };
      if (!b.incidentUpdates?.length) body = { ...b, incidentUpdates: [{ description: 'replayed' }] };
    }
    // Whatever a run or a delivery of this body could reach is this machine (the anchor's hosts were made local).
    const elsewhere = JSON.stringify(body ?? null).match(/\b(?:https?|wss?):\/\/(?!(?:[^@/"\s]*@)?127\.0\.0\.1[:/])[^"\s]*/gi);
    if (elsewhere) problems.push(`${key}: the replayed body names a host other than this machine: ${elsewhere.join(', ')}`);
    const qs = queryFor(op.op);
    const url = pathFor(op.path, disposable) + (qs ? `?${qs}` : '');
    const res = await svc.call(op.method, url, body === undefined ? {} : { body });
    const allowed = successStatuses(op.op);
    if (!allowed.includes(res.status)) {
      problems.push(
        `${key}: ${op.method} ${url} answered ${res.status} (anchor: ${allowed.join('/')}) ${res.text.slice(0, 400)}${body ? `\n  body ${JSON.stringify(body).slice(0, 400)}` : ''}`,
      );
      return problems;
    }
    const validate = responseValidator(op.op, res.status);
    if (validate && !validate(res.body)) {
      for (const e of validate.errors ?? []) {
        const where = `${e.instancePath} ${e.message}`;
        if (!DEVIATIONS.some((d) => d.op === key && d.at.test(where))) problems.push(`${key}: response ${where} ${JSON.stringify(e.params)}`);
      }
    }
    return problems;
  }

  it('serves the operations it claims, and counts them', () => {
    const total = anchorOperations().length;
    console.info(`anchor operations served: ${served.size} of ${total}`);
    expect(total).toBe(194);
    expect(served.size).toBeGreaterThanOrEqual(194);
  });

  it("accepts every example request and answers in the anchor's shape (reads and writes)", async () => {
    const problems: string[] = [];
    for (const [key, op] of served) {
      if (op.method === 'DELETE') continue;
      problems.push(...(await replay(key, op)));
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 120_000);

  it('deletes what the anchor lets a client delete', async () => {
    const problems: string[] = [];
    for (const [key, op] of served) {
      if (op.method !== 'DELETE') continue;
      const disposable: Record<string, string> = {};
      const p = op.path;
      if (p === '/v1/checks/{id}') disposable.id = (await post('/v1/checks/api', { name: 'victim', request: { url: 'https://x.test' } })).id;
      else if (p === '/v1/check-groups/{id}') disposable.id = String((await post('/v1/check-groups', { name: 'victim' })).id);
      else if (p === '/v1/alert-channels/{id}')
        disposable.id = String((await post('/v1/alert-channels', { type: 'EMAIL', config: { address: 'v@example.test' } })).id);
      else if (p === '/v1/dashboards/{dashboardId}') disposable.dashboardId = (await post('/v1/dashboards', { header: 'victim' })).dashboardId;
      else if (p === '/v1/maintenance-windows/{id}')
        disposable.id = String((await post('/v1/maintenance-windows', { name: 'v', startsAt: '2030-01-01', endsAt: '2030-01-02' })).id);
      else if (p === '/v1/variables/{key}') disposable.key = (await post('/v1/variables', { key: `VICTIM_${++unique}`, value: 'v' })).key;
      else if (p === '/v1/snippets/{id}') disposable.id = String((await post('/v1/snippets', { name: 'v', script: 'x' })).id);
      else if (p === '/v1/private-locations/{id}') disposable.id = (await post('/v1/private-locations', { name: 'v', slugName: `victim-${++unique}` })).id;
      else if (p === '/v1/private-locations/{id}/keys/{keyId}') {
        // A location has at most two keys (the replay gave the fixture's its second): a fresh location's first key goes.
        const victim = await post('/v1/private-locations', { name: 'v', slugName: `victim-${++unique}` });
        disposable.id = victim.id;
        disposable.keyId = victim.keys[0].id;
      } else if (p === '/v1/client-certificates/{id}') disposable.id = (await post('/v1/client-certificates', { host: 'v.test', cert })).id;
      else if (p === '/v1/triggers/checks/{checkId}') {
        disposable.checkId = (await post('/v1/checks/api', { name: 'v', request: { url: 'https://x.test' } })).id;
        await post(`/v1/triggers/checks/${disposable.checkId}`, undefined);
      } else if (p === '/v1/triggers/check-groups/{groupId}') {
        disposable.groupId = String((await post('/v1/check-groups', { name: 'v' })).id);
        await post(`/v1/triggers/check-groups/${disposable.groupId}`, undefined);
      } else if (p === '/v1/status-pages/{statusPageId}') {
        disposable.statusPageId = (await post('/v1/status-pages', { name: 'v', url: `victim-${++unique}`, cards: [] })).id;
      } else if (p === '/v1/status-pages/services/{serviceId}') {
        disposable.serviceId = (await post('/v1/status-pages/services', { name: 'v' })).id;
      } else if (p === '/v1/status-pages/incidents/{incidentId}') {
        disposable.incidentId = (
          await post('/v1/status-pages/incidents', {
            name: 'v',
            severity: 'MINOR',
            services: [{ id: fx.status.serviceId }],
            incidentUpdates: [{ description: 'd' }],
          })
        ).id;
      } else if (p === '/v1/status-pages/incidents/{incidentId}/incident-updates/{incidentUpdateId}') {
        disposable.incidentUpdateId = (await post(`/v1/status-pages/incidents/${fx.status.incidentId}/incident-updates`, { description: 'v' })).id;
      } else if (p === '/v1/status-pages/{statusPageId}/subscriptions/{subscriptionId}') {
        const address = `victim-${++unique}@example.test`;
        await post(`/v1/status-pages/${fx.status.pageId}/subscriptions/bulk`, { subscriptions: [{ type: 'EMAIL', config: address }], autoVerify: true });
        disposable.subscriptionId = (await svc.call('GET', `/v1/status-pages/${fx.status.pageId}/subscriptions`)).body.find(
          (s: { address: string }) => s.address === address,
        ).id;
      } else if (p === '/v1/incidents/{id}') {
        disposable.id = (
          await post('/v1/incidents', {
            name: 'v',
            impact: 'MINOR',
            dashboardId: fx.dashboardNumericId,
            incidentUpdates: [{ status: 'INVESTIGATING', description: 'd' }],
          })
        ).id;
      } else if (p === '/v1/incidents/{incidentId}/updates/{id}') {
        disposable.id = (await post(`/v1/incidents/${fx.dashboardIncident.id}/updates`, { status: 'MONITORING', description: 'v' })).id;
      } else if (p === '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}') {
        const w = (
          await post('/v1/maintenance-windows', {
            name: 'victim',
            startsAt: new Date(Date.now() + 86_400_000).toISOString(),
            endsAt: new Date(Date.now() + 2 * 86_400_000).toISOString(),
          })
        ).id;
        disposable.id = String(w);
        disposable.maintenanceId = (await svc.call('GET', `/v1/maintenance-windows/${w}/maintenances`)).body[0].id;
      } else if (p === '/v1/maintenance-windows/{id}/maintenances/{maintenanceId}/updates/{updateId}') {
        disposable.updateId = (
          await post(`/v1/maintenance-windows/${fx.maintenance.windowId}/maintenances/${fx.maintenance.id}/updates`, { status: 'SCHEDULED', description: 'v' })
        ).id;
      } else if (p.endsWith('/members/{userId}')) {
        disposable.userId = await member(`victim-${++unique}@example.test`);
      } else {
        problems.push(`${key}: the replay has no disposable fixture for it`);
        continue;
      }
      problems.push(...(await replay(key, op, disposable)));
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 120_000);

  it('documents each deviation it allows', () => {
    for (const d of DEVIATIONS) {
      expect(served.has(d.op), d.op).toBe(true);
      expect(d.why.length).toBeGreaterThan(5);
    }
    expect(Object.keys(ANCHOR.paths).length).toBeGreaterThan(100);
  });
});
