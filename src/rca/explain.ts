import type { AssertionView, Evidence, RunView } from './evidence.js';

/**
 * The analysis of an error group, made from its evidence alone (docs/rca.md): each finding is a statement the
 * evidence supports, with the artifacts it rests on; the strongest one is the root cause and names the class. When no
 * finding explains the failure, the analysis says so and lists what it compared, instead of guessing.
 */

/** The classes, in the anchor's words. */
export const CLASSIFICATIONS = [
  'INFRA ERROR',
  'NETWORK ERROR',
  'APPLICATION ERROR',
  'TEST SCRIPT ERROR',
  'THIRD PARTY ERROR',
  'MAINTENANCE',
  'UNKNOWN',
] as const;
export type Classification = (typeof CLASSIFICATIONS)[number];

export interface Analysis {
  classification: Classification;
  userImpact: string;
  rootCause: string;
  codeFix: string | null;
  evidence: { artifacts: { name: string; type: string }[]; description: string }[] | null;
  referenceLinks: { url: string; title: string }[] | null;
}

interface Finding {
  /** How strongly it explains the failure: 3 a cause, 2 a likely one, 1 context only. */
  weight: 1 | 2 | 3;
  classification: Classification;
  statement: string;
  fix?: string;
  artifacts: { name: string; type: string }[];
}

const runArtifact = (r: RunView, what: string) => ({ name: `${what} ${r.id}`, type: 'CHECK_RESULT' });
/** A time as the analysis writes it: `2026-11-29 04:20:51 UTC`. */
export const when = (iso: string) =>
  iso
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z')
    .replace(/Z$/, ' UTC');
const quote = (v: unknown) => {
  const text = typeof v === 'string' ? v : v === undefined ? 'nothing' : JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

/** Headers that change from one answer to the next whatever happens: not evidence of a change. */
const VOLATILE_HEADERS = new Set([
  'date',
  'age',
  'expires',
  'etag',
  'last-modified',
  'content-length',
  'set-cookie',
  'x-request-id',
  'x-amzn-requestid',
  'x-amz-cf-id',
  'cf-ray',
  'server-timing',
  'x-runtime',
  'report-to',
  'nel',
  'connection',
  'keep-alive',
  'x-target',
]);

/** The request error in words, with its class and a fix, when the message says what it was. */
function requestErrorFinding(run: RunView, host: string | null): Finding | undefined {
  const err = run.requestError;
  if (!err) return undefined;
  const at = host ?? 'the target';
  const artifacts = [runArtifact(run, 'failing run'), { name: 'HTTP_REQUEST', type: 'REQUEST' }];
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo|could not resolve|not resolve|NXDOMAIN/i.test(err))
    return {
      weight: 3,
      classification: 'NETWORK ERROR',
      statement: `The name ${at} did not resolve from ${run.location} ("${quote(err)}"): the request was never sent.`,
      fix: `Check the DNS records of ${at} (and the resolver the location uses); the check's URL may also name a host that no longer exists.`,
      artifacts,
    };
  if (/ECONNREFUSED|connection refused/i.test(err))
    return {
      weight: 3,
      classification: 'INFRA ERROR',
      statement: `Nothing accepted the connection to ${at} from ${run.location} ("${quote(err)}"): the server or its port is down, or a firewall rejects it.`,
      fix: `Start the service behind ${at}, or check that it listens on the port the check uses.`,
      artifacts,
    };
  if (/CERT_HAS_EXPIRED|certificate has expired/i.test(err))
    return {
      weight: 3,
      classification: 'INFRA ERROR',
      statement: `The TLS certificate of ${at} has expired ("${quote(err)}").`,
      fix: `Renew the certificate of ${at} and deploy it to the server.`,
      artifacts,
    };
  if (/self[- ]signed|unable to verify|UNABLE_TO_GET_ISSUER|CERT_|certificate|altnames|hostname\/IP does not match/i.test(err))
    return {
      weight: 3,
      classification: 'INFRA ERROR',
      statement: `The TLS handshake with ${at} failed on its certificate ("${quote(err)}").`,
      fix: `Serve a certificate for ${at} from a trusted issuer, with its whole chain.`,
      artifacts,
    };
  if (/timed? ?out|ETIMEDOUT|ESOCKETTIMEDOUT|aborted|timeout/i.test(err))
    return {
      weight: 2,
      classification: 'NETWORK ERROR',
      statement: `${at} did not answer in time from ${run.location} ("${quote(err)}").`,
      fix: `Look at the load and the health of ${at} at that time; if it is slow by design, raise the check's timeout.`,
      artifacts,
    };
  if (/ECONNRESET|socket hang up|EPIPE|closed/i.test(err))
    return {
      weight: 2,
      classification: 'INFRA ERROR',
      statement: `${at} closed the connection before answering ("${quote(err)}").`,
      artifacts,
    };
  if (/refused by the outbound policy|not allowed/i.test(err))
    return {
      weight: 3,
      classification: 'INFRA ERROR',
      statement: `This service refused to send the request: ${quote(err)}.`,
      fix: 'Allow the target in the outbound policy (OUTBOUND_ALLOW), or point the check at an address it may reach.',
      artifacts,
    };
  return { weight: 2, classification: 'INFRA ERROR', statement: `The request failed before any answer: "${quote(err)}".`, artifacts };
}

