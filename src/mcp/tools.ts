import { z } from 'zod';
import type { AccessLevel } from '../model/accounts.js';

/**
 * The MCP server's tools (docs/mcp.md). Each one is made of calls to this service's own API with the caller's key,
 * so it answers exactly what the API answers to that key: its role, its account, its rate limit, and the audit log of
 * its writes. `access` is the least role that may use a tool; tools a key may not use are not listed to it.
 */

/** What a tool calls: the service's API, as the caller. */
export type Api = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  access: AccessLevel;
  input: z.ZodRawShape;
  /** Writes (or starts runs): told to clients as not read-only. */
  writes: boolean;
  run: (api: Api, args: Record<string, unknown>) => Promise<unknown>;
}

/** An API answer the tool cannot use: the API's own message becomes the tool's error. */
export class ToolError extends Error {}

async function ok(api: Api, method: Parameters<Api>[0], path: string, body?: unknown, expected: number[] = [200, 201, 202]) {
  const res = await api(method, path, body);
  if (!expected.includes(res.status)) {
    const message = (res.body as { message?: unknown } | undefined)?.message;
    throw new ToolError(`${method} ${path.split('?')[0]} answered ${res.status}${typeof message === 'string' ? `: ${message}` : ''}`);
  }
  return res.body;
}

// Any 8-4-4-4-12 hex id (error-group ids are derived, not RFC 4122 variants).
const id = (what: string) =>
  z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'expected an id such as 0f8fad5b-d9cb-469f-a165-70867728950e')
    .describe(`The ${what}'s id`);
