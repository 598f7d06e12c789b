import type { Readable } from 'node:stream';
import { type Static, Type } from '@sinclair/typebox';
import { HttpError, notFound, unauthorized } from '../http/errors.js';
import { type AnyRoute, defineRoute, type RateLimitRule } from '../http/route.js';
import { compileValidator } from '../http/validation.js';
import { toRow } from '../ingest/index.js';
import { AGENT_PROTOCOL, compareVersions } from '../model/agent.js';
import { keptAssetsProblems } from '../model/results.js';
import { locationsForSlot, phaseOf } from '../model/schedule.js';
import { type AgentLocation, locationOfKey, registerAgent, touchAgent } from '../private-locations/index.js';
import {
  bounded,
  FileKind,
  FileReply,
  LeaseBody,
  LeaseId,
  LeasesReply,
  MadeBody,
  MadeItem,
  MadeReply,
  OutcomesBody,
  OutcomesReply,
  RegisterBody,
  RegisterReply,
  RenewBody,
  RenewReply,
  type RunOutcome,
  scheduledResultId,
} from '../run-kernel/index.js';
import { loadRunnable, RunBook, resultItem, verdict } from '../runners/index.js';
import type { Deps } from '../storage/deps.js';
import { adhocRecorder } from '../test-sessions/index.js';
import { AgentLeases, decodeLease } from './leases.js';
import { plainAddress } from './static-ips.js';

/** Every call of an agent names its key: one location's key never reaches another location's runs. */
const AuthHeaders = Type.Object({ authorization: Type.Optional(Type.String({ maxLength: 300, description: 'Bearer pl_… (a key of the private location)' })) });

/**
 * Agents call often (leases, reports): a generous bucket per location key (per credential sent, checked or not),
 * never an account's API limit, and never one that a caller with junk keys can use up for everyone.
 */
const AGENT_RATE: RateLimitRule = { points: 30_000, windowSeconds: 60, bucket: 'agents', perCredential: true };

/** What every agent route shares: its tag, no API key (the location key is checked by the route), the agents' limit. */
const AGENT_ROUTE = { tag: 'Agents', access: 'public', rateLimit: AGENT_RATE } as const;

/** Each result is checked on its own: one the service cannot take is refused alone (an agent's buffer never stops on it). */
const checkMadeItem = compileValidator('result', MadeItem);

const LeaseParams = Type.Object({ leaseId: LeaseId }, { additionalProperties: false });
const FileParams = Type.Object({ leaseId: LeaseId, kind: FileKind }, { additionalProperties: false });

/** How far ahead of the service's clock an agent's may be. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** A run's times as an agent could have measured them: started since `earliest`, stopped after it started, none ahead of now. */
function plausibleTimes(o: { startedAt: number; stoppedAt: number }, earliest: number): boolean {
  const latest = Date.now() + CLOCK_SKEW_MS;
  return o.startedAt >= earliest && o.startedAt <= latest && o.stoppedAt >= o.startedAt && o.stoppedAt <= latest && o.stoppedAt - o.startedAt <= 86_400_000;
}

/** An agent's last-seen stamp is written at most this often per agent and process. */
const TOUCH_EVERY_MS = 5000;

/** The most a run's file may be (the same limit as the service's own runners). */
const FILE_LIMIT_BYTES = 50 * 1024 * 1024;
/** Results made while cut off are taken back this far (the agent's buffer keeps at most a week). */
const MADE_MAX_AGE_MS = 7 * 86_400_000;

/**
 * The agent protocol (docs/agent.md), version 1: an agent registers, leases its location's runs, renews the
 * leases while it runs them, reports each outcome once, uploads the files a run keeps, and hands over the
 * results it made while it could not reach the service. Every call carries a key of the location.
 */
