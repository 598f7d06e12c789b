import { errorGroups } from '../analytics/index.js';
import { findCheckRow } from '../checks/index.js';
import { readResult, readResults, type StoredItem } from '../ingest/index.js';
import { occurrences, type WindowData } from '../model/maintenance.js';
import { fleetAgents } from '../private-locations/index.js';
import type { Deps } from '../storage/deps.js';
import { testSessionErrorGroup } from '../test-sessions/index.js';
import type { AssertionView, Evidence, RunView } from './evidence.js';
import { when } from './explain.js';
import {
  changesBefore,
  checksOfAccount,
  maintenanceWindowsOf,
  privateLocationsBySlug,
  runSequence,
  runsByLocation,
  runsOfChecks,
  sameErrorElsewhere,
} from './repository.js';

/** How far before the first failure the analysis looks: for the runs around it, and (a day) for changes. */
const BEFORE_MS = 3_600_000;
const CHANGES_MS = 86_400_000;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The host a check's request names (a URL's host, or a hostname), lower-cased. */
export function hostOf(request: Obj | undefined): string | null {
  if (!request) return null;
  const ssl = obj(request.sslConfig);
  if (ssl) return hostOf({ hostname: ssl.hostname });
  const url = str(request.url);
  if (url) {
    try {
      return new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`).hostname.toLowerCase();
    } catch {
      return null;
    }
  }
  return str(request.hostname)?.toLowerCase() ?? str(request.query)?.toLowerCase() ?? null;
}

/** A stored run as the analysis reads it, from its per-type result object. */
export function runView(item: Obj, error: string | null): RunView {
  const view: RunView = {
    id: String(item.id),
    startedAt: String(item.startedAt ?? item.created_at ?? ''),
    location: String(item.runLocation ?? ''),
    failed: Boolean(item.hasFailures || item.hasErrors),
    error,
    responseTime: num(item.responseTime) ?? null,
  };
  const api = obj(item.apiCheckResult);
  if (api) {
    const req = obj(api.request);
    const res = obj(api.response);
    view.url = str(req?.url);
    view.method = str(req?.method);
    view.requestError = str(api.requestError) ?? null;
    if (res) {
      view.status = num(res.status) ?? null;
      view.statusText = str(res.statusText) ?? null;
      view.headers = Object.fromEntries(Object.entries(obj(res.headers) ?? {}).map(([k, v]) => [k, String(v)]));
      view.body = str(res.body) ?? null;
      const phases = obj(res.timingPhases);
      if (phases) view.timings = Object.fromEntries(Object.entries(phases).flatMap(([k, v]) => (typeof v === 'number' ? [[k, v]] : [])));
    }
    view.assertions = (Array.isArray(api.assertions) ? api.assertions : []).flatMap((a) => (obj(a) ? [a as unknown as AssertionView] : []));
  }
  const ssl = obj(item.sslCheckResult);
  if (ssl) {
    view.requestError = str(ssl.requestError) ?? view.requestError ?? null;
    view.sslFailure = str(ssl.failureCategory) ?? null;
    const cert = obj(obj(ssl.response)?.certificate);
    if (cert)
      view.certificate = {
        issuerCN: str(cert.issuerCN) ?? null,
        subjectCN: str(cert.subjectCN) ?? null,
        validTo: str(cert.validTo) ?? '',
        daysUntilExpiry: num(cert.daysUntilExpiry) ?? num(ssl.daysUntilExpiry) ?? 0,
        fingerprintSha256: str(cert.fingerprintSha256),
      };
    view.assertions = (Array.isArray(ssl.assertions) ? ssl.assertions : []).flatMap((a) => (obj(a) ? [a as unknown as AssertionView] : []));
  }
  const dns = obj(item.dnsCheckResult);
  if (dns) {
    const res = obj(dns.response);
    view.requestError = str(dns.requestError) ?? view.requestError ?? null;
    view.dns = res ? { answer: str(res.answer) ?? null, returnCode: str(res.returnCode) ?? null } : null;
    view.assertions = (Array.isArray(dns.assertions) ? dns.assertions : []).flatMap((a) => (obj(a) ? [a as unknown as AssertionView] : []));
  }
  for (const key of ['tcpCheckResult', 'icmpCheckResult', 'grpcCheckResult', 'tracerouteCheckResult']) {
    const r = obj(item[key]);
    if (r) {
      view.requestError = str(r.requestError) ?? view.requestError ?? null;
      view.assertions = (Array.isArray(r.assertions) ? r.assertions : []).flatMap((a) => (obj(a) ? [a as unknown as AssertionView] : []));
    }
  }
  for (const key of ['browserCheckResult', 'multiStepCheckResult', 'playwrightCheckResult']) {
    const r = obj(item[key]);
    if (r) {
      view.scriptErrors = (Array.isArray(r.errors) ? r.errors : []).map((e) => (typeof e === 'string' ? e : (str(obj(e)?.message) ?? ''))).filter(Boolean);
      const logs = Array.isArray(r.jobLog) ? r.jobLog : [];
      view.consoleErrors = logs.flatMap((l) => (obj(l) && str(obj(l)!.level) === 'error' ? [str(obj(l)!.msg) ?? ''] : [])).filter(Boolean);
    }
  }
  return view;
}

const runOf = async (deps: Deps, accountId: string, checkId: string, item: StoredItem | undefined, error: string | null) => {
  if (!item) return null;
  const full = await readResult(deps.store, accountId, checkId, String(item.id));
  return full ? runView(full as Obj, error) : null;
};

/** A check's error group of the account, as an analysis is filed under it (undefined: there is none). */
export async function checkGroupOf(deps: Deps, accountId: string, groupId: string) {
  const [group] = await errorGroups(deps, accountId, { id: groupId.toLowerCase(), limit: 1, page: 1 });
  if (!group) return undefined;
  const check = await findCheckRow(deps.sql, accountId, group.checkId);
  return { id: group.id, checkId: group.checkId, checkType: check?.check_type ?? 'API' };
}

/** A test session's error group of the account, as an analysis is filed under it. */
export async function testSessionGroupOf(deps: Deps, accountId: string, groupId: string) {
  const found = await testSessionErrorGroup(deps.sql, accountId, groupId);
  if (!found) return undefined;
  return { id: found.group.id, checkType: String((found.results[0]?.data as Obj | undefined)?.checkType ?? 'API') };
}

/** The evidence for a check's error group (undefined: the account has no such group). */
export async function checkGroupEvidence(deps: Deps, accountId: string, groupId: string, publicUrl: string): Promise<Evidence | undefined> {
  const [group] = await errorGroups(deps, accountId, { id: groupId.toLowerCase(), limit: 1, page: 1 });
  if (!group) return undefined;
  const check = await findCheckRow(deps.sql, accountId, group.checkId);
  const firstSeen = Date.parse(group.firstSeen);
  const lastSeen = Date.parse(group.lastSeen);
  const request = obj(check?.data.request as unknown);
  const host = hostOf(request);

  // The group's newest failing run (its lastSeen is that run's start), and the last pass before it, same location.
  const latest = (await readResults(deps.store, { accountId, checkId: group.checkId, from: lastSeen, to: lastSeen + 1, hasFailures: true }, 1, 0)).items[0];
  const failing = await runOf(deps, accountId, group.checkId, latest, group.rawErrorMessage);
  const lastPass = failing
    ? (
        await readResults(
          deps.store,
          { accountId, checkId: group.checkId, to: Date.parse(failing.startedAt), hasFailures: false, location: failing.location },
          1,
          0,
        )
      ).items[0]
    : undefined;
  const passing = await runOf(deps, accountId, group.checkId, lastPass, null);

  // The current streak: a group keeps its id for as long as the check fails with that error, so what explains this
  // failure is looked for from the last passing run on, not over the group's whole life.
  const streak = passing ? Math.max(firstSeen, Date.parse(passing.startedAt)) : firstSeen;
  const from = streak - BEFORE_MS;
  const privateSlugs = new Set(((check?.data as { privateLocations?: string[] } | undefined)?.privateLocations ?? []).map(String));
  const privates = await privateLocationsBySlug(deps.sql, accountId, [...privateSlugs]);
  const agentsOnline = new Map<string, number>();
  for (const p of privates)
    agentsOnline.set(
      p.slug_name,
      (await fleetAgents(deps.sql, p.id, { seenSeconds: deps.config.agents.seenSeconds, minVersion: deps.config.agents.minVersion })).filter((a) => a.online)
        .length,
    );
  // Where: around the failures, and the hour after the last one (a location that passes then still counts as passing).
  const locations = (await runsByLocation(deps.store, accountId, group.checkId, from, Math.min(Date.now(), lastSeen + BEFORE_MS))).map((l) => ({
    location: l.location,
    runs: Number(l.runs),
    failed: Number(l.failed),
    private: privateSlugs.has(l.location),
    ...(agentsOnline.has(l.location) ? { agentsOnline: agentsOnline.get(l.location)! } : {}),
  }));
  const sequence = failing ? await runSequence(deps.store, accountId, group.checkId, failing.location, from, lastSeen) : [];

  const all = await checksOfAccount(deps.sql, accountId);
  const nameOf = new Map(all.map((c) => [c.id, c.name]));
  const peers = host ? all.filter((c) => c.id !== group.checkId && hostOf(obj(c.data.request as unknown)) === host) : [];
  const peerRuns = await runsOfChecks(
    deps.store,
    accountId,
    peers.map((p) => p.id),
    streak,
    lastSeen,
  );
  const sameHost = peerRuns.map((r) => ({ checkId: r.checkId, name: nameOf.get(r.checkId) ?? r.checkId, runs: Number(r.runs), failed: Number(r.failed) }));
  const sameError = (await sameErrorElsewhere(deps.store, accountId, group.checkId, group.errorHash, from)).map((r) => ({
    checkId: r.checkId,
    name: nameOf.get(r.checkId) ?? r.checkId,
    occurrences: Number(r.occurrences),
  }));
  // Changes that can explain it: made after the last passing run (a run that passed after a change says the change
  // did not break it) and before the failing run, within a day of the streak's start; not the check's creation.
  const since = passing ? Date.parse(passing.startedAt) : streak - CHANGES_MS;
  const changes = (await changesBefore(deps.sql, accountId, group.checkId, new Date(since), new Date(failing ? Date.parse(failing.startedAt) : lastSeen)))
    .filter((c) => !/^create/i.test(c.operation))
    .map((c) => ({
      at: c.at.toISOString(),
      operation: c.operation,
      actor: c.actor_name,
      status: c.status,
    }));
  const tags = new Set(check?.tags ?? []);
  const maintenance = (await maintenanceWindowsOf(deps.sql, accountId)).flatMap((w) => {
    const data = w.data as unknown as WindowData & { name?: string };
    if (data.tags?.length && !data.tags.some((t) => tags.has(t))) return [];
    return occurrences(data, streak, lastSeen + 1, 3).map((o) => ({
      id: w.id,
      name: data.name ?? `window ${w.id}`,
      startsAt: new Date(o.start).toISOString(),
      endsAt: new Date(o.end).toISOString(),
    }));
  });
  const links = [
    ...(failing
      ? [{ url: `${publicUrl}/checks/${group.checkId}/results/${failing.id}`, title: `The failing run (${failing.location}, ${when(failing.startedAt)})` }]
      : []),
    ...(passing
      ? [{ url: `${publicUrl}/checks/${group.checkId}/results/${passing.id}`, title: `The last passing run (${passing.location}, ${when(passing.startedAt)})` }]
      : []),
    { url: `${publicUrl}/checks/${group.checkId}`, title: `"${check?.name ?? group.checkId}" over time` },
  ];
  return {
    check: { id: group.checkId, name: check?.name ?? group.checkId, type: check?.check_type ?? 'API', url: str(request?.url) ?? null, host },
    group: {
      id: group.id,
      message: group.cleanedErrorMessage,
      firstSeen: group.firstSeen,
      lastSeen: group.lastSeen,
      occurrences: group.occurrences,
      kind: 'check',
    },
    failing,
    passing,
    locations,
    sequence,
    sameHost,
    sameError,
    changes,
    maintenance,
    links,
  };
}

/** The evidence for a test session's error group: its failed results (no history to compare with). */
export async function testSessionGroupEvidence(deps: Deps, accountId: string, groupId: string): Promise<(Evidence & { checkType: string }) | undefined> {
  const found = await testSessionErrorGroup(deps.sql, accountId, groupId);
  if (!found) return undefined;
  const { group, results } = found;
  const newest = results[0];
  const data = (newest?.data ?? {}) as Obj;
  const failing = newest
    ? runView({ ...data, id: data.id ?? data.testResultId ?? groupId, startedAt: newest.created_at.toISOString() }, group.rawErrorMessage)
    : null;
  const byLocation = new Map<string, number>();
  for (const r of results) {
    const l = String((r.data as Obj).runLocation ?? '');
    if (l) byLocation.set(l, (byLocation.get(l) ?? 0) + 1);
  }
  return {
    checkType: String(data.checkType ?? 'API'),
    check: {
      id: null,
      name: String(data.name ?? 'a test'),
      type: String(data.checkType ?? 'API'),
      url: failing?.url ?? null,
      host: hostOf(failing?.url ? { url: failing.url } : undefined),
    },
    group: {
      id: group.id,
      message: group.cleanedErrorMessage,
      firstSeen: group.firstSeen,
      lastSeen: group.lastSeen,
      occurrences: group.occurrences,
      kind: 'test-session',
    },
    failing,
    passing: null,
    locations: [...byLocation].map(([location, failed]) => ({ location, runs: failed, failed, private: false })),
    sequence: [],
    sameHost: [],
    sameError: [],
    changes: [],
    maintenance: [],
    links: [],
  };
}