/** Flattens a JSON document into path → value (`$.a.b[0]`), to tell what a body lost, gained or changed. */
function flatten(value: unknown, path = '$', out = new Map<string, unknown>(), depth = 0): Map<string, unknown> {
  if (depth > 8 || out.size > 500) return out;
  if (Array.isArray(value)) value.slice(0, 50).forEach((v, i) => flatten(v, `${path}[${i}]`, out, depth + 1));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) flatten(v, /^\w+$/.test(k) ? `${path}.${k}` : `${path}['${k}']`, out, depth + 1);
  else out.set(path, value);
  return out;
}
const parseJson = (text: string | null | undefined) => {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

/** How two bodies differ, in a few readable lines (JSON by path; text by its first differing line). */
export function bodyDiff(before: string | null | undefined, after: string | null | undefined): string[] {
  if ((before ?? '') === (after ?? '')) return [];
  const a = parseJson(before);
  const b = parseJson(after);
  if (a !== undefined && b !== undefined) {
    const fa = flatten(a);
    const fb = flatten(b);
    const lines: string[] = [];
    for (const [k, v] of fa) {
      if (!fb.has(k)) lines.push(`${k} is gone (was ${quote(v)})`);
      else if (JSON.stringify(fb.get(k)) !== JSON.stringify(v)) lines.push(`${k}: ${quote(v)} → ${quote(fb.get(k))}`);
    }
    for (const [k, v] of fb) if (!fa.has(k)) lines.push(`${k} is new (${quote(v)})`);
    return lines.slice(0, 12);
  }
  const la = (before ?? '').split('\n');
  const lb = (after ?? '').split('\n');
  const i = la.findIndex((l, n) => l !== lb[n]);
  const at = i === -1 ? la.length : i;
  return [`from line ${at + 1}: ${quote(la[at] ?? '(end)')} → ${quote(lb[at] ?? '(end)')}`];
}

/** Which timing phase grew the most between the passing and the failing run (at least 2× and 200 ms). */
function grownPhase(pass: RunView, fail: RunView): { phase: string; before: number; after: number } | undefined {
  if (!pass.timings || !fail.timings) return undefined;
  let best: { phase: string; before: number; after: number } | undefined;
  for (const [phase, after] of Object.entries(fail.timings)) {
    if (phase === 'total') continue;
    const before = pass.timings[phase] ?? 0;
    if (after - before >= 200 && after >= 2 * before && (!best || after - before > best.after - best.before)) best = { phase, before, after };
  }
  return best;
}

const PHASE_WORDS: Record<string, string> = {
  dns: 'the DNS lookup',
  tcp: 'the TCP connect',
  tls: 'the TLS handshake',
  wait: 'waiting for a socket',
  firstByte: 'the time to the first byte (the server working on the answer)',
  download: 'the download of the body',
};

/** `said`: the sources another finding already explains (the status one, the timing one), not repeated here. */
function assertionFindings(pass: RunView | null, fail: RunView, said: ReadonlySet<string>): Finding[] {
  const out: Finding[] = [];
  const failed = (fail.assertions ?? []).filter((a) => a.error);
  for (const a of failed) {
    const before = pass?.assertions?.find((p) => p.source === a.source && (p.property ?? '') === (a.property ?? '') && p.comparison === a.comparison);
    const what = describeAssertion(a);
    const was = before ? `; at the last passing run it was ${quote(before.actual)}` : '';
    const artifacts = [runArtifact(fail, 'failing run'), ...(pass ? [runArtifact(pass, 'passing run')] : []), { name: 'ASSERTIONS', type: 'ASSERTION' }];
    if (said.has(a.source)) continue;
    if (a.source === 'JSON_BODY' && (a.actual === undefined || a.actual === null) && before && before.actual !== undefined && before.actual !== null) {
      // The field the assertion reads is gone: is it somewhere else now?
      const moved = movedField(pass?.body, fail.body, before.actual);
      out.push({
        weight: 3,
        classification: 'APPLICATION ERROR',
        statement: `The response no longer has ${a.property ?? 'the field'} that the assertion ${what} reads${was}.`,
        fix: moved
          ? `The value now sits at ${moved}: if the API changed on purpose, change the assertion's JSON path from ${a.property} to ${moved}.`
          : `If the API changed on purpose, change or remove the assertion on ${a.property}; otherwise restore the field in the API.`,
        artifacts,
      });
      continue;
    }
    out.push({
      weight: 2,
      classification: 'APPLICATION ERROR',
      statement: `The assertion ${what} failed: the actual value is ${quote(a.actual)}${was}.`,
      artifacts,
    });
  }
  return out;
}

function describeAssertion(a: AssertionView): string {
  const source = a.source.toLowerCase().replace(/_/g, ' ');
  return `"${source}${a.property ? ` ${a.property}` : ''} ${a.comparison.toLowerCase().replace(/_/g, ' ')} ${a.target ?? ''}".`
    .replace(' ".', '"')
    .replace(/\.$/, '');
}

/** A JSON path where the failing body holds the value the passing body had under the asserted path. */
function movedField(before: string | null | undefined, after: string | null | undefined, value: unknown): string | undefined {
  const b = parseJson(after);
  if (b === undefined || parseJson(before) === undefined) return undefined;
  for (const [k, v] of flatten(b)) if (JSON.stringify(v) === JSON.stringify(value)) return k;
  return undefined;
}

/** What the evidence says, finding by finding. */
export function findings(e: Evidence): Finding[] {
  const out: Finding[] = [];
  const fail = e.failing;
  const pass = e.passing;
  const host = e.check.host;

  if (e.maintenance.length)
    out.push({
      weight: 2,
      classification: 'MAINTENANCE',
      statement: `A maintenance window was on while it failed: ${e.maintenance.map((m) => `"${m.name}" (${when(m.startsAt)} to ${when(m.endsAt)})`).join(', ')}.`,
      artifacts: e.maintenance.map((m) => ({ name: `maintenance window ${m.id}`, type: 'MAINTENANCE_WINDOW' })),
    });

  if (fail) {
    const requestError = requestErrorFinding(fail, host);
    if (requestError) out.push(requestError);

    if (fail.sslFailure || (fail.certificate && fail.certificate.daysUntilExpiry < 0)) {
      const c = fail.certificate;
      const changed = c && pass?.certificate?.fingerprintSha256 && c.fingerprintSha256 !== pass.certificate.fingerprintSha256;
      if (c && (fail.sslFailure === 'EXPIRED' || c.daysUntilExpiry < 0))
        out.push({
          weight: 3,
          classification: 'INFRA ERROR',
          statement: `The certificate of ${host ?? 'the host'} (issued by ${c.issuerCN ?? 'an unnamed issuer'} for ${c.subjectCN ?? 'an unnamed subject'}) expired on ${when(c.validTo)}.`,
          fix: `Renew the certificate of ${host ?? 'the host'} and install it with its chain; renew automatically (ACME) so it does not lapse again.`,
          artifacts: [runArtifact(fail, 'failing run'), { name: 'TLS_CERTIFICATE', type: 'CERTIFICATE' }],
        });
      else if (fail.sslFailure)
        out.push({
          weight: 3,
          classification: 'INFRA ERROR',
          statement: `The TLS check failed on ${fail.sslFailure === 'CHAIN' ? 'an untrusted certificate chain' : fail.sslFailure === 'HOSTNAME' ? `a certificate that does not name ${host ?? 'the host'}` : fail.sslFailure.toLowerCase()}${changed ? ', and the server shows another certificate than at the last passing run' : ''}.`,
          fix: 'Serve a certificate for this name from a trusted issuer, with its intermediate certificates.',
          artifacts: [runArtifact(fail, 'failing run'), { name: 'TLS_CERTIFICATE', type: 'CERTIFICATE' }],
        });
    } else if (
      fail.certificate &&
      pass?.certificate &&
      fail.certificate.fingerprintSha256 !== pass.certificate.fingerprintSha256 &&
      fail.certificate.daysUntilExpiry < 14
    ) {
      out.push({
        weight: 1,
        classification: 'INFRA ERROR',
        statement: `The certificate changed since the last passing run, and expires in ${fail.certificate.daysUntilExpiry} days.`,
        artifacts: [runArtifact(fail, 'failing run'), { name: 'TLS_CERTIFICATE', type: 'CERTIFICATE' }],
      });
    }

    if (fail.dns) {
      const before = pass?.dns;
      if (before && (before.answer ?? '') !== (fail.dns.answer ?? ''))
        out.push({
          weight: 3,
          classification: 'NETWORK ERROR',
          statement: `The DNS answer for ${host ?? 'the name'} changed: ${quote(before.answer ?? '(none)')} at the last passing run, ${quote(fail.dns.answer ?? '(none)')} now${fail.dns.returnCode && fail.dns.returnCode !== 'NOERROR' ? ` (${fail.dns.returnCode})` : ''}.`,
          fix: `If the change was not meant, restore the record of ${host ?? 'the name'}; if it was, update the check's assertions to the new answer.`,
          artifacts: [runArtifact(fail, 'failing run'), runArtifact(pass!, 'passing run'), { name: 'DNS_ANSWER', type: 'DNS' }],
        });
      else if (fail.dns.returnCode && fail.dns.returnCode !== 'NOERROR')
        out.push({
          weight: 3,
          classification: 'NETWORK ERROR',
          statement: `The name server answered ${fail.dns.returnCode} for ${host ?? 'the name'}.`,
          artifacts: [runArtifact(fail, 'failing run'), { name: 'DNS_ANSWER', type: 'DNS' }],
        });
    }

    let statusSaid = false;
    if (typeof fail.status === 'number' && fail.status > 0) {
      const before = pass?.status;
      const changedHeaders = pass?.headers && fail.headers ? headerChanges(pass.headers, fail.headers) : [];
      const diff = pass ? bodyDiff(pass.body, fail.body) : [];
      const artifacts = [runArtifact(fail, 'failing run'), ...(pass ? [runArtifact(pass, 'passing run')] : []), { name: 'HTTP_RESPONSE', type: 'RESPONSE' }];
      const detail = [
        ...(changedHeaders.length ? [`Headers that changed: ${changedHeaders.join('; ')}.`] : []),
        ...(diff.length ? [`The body changed: ${diff.join('; ')}.`] : []),
      ].join(' ');
      statusSaid = (fail.status >= 500 && (before === undefined || before === null || before < 500)) || (fail.status >= 400 && before !== fail.status);
      if (fail.status >= 500 && (before === undefined || before === null || before < 500))
        out.push({
          weight: 3,
          classification: fail.status === 502 || fail.status === 504 ? 'INFRA ERROR' : 'APPLICATION ERROR',
          statement: `${host ?? 'The server'} answered ${fail.status}${fail.statusText ? ` ${fail.statusText}` : ''}${before ? ` where it answered ${before} at the last passing run (${when(pass!.startedAt)})` : ''}: the server failed to handle the request.${detail ? ` ${detail}` : ''}`,
          fix:
            fail.status === 502 || fail.status === 504
              ? `A proxy in front of ${host ?? 'the service'} could not reach the service behind it: check that service and its health.`
              : `Look at ${host ?? 'the service'}'s own logs at ${when(fail.startedAt)} for the error behind the ${fail.status}.`,
          artifacts,
        });
      else if (fail.status >= 400 && before !== fail.status)
        out.push({
          weight: 3,
          classification: fail.status === 401 || fail.status === 403 ? 'TEST SCRIPT ERROR' : 'APPLICATION ERROR',
          statement: `${host ?? 'The server'} answered ${fail.status}${fail.statusText ? ` ${fail.statusText}` : ''}${before ? ` where it answered ${before} at the last passing run` : ''}.${detail ? ` ${detail}` : ''}`,
          fix:
            fail.status === 401 || fail.status === 403
              ? "The check's credentials are refused: renew the token or password the check sends (its variables), or restore the account it uses."
              : fail.status === 404
                ? `The address ${fail.url ?? ''} is gone: point the check at the new one, or restore the route.`
                : fail.status === 429
                  ? 'The target rate-limits the check: run it less often, or allow its address.'
                  : undefined,
          artifacts,
        });
      else if (detail && !out.some((f) => f.weight === 3))
        out.push({ weight: 1, classification: 'APPLICATION ERROR', statement: `The answer differs from the last passing run's. ${detail}`, artifacts });
    }

    const grown = pass ? grownPhase(pass, fail) : undefined;
    const said = new Set<string>([...(statusSaid ? ['STATUS_CODE'] : []), ...(grown ? ['RESPONSE_TIME'] : [])]);
    out.push(...assertionFindings(pass, fail, said));

    if (grown)
      out.push({
        weight: fail.requestError ? 1 : 2,
        classification: grown.phase === 'dns' || grown.phase === 'tcp' || grown.phase === 'tls' ? 'NETWORK ERROR' : 'APPLICATION ERROR',
        statement: `${PHASE_WORDS[grown.phase] ?? grown.phase} took ${Math.round(grown.after)} ms against ${Math.round(grown.before)} ms at the last passing run: that is where the time went.`,
        artifacts: [runArtifact(fail, 'failing run'), runArtifact(pass!, 'passing run'), { name: 'TIMINGS', type: 'TIMINGS' }],
      });

    if (fail.scriptErrors?.length) {
      const first = fail.scriptErrors[0]!;
      const scriptBug = /SyntaxError|ReferenceError|TypeError: .* is not a function|is not defined|Cannot find module/i.test(first);
      const consoleNew = (fail.consoleErrors ?? []).filter((c) => !(pass?.consoleErrors ?? []).includes(c));
      const requestsNew = (fail.failedRequests ?? []).filter((c) => !(pass?.failedRequests ?? []).includes(c));
      out.push({
        weight: scriptBug ? 3 : 2,
        classification: scriptBug ? 'TEST SCRIPT ERROR' : 'APPLICATION ERROR',
        statement: `The script failed: ${quote(first)}.${consoleNew.length ? ` The page logged errors it did not at the last passing run: ${consoleNew.slice(0, 3).map(quote).join('; ')}.` : ''}${requestsNew.length ? ` Requests that failed: ${requestsNew.slice(0, 3).map(quote).join('; ')}.` : ''}`,
        ...(scriptBug ? { fix: "Fix the script's error at the line it names; the page itself did not cause it." } : {}),
        artifacts: [runArtifact(fail, 'failing run'), { name: 'TRACE', type: 'TRACE' }],
      });
    }
  }

  // Where.
  const failingPlaces = e.locations.filter((l) => l.failed > 0);
  const healthy = e.locations.filter((l) => l.failed === 0 && l.runs > 0);
  const offline = failingPlaces.filter((l) => l.private && l.agentsOnline === 0);
  if (offline.length)
    out.push({
      weight: 3,
      classification: 'INFRA ERROR',
      statement: `The private location${offline.length > 1 ? 's' : ''} ${offline.map((l) => l.location).join(', ')} had no agent online.`,
      fix: 'Start an agent in that location (its key is on the location), or check that it can reach this service.',
      artifacts: offline.map((l) => ({ name: `private location ${l.location}`, type: 'LOCATION' })),
    });
  if (failingPlaces.length && healthy.length)
    out.push({
      weight: 2,
      classification: 'NETWORK ERROR',
      statement: `It fails only from ${failingPlaces.map((l) => `${l.location} (${l.failed} of ${l.runs} runs)`).join(', ')}; from ${healthy.map((l) => `${l.location} (${l.runs} runs)`).join(', ')} it passes: the path from there, not the target itself, is the likely cause.`,
      artifacts: e.locations.map((l) => ({ name: `runs in ${l.location}`, type: 'LOCATION' })),
    });
  else if (failingPlaces.length > 1)
    out.push({
      weight: 1,
      classification: 'INFRA ERROR',
      statement: `It fails from every location that ran it (${failingPlaces.map((l) => l.location).join(', ')}): the target itself, not one network path.`,
      artifacts: e.locations.map((l) => ({ name: `runs in ${l.location}`, type: 'LOCATION' })),
    });

  // What else.
  const hostPeers = e.sameHost.filter((p) => p.failed > 0);
  if (hostPeers.length)
    out.push({
      weight: 2,
      classification: 'INFRA ERROR',
      statement: `${hostPeers.length === 1 ? 'Another check' : `${hostPeers.length} other checks`} against ${host} failed over the same time (${hostPeers.map((p) => `"${p.name}": ${p.failed} of ${p.runs} runs`).join(', ')}): a cause shared by the host.`,
      artifacts: hostPeers.map((p) => ({ name: `check ${p.checkId}`, type: 'CHECK' })),
    });
  if (e.sameError.length)
    out.push({
      weight: 1,
      classification: 'INFRA ERROR',
      statement: `The same error hit ${e.sameError.map((p) => `"${p.name}" (${p.occurrences} times)`).join(', ')} over the same time.`,
      artifacts: e.sameError.map((p) => ({ name: `check ${p.checkId}`, type: 'CHECK' })),
    });
  if (e.changes.length) {
    out.push({
      weight: 2,
      // The check itself (its request, assertions or script) is what changed.
      classification: 'TEST SCRIPT ERROR',
      statement: `Changed after the last passing run, before this failure: ${e.changes
        .slice(0, 3)
        .map(
          (c) =>
            `${/^deployProject/.test(c.operation) ? 'a deploy of the account’s checks' : 'the check'} (${c.operation}) at ${when(c.at)}${c.actor ? ` by ${c.actor}` : ''}`,
        )
        .join('; ')}.`,
      fix: 'Compare the check as it is with what it was before that change (the audit log names the fields sent, a deploy its project), and undo the part that broke it.',
      artifacts: e.changes.slice(0, 3).map((c) => ({ name: `${c.operation} at ${c.at}`, type: 'AUDIT_LOG' })),
    });
  }
  return out;
}

function headerChanges(before: Record<string, string>, after: Record<string, string>): string[] {
  const lower = (h: Record<string, string>) => new Map(Object.entries(h).map(([k, v]) => [k.toLowerCase(), String(v)]));
  const a = lower(before);
  const b = lower(after);
  const out: string[] = [];
  for (const [k, v] of b)
    if (!VOLATILE_HEADERS.has(k) && a.get(k) !== v) out.push(a.has(k) ? `${k}: ${quote(a.get(k))} → ${quote(v)}` : `${k} is new (${quote(v)})`);
  for (const [k, v] of a) if (!VOLATILE_HEADERS.has(k) && !b.has(k)) out.push(`${k} is gone (was ${quote(v)})`);
  return out.slice(0, 6);
}

/** How the failures come: steady since a time, or flapping. */
function pattern(e: Evidence): string {
  const seq = e.sequence;
  if (!seq.length) return '';
  let flips = 0;
  for (let i = 1; i < seq.length; i++) if (seq[i]!.failed !== seq[i - 1]!.failed) flips++;
  const firstFail = seq.findIndex((s) => s.failed);
  const afterFirst = firstFail === -1 ? [] : seq.slice(firstFail);
  const steady = afterFirst.length > 0 && afterFirst.every((s) => s.failed);
  if (steady) return `It has failed at every run since ${when(afterFirst[0]!.at)} (${afterFirst.length} ${afterFirst.length === 1 ? 'run' : 'runs'}).`;
  const failed = seq.filter((s) => s.failed).length;
  return `It flaps: ${failed} of ${seq.length} runs failed since ${when(seq[0]!.at)}, changing state ${flips} times.`;
}

/** The analysis: the strongest finding is the root cause; when nothing explains the failure, it says so. */
export function explain(e: Evidence, userContext = ''): Analysis {
  const all = findings(e);
  const causes = all.filter((f) => f.weight >= 2).sort((a, b) => b.weight - a.weight);
  const top = causes.find((f) => f.classification !== 'MAINTENANCE') ?? causes[0];
  const how = pattern(e);
  const where = e.locations.filter((l) => l.failed > 0).map((l) => l.location);
  const subject = e.check.url ?? e.check.host ?? `"${e.check.name}"`;
  const userImpact = `${e.group.occurrences} ${e.group.occurrences === 1 ? 'run' : 'runs'} of "${e.check.name}" failed with this error between ${when(e.group.firstSeen)} and ${when(e.group.lastSeen)}${where.length ? `, from ${where.join(', ')}` : ''}. ${how ? `${how} ` : ''}People relying on ${subject} ${top?.classification === 'MAINTENANCE' ? 'were told of maintenance at that time' : 'may have met the same failure then'}.`;
  const evidence = all.sort((a, b) => b.weight - a.weight).map((f) => ({ artifacts: f.artifacts, description: f.statement }));
  const fixes = causes.filter((f) => f.fix).map((f) => f.fix!);
  const compared = [
    e.failing ? `the failing run ${e.failing.id} (${e.failing.location}, ${when(e.failing.startedAt)})` : 'no stored failing run',
    e.passing ? `the last passing run ${e.passing.id} (${when(e.passing.startedAt)})` : 'no passing run before it in that location',
    `${e.locations.length} location${e.locations.length === 1 ? '' : 's'}`,
    `${e.sameHost.length} other check${e.sameHost.length === 1 ? '' : 's'} on the same host`,
    `${e.changes.length} change${e.changes.length === 1 ? '' : 's'} in the day before`,
  ];
  const context = userContext.trim() ? ` You said: "${userContext.trim()}".` : '';
  if (!top)
    return {
      classification: 'UNKNOWN',
      userImpact,
      rootCause: `The evidence does not show a cause for "${quote(e.group.message)}". Compared: ${compared.join(', ')}; none of them differs in a way that explains the failure.${context} Look at the target's own logs at ${when(e.group.lastSeen)}.`,
      codeFix: null,
      evidence: evidence.length
        ? evidence
        : [{ artifacts: e.failing ? [runArtifact(e.failing, 'failing run')] : [], description: `Compared: ${compared.join(', ')}.` }],
      referenceLinks: e.links.length ? e.links : null,
    };
  const others = causes.filter((f) => f !== top && f.weight >= 2).map((f) => f.statement);
  return {
    classification: top.classification,
    userImpact,
    rootCause: `${top.statement}${others.length ? ` Also: ${others.slice(0, 3).join(' ')}` : ''}${context}`,
    codeFix: fixes.length ? [...new Set(fixes)].join(' ') : null,
    evidence,
    referenceLinks: e.links.length ? e.links : null,
  };
}