const q = (params: Record<string, unknown>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : '';
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const TOOLS: ToolDef[] = [
  {
    name: 'list_checks',
    title: 'List checks with their state',
    description: "The account's checks with their current state (passing, degraded, failing, no data), optionally searched by name or filtered by state.",
    access: 'read',
    writes: false,
    input: {
      search: z.string().max(200).optional().describe('Part of the check name, any letter case'),
      state: z.enum(['passing', 'degraded', 'failing', 'no-data']).optional().describe('Only checks in this state'),
    },
    async run(api, args) {
      const checks = (await ok(api, 'GET', '/v1/checks?limit=100')) as {
        id: string;
        name: string;
        checkType: string;
        activated: boolean;
        muted: boolean;
        tags: string[];
      }[];
      const statuses = (await ok(api, 'GET', '/v1/check-statuses')) as {
        checkId: string;
        hasFailures: boolean;
        isDegraded: boolean;
        lastRunLocation?: string;
        updated_at?: string;
        runState?: string;
        lastRunAt?: string | null;
      }[];
      const byId = new Map(statuses.map((s) => [s.checkId, s]));
      const search = typeof args.search === 'string' ? args.search.toLowerCase() : '';
      return checks
        .map((c) => {
          const s = byId.get(c.id);
          // A check whose runs stopped is no data, whatever its last run said (docs/analytics.md).
          const state = !s || s.runState === 'NO_DATA' ? 'no-data' : s.hasFailures ? 'failing' : s.isDegraded ? 'degraded' : 'passing';
          return {
            id: c.id,
            name: c.name,
            type: c.checkType,
            activated: c.activated,
            muted: c.muted,
            tags: c.tags,
            state,
            lastUpdate: s?.updated_at ?? null,
            lastRunAt: s?.lastRunAt ?? null,
          };
        })
        .filter((c) => (!search || c.name.toLowerCase().includes(search)) && (!args.state || c.state === args.state));
    },
  },
  {
    name: 'get_check',
    title: 'A check',
    description: "A check's settings: its type, request or script, locations, frequency, assertions and alert settings.",
    access: 'read',
    writes: false,
    input: { checkId: id('check') },
    run: (api, args) => ok(api, 'GET', `/v1/checks/${args.checkId}`),
  },
  {
    name: 'get_check_results',
    title: "A check's recent runs",
    description: "A check's recent runs, newest first: when, where, passed or failed, response time.",
    access: 'read',
    writes: false,
    input: {
      checkId: id('check'),
      limit: z.number().int().min(1).max(100).default(10).describe('How many runs (1-100)'),
      failedOnly: z.boolean().default(false).describe('Only the runs that failed'),
    },
    run: (api, args) => ok(api, 'GET', `/v1/check-results/${args.checkId}${q({ limit: args.limit, hasFailures: args.failedOnly ? 'true' : undefined })}`),
  },
  {
    name: 'get_run',
    title: "A run's evidence",
    description:
      'One run with everything it saw: the request and response with timings and each assertion’s actual value, or a browser run’s steps, errors and logs.',
    access: 'read',
    writes: false,
    input: { checkId: id('check'), resultId: id('run') },
    run: (api, args) => ok(api, 'GET', `/v1/check-results/${args.checkId}/${args.resultId}`),
  },
  {
    name: 'list_error_groups',
    title: 'Error groups',
    description:
      "Failures grouped by their error (numbers, ids and times masked): of one check, or of the whole account. Each group's id can be explained with explain_failure.",
    access: 'read',
    writes: false,
    input: { checkId: id('check').optional() },
    run: (api, args) => ok(api, 'GET', args.checkId ? `/v1/error-groups/checks/${args.checkId}` : '/v1/error-groups'),
  },
  {
    name: 'explain_failure',
    title: 'Explain a failure (root-cause analysis)',
    description:
      "Explains an error group from the service's own evidence: the failing run against the last passing one, where and since when it fails, other checks on the host, recent changes. Waits for the analysis.",
    access: 'run',
    writes: true,
    input: {
      errorGroupId: id('error group'),
      userContext: z.string().max(256).optional().describe('What you know that the evidence may not show'),
      waitSeconds: z.number().int().min(1).max(120).default(60).describe('How long to wait for the analysis'),
    },
    async run(api, args) {
      const asked = (await ok(
        api,
        'POST',
        `/v1/root-cause-analyses/error-groups/${args.errorGroupId}`,
        args.userContext ? { userContext: args.userContext } : undefined,
        [202],
      )) as {
        id: string;
      };
      const until = Date.now() + Number(args.waitSeconds) * 1000;
      for (;;) {
        const res = await api('GET', `/v1/root-cause-analyses/${asked.id}`);
        if (res.status === 200) return res.body;
        if (res.status !== 202) throw new ToolError(`GET /v1/root-cause-analyses/${asked.id} answered ${res.status}`);
        if (Date.now() > until) return { id: asked.id, status: 'PENDING', note: 'Not made yet: read it later with get_root_cause_analysis.' };
        await sleep(500);
      }
    },
  },
  {
    name: 'get_root_cause_analysis',
    title: 'A root-cause analysis',
    description: 'A root-cause analysis by its id (PENDING while it is made).',
    access: 'read',
    writes: false,
    input: { id: id('analysis') },
    run: (api, args) => ok(api, 'GET', `/v1/root-cause-analyses/${args.id}`),
  },
  {
    name: 'trigger_check',
    title: 'Run a check now',
    description: 'Runs a check now in its locations and waits for the results (nothing about the check changes).',
    access: 'run',
    writes: true,
    input: { checkId: id('check'), waitSeconds: z.number().int().min(1).max(120).default(60).describe('How long to wait for the runs') },
    async run(api, args) {
      const started = (await ok(api, 'POST', '/v2/check-sessions/trigger', { target: { checkId: [args.checkId] } }, [201])) as {
        sessions: { checkSessionId: string }[];
      };
      const sessionId = started.sessions[0]?.checkSessionId;
      if (!sessionId) throw new ToolError('No run was started: the check may be deactivated or have no location');
      const until = Date.now() + Number(args.waitSeconds) * 1000;
      for (;;) {
        const left = Math.max(1, Math.min(30, Math.ceil((until - Date.now()) / 1000)));
        const res = await api('GET', `/v2/check-sessions/${sessionId}/completion?maxWaitSeconds=${left}`);
        if (res.status === 200) return res.body;
        if (res.status !== 408) throw new ToolError(`The run's session answered ${res.status}`);
        if (Date.now() >= until) return { checkSessionId: sessionId, status: 'RUNNING', note: 'Still running: its results land in get_check_results.' };
      }
    },
  },
  {
    name: 'list_status_pages',
    title: 'Status pages',
    description: "The account's status pages with their cards and services.",
    access: 'read',
    writes: false,
    input: {},
    run: (api) => ok(api, 'GET', '/v1/status-pages?limit=100'),
  },
  {
    name: 'list_incidents',
    title: 'Status page incidents',
    description: 'Incidents declared on status pages, with their updates.',
    access: 'read',
    writes: false,
    input: {},
    run: (api) => ok(api, 'GET', '/v1/status-pages/incidents'),
  },
  {
    name: 'post_incident_update',
    title: 'Post an incident update',
    description: 'Adds an update to a status-page incident (and may move it on: investigating, identified, monitoring, resolved).',
    access: 'write',
    writes: true,
    input: {
      incidentId: id('incident'),
      description: z.string().min(1).max(5000).describe('What people should know'),
      status: z.enum(['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED']).optional(),
      notifySubscribers: z.boolean().default(false),
    },
    run: (api, args) =>
      ok(api, 'POST', `/v1/status-pages/incidents/${args.incidentId}/incident-updates`, {
        description: args.description,
        ...(args.status ? { status: args.status } : {}),
        notifySubscribers: args.notifySubscribers,
      }),
  },
  {
    name: 'list_maintenance_windows',
    title: 'Maintenance windows',
    description: 'Maintenance windows: when checks are paused or alerts silenced.',
    access: 'read',
    writes: false,
    input: {},
    run: (api) => ok(api, 'GET', '/v1/maintenance-windows?limit=100'),
  },
  {
    name: 'create_maintenance_window',
    title: 'Plan maintenance',
    description: 'Plans a maintenance window for checks with the given tags (all checks without tags): their alerts are silenced then.',
    access: 'write',
    writes: true,
    input: {
      name: z.string().min(1).max(255),
      startsAt: z.string().datetime().describe('ISO 8601, for example 2026-12-01T22:00:00Z'),
      endsAt: z.string().datetime(),
      tags: z.array(z.string().min(1).max(64)).max(100).default([]),
    },
    run: (api, args) => ok(api, 'POST', '/v1/maintenance-windows', { name: args.name, startsAt: args.startsAt, endsAt: args.endsAt, tags: args.tags }),
  },
  {
    name: 'get_report',
    title: 'Availability report',
    description: "Every check's success ratio and response times over a window (default: the last 24 hours).",
    access: 'read',
    writes: false,
    input: {
      from: z.string().datetime().optional().describe('ISO 8601 start'),
      to: z.string().datetime().optional().describe('ISO 8601 end'),
    },
    run: (api, args) => ok(api, 'GET', `/v1/reporting${q({ from: args.from, to: args.to })}`),
  },
];