export function agentRoutes(deps: Deps): AnyRoute[] {
  const { sql, config, logger } = deps;
  // No linger for agents' results: a report is answered, and its lease ended, once its result is queued (a lease
  // lapsing while the result waited would lease the run again).
  const book = new RunBook({
    sql,
    queues: deps.queues,
    redis: deps.redis,
    redisPrefix: config.redisPrefix,
    ingest: deps.ingest,
    logger,
    metrics: deps.metrics,
    resultLingerMs: 0,
    handOffPatienceMs: 0,
    recordAdhoc: adhocRecorder(sql),
  });
  const leases = new AgentLeases(deps.queues, book, { leaseMs: config.agents.leaseMs, maxWaitMs: config.agents.maxWaitMs }, logger, deps.metrics);
  const settings = config.agents;

  async function locationOf(headers: Static<typeof AuthHeaders>): Promise<AgentLocation> {
    const auth = headers.authorization;
    if (!auth) throw unauthorized('missing-credentials');
    const m = /^Bearer (pl_[0-9a-f]{16,128})$/.exec(auth);
    if (!m) throw unauthorized(auth.startsWith('Bearer ') ? 'invalid-key' : 'not-bearer');
    const location = await locationOfKey(sql, m[1]!);
    if (!location) throw unauthorized('invalid-key');
    return location;
  }

  /** A large body's key, checked before it is read (the handler checks it again, as every agent route does). */
  const keyFirst = async (headers: Readonly<Record<string, string | string[] | undefined>>) => {
    const auth = headers.authorization;
    await locationOf({ authorization: typeof auth === 'string' ? auth : undefined });
  };

  /**
   * The agent must have registered with this location (again after the service forgot it, or a key change). Its
   * last-seen stamp is written at most every few seconds per agent and process, not on every call.
   */
  const recent = new Map<string, { at: number; capabilities: Set<string> }>();
  async function seen(location: AgentLocation, agentId: string, address: string): Promise<Set<string>> {
    const key = `${location.id}|${agentId}`;
    const known = recent.get(key);
    if (known && Date.now() - known.at < TOUCH_EVERY_MS) return known.capabilities;
    const capabilities = await touchAgent(sql, location.id, agentId, address ? plainAddress(address) : null);
    if (!capabilities) {
      recent.delete(key);
      throw new HttpError(409, 'This agent is not registered with this location: register first', { reason: 'not-registered' });
    }
    if (recent.size > 10_000) recent.clear();
    recent.set(key, { at: Date.now(), capabilities: new Set(capabilities) });
    return recent.get(key)!.capabilities;
  }

  async function leaseOf(location: AgentLocation, leaseId: string) {
    const lease = decodeLease(leaseId);
    if (!lease || !(await leases.holding(location, lease.jobId, lease.token)))
      throw new HttpError(409, 'This lease no longer holds its run', { reason: 'lease-lost' });
    return lease;
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agent/register',
      operationId: 'registerAgent',
      summary: 'An agent says who it is: its id, version, the check types it runs, how many at once',
      ...AGENT_ROUTE,
      errors: [400, 401, 409, 503],
      schema: {
        headers: AuthHeaders,
        body: RegisterBody,
        responses: { 200: RegisterReply },
      },
      handler: async ({ headers, body, context }) => {
        const location = await locationOf(headers);
        if (body.protocol !== AGENT_PROTOCOL)
          throw new HttpError(409, `This service speaks agent protocol ${AGENT_PROTOCOL}, not ${body.protocol}: install the agent of this service's version`, {
            reason: 'protocol',
          });
        const ok = await registerAgent(sql, location.id, {
          id: body.agentId,
          version: body.version,
          capabilities: body.capabilities,
          concurrency: body.concurrency,
          address: context.client.address ? plainAddress(context.client.address) : null,
          egressIps: body.egressIps ?? [],
        });
        if (!ok) throw new HttpError(409, 'This agent id belongs to another location: give each agent its own data folder', { reason: 'agent-id-taken' });
        recent.delete(`${location.id}|${body.agentId}`);
        const isOutdated = compareVersions(body.version, settings.minVersion) < 0;
        logger.info({ agentId: body.agentId, location: location.slugName, version: body.version, isOutdated }, 'agent registered');
        return {
          status: 200,
          body: {
            protocol: AGENT_PROTOCOL,
            agentId: body.agentId,
            location: { id: location.id, slugName: location.slugName },
            leaseSeconds: Math.round(settings.leaseMs / 1000),
            minAgentVersion: settings.minVersion,
            isOutdated,
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/agent/leases',
      operationId: 'leaseAgentRuns',
      summary: "Up to `max` of the location's due runs, each under a lease; waits up to `waitSeconds` for a first",
      description: 'A leased run carries the check with its secret values: they are given only for a lease, and the agent keeps them in memory only.',
      ...AGENT_ROUTE,
      errors: [400, 401, 409, 503],
      schema: { headers: AuthHeaders, body: LeaseBody, responses: { 200: LeasesReply } },
      handler: async ({ headers, body, context }) => {
        const location = await locationOf(headers);
        const capabilities = await seen(location, body.agentId, context.client.address);
        const taken = await leases.take(location, body.agentId, capabilities, body.max, body.waitSeconds * 1000, context.signal);
        return {
          status: 200,
          body: {
            leases: taken.map((l) => ({
              leaseId: l.leaseId,
              expiresAt: new Date(l.expiresAt).toISOString(),
              run: l.run,
              check: l.check,
              resultId: l.resultId,
              ...(l.assetBase ? { assetBase: l.assetBase } : {}),
              ...(l.holders ? { holders: l.holders } : {}),
            })),
          },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/agent/leases/renew',
      operationId: 'renewAgentLeases',
      summary: 'Extends the leases of runs the agent is still making; lost ones went to another agent',
      ...AGENT_ROUTE,
      errors: [400, 401, 409, 503],
      schema: {
        headers: AuthHeaders,
        body: RenewBody,
        responses: { 200: RenewReply },
      },
      handler: async ({ headers, body, context }) => {
        const location = await locationOf(headers);
        await seen(location, body.agentId, context.client.address);
        return { status: 200, body: await leases.renew(location, body.leaseIds) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/agent/outcomes',
      operationId: 'reportAgentOutcomes',
      summary: 'What leased runs found: each taken once (a repeat is answered `duplicate`, a lapsed lease `lost`)',
      ...AGENT_ROUTE,
      bodyLimitBytes: 32 * 1024 * 1024,
      // The key first: a body this large is read only for a location's agent.
      beforeBody: keyFirst,
      errors: [400, 401, 409, 503],
      schema: {
        headers: AuthHeaders,
        body: OutcomesBody,
        responses: { 200: OutcomesReply },
      },
      handler: async ({ headers, body, context }) => {
        const location = await locationOf(headers);
        await seen(location, body.agentId, context.client.address);
        // Together: the results of one report go to ingest in one batch.
        const outcomes = await Promise.all(
          body.outcomes.map(async ({ leaseId, outcome }) => {
            // Times no run could have had, or kept files that are not what a run writes (a CR/LF content type, a `../` name): refused.
            if (!plausibleTimes(outcome, Date.now() - MADE_MAX_AGE_MS) || keptAssetsProblems(outcome.detail).length)
              return { leaseId, state: 'refused' as const };
            const done = await leases.complete(location, leaseId, outcome as RunOutcome);
            if (done.state === 'lost')
              logger.warn({ agentId: body.agentId, location: location.slugName }, 'an agent reported a run its lease no longer held; not taken');
            return { leaseId, state: done.state };
          }),
        );
        return { status: 200, body: { outcomes } };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/v1/agent/leases/{leaseId}/files/{kind}',
      operationId: 'uploadAgentRunFile',
      summary: 'A file a leased run keeps (screenshot, trace, video), stored for its account; answers its key',
      ...AGENT_ROUTE,
      errors: [400, 401, 409, 413, 503],
      rawBody: { mediaType: 'application/octet-stream', maxBytes: FILE_LIMIT_BYTES },
      schema: { headers: AuthHeaders, params: FileParams, responses: { 201: FileReply } },
      handler: async ({ headers, params, body }) => {
        const location = await locationOf(headers);
        await leaseOf(location, params.leaseId);
        const stored = await deps.blobs.put(location.accountId, params.kind, body as Readable, FILE_LIMIT_BYTES);
        return { status: 201, body: { key: stored.key, size: stored.size } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/agent/leases/{leaseId}/bundle',
      operationId: 'downloadAgentRunBundle',
      summary: "The code bundle of a leased run's Playwright check suite",
      ...AGENT_ROUTE,
      contentType: 'application/gzip',
      errors: [400, 401, 404, 409, 503],
      schema: { headers: AuthHeaders, params: LeaseParams, responses: { 200: Type.String({ description: 'The bundle (tar.gz)' }) } },
      handler: async ({ headers, params }) => {
        const location = await locationOf(headers);
        const lease = await leaseOf(location, params.leaseId);
        const run = await leases.runOf(location, lease.jobId);
        const check = run && (await loadRunnable(sql, run.accountId, [run.checkId])).get(run.checkId);
        const key = typeof check?.data.codeBundlePath === 'string' ? check.data.codeBundlePath : undefined;
        const bundle = key ? await deps.blobs.open(location.accountId, key) : undefined;
        if (!bundle) throw notFound();
        return { status: 200, body: bundle.stream, headers: { 'content-type': 'application/gzip', 'content-length': String(bundle.size) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/agent/made',
      operationId: 'deliverAgentBufferedResults',
      summary: 'Results an agent made on its own while cut off from the service, with their original times',
      description: 'One result per check, slot and location is kept: a slot the service also ran, or a batch sent twice, lands once.',
      ...AGENT_ROUTE,
      bodyLimitBytes: 64 * 1024 * 1024,
      beforeBody: keyFirst,
      errors: [400, 401, 409, 503],
      schema: {
        headers: AuthHeaders,
        body: MadeBody,
        responses: { 200: MadeReply },
      },
      handler: async ({ headers, body, context }) => {
        const location = await locationOf(headers);
        await seen(location, body.agentId, context.client.address);
        const refused: { index: number; reason: string }[] = [];
        const items: { index: number; r: Static<typeof MadeItem> }[] = [];
        for (const [index, raw] of body.results.entries()) {
          try {
            items.push({ index, r: checkMadeItem(raw) as Static<typeof MadeItem> });
          } catch (err) {
            refused.push({ index, reason: `not a result this service takes: ${(err as Error).message}`.slice(0, 1000) });
          }
        }
        const checks = await loadRunnable(sql, location.accountId, [...new Set(items.map(({ r }) => r.checkId))]);
        const now = Date.now();
        const rows = [];
        for (const { index, r } of items) {
          const check = checks.get(r.checkId);
          const reason = !check
            ? 'no such check in this account'
            : r.location !== location.slugName || !check.locations.includes(location.slugName)
              ? 'the check does not run in this location'
              : r.slot > now || r.slot < now - MADE_MAX_AGE_MS || r.outcome.startedAt < r.slot - 60_000 || !plausibleTimes(r.outcome, r.slot - 60_000)
                ? 'the slot or its start is not a time this agent could have run it'
                : r.periodMs !== undefined && (r.slot - phaseOf(r.checkId, r.periodMs)) % r.periodMs !== 0
                  ? "the slot is not one of the check's slots at that period"
                  : r.periodMs !== undefined && !locationsForSlot(check.locations, check.runParallel, r.slot, r.periodMs).includes(location.slugName)
                    ? "the slot is not this location's turn: the check runs its locations in turn"
                    : keptAssetsProblems(r.outcome.detail).map((p) => `detail.${p.at} ${p.why}`)[0];
          if (reason) {
            refused.push({ index, reason });
            continue;
          }
          const outcome = bounded(r.outcome as RunOutcome);
          const resultId = scheduledResultId(r.checkId, r.slot, location.slugName);
          rows.push({
            resultId,
            slot: r.slot,
            periodMs: r.periodMs,
            row: toRow(location.accountId, resultId, resultItem(check!, location.slugName, outcome, 1)),
          });
          book.count(location.slugName, verdict(outcome));
        }
        await book.ingestMade(location.accountId, rows);
        if (rows.length)
          logger.info(
            { agentId: body.agentId, location: location.slugName, results: rows.length, refused: refused.length },
            'results an agent made while cut off taken',
          );
        return { status: 200, body: { accepted: rows.length, refused } };
      },
    }),
  ];
}
